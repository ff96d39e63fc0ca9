//! Diagnose (book §20.4): a first draft of an idempotency store, written the tempting way. Two
//! requests with one key arrive 10 ms apart while the first one's 100 ms charge runs.
//!
//!     cargo run -p ch20_idempotency_keys --example first_draft
//!
//! It needs none of your code. Time is tokio's paused clock: the run takes no real time.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tokio::time::{Instant, sleep};

// ANCHOR: draft
/// A first draft: remembers each key's receipt once the charge is done.
struct DraftStore {
    receipts: Mutex<HashMap<String, u32>>,
}

impl DraftStore {
    async fn charge_once(&self, key: &str, charge: impl AsyncFnOnce() -> u32) -> u32 {
        let saved = self.receipts.lock().unwrap().get(key).copied();
        if let Some(receipt) = saved {
            return receipt;
        }
        let receipt = charge().await;
        self.receipts
            .lock()
            .unwrap()
            .insert(key.to_owned(), receipt);
        receipt
    }
}
// ANCHOR_END: draft

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let store = DraftStore {
        receipts: Mutex::new(HashMap::new()),
    };
    let charges = AtomicU32::new(0);
    let charge = || async {
        let number = charges.fetch_add(1, Ordering::SeqCst) + 1;
        sleep(Duration::from_millis(100)).await;
        number
    };
    let start = Instant::now();
    let first = async {
        let receipt = store.charge_once("idem_42", charge).await;
        println!(
            "{:>4} ms  first request:  receipt of charge {receipt}",
            start.elapsed().as_millis()
        );
    };
    let retry = async {
        sleep(Duration::from_millis(10)).await;
        let receipt = store.charge_once("idem_42", charge).await;
        println!(
            "{:>4} ms  its retry:      receipt of charge {receipt}",
            start.elapsed().as_millis()
        );
    };
    tokio::join!(first, retry);
    println!(
        "the card was charged {} time(s)",
        charges.load(Ordering::SeqCst)
    );
}
