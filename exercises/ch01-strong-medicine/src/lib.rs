//! # Chapter 1 — Retries are strong medicine
//!
//! Book: `book/src/ch01-strong-medicine.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch01`. Stuck? `cargo xtask hint ch01`.
//!
//! ## Your task
//!
//! 1. [`retry_immediately`]: call `op` once; while it returns `Err`, call it again straight away
//!    (no sleep, no waiting of any kind), but make at most `max_retries` extra calls. Return the
//!    first `Ok` as soon as it comes, or the **last** `Err` once the retries are spent.
//!    `max_retries = 0` means exactly one call; `max_retries = 2` means at most three.
//! 2. Write down your prediction (book §1.5), then run the measuring program:
//!    `cargo run -p ch01_strong_medicine --example predict`.
//!
//! The two stubs in [`stubs`] drive the exercise: [`stubs::Flaky`] fails each call with a fixed
//! probability, [`stubs::RecoversAfter`] fails its first `k` calls. `tests/visible.rs` uses them;
//! the grader adds hidden checks of its own.

pub mod stubs;

/// Calls `op`, and calls it again at once after each failure, at most `max_retries` more times.
///
/// Returns the first `Ok` as soon as it comes (no call after it), or the error of the last call
/// once the retries are spent. At most `1 + max_retries` calls; `max_retries = 0` is one call.
/// Any `u32` is a valid budget, `u32::MAX` included. Nothing waits between calls.
pub fn retry_immediately<T, E>(max_retries: u32, op: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    // TODO: the retry loop described above.
    let _ = op;
    todo!("retry_immediately(max_retries = {max_retries})")
}
