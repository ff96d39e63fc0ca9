//! Three plausible ways to multiply attempt counts, each wrong at an edge. Diagnose them before
//! you write `amplification`:
//!
//! ```text
//! cargo run -p ch12_retry_in_one_place --example overflow
//! ```
//!
//! It does not use your code: it runs the three versions below on the same stacks and prints
//! what each returns, or how it fails.

use std::panic;

/// One way of counting the calls that reach the bottom of a stack.
type Count = fn(&[u32]) -> u64;

// ANCHOR: versions
/// Multiplies in `u32`, the type the attempts come in.
fn in_u32(attempts: &[u32]) -> u64 {
    u64::from(attempts.iter().product::<u32>())
}

/// Multiplies in `u64` with the standard `product`: exact while the result fits.
fn in_u64(attempts: &[u32]) -> u64 {
    attempts.iter().map(|&a| u64::from(a)).product()
}

/// Multiplies in `f64`, which cannot overflow, and converts back (`as` saturates).
fn in_f64(attempts: &[u32]) -> u64 {
    attempts.iter().map(|&a| f64::from(a)).product::<f64>() as u64
}
// ANCHOR_END: versions

/// What `version` makes of `attempts`: its answer, or the panic's message.
fn outcome(version: Count, attempts: &[u32]) -> String {
    match panic::catch_unwind(|| version(attempts)) {
        Ok(count) => count.to_string(),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|text| text.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            format!("panic: {message}")
        }
    }
}

fn main() {
    // The panics are part of the answer: keep the default hook from printing them twice.
    panic::set_hook(Box::new(|_| {}));
    let stacks: [(&str, &[u32]); 4] = [
        ("[4, 4, 4]", &[4, 4, 4]),
        ("[65536; 3]", &[65_536; 3]),
        ("[u32::MAX; 2]", &[u32::MAX; 2]),
        ("[u32::MAX; 3]", &[u32::MAX; 3]),
    ];
    let versions: [(&str, Count); 3] = [("in u32", in_u32), ("in u64", in_u64), ("in f64", in_f64)];
    for (stack, attempts) in stacks {
        println!("{stack}");
        for (name, version) in versions {
            println!("  {name:<7} {}", outcome(version, attempts));
        }
    }
}
