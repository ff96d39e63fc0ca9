//! Chapter 26 — Capstone: checkout under chaos. The reference solution.
//!
//! Four functions, each the lesson of earlier chapters, joined into one checkout:
//!
//! - [`relay_pass`] publishes the due outbox rows, marks each one sent only after the broker's
//!   acknowledgement, and schedules a failed one's next attempt in `next_retry_at` (chapters
//!   15 and 16);
//! - [`consume_order_placed`] lets only the first copy of an event start a saga (chapter 20);
//! - [`run_step`] makes one step's attempts: a timeout each, transient errors only, the
//!   server's `Retry-After` or full jitter, a total time budget, the client's retry budget,
//!   and one idempotency key for all of them, the compensation's its own (chapters 2 to 13, 21
//!   and 22);
//! - [`run_checkout`] runs the steps in order and, when one gives up, undoes every step that
//!   may have done its work, newest first, including one whose answer was lost, and does not
//!   stop at a compensation that gives up (chapter 21's rules of the way back).
//!
//! Everything else (the database, the chaos, the services, the driver, the report) is given.

use rand::Rng;
use rusqlite::params;
use tokio::time::Instant;

pub mod budget;
pub mod chaos;
pub mod db;
pub mod model;
pub mod policy;
pub mod report;
pub mod services;
pub mod sim;

pub use budget::{BudgetConfig, RetryBudget};
pub use chaos::{ChaosLevels, ChaosSchedule};
pub use db::{Db, OutboxRow};
pub use model::{
    Action, Call, Consumed, ErrorKind, GaveUp, IdempotencyKey, Millis, OrderId, OrderPlaced,
    RelayStats, SagaOutcome, ServiceError, Step, millis,
};
pub use policy::{CheckoutConfig, RelayConfig, StepPolicy, full_jitter};
pub use report::{OrderReport, OutcomeCounts, RunReport, ServiceReport};
pub use services::{Broker, Client, Clients};
pub use sim::{Clock, Scenario, simulate};

// ANCHOR: relay_pass
/// One pass of the outbox relay: publishes the rows that are due, at most `cfg.batch` of them.
///
/// - Each publish is bounded by `cfg.publish_timeout`: a lost request must not stall the relay.
/// - A row is marked sent only **after** the broker acknowledged it. If the relay dies in
///   between, the row is still pending and is published again: at least once, never lost.
/// - A failed row is scheduled, not retried in this pass: `next_retry_at` is now plus the
///   broker's `Retry-After` (at most `cfg.max_hint`), or else a full-jitter backoff whose
///   ceiling doubles with each failure of the row.
/// - A refusal for good (a permanent error: chapter 17's poison message), and the failure that
///   uses the row's last attempt (`cfg.max_attempts`), mark the row failed, for the dead
///   letters: nothing is retried forever, and nothing that waiting cannot fix is retried at all.
pub async fn relay_pass(
    db: &Db,
    broker: &Broker,
    clock: &Clock,
    cfg: &RelayConfig,
    rng: &mut impl Rng,
) -> rusqlite::Result<RelayStats> {
    let rows = db.fetch_due(clock.now(), cfg.batch)?;
    let mut stats = RelayStats {
        fetched: rows.len(),
        ..RelayStats::default()
    };
    for row in rows {
        // No borrow of the database is held here: the publish is a network call.
        let published = tokio::time::timeout(cfg.publish_timeout, broker.publish(&row.event)).await;
        let now = clock.now();
        let error = match published {
            Ok(Ok(())) => {
                db.mark_sent(row.id, now)?;
                stats.published += 1;
                continue;
            }
            Ok(Err(error)) => error,
            Err(_) => ServiceError::timed_out(cfg.publish_timeout),
        };
        // Refused for good (chapter 17's poison message), or no attempt left: a dead letter.
        let refused_for_good = matches!(error.kind, ErrorKind::Permanent);
        if refused_for_good || row.attempts + 1 >= cfg.max_attempts {
            db.mark_failed(row.id, now, &error.message)?;
            stats.given_up += 1;
            continue;
        }
        let delay = match error.kind {
            ErrorKind::RetryAfter(hint) => hint.min(cfg.max_hint),
            _ => full_jitter(row.attempts, cfg.base, cfg.cap, rng),
        };
        db.record_failure(row.id, now, now + millis(delay), &error.message)?;
        stats.failed += 1;
    }
    Ok(stats)
}
// ANCHOR_END: relay_pass

// ANCHOR: consume_order_placed
/// The orchestrator's consumer of `OrderPlaced` events: `Start` for the first delivery of an
/// event, `Duplicate` for every later copy.
///
/// The broker delivers at least once, so copies are normal. One statement both checks and
/// records: the insert into `inbox` succeeds only for an event id it has never seen, so there is
/// no moment between "have I seen it?" and "now I have" in which a second copy could slip by.
pub fn consume_order_placed(
    db: &Db,
    event: &OrderPlaced,
    now: Millis,
) -> rusqlite::Result<Consumed> {
    let inserted = db
        .conn()
        .prepare_cached(
            "INSERT INTO inbox (event_id, order_id, received_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (event_id) DO NOTHING",
        )?
        .execute(params![event.event_id, event.order.0, now])?;
    Ok(if inserted == 1 {
        Consumed::Start
    } else {
        Consumed::Duplicate
    })
}
// ANCHOR_END: consume_order_placed

