//! Visible tests: run them with `cargo xtask check ch27` (or `cargo test -p ch27_metastable_failures`).
//! The grader runs hidden checks beside them.

use std::time::Duration;

use ch27_metastable_failures::{AdmissionQueue, Order, QueueConfig, Request, ShedReason};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn request(id: u64, at: Duration) -> Request {
    Request {
        id,
        sent_at: at,
        deadline: at + Duration::from_secs(1),
    }
}

const CONFIG: QueueConfig = QueueConfig {
    max_len: 2,
    lifo_after: Duration::from_millis(100),
    max_wait: Duration::from_millis(500),
};

#[test]
fn a_fresh_queue_serves_oldest_first() {
    let mut queue = AdmissionQueue::new(CONFIG);
    queue.push(request(1, ms(0)), ms(0)).unwrap();
    queue.push(request(2, ms(5)), ms(5)).unwrap();
    let next = queue.next(ms(10));
    assert_eq!(next.serve.map(|r| r.id), Some(1));
    assert!(next.shed.is_empty());
    assert_eq!(queue.order(), Order::Fifo);
    assert_eq!(queue.len(), 1);
}

#[test]
fn a_full_queue_answers_the_newcomer() {
    let mut queue = AdmissionQueue::new(CONFIG);
    queue.push(request(1, ms(0)), ms(0)).unwrap();
    queue.push(request(2, ms(1)), ms(1)).unwrap();
    let answer = queue.push(request(3, ms(2)), ms(2)).unwrap_err();
    assert_eq!((answer.id, answer.reason), (3, ShedReason::QueueFull));
    assert_eq!(answer.status(), 503);
}
