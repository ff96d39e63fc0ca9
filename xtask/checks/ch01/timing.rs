//! Checks that `retry_immediately` re-issues at once: no sleeping, no waiting, in real time.
//!
//! The function is synchronous, so these checks measure wall-clock time. Each run takes a few
//! microseconds; a single `std::thread::sleep` of 1 ms anywhere shows up as a millisecond gap. One clean run passes; a run is repeated (up to five times) only when it looks
//! slow, so a run that the operating system happened to pause cannot fail a correct solution.

use std::time::{Duration, Instant};

use super::calls::{Service, run};
use super::support::show;

/// No gap a correct loop leaves comes anywhere near this; a 1 ms sleep goes far beyond it.
const AT_ONCE: Duration = Duration::from_micros(200);

/// Stop repeating runs after this long: by then a sleeping loop has shown itself.
const GIVE_UP_AFTER: Duration = Duration::from_millis(300);

#[test]
fn never_sleeps() {
    let max_retries = 20;
    let setting = format!("with max_retries = {max_retries} and a service that always fails");
    let checking_started = Instant::now();
    let mut shortest = [Duration::MAX; 3];
    let mut runs = 0;
    while runs < 5 && checking_started.elapsed() < GIVE_UP_AFTER {
        runs += 1;
        let started = Instant::now();
        let run = run(max_retries, Service::always_failing());
        let returned = Instant::now();
        let _ = run.result(&setting);
        let instants = run.service.instants();
        let (Some(first), Some(last)) = (instants.first(), instants.last()) else {
            panic!("{setting}, your loop returned without calling the operation at all");
        };
        let longest_gap = instants.windows(2).map(|pair| pair[1] - pair[0]).max();
        let waits = [
            *first - started,
            longest_gap.unwrap_or_default(),
            returned - *last,
        ];
        for (shortest, waited) in shortest.iter_mut().zip(waits) {
            *shortest = (*shortest).min(waited);
        }
        if waits.iter().all(|waited| *waited < AT_ONCE) {
            return;
        }
    }
    let places = [
        "before the first call",
        "between two calls (the longest gap)",
        "after the last call, before returning",
    ];
    for (place, waited) in places.into_iter().zip(shortest) {
        // A sleep of even 1 ms shows as a millisecond or more; anything shorter is work.
        let cause = if waited >= Duration::from_micros(900) {
            "Remove the sleep: no std::thread::sleep, no waiting of any kind. Waiting between \
             attempts is backoff, the subject of later chapters"
        } else {
            "Something slow runs there (a short sleep, a spin, printing): an immediate retry does \
             nothing between calls but make the next call"
        };
        assert!(
            waited < AT_ONCE,
            "{setting}, an immediate retry calls again straight away and returns straight away; \
             in {runs} run(s) of {} calls your loop waited, every time, at least {} of real \
             time {place}. {cause}",
            max_retries + 1,
            show(waited),
        );
    }
}
