//! Predict, then run: the contention lab (book §10.5).
//!
//! ```text
//! cargo run -p ch10_contention_lab --example lab                           your predictions beside the results
//! cargo run --release -p ch10_contention_lab --example lab -- --sweep      the book's tables (100 runs per point)
//! cargo run --release -p ch10_contention_lab --example lab -- --sweep 20   a quicker sweep, 20 runs per point
//! ```
//!
//! The first form races 100 clients with each of the five strategies, using your `simulate`,
//! and prints the averages beside what you wrote in `src/predictions.toml`. It refuses to show the
//! results while a prediction is missing (`--anyway` overrides that).

use std::process::ExitCode;

use ch10_contention_lab::lab::{self, Point, RUNS, measure};
use ch10_contention_lab::{PREDICTIONS, Strategy};

/// The client count of the predictions.
const CLIENTS: usize = 100;

const USAGE: &str = "usage: lab [--anyway] | lab --sweep [runs]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        [] => compare(false),
        ["--anyway"] => compare(true),
        ["--sweep"] => sweep(RUNS),
        ["--sweep", runs] => match runs.parse() {
            Ok(runs) if runs > 0 => sweep(runs),
            _ => usage(),
        },
        _ => usage(),
    }
}

fn usage() -> ExitCode {
    eprintln!("{USAGE}");
    ExitCode::from(2)
}

/// The keys of `predictions.toml`, in the order of the file.
fn keys() -> Vec<String> {
    let mut keys: Vec<String> = Strategy::ALL
        .iter()
        .map(|s| format!("calls_{}", s.key()))
        .collect();
    keys.extend(["fewest_calls".to_owned(), "fastest".to_owned()]);
    keys
}

fn compare(anyway: bool) -> ExitCode {
    let missing: Vec<String> = keys()
        .into_iter()
        .filter(|key| lab::prediction(PREDICTIONS, key).is_none())
        .collect();
    if !missing.is_empty() && !anyway {
        eprintln!(
            "Predict first: src/predictions.toml has no value yet for {}.\n\
             Write down your guesses (book §10.5), then run this again \
             (or pass --anyway to see the results now).",
            missing.join(", ")
        );
        return ExitCode::FAILURE;
    }
    println!(
        "{CLIENTS} clients race to update one row: base 5 ms, cap 2 s, network hops of 10 ms \
         (sd 2 ms).\nEach line is the mean of {RUNS} runs of your simulate.\n"
    );
    println!(
        "{:<14} {:>12} {:>12} {:>18}",
        "strategy", "calls: you", "calls: lab", "last client done"
    );
    let points: Vec<Point> = Strategy::ALL
        .iter()
        .map(|&strategy| measure(strategy, CLIENTS, RUNS))
        .collect();
    for point in &points {
        let guess = lab::prediction(PREDICTIONS, &format!("calls_{}", point.strategy.key()));
        println!(
            "{:<14} {:>12} {:>12.0} {:>16.2} s",
            point.strategy.name(),
            guess.unwrap_or("-"),
            point.calls,
            point.completion.as_secs_f64()
        );
    }
    let fewest = points.iter().min_by(|a, b| a.calls.total_cmp(&b.calls));
    let soonest = points.iter().min_by_key(|p| p.completion);
    if let (Some(fewest), Some(soonest)) = (fewest, soonest) {
        println!();
        println!(
            "fewest calls:   you said {:<14} the lab says {} ({:.0} calls)",
            lab::prediction(PREDICTIONS, "fewest_calls").unwrap_or("-"),
            fewest.strategy.key(),
            fewest.calls
        );
        println!(
            "soonest done:   you said {:<14} the lab says {} ({:.2} s)",
            lab::prediction(PREDICTIONS, "fastest").unwrap_or("-"),
            soonest.strategy.key(),
            soonest.completion.as_secs_f64()
        );
    }
    ExitCode::SUCCESS
}

fn sweep(runs: u32) -> ExitCode {
    println!("{}", lab::markdown_tables(&lab::sweep(runs)));
    ExitCode::SUCCESS
}
