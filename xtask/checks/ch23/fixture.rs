//! Shared by chapter 23's checks: settings, scripted calls, and readable failures.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use exercise::{BreakerConfig, BreakerError, Breaks, CircuitBreaker, State, Window};

use super::support::{catch, show};

pub const MS: Duration = Duration::from_millis(1);
pub const SEC: Duration = Duration::from_secs(1);
pub const NS: Duration = Duration::from_nanos(1);

/// A config the checks vary one field at a time: no slow calls, one probe, a 30 s break.
pub fn config(percent: u32, minimum_calls: u32, window: Window) -> BreakerConfig {
    BreakerConfig {
        failure_rate_percent: percent,
        minimum_calls,
        window,
        break_duration: 30 * SEC,
        breaks: Breaks::Fixed,
        half_open_probes: 1,
        slow_call: None,
    }
}

/// A new breaker, with a panic in `new` turned into a message.
pub fn breaker(config: BreakerConfig) -> Arc<CircuitBreaker> {
    let built = catch(|| CircuitBreaker::new(config))
        .unwrap_or_else(|message| panic!("CircuitBreaker::new({config:?}) panicked: {message}"));
    Arc::new(built)
}

/// The breaker's state, with a panic turned into a message.
pub fn state(breaker: &CircuitBreaker) -> State {
    catch(|| breaker.state())
        .unwrap_or_else(|message| panic!("CircuitBreaker::state() panicked: {message}"))
}

/// What became of one call through the breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// The breaker refused it; the operation never started.
    Refused,
    /// The operation ran and returned `Ok` (`true`) or `Err` (`false`).
    Ran { ok: bool },
}

/// Counts the operations that actually started.
#[derive(Debug, Default, Clone)]
pub struct Started(Arc<AtomicU32>);

impl Started {
    pub fn get(&self) -> u32 {
        self.0.load(Ordering::SeqCst)
    }

    /// Counts one operation that started.
    pub fn add(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// One call whose operation takes `latency` of tokio's clock and then succeeds or fails.
pub async fn call(
    breaker: &CircuitBreaker,
    started: &Started,
    ok: bool,
    latency: Duration,
) -> Seen {
    let result = breaker
        .call(|| async move {
            started.add();
            if !latency.is_zero() {
                tokio::time::sleep(latency).await;
            }
            if ok { Ok(7u32) } else { Err("boom") }
        })
        .await;
    match result {
        Ok(7) => Seen::Ran { ok: true },
        Err(BreakerError::Failed("boom")) => Seen::Ran { ok: false },
        Err(BreakerError::Rejected) => Seen::Refused,
        other => panic!(
            "call returned {other:?}, which is neither the operation's own result nor Rejected"
        ),
    }
}

/// Runs instant calls in order: `F` fails, `S` succeeds. Returns what each one saw.
pub async fn run(breaker: &CircuitBreaker, script: &str) -> Vec<Seen> {
    let started = Started::default();
    let mut seen = Vec::new();
    for step in script.chars() {
        seen.push(call(breaker, &started, step == 'S', Duration::ZERO).await);
    }
    seen
}

/// A script as the learner reads it in a message: `F F S …`.
pub fn spaced(script: &str) -> String {
    script
        .chars()
        .map(String::from)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Describes a config in a message.
pub fn describe(config: &BreakerConfig) -> String {
    let window = match config.window {
        Window::Count(n) => format!("the last {n} calls"),
        Window::Time(span) => format!("the last {}", show(span)),
    };
    format!(
        "threshold {} %, minimum {} calls, window {window}",
        config.failure_rate_percent, config.minimum_calls
    )
}

/// Opens a fresh breaker with `minimum_calls` instant failures and checks that it is open.
pub async fn opened(config: BreakerConfig) -> Arc<CircuitBreaker> {
    let breaker = breaker(config);
    let failures = "F".repeat(config.minimum_calls.max(1) as usize);
    run(&breaker, &failures).await;
    assert_eq!(
        state(&breaker),
        State::Open,
        "with {}, {} failures in a row should open the breaker (section 23.4); it is {:?}",
        describe(&config),
        failures.len(),
        state(&breaker)
    );
    breaker
}
