//! # Chapter 28 — Adaptive concurrency limits
//!
//! Book: `book/src/ch28-concurrency-limits.md`. Check your work: `cargo xtask check ch28`.
//! Stuck? `cargo xtask hint ch28`.
//!
//! ## Your task
//!
//! 1. [`answer`]: return 42.

/// The answer.
pub fn answer() -> u32 {
    // TODO: return the answer.
    todo!("answer()")
}
