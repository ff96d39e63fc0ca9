//! Shared helpers of chapter 26's edge checks (no checks of their own): services, clients, a
//! broker and an outbox built from the given types, with the trouble placed exactly where a
//! check needs it, so that `relay_pass` and `run_step` can be driven to the edges of their rules
//! (a row's last attempt, a hint above `max_hint`, a wait ending at the step's budget), which
//! the chaos of the chapter's scenario never reaches.

use std::rc::Rc;
use std::time::Duration;

use exercise::chaos::{BrokerChaos, Storm, Window};
use exercise::services::Service;
use exercise::{
    Action, Broker, BudgetConfig, ChaosLevels, ChaosSchedule, Client, Clock, Db, Millis, OrderId,
    Step, StepPolicy,
};

pub const MS: Duration = Duration::from_millis(1);
pub const SEC: Duration = Duration::from_secs(1);

/// The most a moment the code scheduled and the moment it happens may differ: tokio's timer
/// fires on the first 1 ms tick at or after a deadline.
pub const TICK: Duration = MS;

/// How long the given services take to answer a 503 and a 500.
pub const UNAVAILABLE_LATENCY: Duration = Duration::from_millis(5);
pub const FAILED_LATENCY: Duration = Duration::from_millis(20);

/// The trouble lasts 30 days: longer than any check runs (the longest, a few hours).
const CHAOS_LASTS: Duration = Duration::from_secs(30 * 86_400);

/// Chaos levels without any trouble; a check switches on the one it needs.
pub fn quiet() -> ChaosLevels {
    ChaosLevels {
        placement_crash: 0.0,
        max_storms: 0,
        max_storm_secs: 3,
        max_spikes: 0,
        failure_rate: 0.0,
        slow_rate: 0.0,
        hang_rate: 0.0,
        decline_rate: 0.0,
        out_of_stock_rate: 0.0,
        broker_max_storms: 0,
        broker_failure_rate: 0.0,
        broker_lost_rate: 0.0,
        broker_slow_rate: 0.0,
        broker_duplicate_rate: 0.0,
        max_relay_crashes: 1,
    }
}

/// The schedule of `levels` under `seed`, its trouble lasting until `calm_at`.
pub fn schedule(seed: u64, levels: &ChaosLevels, calm_at: Duration) -> ChaosSchedule {
    ChaosSchedule::generate(seed, 0, Duration::ZERO, calm_at, levels)
}

/// What a test service does with every call.
#[derive(Debug, Clone, Copy)]
pub enum Trouble {
    /// Answers at once (10 to 80 ms) and does the work.
    None,
    /// HTTP 500 after 20 ms, nothing done: a transient failure without a hint.
    Fails,
    /// Never answers, nothing done.
    Hangs,
    /// Refuses for good (402 at the payment service): a permanent error.
    Refuses,
    /// 503 with this `Retry-After`, after 5 ms, for every call that arrives before `until`;
    /// answers normally after it.
    Storm {
        retry_after: Duration,
        until: Duration,
    },
}

/// The payment service, in trouble as `trouble` says, on `clock`.
pub fn payment_service(trouble: Trouble, clock: Clock) -> Rc<Service> {
    let mut levels = quiet();
    match trouble {
        Trouble::Fails => levels.failure_rate = 1.0,
        Trouble::Hangs => levels.hang_rate = 1.0,
        Trouble::Refuses => levels.decline_rate = 1.0,
        Trouble::None | Trouble::Storm { .. } => {}
    }
    let mut chaos = schedule(26, &levels, CHAOS_LASTS)
        .service(Step::Payment)
        .clone();
    if let Trouble::Storm { retry_after, until } = trouble {
        chaos.storms = vec![Storm {
            window: window(until),
            retry_after,
        }];
    }
    Rc::new(Service::new(chaos, clock))
}

/// A client of `service` with an unlimited retry budget: nothing but the policy stops a retry.
pub fn unlimited_client(service: &Rc<Service>) -> Client {
    Client::new(Rc::clone(service), None)
}

/// A client of `service` with the chapter's budget (10 tokens, 0.1 per success), the budget of
/// `action` drained by `failures` failed calls first.
pub fn budgeted_client(service: &Rc<Service>, action: Action, failures: u32) -> Client {
    let client = Client::new(Rc::clone(service), Some(BudgetConfig::default()));
    for _ in 0..failures {
        client.budget(action).on_failure();
    }
    client
}

