//! Chapter 10 — Lab: contention, with and without jitter: the reference solution.
//!
//! A discrete-event simulation of the experiment in the AWS Architecture Blog post "Exponential
//! Backoff And Jitter" (Marc Brooker, 2015): `N` clients race to update one row under optimistic
//! concurrency control, and every client that loses backs off with one of five strategies.
//! [`simulate`] runs the race once; [`Run::calls`] and [`Run::completion_time`] are the two
//! metrics the lab compares. The given modules hold the model: the row ([`server`]), the network
//! ([`network`]), the strategies ([`strategy`]), the agenda ([`events`]) and the bench ([`lab`]).

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

// ANCHOR: run
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
// ANCHOR_END: run

// ANCHOR: simulate
/// Races `clients` clients to update one row, each backing off with `strategy` after a
/// conflict, on `network`, and reports what happened.
///
/// Every client loops: read the version, send a conditional write naming it; if the write wins,
/// stop; if it conflicts, pause as its own [`Backoff`] says, then read again. All clients send
/// their first read at time zero, in the order of their index. The same `rng` state gives the
/// same run.
pub fn simulate(clients: usize, strategy: Strategy, network: Network, rng: &mut impl Rng) -> Run {
    let mut row = Row::new();
    let mut queue = EventQueue::new();
    let mut backoffs = vec![Backoff::new(strategy); clients];
    let mut run = Run {
        finishes: vec![None; clients],
        ..Run::default()
    };

    // At time zero every client sends its first read.
    for client in 0..clients {
        queue.send(network.delay(rng), client, Request::Read);
    }
    while let Some(arrival) = queue.pop() {
        let client = arrival.client;
        // The server handles a request the moment it arrives; the answer reaches the client one
        // hop later.
        let answered = arrival.at + network.delay(rng);
        match arrival.request {
            Request::Read => {
                run.reads += 1;
                let version = row.read();
                // The client sends its write as soon as it knows the version.
                let write = Request::Write { version };
                queue.send(answered + network.delay(rng), client, write);
            }
            Request::Write { version } => {
                run.writes += 1;
                match row.write(version) {
                    WriteOutcome::Won => {
                        // The client is done the moment it hears that it won.
                        run.finishes[client] = Some(Finish {
                            at: answered,
                            version,
                        });
                    }
                    WriteOutcome::Conflict => {
                        // Someone else won this version: pause, then start over with a read.
                        let pause = backoffs[client].next_delay(rng);
                        queue.send(answered + pause + network.delay(rng), client, Request::Read);
                    }
                }
            }
        }
    }
    run
}
// ANCHOR_END: simulate

// ANCHOR: metrics
impl Run {
    /// The server's work: every call it served, reads and writes, won or refused.
    pub fn calls(&self) -> u64 {
        self.reads + self.writes
    }

    /// When the last client finished: the latest finish time (zero for a run without clients).
    pub fn completion_time(&self) -> Duration {
        self.finishes
            .iter()
            .flatten()
            .map(|finish| finish.at)
            .max()
            .unwrap_or(Duration::ZERO)
    }
}
// ANCHOR_END: metrics
