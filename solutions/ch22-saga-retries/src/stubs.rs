//! Given: stand-ins for the three services of a checkout saga (inventory, payment, shipping),
//! and the checkout saga itself.
//!
//! Each stub is a remote service behind a client library. The service follows a script, one
//! [`Reply`] per call, and answers `Ok` once the script is used up. Like a real payment API, it
//! deduplicates on the idempotency key: a call with a key whose work is already done answers
//! `Ok` again without doing it twice. A key names one request: a compensation that comes with a
//! key already used by an execution is refused (422), and one that does not say which execution
//! it undoes (`ctx.undoes`) is refused too (400). Undoing an execution that never took effect
//! succeeds and does nothing. The client library, like real ones, retries transient failures at
//! once by itself, `ctx.client_retries` times, unless told not to.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use crate::error::{ErrorKind, StepError};
use crate::policy::{OnExhausted, StepPolicy};
use crate::saga::{Action, Saga};
use crate::step::{Step, StepContext};

/// What the service does on one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Does the work and answers `Ok`.
    Ok,
    /// Fails with this error, without doing the work.
    Fail(StepError),
    /// Fails with an HTTP error response, classified by [`crate::classify_status`].
    Http {
        status: u16,
        retry_after: Option<Duration>,
    },
    /// Never answers, and does not do the work.
    Hang,
    /// Does the work, then never answers: the caller's timeout fires, and only the idempotency
    /// key keeps the next attempt from doing the work a second time.
    DoThenHang,
}

impl Reply {
    /// An HTTP error response without `Retry-After`.
    pub fn http(status: u16) -> Self {
        Self::Http {
            status,
            retry_after: None,
        }
    }

    /// An HTTP error response with `Retry-After`.
    pub fn http_retry_after(status: u16, retry_after: Duration) -> Self {
        Self::Http {
            status,
            retry_after: Some(retry_after),
        }
    }
}

/// One call that reached the service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendCall {
    /// When it arrived, on tokio's clock.
    pub at: Instant,
    pub action: Action,
    /// The idempotency key it carried.
    pub key: String,
    /// The orchestrator's attempt number it belonged to.
    pub attempt: u32,
}

#[derive(Debug, Default)]
struct State {
    execute_script: VecDeque<Reply>,
    compensate_script: VecDeque<Reply>,
    calls: Vec<BackendCall>,
    /// The keys whose work is done (a reservation, a charge, a booking).
    done: Vec<String>,
    /// The keys of the compensations that are done.
    undone: Vec<String>,
    /// The keys of the executions whose work a compensation undid.
    reverted: Vec<String>,
}

/// A scripted remote service behind a client library that retries by itself.
#[derive(Debug)]
pub struct StubService {
    name: String,
    latency: Duration,
    state: Mutex<State>,
}

impl StubService {
    /// A service that answers every call with `Ok`, at once.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            latency: Duration::ZERO,
            state: Mutex::default(),
        }
    }

    /// The inventory service: reserves stock, releases it when compensated.
    pub fn inventory() -> Self {
        Self::new("inventory").with_latency(Duration::from_millis(20))
    }

    /// The payment service: charges the card, refunds it when compensated.
    pub fn payment() -> Self {
        Self::new("payment").with_latency(Duration::from_millis(50))
    }

    /// The shipping service: books a shipment, cancels it when compensated.
    pub fn shipping() -> Self {
        Self::new("shipping").with_latency(Duration::from_millis(30))
    }

    /// Every call takes `latency` before the service answers.
    pub fn with_latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// The replies to the first calls of `execute`; later calls answer `Ok`.
    pub fn failing_with(self, script: impl IntoIterator<Item = Reply>) -> Self {
        self.state().execute_script = script.into_iter().collect();
        self
    }

    /// The replies to the first calls of `compensate`; later calls answer `Ok`.
    pub fn compensation_failing_with(self, script: impl IntoIterator<Item = Reply>) -> Self {
        self.state().compensate_script = script.into_iter().collect();
        self
    }

    /// Every call that reached the service, in order.
    pub fn backend_calls(&self) -> Vec<BackendCall> {
        self.state().calls.clone()
    }

    /// How many calls of `action` reached the service.
    pub fn calls_of(&self, action: Action) -> usize {
        self.state()
            .calls
            .iter()
            .filter(|call| call.action == action)
            .count()
    }

    /// How many times the work was done: stock reserved, a card charged, a shipment booked.
    /// More than once for one saga is a double charge.
    pub fn times_done(&self) -> usize {
        self.state().done.len()
    }

    /// How many times work that had been done was undone.
    pub fn times_undone(&self) -> usize {
        self.state().reverted.len()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The client library: one call, then up to `ctx.client_retries` immediate retries while
    /// the failure is not permanent.
    async fn client_call(&self, action: Action, ctx: &StepContext) -> Result<(), StepError> {
        let mut outcome = self.service_call(action, ctx).await;
        for _ in 0..ctx.client_retries {
            match &outcome {
                Err(error) if error.kind != ErrorKind::Permanent => {
                    outcome = self.service_call(action, ctx).await;
                }
                _ => break,
            }
        }
        outcome
    }

    /// The service: one call that reaches it.
    async fn service_call(&self, action: Action, ctx: &StepContext) -> Result<(), StepError> {
        self.state().calls.push(BackendCall {
            at: Instant::now(),
            action,
            key: ctx.idempotency_key.clone(),
            attempt: ctx.attempt,
        });
        tokio::time::sleep(self.latency).await;
        let reply = {
            let mut guard = self.state();
            let state = &mut *guard;
            let (finished, script) = match action {
                Action::Execute => (&state.done, &mut state.execute_script),
                Action::Compensate => (&state.undone, &mut state.compensate_script),
            };
            if finished.contains(&ctx.idempotency_key) {
                // Already done under this key: answer as the first time, do nothing again.
                return Ok(());
            }
            let reply = script.pop_front().unwrap_or(Reply::Ok);
            if action == Action::Compensate {
                let reused = state
                    .calls
                    .iter()
                    .any(|call| call.action == Action::Execute && call.key == ctx.idempotency_key);
                if reused {
                    return Err(StepError::permanent(format!(
                        "HTTP 422: key {} was already used for another request",
                        ctx.idempotency_key
                    )));
                }
                if ctx.undoes.is_none() {
                    return Err(StepError::permanent(
                        "HTTP 400: a compensation must name the execution it undoes",
                    ));
                }
            }
            reply
        };
        match reply {
            Reply::Ok => {
                self.finish(action, ctx);
                Ok(())
            }
            Reply::Fail(error) => Err(error),
            Reply::Http {
                status,
                retry_after,
            } => Err(StepError::http(status, retry_after)),
            Reply::Hang => std::future::pending().await,
            Reply::DoThenHang => {
                self.finish(action, ctx);
                std::future::pending().await
            }
        }
    }

    fn finish(&self, action: Action, ctx: &StepContext) {
        let mut state = self.state();
        match action {
            Action::Execute => state.done.push(ctx.idempotency_key.clone()),
            Action::Compensate => {
                state.undone.push(ctx.idempotency_key.clone());
                // Undoing work that was never done under that key does nothing.
                let undoes = ctx.undoes.clone().unwrap_or_default();
                if state.done.contains(&undoes) && !state.reverted.contains(&undoes) {
                    state.reverted.push(undoes);
                }
            }
        }
    }
}

