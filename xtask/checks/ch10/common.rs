//! Helpers shared by this chapter's checks: running the learner's simulation safely, and
//! describing its results in messages.

use std::time::Duration;

use exercise::lab::LabRng;
use exercise::{Finish, Network, Run, Strategy, simulate};
use rand::SeedableRng;

use super::support::{catch, show};

/// A hop of exactly 10 ms: the network of the hand-checked races.
pub const HOP: Duration = Duration::from_millis(10);

/// One run of the learner's `simulate`, with a panic turned into a readable failure. The
/// generator is the lab's own, seeded: `StdRng` would do as well, only slower in a debug build.
pub fn race(clients: usize, strategy: Strategy, network: Network, seed: u64) -> Run {
    let mut rng = LabRng::seed_from_u64(seed);
    let run = catch(|| simulate(clients, strategy, network, &mut rng)).unwrap_or_else(|message| {
        panic!(
            "simulate({clients} clients, {strategy}, {}, seed {seed}) panicked: {message}",
            describe(network)
        )
    });
    assert_eq!(
        run.finishes.len(),
        clients,
        "simulate({clients} clients, {strategy}, {}, seed {seed}) returned {} finishes; \
         `Run::finishes` needs one entry per client, `None` for a client that never won",
        describe(network),
        run.finishes.len(),
    );
    run
}

/// A race on the lab's network, |Normal(10 ms, 2 ms)| per hop.
pub fn lab_race(clients: usize, strategy: Strategy, seed: u64) -> Run {
    race(clients, strategy, Network::LAB, seed)
}

/// A race on a network where every hop takes exactly 10 ms.
pub fn fixed_race(clients: usize, strategy: Strategy) -> Run {
    race(clients, strategy, Network::fixed(HOP), 10)
}

/// The network for a message: `every hop 10 ms` or `hops of |N(10 ms, 2 ms)|`.
pub fn describe(network: Network) -> String {
    if network.sd.is_zero() {
        format!("every hop {}", show(network.mean))
    } else {
        format!("hops of |N({}, {})|", show(network.mean), show(network.sd))
    }
}

/// The finishes of a run for a message: `[40 ms (v0), 80 ms (v1), never]`.
pub fn show_finishes(finishes: &[Option<Finish>]) -> String {
    let parts: Vec<String> = finishes
        .iter()
        .map(|finish| match finish {
            Some(finish) => format!("{} (v{})", show(finish.at), finish.version),
            None => "never".to_owned(),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

/// A list of numbers for a message, shortened after `limit` items.
pub fn show_list<T: std::fmt::Display>(items: &[T], limit: usize) -> String {
    let mut parts: Vec<String> = items.iter().take(limit).map(T::to_string).collect();
    if items.len() > limit {
        parts.push(format!("… ({} in all)", items.len()));
    }
    parts.join(", ")
}

/// A count with thousands separators: `3,714`.
pub fn count(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Mean calls and mean completion time of `strategy` with `clients` clients over `seeds`.
pub fn averages(
    strategy: Strategy,
    clients: usize,
    seeds: std::ops::RangeInclusive<u64>,
) -> (f64, Duration) {
    let runs = seeds.clone().count() as u32;
    let mut calls = 0u64;
    let mut completion = Duration::ZERO;
    for seed in seeds {
        let run = lab_race(clients, strategy, seed);
        let unfinished = run.finishes.iter().filter(|f| f.is_none()).count();
        assert!(
            unfinished == 0,
            "with {clients} clients and {strategy} (seed {seed}), {unfinished} client(s) never \
             finished, so the averages mean nothing yet; make every client finish first \
             (check occ.every_client_finishes)"
        );
        calls += catch(|| run.calls())
            .unwrap_or_else(|message| panic!("Run::calls panicked: {message}"));
        completion += catch(|| run.completion_time())
            .unwrap_or_else(|message| panic!("Run::completion_time panicked: {message}"));
    }
    (calls as f64 / f64::from(runs), completion / runs)
}
