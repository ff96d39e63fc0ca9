//! `WORKBOOK_TIMINGS=1 cargo xtask …` prints, on stderr, how long after the grader started each
//! phase of a grading ended: where the time of a check goes, for authors tuning the grader.

use std::sync::OnceLock;
use std::time::Instant;

/// The variable that turns the timings on.
pub const VAR: &str = "WORKBOOK_TIMINGS";

/// When the grader started, and whether to print at all.
fn start() -> &'static Option<Instant> {
    static START: OnceLock<Option<Instant>> = OnceLock::new();
    START.get_or_init(|| std::env::var_os(VAR).map(|_| Instant::now()))
}

/// Starts the clock (call first thing in `main`).
pub fn begin() {
    start();
}

/// Prints that `phase` just ended, when the timings are on.
pub fn phase(phase: &str) {
    if let Some(start) = start() {
        eprintln!(
            "[timings] {:>7.1} ms  {phase}",
            start.elapsed().as_secs_f64() * 1000.0
        );
    }
}
