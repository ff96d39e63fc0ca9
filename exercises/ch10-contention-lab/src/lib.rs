//! # Chapter 10 — Lab: contention, with and without jitter
//!
//! Book: `book/src/ch10-contention-lab.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch10`. Stuck? `cargo xtask hint ch10`.
//!
//! `N` clients race to update one row under optimistic concurrency control: read the version,
//! then send a conditional write naming it. The first write to name the current version wins;
//! every other client gets a conflict, backs off, and tries again. You will reproduce the AWS
//! Architecture Blog experiment "Exponential Backoff And Jitter" (2015) and measure five backoff
//! strategies against each other.
//!
//! ## Your task
//!
//! 0. **Before writing any code**, fill in `src/predictions.toml` (book §10.5). The check only
//!    requires every value to be filled in; the lab prints your guesses beside the results.
//! 1. [`simulate`]: the client loop, as a discrete-event simulation. Every client starts at time
//!    zero by sending a read, client 0 first (on a network where every hop takes the same time,
//!    requests that arrive together are handled in the order they were sent). Take requests from
//!    an [`EventQueue`] in arrival order and handle each one at the [`Row`]:
//!    - a read: count it; the answer (the version) reaches the client one hop later, and the
//!      client at once sends a write naming that version, which arrives one more hop later;
//!    - a write: count it; the answer reaches the client one hop later. If it won, the client is
//!      done at that moment: record its [`Finish`] (when, and which version it won). If it
//!      conflicted, the client pauses for its own [`Backoff`]'s next delay, then sends a read,
//!      which arrives one hop after the pause.
//!
//!    Every hop is one `network.delay(rng)`. Give every client its own `Backoff`.
//! 2. [`Run::calls`]: the server's work, every read and every write.
//! 3. [`Run::completion_time`]: when the **last** client finished.
//!
//! The model is given: [`server`] (the row), [`network`] (hop delays), [`strategy`] (the five
//! backoffs), [`events`] (the agenda) and [`lab`] (the bench that averages many runs).
//! `tests/visible.rs` shows small, hand-checkable races. When the checks pass, run
//! `cargo run -p ch10_contention_lab --example lab` and compare with your predictions.

use std::time::Duration;

use rand::Rng;

pub mod events;
pub mod lab;
pub mod network;
pub mod server;
pub mod strategy;

pub use events::{Arrival, EventQueue};
pub use network::Network;
pub use server::{Request, Row, WriteOutcome};
pub use strategy::{Backoff, Strategy};

/// The predictions written down before running the lab (`src/predictions.toml`).
pub const PREDICTIONS: &str = include_str!("predictions.toml");

/// What one simulated run produced: the server's work, and when each client finished.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Run {
    /// Reads the row served.
    pub reads: u64,
    /// Conditional writes the row served, won or refused.
    pub writes: u64,
    /// For each client, by index: when it learned that its write had won, and which version it
    /// won; `None` if it never did.
    pub finishes: Vec<Option<Finish>>,
}

/// A client's success: the moment the reply "you won" reached it, and the version it won.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finish {
    pub at: Duration,
    pub version: u64,
}

/// Races `clients` clients to update one row, each backing off with `strategy` after a
/// conflict, on `network`, and reports what happened.
///
/// Every client loops: read the version, send a conditional write naming it; if the write wins,
/// stop; if it conflicts, pause as its own [`Backoff`] says, then read again. All clients send
/// their first read at time zero, in the order of their index. The same `rng` state gives the
/// same run.
pub fn simulate(clients: usize, strategy: Strategy, network: Network, rng: &mut impl Rng) -> Run {
    // TODO: the race of the task list, from time zero until no request is left in flight.
    let _ = (network, rng);
    todo!("simulate(clients = {clients}, strategy = {strategy})")
}

impl Run {
    /// The server's work: every call it served, reads and writes, won or refused.
    pub fn calls(&self) -> u64 {
        // TODO: both kinds of call count.
        todo!("Run::calls (reads = {})", self.reads)
    }

    /// When the last client finished: the latest finish time (zero for a run without clients).
    pub fn completion_time(&self) -> Duration {
        // TODO: the latest `at` among the finishes; the clients are not in finishing order.
        todo!(
            "Run::completion_time (finishes.len() = {})",
            self.finishes.len()
        )
    }
}
