//! Checks of the lab's findings: clients back off with their own backoff, and with 100 clients
//! the strategies rank as in the published experiment. Every ranking is a mean over several
//! seeded runs, with a wide margin: the solution clears each one for every batch of seeds tried
//! (a thousand batches), so a correct simulation never fails them by bad luck.

use std::time::Duration;

use exercise::{Finish, Strategy};

use super::common::{averages, count, fixed_race, show_finishes};
use super::support::show;

const MS: Duration = Duration::from_millis(1);

fn finished(millis: u64, version: u64) -> Option<Finish> {
    let at = Duration::from_millis(millis);
    Some(Finish { at, version })
}

fn times(finishes: &[Option<Finish>]) -> Vec<u128> {
    finishes
        .iter()
        .map(|f| f.map_or(0, |f| f.at.as_millis()))
        .collect()
}

const NO_PAUSE: &str = "; that is the timeline without any pause: after a conflict, wait \
    `backoff.next_delay(rng)` before the next read goes out";
const SHARED_BACKOFF: &str = "; the third client's pauses grew with the other client's conflict \
    too: give every client a Backoff of its own";
const FRESH_BACKOFF: &str = "; the third client paused 10 ms twice: keep each client's Backoff for \
    the whole run instead of starting a new one after each conflict";

#[test]
fn backs_off_per_client() {
    let run = fixed_race(3, Strategy::Exponential);
    let expected = [finished(40, 0), finished(90, 1), finished(150, 2)];
    let diagnosis = match times(&run.finishes).as_slice() {
        [40, 80, 120] => NO_PAUSE,
        [40, 90, 180] => SHARED_BACKOFF,
        [40, 90, 140] => FRESH_BACKOFF,
        _ => "",
    };
    assert!(
        run.finishes == expected,
        "3 clients, exponential backoff, every hop 10 ms: client 0 wins at 40 ms; clients 1 and \
         2 hear of their conflict at 40 ms and pause 10 ms (their first pause, min(cap, 5 ms · \
         2^1)); client 1 wins at 90 ms, client 2 conflicts again at 90 ms, pauses 20 ms (its \
         second pause), and wins at 150 ms. Expected finishes {}; yours were {}{diagnosis}",
        show_finishes(&expected),
        show_finishes(&run.finishes),
    );
}

#[test]
fn jitter_cuts_calls() {
    let (exponential, exponential_time) = averages(Strategy::Exponential, 100, 1..=5);
    let (full, full_time) = averages(Strategy::FullJitter, 100, 1..=5);
    assert!(
        exponential > 2.0 * full,
        "with 100 clients (mean of 5 seeded runs), exponential backoff without jitter made {} \
         calls per run and full jitter {}, a ratio of {:.2}; without jitter the clients that \
         collide pause for the same time and collide again, so exponential must make well \
         over twice the calls of full jitter (the solution: about 2.3 times). Last client done: \
         {} and {}",
        count(exponential),
        count(full),
        exponential / full.max(1.0),
        show(exponential_time),
        show(full_time),
    );
}

#[test]
fn decorrelated_costs_more() {
    let (full, _) = averages(Strategy::FullJitter, 100, 1..=5);
    let (decorrelated, _) = averages(Strategy::Decorrelated, 100, 1..=5);
    assert!(
        full < decorrelated,
        "with 100 clients (mean of 5 seeded runs), full jitter made {} calls per run and \
         decorrelated jitter {}; full jitter must make fewer (the solution: about 20 % fewer), \
         as in the published experiment. Does each client back off with the strategy it was \
         given?",
        count(full),
        count(decorrelated),
    );
}

#[test]
fn equal_slower_than_full() {
    let (_, full) = averages(Strategy::FullJitter, 100, 1..=10);
    let (_, equal) = averages(Strategy::EqualJitter, 100, 1..=10);
    assert!(
        equal > full,
        "with 100 clients (mean of 10 seeded runs), the last client finished after {} with \
         equal jitter and after {} with full jitter; equal jitter must take longer (the \
         solution: about 30 % longer), because it always waits at least half the ceiling. \
         Does each client back off with the strategy it was given?",
        show(equal),
        show(full),
    );
}

#[test]
fn backoff_beats_no_backoff() {
    // The absolute side of §10.7: with 100 clients no backoff costs about 4,850 calls per run,
    // exponential backoff without jitter about 3,700 and full jitter about 1,600. A client that
    // pauses between its read and its write (instead of before the read) writes a version that
    // someone usually won during the pause: its calls double or worse, and exponential backoff
    // ends up costing more than none.
    let (none, _) = averages(Strategy::NoBackoff, 100, 1..=5);
    let (exponential, _) = averages(Strategy::Exponential, 100, 1..=5);
    let (full, _) = averages(Strategy::FullJitter, 100, 1..=5);
    assert!(
        exponential < none && full < 0.5 * none,
        "with 100 clients (mean of 5 seeded runs), no backoff made {} calls per run, exponential \
         backoff without jitter {} and full jitter {}; backing off must cost less than not \
         backing off, and full jitter less than half of it (the solution: about 3,700 and \
         1,600 against 4,850). Does each client pause after hearing of its conflict and before \
         its next read, so that the version it then writes is fresh?",
        count(none),
        count(exponential),
        count(full),
    );
}
