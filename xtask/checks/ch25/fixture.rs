//! Shared by chapter 25's checks: throttles, scripted histories, and exact expectations.

use std::time::Duration;

use exercise::AdaptiveThrottle;
use rand::rngs::StdRng;

use super::support::{catch, seeded};

pub const SEC: Duration = Duration::from_secs(1);
pub const WINDOW: Duration = Duration::from_secs(120);

/// A new throttle, with a panic in `new` turned into a message.
pub fn throttle(k: f64, window: Duration) -> AdaptiveThrottle {
    catch(|| AdaptiveThrottle::new(k, window)).unwrap_or_else(|message| {
        panic!("AdaptiveThrottle::new({k}, {window:?}) panicked: {message}")
    })
}

/// The throttle's probability, with a panic turned into a message.
pub fn probability(throttle: &AdaptiveThrottle) -> f64 {
    catch(|| throttle.rejection_probability())
        .unwrap_or_else(|message| panic!("rejection_probability() panicked: {message}"))
}

/// The book's formula.
pub fn expected(requests: u32, accepts: u32, k: f64) -> f64 {
    ((f64::from(requests) - k * f64::from(accepts)) / (f64::from(requests) + 1.0)).max(0.0)
}

/// A generator that never asks to reject: its draws are all close to 1.
pub fn never_rejecting() -> StdRng {
    seeded(0)
}

/// Records `requests` requests sent while healthy (every one admitted by a throttle whose
/// probability is 0) and `accepts` of them accepted, with the accepts first.
///
/// Requests are recorded through `admit`, which counts them whatever it decides; the draws come
/// from a seeded generator, and the checks use histories where the probability is 0 at every
/// step, so every request is admitted.
pub fn history(throttle: &AdaptiveThrottle, requests: u32, accepts: u32) {
    let mut rng = never_rejecting();
    for n in 0..requests {
        let admitted = catch(|| throttle.admit(&mut rng))
            .unwrap_or_else(|message| panic!("admit() panicked: {message}"));
        let _ = admitted;
        if n < accepts {
            catch(|| throttle.on_response(true))
                .unwrap_or_else(|message| panic!("on_response(true) panicked: {message}"));
        } else {
            catch(|| throttle.on_response(false))
                .unwrap_or_else(|message| panic!("on_response(false) panicked: {message}"));
        }
    }
}

/// Whether two probabilities are equal up to rounding.
pub fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9
}
