//! Helpers shared by every chapter's hidden checks. The grader compiles this file into each
//! chapter's check harness as `super::support`.
#![allow(dead_code)]

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;

/// A seeded generator: the same seed gives the same draws in every run.
pub fn seeded(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// Runs `f`, turning a panic in the graded code into an `Err` with its message, so a check can
/// say which call panicked instead of failing with the bare panic.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let previous_hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let outcome = panic::catch_unwind(AssertUnwindSafe(f));
    panic::set_hook(previous_hook);
    outcome.map_err(|payload| panic_text(payload.as_ref()))
}

/// The message of a panic payload.
pub fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// A duration for a learner-facing message: `0 ms`, `12.5 ms`, `3.2 s`, `2 h 5 min`.
pub fn show(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if duration.is_zero() {
        "0 ms".to_owned()
    } else if secs < 1e-3 {
        format!("{} µs", trim(secs * 1e6))
    } else if secs < 1.0 {
        format!("{} ms", trim(secs * 1e3))
    } else if secs < 120.0 {
        format!("{} s", trim(secs))
    } else if secs < 7_200.0 {
        format!("{} min", trim(secs / 60.0))
    } else {
        format!("{} h", trim(secs / 3_600.0))
    }
}

fn trim(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A list of durations for a message: `[100 ms, 200 ms, 400 ms]`, shortened after `limit` items.
pub fn show_all(durations: &[Duration], limit: usize) -> String {
    let mut parts: Vec<String> = durations.iter().take(limit).map(|d| show(*d)).collect();
    if durations.len() > limit {
        parts.push(format!("… ({} in all)", durations.len()));
    }
    format!("[{}]", parts.join(", "))
}

/// The gaps between consecutive instants: the sleeps a retry loop made between its calls.
pub fn gaps(instants: &[tokio::time::Instant]) -> Vec<Duration> {
    instants.windows(2).map(|pair| pair[1] - pair[0]).collect()
}

/// How a skip's panic message starts; the grader's runner recognises it (`runner::SKIP_MARKER`).
pub const SKIP_MARKER: &str = "workbook-skip: ";

/// Ends the check as skipped: it could not run here (no database, an unsupported platform), so it
/// earns nothing and the report shows it as skipped, never as a pass. `reason` says why and how to
/// run it ("set WORKBOOK_POSTGRES_URL to run …").
///
/// It panics with [`SKIP_MARKER`] and the reason; the grader counts the panic as a skip only when
/// it comes from this file, so the graded code cannot fake one. Call it from the check itself, not
/// inside [`catch`], which would turn it into an ordinary error.
pub fn skip(reason: &str) -> ! {
    panic!("{SKIP_MARKER}{reason}")
}
