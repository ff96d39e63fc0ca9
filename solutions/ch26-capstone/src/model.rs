//! Given: the vocabulary of the checkout. Orders and their events, the three saga steps, the
//! calls the orchestrator makes, the errors services answer with, and how a saga ends.

use std::fmt;
use std::time::Duration;

use rand::Rng;

/// A moment of the simulation: milliseconds of virtual time since the run started.
pub type Millis = i64;

/// A duration in whole milliseconds, saturating.
pub fn millis(duration: Duration) -> Millis {
    Millis::try_from(duration.as_millis()).unwrap_or(Millis::MAX)
}

/// An order's id: its row id in the `orders` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OrderId(pub i64);

impl fmt::Display for OrderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "order {}", self.0)
    }
}

/// The event the order service writes to its outbox with every order: "this order was placed".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderPlaced {
    /// The event's identity: its row id in the `outbox` table. Every copy of the event that
    /// the broker delivers carries the same id.
    pub event_id: i64,
    pub order: OrderId,
    pub amount_cents: i64,
}

/// One step of the checkout saga, in the order the saga runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Step {
    /// Reserve the stock; compensated by releasing it.
    Inventory,
    /// Charge the card; compensated by refunding the charge.
    Payment,
    /// Book the shipment; compensated by cancelling it.
    Shipping,
}

impl Step {
    /// The steps in the order the saga runs them.
    pub const ALL: [Step; 3] = [Step::Inventory, Step::Payment, Step::Shipping];

    pub fn name(self) -> &'static str {
        match self {
            Step::Inventory => "inventory",
            Step::Payment => "payment",
            Step::Shipping => "shipping",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a call asks a service to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// The step's work: reserve, charge, book.
    Execute,
    /// Undo the work done under the key the call names in [`Call::undoes`]: release, refund,
    /// cancel.
    Compensate,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Action::Execute => "execute",
            Action::Compensate => "compensate",
        })
    }
}

/// The key a service deduplicates on. One per step of a saga: minted once, before the step's
/// first attempt, and sent unchanged with every attempt. The step's compensation is a request of
/// its own with a key of its own, [`IdempotencyKey::undo`], that names the step's key as the work
/// it undoes (chapter 21, section 21.5).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// A fresh random key, like a version 4 UUID: 64 random bits from `rng`.
    ///
    /// Random is safe here because a saga runs start to end in one process that never restarts,
    /// so the key lives as long as its step. An orchestrator that can crash mid-saga derives the
    /// key from the order and the step, or stores it in the saga log before the first attempt
    /// (chapters 20 and 22): a new key after a restart would make a resumed charge a new one.
    pub fn mint(rng: &mut impl Rng) -> Self {
        Self(format!("k-{:016x}", rng.next_u64()))
    }

    /// The key of the compensation of the step whose key this is: `"{key}:undo"`, the same on
    /// every attempt of the compensation, and never the step's own key (a key names one request).
    pub fn undo(&self) -> Self {
        Self(format!("{}:undo", self.0))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

// ANCHOR: call
/// One call from the orchestrator to a service: one attempt of one step's action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub order: OrderId,
    pub action: Action,
    /// The key of this request, the same on every attempt of it: the step's key for an
    /// execution, its [`IdempotencyKey::undo`] for a compensation.
    pub key: IdempotencyKey,
    /// For a compensation, the step's key: the execution whose work it undoes. `None` for an
    /// execution.
    pub undoes: Option<IdempotencyKey>,
    /// Which attempt of this action this is, counted from 1.
    pub attempt: u32,
}
// ANCHOR_END: call

/// What a failure says about the next attempt (chapter 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Waiting may fix it: a timeout, a dropped connection, HTTP 500.
    Transient,
    /// Waiting will not fix it: a declined card (402), no stock left (409).
    Permanent,
    /// Transient, and the server said when to come back: 503 with `Retry-After`.
    RetryAfter(Duration),
}

/// The error a call ends with: its kind, and a short message for reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError {
    pub kind: ErrorKind,
    pub message: String,
}

impl ServiceError {
    /// An HTTP error response, classified as chapter 2 taught: 408, 429 and 5xx (but 501 and
    /// 505) are transient, and so is an invalid status outside 100..=599, handled as a 5xx; a
    /// `Retry-After` makes them [`ErrorKind::RetryAfter`]; the rest is permanent.
    pub fn http(status: u16, retry_after: Option<Duration>) -> Self {
        let invalid = !(100..=599).contains(&status);
        let transient = invalid || matches!(status, 408 | 429 | 500 | 502..=504 | 506..=599);
        let kind = match (transient, retry_after) {
            (false, _) => ErrorKind::Permanent,
            (true, None) => ErrorKind::Transient,
            (true, Some(delay)) => ErrorKind::RetryAfter(delay),
        };
        let mut message = format!("HTTP {status}");
        if let Some(delay) = retry_after {
            message.push_str(&format!(" (Retry-After: {} s)", delay.as_secs()));
        }
        Self { kind, message }
    }

    /// An attempt cut off by its timeout: transient, and its outcome unknown (the work may
    /// have been done), which is why every attempt of a step carries the same key.
    pub fn timed_out(limit: Duration) -> Self {
        Self {
            kind: ErrorKind::Transient,
            message: format!("timed out after {} ms", limit.as_millis()),
        }
    }
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ServiceError {}

// ANCHOR: gave_up
/// Why a step gave up: the last attempt's error, and whether the step's work may have been done
/// all the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GaveUp {
    /// The last attempt's error.
    pub error: ServiceError,
    /// Some attempt ended without an answer (a timeout): the service may have done the work
    /// before the answer was lost. Such a step is undone like a completed one; undoing work that
    /// never happened under its key does nothing.
    pub maybe_done: bool,
}
// ANCHOR_END: gave_up

/// How a checkout saga ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SagaOutcome {
    /// Every step succeeded: stock reserved, card charged, shipment booked.
    Completed,
    /// A step gave up and every step that may have done its work was undone, newest first.
    Compensated,
    /// A compensation gave up (the others were still undone): an operator must finish the job,
    /// reading the report.
    NeedsHuman,
    /// A step gave up and nothing was undone. **Not** a terminal state: stock stays reserved
    /// and the card stays charged for an order that will never ship.
    Failed,
}

impl SagaOutcome {
    /// The text stored in the `sagas.status` column.
    pub fn as_str(self) -> &'static str {
        match self {
            SagaOutcome::Completed => "completed",
            SagaOutcome::Compensated => "compensated",
            SagaOutcome::NeedsHuman => "needs_human",
            SagaOutcome::Failed => "failed",
        }
    }

    /// Whether an order may rest in this state: completed, compensated, or handed to a human.
    pub fn is_terminal(self) -> bool {
        !matches!(self, SagaOutcome::Failed)
    }
}

impl fmt::Display for SagaOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the consumer made of one delivery of an [`OrderPlaced`] event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consumed {
    /// The first delivery of this event: start the order's saga.
    Start,
    /// The event was consumed before: ignore this copy.
    Duplicate,
}

/// What one pass of the relay did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Due rows read from the outbox.
    pub fetched: usize,
    /// Rows the broker acknowledged, now marked sent.
    pub published: usize,
    /// Rows whose publish failed, now scheduled again.
    pub failed: usize,
    /// Rows given up on, now `failed`: refused for good (a permanent error, at its first
    /// refusal) or failed on their last attempt (`max_attempts`).
    pub given_up: usize,
}
