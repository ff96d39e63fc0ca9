//! # Chapter 27 — Metastable failures
//!
//! Book: `book/src/ch27-metastable-failures.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch27`. Stuck? `cargo xtask hint ch27`.
//!
//! ## Your task
//!
//! Build the server's half of breaking a metastable loop: [`AdmissionQueue`], the queue of
//! requests waiting for the server's worker. Time is the lab's virtual clock: every method takes
//! `now`, and `now` never goes back between calls. A request's wait is `now` minus the instant
//! the queue received it (the `now` of its [`push`](AdmissionQueue::push)).
//!
//! 1. [`AdmissionQueue::push`]: a request arrives. It joins the queue unless the queue already
//!    holds `max_len` requests; then it is answered at once, `ShedReason::QueueFull`.
//! 2. [`AdmissionQueue::next`]: the worker is free at `now`. In this order:
//!    - **the switch**: if the oldest waiting request has waited *longer than* `lifo_after`,
//!      the queue serves in LIFO order from now on (judged on the queue as `next` finds it,
//!      before anything is dropped);
//!    - **the drops**: every waiting request whose deadline has come (`deadline <= now`: its
//!      caller has given up) is answered `DeadlinePassed`; every other one that has waited
//!      *longer than* `max_wait` is answered `WaitedTooLong`;
//!    - **the pick**: of those left, the oldest in FIFO order, the newest in LIFO order (oldest
//!      and newest by the order `push` received them, not by `sent_at` or deadline);
//!    - **the drain**: once the queue is empty (after the pick, or because the drops emptied
//!      it), it serves in FIFO order again.
//! 3. Nothing is lost silently: every request pushed is, exactly once, either refused by `push`,
//!    returned by `next` to be served, or answered in a [`Next::shed`] list.
//!
//! The given types are in [`request`]: [`Request`], [`QueueConfig`], [`Overloaded`] (the 503
//! answer, which a client classifies as transient, as chapter 2 taught). [`lab`] is the
//! metastability lab of the book's figures; once the checks pass,
//! `cargo run -p ch27_metastable_failures --example predict` runs it with your queue.

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

/// A server's queue of requests waiting for a worker, built to stay out of a metastable state.
#[derive(Debug)]
pub struct AdmissionQueue {
    config: QueueConfig,
    // TODO: replace this placeholder with what the queue remembers: the waiting requests, each
    // with the instant it arrived, and the order it serves in.
    _waiting_to_choose: (),
}

impl AdmissionQueue {
    /// An empty queue with these settings, serving in FIFO order.
    pub fn new(config: QueueConfig) -> Self {
        // TODO: an empty queue in FIFO order.
        todo!("AdmissionQueue::new({config:?})")
    }

    /// A request arrives at `now`. It joins the queue unless the queue already holds `max_len`
    /// requests; then it is answered at once with [`ShedReason::QueueFull`].
    pub fn push(&mut self, request: Request, now: Time) -> Result<(), Overloaded> {
        // TODO: the length bound of step 1, then remember the request and when it arrived.
        let _ = self.config;
        todo!(
            "AdmissionQueue::push(request {}, now = {now:?})",
            request.id
        )
    }

    /// The server is free at `now`: decides the order, drops every request that may no longer
    /// be served, and returns the next request to serve with the answers to those dropped.
    pub fn next(&mut self, now: Time) -> Next {
        // TODO: the switch, the drops, the pick and the drain of step 2.
        todo!("AdmissionQueue::next(now = {now:?})")
    }

    /// How many requests are waiting.
    pub fn len(&self) -> usize {
        // TODO: the number of waiting requests.
        todo!("AdmissionQueue::len")
    }

    /// Whether no request is waiting.
    pub fn is_empty(&self) -> bool {
        // TODO: true when nothing waits.
        todo!("AdmissionQueue::is_empty")
    }

    /// The order the queue serves in now.
    pub fn order(&self) -> Order {
        // TODO: FIFO or LIFO, as the rules of step 2 left it.
        todo!("AdmissionQueue::order")
    }
}