/// A step policy: `max_attempts` in all, full jitter from `base` up to `cap`, each attempt cut
/// at `per_attempt_timeout`, the whole step within `total_budget`.
pub fn policy(
    max_attempts: u32,
    base: Duration,
    cap: Duration,
    per_attempt_timeout: Duration,
    total_budget: Duration,
) -> StepPolicy {
    StepPolicy {
        max_attempts,
        base,
        cap,
        per_attempt_timeout,
        total_budget,
    }
}

/// What the broker does with every publish.
#[derive(Debug, Clone, Copy)]
pub enum BrokerTrouble {
    /// 503 without `Retry-After`, after 5 ms: not received.
    Fails,
    /// Lost on the way: never answered, so the relay's publish timeout cuts it.
    Loses,
    /// 503 with this `Retry-After`, after 5 ms.
    Storm(Duration),
    /// Each publish of an event fails (503 without a hint) or is acknowledged, by the given
    /// chaos's hash of the seed and the event: half of them fail.
    Mixed(u64),
}

/// The broker's chaos for `trouble`.
pub fn broker_chaos(trouble: BrokerTrouble) -> BrokerChaos {
    let mut levels = quiet();
    let mut seed = 26;
    match trouble {
        BrokerTrouble::Fails => levels.broker_failure_rate = 1.0,
        BrokerTrouble::Loses => levels.broker_lost_rate = 1.0,
        BrokerTrouble::Storm(_) => {}
        BrokerTrouble::Mixed(mixed_seed) => {
            levels.broker_failure_rate = 0.5;
            seed = mixed_seed;
        }
    }
    let mut chaos = schedule(seed, &levels, CHAOS_LASTS).broker;
    if let BrokerTrouble::Storm(retry_after) = trouble {
        chaos.storms = vec![Storm {
            window: window(CHAOS_LASTS),
            retry_after,
        }];
    }
    chaos
}

/// A broker that acknowledges every event but `rejected`, which it refuses for good (422).
pub fn rejecting_broker(rejected: Vec<i64>, clock: Clock) -> Broker {
    let mut chaos = schedule(26, &quiet(), CHAOS_LASTS).broker;
    chaos.rejected = rejected;
    broker(chaos, clock)
}

/// A broker that never crashes the relay, in trouble as `chaos` says.
pub fn broker(chaos: BrokerChaos, clock: Clock) -> Broker {
    Broker::new(chaos, Vec::new(), Millis::MAX, clock)
}

/// `[0, until)`.
fn window(until: Duration) -> Window {
    Window {
        start: 0,
        end: exercise::millis(until),
    }
}

/// One outbox row as the database holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub status: String,
    pub attempts: u32,
    pub next_retry_at: Option<Millis>,
}

impl Row {
    pub fn describe(&self) -> String {
        let next = self
            .next_retry_at
            .map_or_else(|| "none".to_owned(), |at| format!("{at} ms"));
        format!(
            "status `{}`, attempts {}, next_retry_at {next}",
            self.status, self.attempts
        )
    }
}

/// An outbox with one committed order per entry of `created_at`, oldest first; returns the
/// database and the rows' ids (each row's id is its event's id).
pub fn outbox(created_at: &[Millis]) -> (Db, Vec<i64>) {
    let db = Db::open_in_memory().expect("an in-memory database opens");
    let ids = created_at
        .iter()
        .enumerate()
        .map(|(index, at)| {
            let order: OrderId = db
                .place_order(&format!("customer-{index}"), 1_000, *at, false)
                .expect("place_order works on a fresh database")
                .expect("no crash was asked for");
            db.conn()
                .query_row(
                    "SELECT id FROM outbox WHERE aggregate_id = ?1",
                    [order.0],
                    |row| row.get(0),
                )
                .expect("the order has its outbox row")
        })
        .collect();
    (db, ids)
}

/// Makes row `id` pending, as if `attempts` publishes of it had failed, and due at its creation.
pub fn set_attempts(db: &Db, id: i64, attempts: u32) {
    db.conn()
        .execute(
            "UPDATE outbox SET status = 'pending', sent_at = NULL, attempts = ?1,
                 next_retry_at = created_at, last_attempt_at = created_at,
                 last_error = 'HTTP 503'
             WHERE id = ?2",
            [i64::from(attempts), id],
        )
        .expect("the row can be updated");
}

/// Row `id` as the database holds it now.
pub fn row(db: &Db, id: i64) -> Row {
    db.conn()
        .query_row(
            "SELECT status, attempts, next_retry_at FROM outbox WHERE id = ?1",
            [id],
            |row| {
                Ok(Row {
                    status: row.get(0)?,
                    attempts: row.get(1)?,
                    next_retry_at: row.get(2)?,
                })
            },
        )
        .expect("the row exists")
}