// ANCHOR: run_step
/// Runs `action` of one step for `order` until it succeeds or gives up; when it gives up,
/// returns the last error and whether the work may have been done anyway.
///
/// - `key` is the step's key. Every attempt of the execution carries it; every attempt of the
///   compensation carries the compensation's own key, `key.undo()`, and names `key` as the work
///   it undoes.
/// - Each attempt is cut off after `min(per_attempt_timeout, what is left of total_budget)`;
///   a timeout is a transient failure whose outcome is unknown: `maybe_done`.
/// - Permanent errors end the step at once, and cost the budget nothing.
/// - Every outcome is reported to the client's retry budget for `action` (a success refills
///   it, a transient failure drains it) and a retry is made only if the budget still allows one.
/// - The wait before a retry is the server's `Retry-After` if it sent one, else full jitter;
///   a wait that would end at or past `total_budget` is not started.
pub async fn run_step(
    client: &Client,
    order: OrderId,
    action: Action,
    key: &IdempotencyKey,
    policy: &StepPolicy,
    rng: &mut impl Rng,
) -> Result<(), GaveUp> {
    let budget = client.budget(action);
    // A compensation is a request of its own: its own key, and the step's key as its reference.
    let (request_key, undoes) = match action {
        Action::Execute => (key.clone(), None),
        Action::Compensate => (key.undo(), Some(key.clone())),
    };
    let started = Instant::now();
    let mut maybe_done = false;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let call = Call {
            order,
            action,
            key: request_key.clone(),
            undoes: undoes.clone(),
            attempt,
        };
        let left = policy.total_budget.saturating_sub(started.elapsed());
        let limit = policy.per_attempt_timeout.min(left);
        let error = match tokio::time::timeout(limit, client.call(&call)).await {
            Ok(Ok(())) => {
                budget.on_success();
                return Ok(());
            }
            Ok(Err(error)) => error,
            Err(_) => {
                maybe_done = true;
                ServiceError::timed_out(limit)
            }
        };
        let delay = match error.kind {
            ErrorKind::Permanent => return Err(GaveUp { error, maybe_done }),
            ErrorKind::RetryAfter(hint) => hint,
            ErrorKind::Transient => full_jitter(attempt - 1, policy.base, policy.cap, rng),
        };
        budget.on_failure();
        let out_of_time = started.elapsed().saturating_add(delay) >= policy.total_budget;
        if attempt >= policy.max_attempts || !budget.can_retry() || out_of_time {
            return Err(GaveUp { error, maybe_done });
        }
        tokio::time::sleep(delay).await;
    }
}
// ANCHOR_END: run_step

// ANCHOR: run_checkout
/// The checkout saga for `order`: inventory, payment, shipping, in that order, each through
/// [`run_step`] under `cfg.execute` with a key of its own.
///
/// When a step gives up, every step that may have done its work is compensated, newest first,
/// each through [`run_step`] under `cfg.compensate` with its step's key: the steps that
/// completed, and the one that gave up if `maybe_done` says its work may have been done. A
/// compensation that gives up does not stop the others. All undone: `Compensated`; any left
/// standing: `NeedsHuman`, for an operator.
pub async fn run_checkout(
    order: OrderId,
    clients: &Clients,
    cfg: &CheckoutConfig,
    rng: &mut impl Rng,
) -> SagaOutcome {
    // The steps that may have done their work, each with its key, oldest first.
    let mut done: Vec<(Step, IdempotencyKey)> = Vec::new();
    for step in Step::ALL {
        // One key per step, minted before its first attempt.
        let key = IdempotencyKey::mint(rng);
        let client = clients.get(step);
        match run_step(client, order, Action::Execute, &key, &cfg.execute, rng).await {
            Ok(()) => done.push((step, key)),
            Err(gave_up) => {
                if gave_up.maybe_done {
                    done.push((step, key));
                }
                return compensate(order, &done, clients, cfg, rng).await;
            }
        }
    }
    SagaOutcome::Completed
}

/// Undoes the `done` steps of `order`, newest first, every one of them even when one gives up.
async fn compensate(
    order: OrderId,
    done: &[(Step, IdempotencyKey)],
    clients: &Clients,
    cfg: &CheckoutConfig,
    rng: &mut impl Rng,
) -> SagaOutcome {
    let mut outcome = SagaOutcome::Compensated;
    for (step, key) in done.iter().rev() {
        let client = clients.get(*step);
        let undone = run_step(client, order, Action::Compensate, key, &cfg.compensate, rng).await;
        if undone.is_err() {
            outcome = SagaOutcome::NeedsHuman;
        }
    }
    outcome
}
// ANCHOR_END: run_checkout
