//! Runs the checkout under chaos and prints what happened.
//!
//! ```text
//! cargo run -p ch26_capstone --example report -- 7               the report of seed 7
//! cargo run -p ch26_capstone --example report -- 7 --no-budget   the same, without retry budgets
//! cargo run -p ch26_capstone --example report -- --sweep 100     one line per seed, 0 to 99
//! ```

use ch26_capstone::{Scenario, simulate};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut scenario = Scenario::default();
    if args.iter().any(|arg| arg == "--no-budget") {
        scenario.budget = None;
    }
    let numbers: Vec<u64> = args.iter().filter_map(|arg| arg.parse().ok()).collect();
    if args.iter().any(|arg| arg == "--sweep") {
        let seeds = numbers.first().copied().unwrap_or(100);
        let mut broken = 0;
        for seed in 0..seeds {
            let report = simulate(seed, &scenario);
            if report.invariants().iter().any(|i| i.broken.is_some()) || !report.panics.is_empty() {
                broken += 1;
            }
            println!("{}", report.summary());
        }
        println!("{broken} of {seeds} runs broke an invariant");
        return;
    }
    let seed = numbers.first().copied().unwrap_or(7);
    print!("{}", simulate(seed, &scenario));
}
