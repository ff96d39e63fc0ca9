//! Chapter 23's "predict, then run": the outage lab with your breaker.
//!
//! ```text
//! cargo run -p ch23_circuit_breakers --example predict
//! ```
//!
//! Runs the lab of figure 23.1 with three breakers the page does not show: the figure's breaker
//! over a 2 s time window, the figure's breaker with a 1 s break, and the figure's breaker over
//! the last 200 calls. Prints, for each, when it first refused a call, how many calls reached the
//! dependency during the outage, and how many requests were answered.

use std::time::Duration;

use ch23_circuit_breakers::lab::{Lab, Second, simulate};
use ch23_circuit_breakers::{BreakerConfig, Breaks, Window};

// ANCHOR: settings
fn figure_breaker(window: Window) -> BreakerConfig {
    BreakerConfig {
        failure_rate_percent: 50,
        minimum_calls: 20,
        window,
        break_duration: Duration::from_secs(5),
        breaks: Breaks::Fixed,
        half_open_probes: 5,
        slow_call: None,
    }
}
// ANCHOR_END: settings

fn main() {
    let lab = Lab::default();
    let ten_seconds = Window::Time(Duration::from_secs(10));
    let short_break = BreakerConfig {
        break_duration: Duration::from_secs(1),
        ..figure_breaker(ten_seconds)
    };
    let runs = [
        (
            "time window, 2 s",
            figure_breaker(Window::Time(Duration::from_secs(2))),
        ),
        ("time window, 10 s, 1 s break", short_break),
        (
            "count window, 200 calls",
            figure_breaker(Window::Count(200)),
        ),
    ];
    println!(
        "| run | first refusal | calls during the outage | requests answered | every request \
         answered again from |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (name, breaker) in runs {
        let seconds = simulate(&lab, Some(breaker));
        let outage = &seconds[lab.outage.start as usize..lab.outage.end as usize];
        let first_refusal = seconds
            .iter()
            .position(|second| second.refused > 0)
            .map_or("never".to_owned(), |t| format!("second {t}"));
        let recovered = (lab.outage.start as usize..seconds.len())
            .find(|&t| {
                seconds[t..]
                    .iter()
                    .all(|second| second.answered == lab.requests_per_second)
            })
            .map_or("never".to_owned(), |t| format!("second {t}"));
        println!(
            "| {name} | {first_refusal} | {} | {} | {recovered} |",
            outage.iter().map(|s| s.calls).sum::<u32>(),
            seconds.iter().map(|s: &Second| s.answered).sum::<u32>(),
        );
    }
}
