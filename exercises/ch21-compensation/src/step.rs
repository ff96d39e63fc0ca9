//! Given: what a saga step is, and what the orchestrator tells it on every call.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::error::StepError;

/// A boxed future that can move between threads and may borrow the step it came from.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the orchestrator passes to every call of a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepContext {
    /// The saga this call belongs to.
    pub saga_id: String,
    /// The step's name.
    pub step: String,
    /// Which attempt of the current action this is, counted from 1. A step is executed once,
    /// so `execute` always sees 1; a compensation sees 1, 2, 3, … as it is retried.
    pub attempt: u32,
}

impl StepContext {
    /// The context of attempt number `attempt` (counted from 1) of a call to step `step`.
    pub fn new(saga_id: impl Into<String>, step: impl Into<String>, attempt: u32) -> Self {
        Self {
            saga_id: saga_id.into(),
            step: step.into(),
            attempt,
        }
    }

    /// The key a service deduplicates this step's calls on: the same for every attempt of the
    /// step and of its compensation, different for every step and every saga (chapter 20).
    pub fn idempotency_key(&self) -> String {
        format!("{}:{}", self.saga_id, self.step)
    }
}

// ANCHOR: step
/// One step of a saga: a local transaction on some service, and the action that undoes it.
///
/// Each call makes **one** attempt. `compensate` must be idempotent (a retried refund must not
/// refund twice: use `ctx.idempotency_key()`), and it is only ever called for a step whose
/// `execute` succeeded.
pub trait Step: Send + Sync {
    /// The step's name, unique within its saga.
    fn name(&self) -> &str;

    /// Does the step's work: reserve the stock, charge the card, book the shipment.
    fn execute(&self, ctx: &StepContext) -> BoxFuture<'_, Result<(), StepError>>;

    /// Undoes a completed `execute` by a new action of its own: release the stock, refund the
    /// charge, cancel the shipment.
    fn compensate(&self, ctx: &StepContext) -> BoxFuture<'_, Result<(), StepError>>;
}
// ANCHOR_END: step

/// A shared step is a step: keep an `Arc` to look at a step after the saga has run.
impl<S: Step + ?Sized> Step for Arc<S> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn execute(&self, ctx: &StepContext) -> BoxFuture<'_, Result<(), StepError>> {
        (**self).execute(ctx)
    }

    fn compensate(&self, ctx: &StepContext) -> BoxFuture<'_, Result<(), StepError>> {
        (**self).compensate(ctx)
    }
}
