//! Helpers for the checks of chapter 27: requests, settings, and calls that turn a panic of the
//! graded queue into a readable failure.
#![allow(dead_code)]

use std::time::Duration;

use exercise::{AdmissionQueue, Next, Order, Overloaded, QueueConfig, Request, ShedReason};

use super::support::catch;

pub const NS: Duration = Duration::from_nanos(1);

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Settings for one check.
pub fn config(max_len: usize, lifo_after: Duration, max_wait: Duration) -> QueueConfig {
    QueueConfig {
        max_len,
        lifo_after,
        max_wait,
    }
}

/// Settings that never shed for length and only rarely for delay: the rule under test decides.
pub fn roomy() -> QueueConfig {
    config(1_000, ms(100), ms(500))
}

/// A request with a deadline far away, sent just before it reaches the queue at `arrives`.
pub fn request(id: u64, arrives: Duration) -> Request {
    Request {
        id,
        sent_at: arrives.saturating_sub(ms(1)),
        deadline: arrives + Duration::from_secs(3_600),
    }
}

/// A request with this deadline, sent just before it reaches the queue at `arrives`.
pub fn due(id: u64, arrives: Duration, deadline: Duration) -> Request {
    Request {
        deadline,
        ..request(id, arrives)
    }
}

pub fn queue(config: QueueConfig) -> AdmissionQueue {
    catch(|| AdmissionQueue::new(config))
        .unwrap_or_else(|panic| panic!("AdmissionQueue::new({config:?}) panicked: {panic}"))
}

pub fn push(queue: &mut AdmissionQueue, request: Request, now: Duration) -> Result<(), Overloaded> {
    catch(|| queue.push(request, now)).unwrap_or_else(|panic| {
        panic!(
            "push(request {}, now = {now:?}) panicked: {panic}",
            request.id
        )
    })
}

/// Pushes a request that must be accepted.
pub fn admit(queue: &mut AdmissionQueue, request: Request, now: Duration) {
    if let Err(answer) = push(queue, request, now) {
        panic!(
            "request {} arrived at {now:?} at a queue with room, yet push refused it ({answer}); \
             push refuses a request only when the queue already holds max_len requests",
            request.id
        );
    }
}

pub fn next(queue: &mut AdmissionQueue, now: Duration) -> Next {
    catch(|| queue.next(now))
        .unwrap_or_else(|panic| panic!("next(now = {now:?}) panicked: {panic}"))
}

pub fn order(queue: &AdmissionQueue) -> Order {
    catch(|| queue.order()).unwrap_or_else(|panic| panic!("order() panicked: {panic}"))
}

pub fn len(queue: &AdmissionQueue) -> usize {
    catch(|| queue.len()).unwrap_or_else(|panic| panic!("len() panicked: {panic}"))
}

/// The id served, if any.
pub fn served(next: &Next) -> Option<u64> {
    next.serve.map(|request| request.id)
}

/// The shed answers as sorted `(id, reason)` pairs.
pub fn shed(next: &Next) -> Vec<(u64, ShedReason)> {
    let mut answers: Vec<(u64, ShedReason)> = next
        .shed
        .iter()
        .map(|answer| (answer.id, answer.reason))
        .collect();
    answers.sort();
    answers
}
