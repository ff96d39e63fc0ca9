//! Given: the lab bench. It runs your [`simulate`] many times for every strategy and client
//! count, averages your two metrics, and reads and prints predictions and results.
//!
//! `cargo run -p ch10_contention_lab --example lab` uses it to put your predictions beside the
//! results; `cargo xtask figures` uses the solution's copy to draw the book's figures and table.

use std::time::Duration;

use rand::SeedableRng;
use rand::rand_core::{Infallible, TryRng, utils};

use crate::network::Network;
use crate::strategy::Strategy;
use crate::{Run, simulate};

/// Runs per point in the book's table and figures, and in `--example lab`.
///
/// As in the published experiment: 100 seeded runs per point. The workspace optimises the
/// solution's simulation even in debug builds, so the figures' sweep takes seconds.
pub const RUNS: u32 = 100;

/// The client counts of the sweep: 10, 20, …, 190.
pub const CLIENT_COUNTS: [usize; 19] = {
    let mut counts = [0; 19];
    let mut i = 0;
    while i < counts.len() {
        counts[i] = 10 * (i + 1);
        i += 1;
    }
    counts
};

/// A small, fast generator for the lab: SplitMix64 (Steele, Lea and Flood, 2014).
///
/// `StdRng` is a cryptographic generator; in a debug build it costs more than the rest of the
/// simulation put together. A simulation needs numbers that are reproducible and statistically
/// sound, not unpredictable, so the lab uses this one. Seed it like any other generator:
/// `LabRng::seed_from_u64(7)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabRng {
    state: u64,
}

impl TryRng for LabRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok((self.try_next_u64()? >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Ok(z ^ (z >> 31))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        utils::fill_bytes_via_next_word(dst, || self.try_next_u64())
    }
}

impl SeedableRng for LabRng {
    type Seed = [u8; 8];

    fn from_seed(seed: [u8; 8]) -> Self {
        Self {
            state: u64::from_le_bytes(seed),
        }
    }
}

/// One point of the sweep: a strategy and a client count, averaged over `runs` runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub strategy: Strategy,
    pub clients: usize,
    pub runs: u32,
    /// Server calls per run, on average ([`Run::calls`]).
    pub calls: f64,
    /// When the last client finished, on average over the runs ([`Run::completion_time`]).
    pub completion: Duration,
}

// ANCHOR: measure
/// Runs `runs` simulations of `clients` clients with `strategy` on the lab's network and
/// averages the two metrics. Run `r` uses `LabRng::seed_from_u64(r)`, so a point is the same
/// every time it is measured.
pub fn measure(strategy: Strategy, clients: usize, runs: u32) -> Point {
    let mut calls = 0;
    let mut completion = Duration::ZERO;
    for seed in 0..runs {
        let mut rng = LabRng::seed_from_u64(u64::from(seed));
        let run: Run = simulate(clients, strategy, Network::LAB, &mut rng);
        calls += run.calls();
        completion += run.completion_time();
    }
    let runs_f = f64::from(runs.max(1));
    Point {
        strategy,
        clients,
        runs,
        calls: calls as f64 / runs_f,
        completion: completion.div_f64(runs_f),
    }
}
// ANCHOR_END: measure

/// Every strategy at every client count of [`CLIENT_COUNTS`], `runs` runs per point, in the
/// order of the counts, then of [`Strategy::ALL`].
pub fn sweep(runs: u32) -> Vec<Point> {
    CLIENT_COUNTS
        .iter()
        .flat_map(|&clients| {
            Strategy::ALL
                .iter()
                .map(move |&strategy| measure(strategy, clients, runs))
        })
        .collect()
}

/// The `key = value` lines of a predictions file, in order, with comments dropped and the
/// quotes around a value removed: `calls_full_jitter = "2000"` gives `("calls_full_jitter", "2000")`.
pub fn predictions(text: &str) -> Vec<(&str, &str)> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or_default().trim())
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| {
            let value = value.trim();
            let unquoted = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(value);
            (key.trim(), unquoted.trim())
        })
        .collect()
}

/// The value of `key` in a predictions file, if it is there and not empty.
pub fn prediction<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    predictions(text)
        .into_iter()
        .find(|&(k, _)| k == key)
        .map(|(_, value)| value)
        .filter(|value| !value.is_empty())
}

/// Two Markdown tables of a sweep: calls per run, and when the last client finished, with one
/// row per client count and one column per strategy.
pub fn markdown_tables(points: &[Point]) -> String {
    let runs = points.first().map_or(0, |point| point.runs);
    let mut text = format!(
        "**Server calls per run** (reads + writes), mean of {runs} runs:\n\n{}\n\
         **When the last client finished**, in seconds, mean of {runs} runs:\n\n{}",
        table(points, |point| format!("{:.0}", point.calls)),
        table(points, |point| format!(
            "{:.2}",
            point.completion.as_secs_f64()
        )),
    );
    text.push('\n');
    text
}

fn table(points: &[Point], cell: impl Fn(&Point) -> String) -> String {
    let mut text = String::from("| clients |");
    for strategy in Strategy::ALL {
        text.push_str(&format!(" {strategy} |"));
    }
    text.push_str("\n|---:|");
    text.push_str(&"---:|".repeat(Strategy::ALL.len()));
    text.push('\n');
    for &clients in &CLIENT_COUNTS {
        let row: Vec<&Point> = points.iter().filter(|p| p.clients == clients).collect();
        if row.is_empty() {
            continue;
        }
        text.push_str(&format!("| {clients} |"));
        for strategy in Strategy::ALL {
            let value = row
                .iter()
                .find(|p| p.strategy == strategy)
                .map_or_else(String::new, |p| cell(p));
            text.push_str(&format!(" {value} |"));
        }
        text.push('\n');
    }
    text
}
