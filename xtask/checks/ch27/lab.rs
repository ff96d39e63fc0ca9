//! The rules' effect in the lab: with them, the server recovers after the trigger.

use std::time::Duration;

use exercise::lab::{JUDGED, SECONDS, Scenario, Second, Setup, TRIGGER_START, simulate};

use super::support::catch;

fn run(setup: Setup, load: f64, seed: u64) -> Vec<Second> {
    let scenario = Scenario {
        load,
        trigger: Duration::from_secs(10),
        seed,
    };
    catch(|| simulate(setup, scenario)).unwrap_or_else(|panic| {
        panic!("the lab ({setup:?}, load {load}, seed {seed}) panicked in your queue: {panic}")
    })
}

fn per_second(seconds: &[Second], range: std::ops::Range<u32>, value: fn(&Second) -> u32) -> f64 {
    let total: u32 = seconds[range.start as usize..range.end as usize]
        .iter()
        .map(value)
        .sum();
    f64::from(total) / f64::from(range.end - range.start)
}

#[test]
fn the_rules_bring_goodput_back_after_the_trigger() {
    // Capacity halved from 10 s to 20 s under 80 % and 90 % of capacity. Naive retries stay near
    // zero goodput to the end (the given plain server); the three rules must serve at least 90 %
    // of the calls started over the last 30 s. The solution serves all of them in every seed;
    // a queue that never turns LIFO, or keeps serving expired work, stays far below.
    for (load, seed) in [(0.8, 1), (0.9, 2)] {
        let seconds = run(Setup::AllThree, load, seed);
        let tail = SECONDS - JUDGED..SECONDS;
        let offered = per_second(&seconds, tail.clone(), |s| s.offered);
        let goodput = per_second(&seconds, tail.clone(), |s| s.goodput);
        let trigger_end = TRIGGER_START + 10;
        let soon_after = per_second(&seconds, trigger_end..trigger_end + 10, |s| s.goodput);
        assert!(
            goodput >= 0.9 * offered && soon_after >= 0.6 * 100.0 * load,
            "the lab at {} % of capacity, capacity halved from {TRIGGER_START} s to \
             {trigger_end} s, clients retrying, your queue with the three rules: in the 10 s \
             after the trigger it served {soon_after:.0} calls a second in time, and over the \
             last {JUDGED} s {goodput:.0} a second of the {offered:.0} started. It should \
             recover: at least 90 % of the calls started served in time at the end, and most of \
             them within 10 s of the trigger. If the other checks pass, look for a request both \
             served and answered, or served from the wrong end (see pitfalls \"Dropped \
             silently\" and \"LIFO that pops the wrong end\")",
            load * 100.0
        );
    }
}

#[test]
fn adaptive_lifo_rescues_a_queue_the_deadline_drop_alone_cannot() {
    // At 90 % of capacity, dropping expired work alone leaves a standing queue whose requests
    // finish just after their deadlines; serving the newest first clears it.
    let seconds = run(Setup::AdaptiveLifo, 0.9, 3);
    let tail = SECONDS - JUDGED..SECONDS;
    let offered = per_second(&seconds, tail.clone(), |s| s.offered);
    let goodput = per_second(&seconds, tail.clone(), |s| s.goodput);
    assert!(
        goodput >= 0.9 * offered,
        "the lab at 90 % of capacity, capacity halved for 10 s, your queue with the deadline \
         drop and adaptive LIFO (no delay bound): over the last {JUDGED} s it served {goodput:.0} \
         calls a second in time of the {offered:.0} started. Serving the newest request first \
         while a queue stands should bring it back to at least 90 % (see pitfall \"LIFO that \
         pops the wrong end\")"
    );
}