impl Step for StubService {
    fn name(&self) -> &str {
        &self.name
    }

    async fn execute(&self, ctx: &StepContext) -> Result<(), StepError> {
        self.client_call(Action::Execute, ctx).await
    }

    async fn compensate(&self, ctx: &StepContext) -> Result<(), StepError> {
        self.client_call(Action::Compensate, ctx).await
    }
}

/// The checkout saga: reserve the stock, charge the card, book the shipment.
#[derive(Debug)]
pub struct Checkout {
    pub saga: Saga,
    pub inventory: Arc<StubService>,
    pub payment: Arc<StubService>,
    pub shipping: Arc<StubService>,
}

impl Checkout {
    /// The checkout saga `saga_id` over these three services, with the policies of
    /// [`Checkout::policies`].
    pub fn new(
        saga_id: &str,
        inventory: StubService,
        payment: StubService,
        shipping: StubService,
    ) -> Self {
        let (inventory, payment, shipping) =
            (Arc::new(inventory), Arc::new(payment), Arc::new(shipping));
        let [inventory_policy, payment_policy, shipping_policy] = Self::policies();
        let saga = Saga::new(saga_id)
            .step(inventory.clone(), inventory_policy)
            .step(payment.clone(), payment_policy)
            .step(shipping.clone(), shipping_policy);
        Self {
            saga,
            inventory,
            payment,
            shipping,
        }
    }

    /// The three steps' policies. Each fits its attempts, timeouts and sleeps inside its budget.
    ///
    /// Every step follows a `Retry-After` for at most 10 s.
    ///
    /// - inventory: 4 attempts, 1 s each, jitter from 100 ms (cap 2 s), 10 s in all; when it
    ///   gives up there is nothing before it to undo, so the saga stops (or, if an attempt timed
    ///   out and the reservation may stand, goes to a person).
    /// - payment: 5 attempts, 2 s each, jitter from 200 ms (cap 5 s), 30 s in all; compensate.
    /// - shipping: 5 attempts, 2 s each, jitter from 500 ms (cap 10 s), 20 s in all; compensate.
    pub fn policies() -> [StepPolicy; 3] {
        let ms = Duration::from_millis;
        let secs = Duration::from_secs;
        [
            StepPolicy {
                max_attempts: 4,
                base: ms(100),
                cap: secs(2),
                per_attempt_timeout: secs(1),
                total_budget: secs(10),
                max_hint: secs(10),
                on_exhausted: OnExhausted::Stop,
            },
            StepPolicy {
                max_attempts: 5,
                base: ms(200),
                cap: secs(5),
                per_attempt_timeout: secs(2),
                total_budget: secs(30),
                max_hint: secs(10),
                on_exhausted: OnExhausted::Compensate,
            },
            StepPolicy {
                max_attempts: 5,
                base: ms(500),
                cap: secs(10),
                per_attempt_timeout: secs(2),
                total_budget: secs(20),
                max_hint: secs(10),
                on_exhausted: OnExhausted::Compensate,
            },
        ]
    }
}
