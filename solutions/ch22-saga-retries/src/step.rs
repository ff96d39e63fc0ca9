//! Given: what a saga step is, and what the orchestrator tells it on every call.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::error::StepError;
use crate::saga::Action;

/// How many retries a step's client library makes on its own, after a transient failure, unless
/// the caller says otherwise. Client libraries retry by default (AWS SDKs make up to three
/// attempts in their standard mode); inside a saga that default multiplies the orchestrator's
/// attempts, so the orchestrator must turn it off.
pub const DEFAULT_CLIENT_RETRIES: u32 = 2;

/// What the orchestrator passes to every call of a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepContext {
    /// The saga this call belongs to.
    pub saga_id: String,
    /// The step's name.
    pub step: String,
    /// The key the remote service deduplicates this request on, the same on every attempt of
    /// it: the step's key for an execution, [`undo_key`] of it for a compensation.
    pub idempotency_key: String,
    /// For a compensation, the key of the execution it undoes: the reference that tells the
    /// service which charge to refund. `None` for an execution.
    pub undoes: Option<String>,
    /// Which attempt of the current action this is, counted from 1.
    pub attempt: u32,
    /// How many retries the step's client library may make by itself inside this one attempt.
    /// [`StepContext::new`] sets the library default, [`DEFAULT_CLIENT_RETRIES`].
    pub client_retries: u32,
}

impl StepContext {
    /// A context with the client library's default retries ([`DEFAULT_CLIENT_RETRIES`]) and no
    /// reference to undo.
    pub fn new(
        saga_id: impl Into<String>,
        step: impl Into<String>,
        idempotency_key: impl Into<String>,
        attempt: u32,
    ) -> Self {
        Self {
            saga_id: saga_id.into(),
            step: step.into(),
            idempotency_key: idempotency_key.into(),
            undoes: None,
            attempt,
            client_retries: DEFAULT_CLIENT_RETRIES,
        }
    }
}

/// The idempotency key of the compensation of the step whose key is `step_key`:
/// `"{step_key}:undo"`. A compensation is a request of its own, and a key names one request
/// (chapter 20), so it never reuses its step's key.
pub fn undo_key(step_key: &str) -> String {
    format!("{step_key}:undo")
}

// ANCHOR: step
/// One step of a saga: an action on a remote service, and the action that undoes it.
///
/// Each call makes **one** attempt; retrying is the orchestrator's job. Both calls must be
/// idempotent under `ctx.idempotency_key`: the orchestrator may repeat them after a failure or a
/// timeout whose outcome it cannot know. A compensation names the execution it undoes in
/// `ctx.undoes`.
pub trait Step: Send + Sync {
    /// The step's name, unique within its saga.
    fn name(&self) -> &str;

    /// Does the step's work (reserve the stock, charge the card, book the shipment).
    fn execute(&self, ctx: &StepContext) -> impl Future<Output = Result<(), StepError>> + Send;

    /// Undoes a completed [`Step::execute`] (release the stock, refund the charge).
    fn compensate(&self, ctx: &StepContext) -> impl Future<Output = Result<(), StepError>> + Send;
}
// ANCHOR_END: step

/// A shared step is a step: keep an `Arc` to inspect a stub after the saga has run.
impl<S: Step> Step for Arc<S> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn execute(&self, ctx: &StepContext) -> impl Future<Output = Result<(), StepError>> + Send {
        (**self).execute(ctx)
    }

    fn compensate(&self, ctx: &StepContext) -> impl Future<Output = Result<(), StepError>> + Send {
        (**self).compensate(ctx)
    }
}

/// A boxed future that can move between threads.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The object-safe twin of [`Step`], so that one saga can hold steps of different types.
pub(crate) trait DynStep: Send + Sync {
    fn name(&self) -> &str;
    fn call<'a>(
        &'a self,
        action: Action,
        ctx: &'a StepContext,
    ) -> BoxFuture<'a, Result<(), StepError>>;
}

impl<S: Step> DynStep for S {
    fn name(&self) -> &str {
        Step::name(self)
    }

    fn call<'a>(
        &'a self,
        action: Action,
        ctx: &'a StepContext,
    ) -> BoxFuture<'a, Result<(), StepError>> {
        match action {
            Action::Execute => Box::pin(self.execute(ctx)),
            Action::Compensate => Box::pin(self.compensate(ctx)),
        }
    }
}
