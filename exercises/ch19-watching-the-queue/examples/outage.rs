//! Predict, then run (book §19.7): an outbox lives through a two-minute broker outage, then a
//! two-minute stop of its relay. Write down what you expect the dashboard to show, finish the
//! exercise, then run
//!
//!     cargo run -p ch19_watching_the_queue --example outage
//!
//! It prints the dashboard every 30 s as a table (your `snapshot` and `alerts`), then two full
//! dashboards (your `render`). The database is in memory and `now` is passed in, so the eight
//! minutes of the run take well under a second.

use ch19_watching_the_queue::SECOND;
use ch19_watching_the_queue::scenario::{SEED, dashboards, timeline};

fn main() {
    let moments = [150 * SECOND, 390 * SECOND];
    match timeline(SEED).and_then(|table| Ok((table, dashboards(SEED, &moments)?))) {
        Ok((table, dashboards)) => println!("{table}\n{dashboards}"),
        Err(error) => eprintln!("the run failed: {error}"),
    }
}
