//! Shared by chapter 28's checks: limiters built with a panic turned into a message, and
//! requests settled one way or another.

use exercise::{AimdConfig, AimdLimiter, GradientConfig, GradientLimit};

use super::support::catch;

/// An AIMD limiter, with a panic in `new` turned into a message.
pub fn aimd(initial: u32, floor: u32, ceiling: u32, backoff: f64) -> AimdLimiter {
    let config = AimdConfig {
        initial,
        floor,
        ceiling,
        backoff,
    };
    catch(|| AimdLimiter::new(config))
        .unwrap_or_else(|message| panic!("AimdLimiter::new({config:?}) panicked: {message}"))
}

/// The limiter's limit, with a panic turned into a message.
pub fn limit(limiter: &AimdLimiter) -> u32 {
    catch(|| limiter.limit()).unwrap_or_else(|message| panic!("limit() panicked: {message}"))
}

/// The limiter's count in flight, with a panic turned into a message.
pub fn in_flight(limiter: &AimdLimiter) -> u32 {
    catch(|| limiter.in_flight())
        .unwrap_or_else(|message| panic!("in_flight() panicked: {message}"))
}

/// How a check settles a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    Success,
    Dropped,
}

/// Starts one request and settles it at once.
pub fn one(limiter: &AimdLimiter, settle: Settle) {
    let permit = catch(|| limiter.try_acquire())
        .unwrap_or_else(|message| panic!("try_acquire() panicked: {message}"))
        .unwrap_or_else(|| {
            panic!(
                "try_acquire() gave no place with {} in flight under a limit of {}",
                in_flight(limiter),
                limit(limiter)
            )
        });
    catch(|| match settle {
        Settle::Success => permit.success(),
        Settle::Dropped => permit.dropped(),
    })
    .unwrap_or_else(|message| panic!("settling a permit ({settle:?}) panicked: {message}"));
}

/// `count` requests started and settled one after another.
pub fn many(limiter: &AimdLimiter, settle: Settle, count: u32) {
    for _ in 0..count {
        one(limiter, settle);
    }
}

/// A gradient limit, with a panic in `new` turned into a message.
pub fn gradient(config: GradientConfig) -> GradientLimit {
    catch(|| GradientLimit::new(config))
        .unwrap_or_else(|message| panic!("GradientLimit::new({config:?}) panicked: {message}"))
}

/// One sample, with a panic turned into a message.
pub fn sample(limit: &mut GradientLimit, rtt_ms: f64) -> f64 {
    let rtt = std::time::Duration::from_secs_f64(rtt_ms / 1_000.0);
    catch(|| limit.on_sample(rtt))
        .unwrap_or_else(|message| panic!("on_sample({rtt:?}) panicked: {message}"))
}

/// Whether two limits are equal up to rounding.
pub fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}
