//! A worked example for chapter 24: two mirrors of a file, raced with `tokio::select!`.
//!
//! ```text
//! cargo run -p ch24_hedged_requests --example race
//! ```
//!
//! Not the exercise: here both downloads start at once and there are always exactly two. It
//! shows the two tools the exercise needs: `select!` takes whichever future is ready first, and
//! the future it did not take is dropped, which cancels it.

use std::time::Duration;

use tokio::time::{Instant, sleep};

/// Stands in for a download that takes `latency`; says when it is dropped unfinished.
async fn download(mirror: &'static str, latency: Duration) -> &'static str {
    struct Unfinished(&'static str);
    impl Drop for Unfinished {
        fn drop(&mut self) {
            if !self.0.is_empty() {
                println!("  {} was cancelled", self.0);
            }
        }
    }
    let mut unfinished = Unfinished(mirror);
    sleep(latency).await;
    unfinished.0 = "";
    mirror
}

// ANCHOR: race
async fn fastest_mirror(europe: Duration, america: Duration) -> &'static str {
    tokio::select! {
        // `biased` polls the branches in order: when both are ready at the same instant, the
        // first one listed wins, every time.
        biased;
        winner = download("europe", europe) => winner,
        winner = download("america", america) => winner,
    }
}
// ANCHOR_END: race

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    for (europe, america) in [(120, 40), (30, 90), (50, 50)] {
        let start = Instant::now();
        println!("europe {europe} ms, america {america} ms:");
        let winner = fastest_mirror(
            Duration::from_millis(europe),
            Duration::from_millis(america),
        )
        .await;
        println!("  {winner} won after {} ms", start.elapsed().as_millis());
    }
}
