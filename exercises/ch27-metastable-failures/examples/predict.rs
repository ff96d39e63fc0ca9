//! Chapter 27's "predict, then run": the metastability lab with your queue.
//!
//! ```text
//! cargo run -p ch27_metastable_failures --example predict           the goodput table
//! cargo run -p ch27_metastable_failures --example predict -- phase  the phase diagrams
//! ```
//!
//! One server of 100 requests a second, calls started at 80 % of that, capacity halved for 10 s
//! from second 10; clients with 1 s deadlines and up to 3 attempts. Prints, for each setup, the
//! attempts reaching the server and the calls served in time, per second, during the trigger, in
//! the 10 s after it, and over the last 30 s of the run. With `phase`, prints for naive retries
//! and for your three rules which loads and trigger lengths the system recovers from.

use std::time::Duration;

use ch27_metastable_failures::lab::{
    JUDGED, SECONDS, Scenario, Second, Setup, TRIGGER_START, recovered, simulate,
};

fn mean(seconds: &[Second], range: std::ops::Range<u32>, value: fn(&Second) -> u32) -> f64 {
    let total: u32 = seconds[range.start as usize..range.end as usize]
        .iter()
        .map(value)
        .sum();
    f64::from(total) / f64::from(range.end - range.start)
}

fn table() {
    let end = TRIGGER_START + 10;
    let windows = [TRIGGER_START..end, end..end + 10, SECONDS - JUDGED..SECONDS];
    println!(
        "| setup | trigger: attempts/s | goodput/s | next 10 s: attempts/s | goodput/s | last {JUDGED} s: attempts/s | goodput/s |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for setup in Setup::ALL {
        let scenario = Scenario {
            load: 0.8,
            trigger: Duration::from_secs(10),
            seed: 1,
        };
        let seconds = simulate(setup, scenario);
        let cells: Vec<String> = windows
            .iter()
            .flat_map(|window| {
                [
                    mean(&seconds, window.clone(), |s| s.attempts),
                    mean(&seconds, window.clone(), |s| s.goodput),
                ]
            })
            .map(|value| format!("{value:.0}"))
            .collect();
        println!("| {setup:?} | {} |", cells.join(" | "));
    }
}

fn phase() {
    for setup in [Setup::NaiveRetries, Setup::AllThree] {
        println!(
            "{setup:?}: rows are loads, columns trigger lengths 0, 2, ..., 20 s; . recovers, X stays down"
        );
        for step in (4..20).rev() {
            let load = f64::from(step) * 0.05;
            let row: String = (0..11)
                .map(|t| {
                    let scenario = Scenario {
                        load,
                        trigger: Duration::from_secs(2 * t),
                        seed: 1,
                    };
                    if recovered(&simulate(setup, scenario)) {
                        '.'
                    } else {
                        'X'
                    }
                })
                .collect();
            println!("{:>4.0} % {row}", load * 100.0);
        }
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("phase") {
        phase();
    } else {
        table();
    }
}
