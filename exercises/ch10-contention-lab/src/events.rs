//! Given: the agenda of the discrete-event simulation.
//!
//! The simulation does not wait: it keeps every request in flight in a priority queue ordered by
//! arrival time, and repeatedly takes the earliest one and lets the server handle it. The clock
//! jumps from one arrival to the next, so a run that spans minutes of virtual time costs
//! microseconds. Requests that arrive at the same instant are handled in the order they were
//! sent, so a run is deterministic even on a network where every hop takes the same time.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use crate::server::Request;

/// A request reaching the server: when, from which client, and what it asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub at: Duration,
    pub client: usize,
    pub request: Request,
}

/// The requests in flight, earliest arrival first.
///
/// A client waits for the answer to one request before it sends the next, so it has at most one
/// request in flight; [`EventQueue::send`] panics if a client sends a second.
#[derive(Debug, Default)]
pub struct EventQueue {
    /// One key per request in flight: the arrival time in nanoseconds in the high 64 bits, then
    /// the sending order, then the client. `Reverse` turns the max-heap into a min-heap. (One
    /// `u128` per entry keeps the heap fast in debug builds.)
    keys: BinaryHeap<Reverse<u128>>,
    /// The request each client has in flight.
    in_flight: Vec<Option<Request>>,
    sent: u32,
}

impl EventQueue {
    /// An empty agenda.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends `request` from `client`; it reaches the server at `at`.
    pub fn send(&mut self, at: Duration, client: usize, request: Request) {
        if client >= self.in_flight.len() {
            self.in_flight.resize(client + 1, None);
        }
        if let Some(earlier) = self.in_flight[client] {
            panic!(
                "client {client} sent {request:?} while its {earlier:?} was still in flight: \
                 a client waits for the answer to one request before it sends the next"
            );
        }
        self.in_flight[client] = Some(request);
        let nanos = u64::try_from(at.as_nanos()).expect("arrival times fit in 584 years");
        let client_bits = u32::try_from(client).expect("fewer than 2^32 clients");
        let key =
            (u128::from(nanos) << 64) | (u128::from(self.sent) << 32) | u128::from(client_bits);
        self.keys.push(Reverse(key));
        self.sent = self
            .sent
            .checked_add(1)
            .expect("fewer than 2^32 requests per run");
    }

    /// The earliest request in flight, removed from the agenda; `None` when nothing is in flight.
    pub fn pop(&mut self) -> Option<Arrival> {
        let Reverse(key) = self.keys.pop()?;
        let at = Duration::from_nanos((key >> 64) as u64);
        let client = (key as u32) as usize;
        let request = self.in_flight[client]
            .take()
            .expect("every key has its request");
        Some(Arrival {
            at,
            client,
            request,
        })
    }

    /// How many requests are in flight.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}
