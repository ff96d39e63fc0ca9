//! # Chapter 27 — Metastable failures (reference solution)
//!
//! The server's half of breaking a metastable loop: an admission queue that never starts work
//! whose caller has given up, serves the newest request first while a queue stands (adaptive
//! LIFO), and bounds the queue by delay as well as by length. Every request it does not serve is
//! answered with an [`Overloaded`] error.

use std::collections::VecDeque;

pub mod lab;
pub mod request;

pub use request::{Overloaded, QueueConfig, Request, Retryability, ShedReason, Time};

/// The order in which the queue serves the requests waiting in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Oldest first: the normal order.
    Fifo,
    /// Newest first: while a queue stands.
    Lifo,
}

/// What the server does when it is free at one instant: the request to serve now, if any, and
/// the overload answers to every request dropped on the way.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Next {
    /// The request to serve now; `None` when nothing is left to serve.
    pub serve: Option<Request>,
    /// One answer for each request dropped by this call, in any order.
    pub shed: Vec<Overloaded>,
}

/// A request waiting in the queue, with the instant the queue received it.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    request: Request,
    enqueued_at: Time,
}

impl Waiting {
    /// How long the request has waited in this queue at `now`.
    fn waited(&self, now: Time) -> Time {
        now.saturating_sub(self.enqueued_at)
    }

    /// Why the request may no longer be served at `now`, if it may not.
    fn shed_reason(&self, now: Time, max_wait: Time) -> Option<ShedReason> {
        if now >= self.request.deadline {
            Some(ShedReason::DeadlinePassed)
        } else if self.waited(now) > max_wait {
            Some(ShedReason::WaitedTooLong)
        } else {
            None
        }
    }
}

/// A server's queue of requests waiting for a worker, built to stay out of a metastable state.
#[derive(Debug)]
pub struct AdmissionQueue {
    config: QueueConfig,
    /// Oldest at the front, newest at the back.
    waiting: VecDeque<Waiting>,
    order: Order,
}

impl AdmissionQueue {
    /// An empty queue with these settings, serving in FIFO order.
    pub fn new(config: QueueConfig) -> Self {
        Self {
            config,
            waiting: VecDeque::new(),
            order: Order::Fifo,
        }
    }

    /// A request arrives at `now`. It joins the queue unless the queue already holds `max_len`
    /// requests; then it is answered at once with [`ShedReason::QueueFull`].
    pub fn push(&mut self, request: Request, now: Time) -> Result<(), Overloaded> {
        if self.waiting.len() >= self.config.max_len {
            return Err(Overloaded::new(&request, ShedReason::QueueFull));
        }
        self.waiting.push_back(Waiting {
            request,
            enqueued_at: now,
        });
        Ok(())
    }

    /// The server is free at `now`: decides the order, drops every request that may no longer
    /// be served, and returns the next request to serve with the answers to those dropped.
    pub fn next(&mut self, now: Time) -> Next {
        // The oldest request's wait, before anything is dropped, tells whether a queue stands.
        let standing = self
            .waiting
            .front()
            .is_some_and(|oldest| oldest.waited(now) > self.config.lifo_after);
        if standing {
            self.order = Order::Lifo;
        }

        let mut shed = Vec::new();
        let max_wait = self.config.max_wait;
        self.waiting
            .retain(|waiting| match waiting.shed_reason(now, max_wait) {
                Some(reason) => {
                    shed.push(Overloaded::new(&waiting.request, reason));
                    false
                }
                None => true,
            });

        let serve = match self.order {
            Order::Fifo => self.waiting.pop_front(),
            Order::Lifo => self.waiting.pop_back(),
        };
        if self.waiting.is_empty() {
            self.order = Order::Fifo;
        }
        Next {
            serve: serve.map(|waiting| waiting.request),
            shed,
        }
    }

    /// How many requests are waiting.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether no request is waiting.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The order the queue serves in now.
    pub fn order(&self) -> Order {
        self.order
    }
}
