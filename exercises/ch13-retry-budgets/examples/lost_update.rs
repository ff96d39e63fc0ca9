//! A neighbour of the retry budget: a ticket counter with a limit, shared by eight threads.
//!
//! ```text
//! cargo run -p ch13_retry_budgets --example lost_update
//! ```
//!
//! Each thread takes tickets until the counter says "sold out". The racy counter reads, checks
//! and writes in three steps; the atomic one does all three in a single `fetch_update`. The
//! program prints how many tickets the threads were handed, against the limit.

use std::sync::Barrier;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;
use std::thread;

const THREADS: u32 = 8;
const LIMIT: u32 = 2_000_000;

// ANCHOR: counters
/// Hands out at most `limit` tickets.
struct Tickets {
    sold: AtomicU32,
    limit: u32,
}

impl Tickets {
    fn new(limit: u32) -> Self {
        Self {
            sold: AtomicU32::new(0),
            limit,
        }
    }

    /// Wrong: between the `load` and the `store`, another thread can sell the same ticket.
    /// Each step is atomic; the three together are not.
    fn take_racy(&self) -> bool {
        let sold = self.sold.load(Relaxed);
        if sold >= self.limit {
            return false;
        }
        self.sold.store(sold + 1, Relaxed);
        true
    }

    /// Right: `fetch_update` reruns the closure on the latest value until its
    /// compare-and-swap succeeds, so the check and the write act on the same count.
    fn take(&self) -> bool {
        let sell_one = |sold: u32| (sold < self.limit).then_some(sold + 1);
        self.sold.fetch_update(Relaxed, Relaxed, sell_one).is_ok()
    }
}
// ANCHOR_END: counters

/// Lets eight threads, started together, take tickets with `take` until it says no; returns how many they got and
/// what the counter says it sold.
fn rush(tickets: &Tickets, take: fn(&Tickets) -> bool) -> (u32, u32) {
    let start = Barrier::new(THREADS as usize);
    let handed: u32 = thread::scope(|scope| {
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                scope.spawn(|| {
                    start.wait();
                    let mut mine = 0;
                    while take(tickets) {
                        mine += 1;
                    }
                    mine
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap_or(0)).sum()
    });
    (handed, tickets.sold.load(Relaxed))
}

fn main() {
    println!("{THREADS} threads take tickets from a counter limited to {LIMIT}:");
    let (handed, sold) = rush(&Tickets::new(LIMIT), Tickets::take_racy);
    println!("  load, check, store: {handed} tickets handed out, the counter says {sold}");
    let (handed, sold) = rush(&Tickets::new(LIMIT), Tickets::take);
    println!("  fetch_update:       {handed} tickets handed out, the counter says {sold}");
}
