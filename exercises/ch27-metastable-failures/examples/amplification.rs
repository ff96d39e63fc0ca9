//! Chapter 27's worked example: the arithmetic of the sustaining loop.
//!
//! ```text
//! cargo run -p ch27_metastable_failures --example amplification
//! ```
//!
//! For each load (calls started per second, as a share of the server's capacity), how many
//! attempts a second reach the server when every attempt succeeds, and when every attempt times
//! out, for three client policies. A load whose all-failing traffic exceeds capacity can sustain
//! a metastable failure: once every attempt fails, the retries alone keep the server overloaded.

/// How many attempts one call makes, on average, when each attempt fails with probability
/// `failing` and the client stops after `attempts`.
// ANCHOR: attempts_per_call
fn attempts_per_call(failing: f64, attempts: u32) -> f64 {
    // The first attempt is always made; the next one only if all before it failed.
    (0..attempts).map(|n| failing.powi(n as i32)).sum()
}
// ANCHOR_END: attempts_per_call

/// A client policy: how many attempts a call may make, and the most retries the client adds
/// per first attempt (a retry budget; `f64::INFINITY` for none).
struct Policy {
    name: &'static str,
    attempts: u32,
    budget: f64,
}

// ANCHOR: offered
/// The attempts per second reaching the server, as a share of capacity, at `load` when each
/// attempt fails with probability `failing`.
fn offered(load: f64, failing: f64, policy: &Policy) -> f64 {
    let retries = attempts_per_call(failing, policy.attempts) - 1.0;
    load * (1.0 + retries.min(policy.budget))
}
// ANCHOR_END: offered

fn main() {
    let policies = [
        Policy {
            name: "no retries",
            attempts: 1,
            budget: f64::INFINITY,
        },
        Policy {
            name: "3 attempts",
            attempts: 3,
            budget: f64::INFINITY,
        },
        Policy {
            name: "3 attempts, 10 % budget",
            attempts: 3,
            budget: 0.1,
        },
    ];
    println!("| load | policy | healthy (share of capacity) | all failing | can sustain itself? |");
    println!("|---:|---|---:|---:|---|");
    for load in [0.3, 0.5, 0.8, 0.95] {
        for policy in &policies {
            let healthy = offered(load, 0.0, policy);
            let failing = offered(load, 1.0, policy);
            let verdict = if failing > 1.0 { "yes" } else { "no" };
            println!(
                "| {:.0} % | {} | {healthy:.2} | {failing:.2} | {verdict} |",
                load * 100.0,
                policy.name
            );
        }
    }
}
