//! Chapter 14 — Testing retry code: the reference solution.
//!
//! The code under test is given: [`retry`] holds a correct retry loop with full jitter, a
//! classifier and a notification hook, and a payment call built on it. The solution is the test
//! suite in `src/suite.rs`: virtual time, seeded randomness, mocks with expectations, properties
//! and a snapshot of a retry timeline. It kills every hidden mutant of [`retry`].

pub mod poll;
pub mod retry;

#[cfg(test)]
mod suite;
#[cfg(test)]
mod worked;
