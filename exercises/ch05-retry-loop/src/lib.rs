//! # Chapter 5 — The retry loop, done properly
//!
//! Book: `book/src/ch05-retry-loop.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch05`. Stuck? `cargo xtask hint ch05`.
//!
//! ## Your task
//!
//! A [`Retry`] keeps three decisions apart: how long to wait (a *policy*: any iterator of
//! `Duration`s, where `None` means give up), which errors deserve another try (a *classifier*),
//! and what to tell the operator (a *hook*). The struct and [`Retry::new`] are given.
//!
//! 1. [`delay_before_retry`]: at most one retry is immediate. The first retry keeps the delay the
//!    policy proposes, even zero; for any later retry an exact zero becomes [`MIN_DELAY`]. Every
//!    non-zero delay, however small, passes unchanged.
//! 2. [`Retry::when`] and [`Retry::notify`]: builder methods that replace the classifier, or the
//!    hook, and keep everything else, so they can be called in either order.
//! 3. [`Retry::run`]: call `op` until it succeeds, the classifier rejects its error, or the policy
//!    says `None`; return the first `Ok`, or that last error exactly as `op` returned it.
//!    - A rejected error ends the loop at once: no hook call, no sleep, and no delay taken from
//!      the policy.
//!    - Before each retry, the hook hears a [`RetryEvent`] (the attempt that failed, counted from
//!      1, the delay about to be slept after the rule of task 1, the error); then the loop sleeps
//!      exactly that delay on tokio's clock.
//!    - Every run starts a fresh policy from the factory: two runs of one `Retry` sleep the same
//!      delays. Never sleep before the first call or after the last one, and never call the hook
//!      once you give up.
//!
//! The stub in [`stubs`] fails with scripted errors; `tests/visible.rs` uses it, and the grader
//! adds hidden checks of its own. Once `run` works, `cargo run -p ch05_retry_loop --example predict`
//! answers the "predict, then run" question of book §5.4.

use std::future::Future;
use std::time::Duration;

pub mod stubs;
mod types;

pub use types::{MIN_DELAY, RetryEvent};

/// The delay to sleep before retry number `retry` (counted from 1) when the policy proposes
/// `proposed`: at most one retry is immediate.
///
/// The first retry may go at once. A zero delay for any later retry is raised to [`MIN_DELAY`].
/// Non-zero delays pass unchanged.
pub fn delay_before_retry(retry: u32, proposed: Duration) -> Duration {
    // TODO: the rule described above.
    todo!("delay_before_retry(retry = {retry}, proposed = {proposed:?})")
}

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

impl<'a, E, F, P> Retry<'a, E, F>
where
    F: Fn() -> P,
    P: IntoIterator<Item = Duration>,
{
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

    /// Retries only the errors for which `classifier` returns `true`; any other error is returned
    /// at once, without a hook call and without a sleep.
    pub fn when(self, classifier: impl Fn(&E) -> bool + 'a) -> Self {
        // TODO: this `Retry`, with this classifier and everything else unchanged.
        let _ = classifier;
        todo!("Retry::when")
    }

    /// Calls `hook` once per retry, just before the loop sleeps, with the attempt that failed,
    /// the delay about to be slept and the error.
    pub fn notify(self, hook: impl Fn(&RetryEvent<'_, E>) + 'a) -> Self {
        // TODO: this `Retry`, with this hook and everything else unchanged.
        let _ = hook;
        todo!("Retry::notify")
    }

    /// Calls `op` until it succeeds, the classifier rejects its error, or the policy runs out;
    /// returns the first `Ok`, or the last error exactly as `op` returned it.
    ///
    /// Before each retry it reports a [`RetryEvent`] to the hook and then sleeps on tokio's clock.
    /// It never sleeps before the first attempt nor after the last one.
    pub async fn run<T, Op, Fut>(&self, op: Op) -> Result<T, E>
    where
        Op: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        // TODO: the loop described above and in the task list (book §5.3).
        let _ = (op, &self.make_policy, &self.classifier, &self.hook);
        todo!("Retry::run")
    }
}
