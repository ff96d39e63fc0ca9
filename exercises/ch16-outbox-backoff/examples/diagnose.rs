//! Diagnose, then fix (book §16.3 and §16.5): two first drafts that look right, compile, pass a
//! quick test with ordinary inputs, and take the relay down on the inputs a real outbox meets.
//!
//! Run it with `cargo run -p ch16_outbox_backoff --example diagnose`. It needs none of your code.

use std::panic;

// ANCHOR: drafts
/// First draft of the backoff ceiling, in milliseconds: `min(cap, base · 2^(attempts − 1))`.
fn draft_ceiling(attempts: u32, base_ms: u64, cap_ms: u64) -> u64 {
    (base_ms * 2u64.pow(attempts - 1)).min(cap_ms)
}

/// First draft of the `last_error` cut: at most `max_bytes` bytes of `message`.
fn draft_cut(message: &str, max_bytes: usize) -> &str {
    if message.len() > max_bytes {
        &message[..max_bytes]
    } else {
        message
    }
}
// ANCHOR_END: drafts

/// Runs `f`, and says what it returned or why it panicked.
fn outcome<T: std::fmt::Debug>(f: impl FnOnce() -> T + panic::UnwindSafe) -> String {
    match panic::catch_unwind(f) {
        Ok(value) => format!("{value:?}"),
        Err(payload) => {
            let text = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            // The first clause is enough: the rest repeats the whole message.
            format!("panic: {}", text.split(';').next().unwrap_or_default())
        }
    }
}

fn main() {
    panic::set_hook(Box::new(|_| {}));
    println!("draft_ceiling(attempts, base 1000 ms, cap 60000 ms)");
    for attempts in [1, 2, 7, 0, 54, 64, 65] {
        println!(
            "  attempts {attempts:>2}: {}",
            outcome(move || draft_ceiling(attempts, 1_000, 60_000))
        );
    }
    let french = format!("{}é and more", "x".repeat(199));
    println!("draft_cut(a message of {} bytes, 200)", french.len());
    println!("  {}", outcome(|| draft_cut(&french, 200).len()));
}
