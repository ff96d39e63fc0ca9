//! Chapter 23's "predict, then run": the outage lab with your breaker.
//!
//! ```text
//! cargo run -p ch23_circuit_breakers --example predict
//! ```
//!
//! Runs the lab of figure 23.1 three times: without a breaker, with the figure's breaker (a 10 s
//! time window), and with the same breaker over the last 20 calls instead. Prints, for each,
//! when the breaker first refused a call and how many calls reached the dependency.

use std::time::Duration;

use ch23_circuit_breakers::lab::{Lab, Second, simulate};
use ch23_circuit_breakers::{BreakerConfig, Window};

// ANCHOR: settings
fn figure_breaker(window: Window) -> BreakerConfig {
    BreakerConfig {
        failure_rate_percent: 50,
        minimum_calls: 20,
        window,
        break_duration: Duration::from_secs(5),
        half_open_probes: 5,
        slow_call: None,
    }
}
// ANCHOR_END: settings

fn main() {
    let lab = Lab::default();
    let runs = [
        ("no breaker", None),
        (
            "time window, 10 s",
            Some(figure_breaker(Window::Time(Duration::from_secs(10)))),
        ),
        (
            "count window, 20 calls",
            Some(figure_breaker(Window::Count(20))),
        ),
    ];
    println!("| run | first refusal | calls during the outage | requests answered |");
    println!("|---|---:|---:|---:|");
    for (name, breaker) in runs {
        let seconds = simulate(&lab, breaker);
        let outage = &seconds[lab.outage.start as usize..lab.outage.end as usize];
        let first_refusal = seconds
            .iter()
            .position(|second| second.refused > 0)
            .map_or("never".to_owned(), |t| format!("second {t}"));
        println!(
            "| {name} | {first_refusal} | {} | {} |",
            outage.iter().map(|s| s.calls).sum::<u32>(),
            seconds.iter().map(|s: &Second| s.answered).sum::<u32>(),
        );
    }
}
