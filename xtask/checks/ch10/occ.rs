//! Checks of the race itself: every version is won once, every client finishes, and a run is
//! decided by its seed.

use std::collections::BTreeMap;

use exercise::{Network, Run, Strategy};

use super::common::{HOP, describe, lab_race, race, show_list};

/// The races these checks look at: every strategy with 30 clients on the lab's network, full
/// jitter with 100, and 5 clients on a network where every hop takes 10 ms, so that requests
/// arrive at exactly the same instant.
fn races() -> Vec<(usize, Strategy, Network, u64)> {
    let mut races: Vec<(usize, Strategy, Network, u64)> = Strategy::ALL
        .iter()
        .zip(11..)
        .map(|(&strategy, seed)| (30, strategy, Network::LAB, seed))
        .collect();
    races.push((100, Strategy::FullJitter, Network::LAB, 1));
    races.push((5, Strategy::NoBackoff, Network::fixed(HOP), 10));
    races.push((5, Strategy::Exponential, Network::fixed(HOP), 10));
    // Clients keep trying however long the race lasts: on 12-hour hops the last of 5 clients
    // finishes after ten days, and 400 clients in lockstep make 160,400 calls, the last of them
    // losing 399 times (a simulation that stops after an hour, 100,000 events or 100 conflicts
    // leaves clients unfinished).
    races.push((5, Strategy::NoBackoff, Network::fixed(12 * HOUR), 10));
    races.push((400, Strategy::NoBackoff, Network::fixed(HOP), 10));
    races
}

const HOUR: std::time::Duration = std::time::Duration::from_secs(3_600);

/// Which clients claim each version.
fn claims(run: &Run) -> BTreeMap<u64, Vec<usize>> {
    let mut claims: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (client, finish) in run.finishes.iter().enumerate() {
        if let Some(finish) = finish {
            claims.entry(finish.version).or_default().push(client);
        }
    }
    claims
}

#[test]
fn every_version_won_once() {
    for (clients, strategy, network, seed) in races() {
        let run = race(clients, strategy, network, seed);
        let claims = claims(&run);
        let setting = format!(
            "with {clients} clients and {strategy} ({}, seed {seed})",
            describe(network)
        );
        if let Some((version, winners)) = claims.iter().find(|(_, winners)| winners.len() > 1) {
            panic!(
                "{setting}, version {version} was claimed by {} clients ({}); only the first \
                 write naming a version wins it, and a write that `Row::write` answers with \
                 `Conflict` has won nothing: that client must back off and try again",
                winners.len(),
                show_list(winners, 8),
            );
        }
        if let Some((version, winners)) = claims.iter().find(|(v, _)| **v >= clients as u64) {
            panic!(
                "{setting}, client {} claims version {version}, but {clients} clients can only \
                 win versions 0 to {}: record the version the winning write named (the one it \
                 read), not the row's version after it",
                winners[0],
                clients - 1,
            );
        }
        let missing: Vec<u64> = (0..clients as u64)
            .filter(|v| !claims.contains_key(v))
            .collect();
        assert!(
            missing.is_empty(),
            "{setting}, no client claims version(s) {}: the versions go 0, 1, …, {} with no \
             gaps, each won by exactly one client, because every client keeps trying until its \
             write wins",
            show_list(&missing, 8),
            clients - 1,
        );
    }
}

#[test]
fn every_client_finishes() {
    for (clients, strategy, network, seed) in races() {
        let run = race(clients, strategy, network, seed);
        let unfinished: Vec<usize> = (0..clients)
            .filter(|&client| run.finishes[client].is_none())
            .collect();
        assert!(
            unfinished.is_empty(),
            "with {clients} clients and {strategy} ({}, seed {seed}), {} of {clients} clients \
             never finished (clients {}); a client that loses a write must pause for its \
             backoff, read the new version, and write again, until a write wins",
            describe(network),
            unfinished.len(),
            show_list(&unfinished, 8),
        );
    }
}

#[test]
fn deterministic_per_seed() {
    for strategy in [Strategy::FullJitter, Strategy::Decorrelated] {
        let first = lab_race(20, strategy, 42);
        let again = lab_race(20, strategy, 42);
        assert!(
            first == again,
            "two runs of 20 clients with {strategy} and the same seed (42) differed: {} and {} \
             calls, last finish {:?} and {:?}; draw every random number (network hops, \
             backoff pauses) from the `rng` you are given, and nothing from the clock",
            first.reads + first.writes,
            again.reads + again.writes,
            first.finishes.iter().flatten().map(|f| f.at).max(),
            again.finishes.iter().flatten().map(|f| f.at).max(),
        );
        let other = lab_race(20, strategy, 43);
        assert!(
            first != other,
            "runs of 20 clients with {strategy} and seeds 42 and 43 were identical; the run \
             must depend on the `rng` passed in: draw every hop and every pause from it, and \
             do not make a generator of your own"
        );
    }
}

#[test]
fn pauses_depend_on_the_seed() {
    // On a network where every hop takes exactly 10 ms the pauses are the only randomness of a
    // race, so with full jitter the seed must still change the run: the first pause alone is
    // uniform over the 10,000,001 nanoseconds of [0, 10 ms], and 10 seeds giving one and the same
    // finish times would take coincidences of about 1 in 10^7 each. A simulation that draws the
    // hops from `rng` but the pauses from generators of its own (one per client, say) gives the
    // same race for every seed here, while on the lab's network the hops hide it.
    let runs: Vec<Run> = (0..10)
        .map(|seed| race(5, Strategy::FullJitter, Network::fixed(HOP), seed))
        .collect();
    let finishes: Vec<Vec<Option<u128>>> = runs
        .iter()
        .map(|run| {
            run.finishes
                .iter()
                .map(|finish| finish.map(|finish| finish.at.as_nanos()))
                .collect()
        })
        .collect();
    assert!(
        finishes.iter().any(|other| *other != finishes[0]),
        "10 races of 5 clients with full jitter on a network where every hop takes 10 ms, seeds \
         0 to 9, all gave the same finish times, {:?} ns: there the pauses are the only \
         randomness, so they do not come from the `rng` you are given. Draw every pause, as \
         every hop, from that generator (`backoff.next_delay(rng)`), not from one of your own",
        finishes[0],
    );
}

#[test]
fn finishes_belong_to_clients() {
    // `finishes[c]` is client c's own finish. On the lab's noisy network either of two clients
    // can win version 0: client 0 sends first, but the hops decide who arrives first, and across
    // 100 seeds each client wins it in about half the races. A run that files each finish under
    // its version number instead of its client shows client 0 winning version 0 every time.
    let mut client_zero_first = 0;
    for seed in 0..100 {
        let run = lab_race(2, Strategy::FullJitter, seed);
        let versions: Vec<Option<u64>> = run
            .finishes
            .iter()
            .map(|finish| finish.map(|finish| finish.version))
            .collect();
        if versions == [Some(0), Some(1)] {
            client_zero_first += 1;
        }
    }
    assert!(
        (10..=90).contains(&client_zero_first),
        "in 100 seeded races of 2 clients on the lab's network, client 0 won version 0 in \
         {client_zero_first} of them; the network's noise should let client 1 win it in about \
         half. `Run::finishes[c]` is client c's finish: record the win under the client that \
         made the write, with the version it won"
    );
}
