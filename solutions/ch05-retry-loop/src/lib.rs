//! Chapter 5 — The retry loop, done properly: the reference solution.
//!
//! A [`Retry`] keeps three decisions apart: *how long to wait* (a policy, any iterator of delays,
//! where `None` means give up), *which errors are worth another try* (a classifier), and *what to
//! tell the operator* (a hook, called once per retry before the sleep). [`Retry::run`] is the loop
//! that brings them together; it starts a fresh policy on every call.

use std::future::Future;
use std::time::Duration;

pub mod stubs;
mod types;

#[cfg(test)]
mod timeline;

pub use types::{MIN_DELAY, RetryEvent};

/// The delay to sleep before retry number `retry` (counted from 1) when the policy proposes
/// `proposed`: at most one retry is immediate.
///
/// The first retry may go at once, since a momentary blip is often gone by then. A zero delay for
/// any later retry is raised to [`MIN_DELAY`]: a failure that outlived one immediate retry is no
/// blip, and retrying it at once again only hammers the service. Non-zero delays pass unchanged.
pub fn delay_before_retry(retry: u32, proposed: Duration) -> Duration {
    if retry > 1 && proposed.is_zero() {
        MIN_DELAY
    } else {
        proposed
    }
}

// ANCHOR: retry_struct
/// Says whether an error is worth another attempt.
type Classifier<'a, E> = Box<dyn Fn(&E) -> bool + 'a>;

/// Hears of every retry, just before the loop sleeps.
type Hook<'a, E> = Box<dyn Fn(&RetryEvent<'_, E>) + 'a>;

/// A reusable retry loop: a policy factory, a classifier and a notification hook.
///
/// Build it once with [`Retry::new`], [`Retry::when`] and [`Retry::notify`], then call
/// [`Retry::run`] as often as you like: every run starts a fresh policy from the factory, so no
/// state leaks from one call into the next.
pub struct Retry<'a, E, F> {
    /// Makes the delays of one run: any iterator of `Duration`s, where `None` means give up.
    make_policy: F,
    /// Says whether an error is worth another attempt. The default retries every error.
    classifier: Classifier<'a, E>,
    /// Called once per retry, before the sleep. The default does nothing.
    hook: Hook<'a, E>,
}
// ANCHOR_END: retry_struct

impl<'a, E, F, P> Retry<'a, E, F>
where
    F: Fn() -> P,
    P: IntoIterator<Item = Duration>,
{
    // ANCHOR: new
    /// A retry loop whose delays come from `make_policy`, called once at the start of every run.
    ///
    /// Until [`Retry::when`] and [`Retry::notify`] say otherwise, every error is retried and
    /// nothing is reported.
    pub fn new(make_policy: F) -> Self {
        Self {
            make_policy,
            classifier: Box::new(|_| true),
            hook: Box::new(|_| {}),
        }
    }
    // ANCHOR_END: new

    /// Retries only the errors for which `classifier` returns `true`; any other error is returned
    /// at once, without a hook call and without a sleep.
    pub fn when(self, classifier: impl Fn(&E) -> bool + 'a) -> Self {
        Self {
            classifier: Box::new(classifier),
            ..self
        }
    }

    /// Calls `hook` once per retry, just before the loop sleeps, with the attempt that failed,
    /// the delay about to be slept and the error.
    pub fn notify(self, hook: impl Fn(&RetryEvent<'_, E>) + 'a) -> Self {
        Self {
            hook: Box::new(hook),
            ..self
        }
    }

    /// Calls `op` until it succeeds, the classifier rejects its error, or the policy runs out;
    /// returns the first `Ok`, or the last error exactly as `op` returned it.
    ///
    /// Before each retry it reports a [`RetryEvent`] to the hook and then sleeps on tokio's clock.
    /// It never sleeps before the first attempt nor after the last one.
    pub async fn run<T, Op, Fut>(&self, mut op: Op) -> Result<T, E>
    where
        Op: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        // A fresh policy for this run: an exhausted iterator from an earlier run never leaks in.
        let mut delays = (self.make_policy)().into_iter();
        let mut attempt = 1;
        loop {
            let error = match op().await {
                Ok(value) => return Ok(value),
                Err(error) => error,
            };
            if !(self.classifier)(&error) {
                return Err(error);
            }
            let Some(proposed) = delays.next() else {
                return Err(error);
            };
            let delay = delay_before_retry(attempt, proposed);
            (self.hook)(&RetryEvent {
                attempt,
                delay,
                error: &error,
            });
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }
}
