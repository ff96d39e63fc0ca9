//! Given: what a saga step is, and what the orchestrator tells it on every call.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::error::StepError;

/// A boxed future that can move between threads and may borrow the step it came from.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Which of a step's two calls a request makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Do the step's work: reserve, charge, book.
    Execute,
    /// Undo it: release, refund, cancel.
    Compensate,
}

impl Action {
    /// `"execute"` or `"compensate"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Execute => "execute",
            Self::Compensate => "compensate",
        }
    }
}

/// What the orchestrator passes to every call of a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepContext {
    /// The saga this call belongs to.
    pub saga_id: String,
    /// The step's name.
    pub step: String,
    /// Which request this call is: the step's execution, or its compensation.
    pub action: Action,
    /// Which attempt of that request this is, counted from 1. A step is executed once, so
    /// `execute` always sees 1; a compensation sees 1, 2, 3, … as it is retried.
    pub attempt: u32,
}

impl StepContext {
    /// The context of attempt number `attempt` (counted from 1) of `action` on step `step`.
    pub fn new(
        saga_id: impl Into<String>,
        step: impl Into<String>,
        action: Action,
        attempt: u32,
    ) -> Self {
        Self {
            saga_id: saga_id.into(),
            step: step.into(),
            action,
            attempt,
        }
    }

    /// The step's key, `"{saga id}:{step}"`: the idempotency key of its execution, different
    /// for every step and every saga (chapter 20).
    pub fn step_key(&self) -> String {
        format!("{}:{}", self.saga_id, self.step)
    }

    /// The idempotency key of this request, the same on every attempt of it. A key names one
    /// request (chapter 20), and a compensation is a request of its own (a refund is not the
    /// charge), so it has its own key, derived from the step's: `"{saga id}:{step}:undo"`. An
    /// execution's key is the step's key.
    pub fn idempotency_key(&self) -> String {
        match self.action {
            Action::Execute => self.step_key(),
            Action::Compensate => format!("{}:undo", self.step_key()),
        }
    }

    /// For a compensation, the key of the execution it undoes: the reference that tells the
    /// service which charge to refund. `None` for an execution.
    pub fn undoes(&self) -> Option<String> {
        match self.action {
            Action::Execute => None,
            Action::Compensate => Some(self.step_key()),
        }
    }
}

// ANCHOR: step
/// One step of a saga: a local transaction on some service, and the action that undoes it.
///
/// Each call makes **one** attempt. `compensate` must be idempotent under its own key (a retried
/// refund must not refund twice: use `ctx.idempotency_key()`, and `ctx.undoes()` to say which
/// execution it undoes), and it is only ever called for a step whose `execute` succeeded.
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
