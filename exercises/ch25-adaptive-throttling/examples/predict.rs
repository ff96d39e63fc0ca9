//! Chapter 25's "predict, then run": the overload lab with your throttle, set three ways.
//!
//! ```text
//! cargo run -p ch25_adaptive_throttling --example predict
//! ```
//!
//! The throttled client of figure 25.1 alone in front of the lab's backend (100 requests a second
//! of capacity): 100 requests a second, then 300 a second for a minute, then 100 again. It runs
//! with the SRE book's throttle (`K = 2`, two minutes, the figure's), with `K = 1.1`, and with a
//! 30-second window. Prints, for the minute of overload and for the two and a half minutes after
//! it, how many calls reached the backend and how many it served, and from which second every
//! request is served again.

use std::ops::Range;
use std::time::Duration;

use ch25_adaptive_throttling::lab::{Limit, OVERLOAD, SECONDS, Second, simulate_with};
use ch25_adaptive_throttling::{DEFAULT_K, DEFAULT_WINDOW};

fn main() {
    let runs = [
        ("K = 2, 2 min (figure 25.1)", DEFAULT_K, DEFAULT_WINDOW),
        ("K = 1.1, 2 min", 1.1, DEFAULT_WINDOW),
        ("K = 2, 30 s", DEFAULT_K, Duration::from_secs(30)),
    ];
    println!(
        "| throttle | overload: calls | overload: served | after: calls | after: served | \
         every request served again from |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let during = OVERLOAD.start as usize..OVERLOAD.end as usize;
    let after = OVERLOAD.end as usize..SECONDS as usize;
    for (name, k, window) in runs {
        let seconds = simulate_with(Limit::Throttle, 1, k, window);
        let total = |range: Range<usize>, pick: fn(&Second) -> u32| {
            seconds[range].iter().map(pick).sum::<u32>()
        };
        let recovered = after
            .clone()
            .find(|&t| {
                seconds[t..]
                    .iter()
                    .all(|second| second.served == second.offered)
            })
            .map_or("not within the lab".to_owned(), |t| format!("second {t}"));
        println!(
            "| {name} | {} | {} | {} | {} | {recovered} |",
            total(during.clone(), |s| s.sent),
            total(during.clone(), |s| s.served),
            total(after.clone(), |s| s.sent),
            total(after.clone(), |s| s.served),
        );
    }
}
