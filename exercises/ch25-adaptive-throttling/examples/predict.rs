//! Chapter 25's "predict, then run": the overload lab with your throttle.
//!
//! ```text
//! cargo run -p ch25_adaptive_throttling --example predict
//! ```
//!
//! Four clients, each alone in front of the lab's backend (100 requests a second of capacity):
//! 100 requests a second, then 300 a second for a minute, then 100 again. Prints, for the minute
//! of overload and for the two and a half minutes after it, how many calls reached the backend
//! and how many it served.

use ch25_adaptive_throttling::lab::{Limit, OVERLOAD, SECONDS, simulate};

fn main() {
    println!("| client | overload: calls | overload: served | after: calls | after: served |");
    println!("|---|---:|---:|---:|---:|");
    let during = OVERLOAD.start as usize..OVERLOAD.end as usize;
    let after = OVERLOAD.end as usize..SECONDS as usize;
    for limit in Limit::ALL {
        let seconds = simulate(limit, 1);
        let total = |range: std::ops::Range<usize>,
                     pick: fn(&ch25_adaptive_throttling::lab::Second) -> u32| {
            seconds[range].iter().map(pick).sum::<u32>()
        };
        println!(
            "| {limit:?} | {} | {} | {} | {} |",
            total(during.clone(), |s| s.sent),
            total(during.clone(), |s| s.served),
            total(after.clone(), |s| s.sent),
            total(after.clone(), |s| s.served),
        );
    }
}
