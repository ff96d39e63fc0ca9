//! Chapter 28's worked example (section 28.7): a static bulkhead built on tokio's semaphore,
//! the neighbouring problem of the exercise. It shows the guard that gives a place back when
//! its holder is dropped, a caller that gives up, and Little's law at work.
//!
//! ```text
//! cargo run -p ch28_concurrency_limits --example bulkhead
//! ```

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio::time::Instant;

// ANCHOR: bulkhead
/// At most `size` requests inside at once; the rest are turned away at the door.
struct Bulkhead {
    places: Arc<Semaphore>,
}

impl Bulkhead {
    fn new(size: usize) -> Self {
        Self {
            places: Arc::new(Semaphore::new(size)),
        }
    }

    /// A place, or `None` when the bulkhead is full. The semaphore's permit is the guard: its
    /// `Drop` gives the place back, however its holder ends.
    fn enter(&self) -> Option<OwnedSemaphorePermit> {
        match Arc::clone(&self.places).try_acquire_owned() {
            Ok(permit) => Some(permit),
            Err(TryAcquireError::NoPermits) => None,
            Err(TryAcquireError::Closed) => unreachable!("the bulkhead never closes"),
        }
    }

    fn free(&self) -> usize {
        self.places.available_permits()
    }
}
// ANCHOR_END: bulkhead

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let bulkhead = Bulkhead::new(2);

    // ANCHOR: cancel
    // A caller enters, then gives up after 50 ms: its future is dropped mid-request, and the
    // permit inside it with it.
    let gave_up = tokio::time::timeout(Duration::from_millis(50), async {
        let _place = bulkhead.enter().expect("the bulkhead is empty");
        tokio::time::sleep(Duration::from_secs(60)).await;
    })
    .await;
    println!(
        "caller gave up: {}; free places: {} of 2",
        gave_up.is_err(),
        bulkhead.free()
    );
    // ANCHOR_END: cancel

    // Little's law: 2 places, each request 20 ms, callers arriving every 5 ms (200 a second).
    // The bulkhead can hold L = 2 requests of W = 20 ms: it lets through L / W = 100 a second.
    let start = Instant::now();
    let (mut admitted, mut refused) = (0, 0);
    let mut inside = Vec::new();
    while start.elapsed() < Duration::from_secs(1) {
        inside.retain(|(until, _): &(Instant, OwnedSemaphorePermit)| *until > Instant::now());
        match bulkhead.enter() {
            Some(permit) => {
                admitted += 1;
                inside.push((Instant::now() + Duration::from_millis(20), permit));
            }
            None => refused += 1,
        }
        tokio::time::advance(Duration::from_millis(5)).await;
    }
    println!("in one second: {admitted} admitted, {refused} refused (Little: 2 / 20 ms = 100/s)");
    assert!(bulkhead.free() <= 2 && (95..=105).contains(&admitted));
}
