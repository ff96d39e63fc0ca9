//! Given: a saga, its steps in order, each with its own policy, and its shared log.
//!
//! The orchestrator's work (running the steps, retrying them, compensating) is yours, in
//! `lib.rs`: `Saga::run_step` and `Saga::run`.

use std::fmt;

use crate::error::StepError;
use crate::log::{SagaLog, SagaStatus, SharedLog, StepRecord, StepStatus};
use crate::policy::StepPolicy;
use crate::step::{BoxFuture, DynStep, Step, StepContext};

/// Which of a step's two calls an attempt makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// [`Step::execute`]: do the step's work.
    Execute,
    /// [`Step::compensate`]: undo it.
    Compensate,
}

impl Action {
    /// The step's status while an attempt of this action is in flight.
    pub fn in_flight(self) -> StepStatus {
        match self {
            Self::Execute => StepStatus::Running,
            Self::Compensate => StepStatus::Compensating,
        }
    }

    /// The step's status while it waits for the next attempt of this action.
    pub fn waiting(self) -> StepStatus {
        match self {
            Self::Execute => StepStatus::Retrying,
            Self::Compensate => StepStatus::Compensating,
        }
    }

    /// The step's status once this action has succeeded.
    pub fn done(self) -> StepStatus {
        match self {
            Self::Execute => StepStatus::Succeeded,
            Self::Compensate => StepStatus::Compensated,
        }
    }

    /// The step's status once this action has given up (or was cancelled): `Failed` for an
    /// execution; `CompensationFailed` for a compensation, whose step's work still stands.
    pub fn gave_up(self) -> StepStatus {
        match self {
            Self::Execute => StepStatus::Failed,
            Self::Compensate => StepStatus::CompensationFailed,
        }
    }
}

/// How a step's action ends when it does not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepEnd {
    /// It stopped retrying (permanent error, attempts used up, or out of time) after `error`.
    /// `maybe_done`: one of its attempts timed out, so the action may have taken effect anyway.
    GaveUp { error: StepError, maybe_done: bool },
    /// The cancel token fired.
    Cancelled,
}

/// A step of a saga with its policy.
pub struct SagaStep {
    pub(crate) step: Box<dyn DynStep>,
    pub policy: StepPolicy,
}

impl SagaStep {
    /// One call of `action` on the step: [`Step::execute`] or [`Step::compensate`].
    pub fn call<'a>(
        &'a self,
        action: Action,
        ctx: &'a StepContext,
    ) -> BoxFuture<'a, Result<(), StepError>> {
        self.step.call(action, ctx)
    }

    /// The step's name.
    pub fn name(&self) -> &str {
        self.step.name()
    }
}

/// A saga: steps run in order, each with its own policy, and a shared log.
pub struct Saga {
    pub(crate) id: String,
    pub(crate) steps: Vec<SagaStep>,
    pub(crate) log: SharedLog,
}

impl Saga {
    /// An empty saga with this id; add its steps with [`Saga::step`].
    pub fn new(id: impl Into<String>) -> Self {
        let id = id.into();
        Self {
            log: SharedLog::new(SagaLog {
                saga_id: id.clone(),
                status: SagaStatus::Pending,
                steps: Vec::new(),
            }),
            id,
            steps: Vec::new(),
        }
    }

    /// Adds a step, run after the ones already added, retried under `policy`.
    pub fn step(mut self, step: impl Step + 'static, policy: StepPolicy) -> Self {
        let record = StepRecord::pending(step.name());
        self.log.update(|log| log.steps.push(record));
        self.steps.push(SagaStep {
            step: Box::new(step),
            policy,
        });
        self
    }

    /// The saga's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// A handle on the saga's log: read it, or watch it, while the saga runs.
    pub fn log(&self) -> SharedLog {
        self.log.clone()
    }

    /// How many steps the saga has.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether the saga has no steps.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The policy of step number `index` (counted from 0).
    pub fn policy(&self, index: usize) -> &StepPolicy {
        &self.steps[index].policy
    }
}

impl fmt::Debug for Saga {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Saga")
            .field("id", &self.id)
            .field(
                "steps",
                &self.steps.iter().map(SagaStep::name).collect::<Vec<_>>(),
            )
            .finish()
    }
}
