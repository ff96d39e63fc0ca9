//! Shared by the checks of chapter 17: a database with rows seeded by the checks' own SQL, a
//! scripted broker, fault injection, and readers that see every column. No checks live here.
//! The checks never rely on the exercise's given helpers to read or seed the database.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use exercise::{Broker, Event, PublishError, RelayConfig};
use rusqlite::{Connection, OptionalExtension, params};

/// A fresh in-memory database with the exercise's schema.
pub fn db() -> Connection {
    exercise::db::open_in_memory().expect("the given schema applies to an in-memory database")
}

/// A relay policy for the checks: 10 rows a pass, backoff from 1 s to 8 s.
pub fn config(max_attempts: u32) -> RelayConfig {
    RelayConfig {
        batch_size: 10,
        max_attempts,
        base_ms: 1_000,
        cap_ms: 8_000,
    }
}

/// One outbox row, every column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    pub id: i64,
    pub aggregate_id: String,
    pub event_type: String,
    pub payload: String,
    pub status: String,
    pub attempts: i64,
    pub next_retry_at: Option<i64>,
    pub last_attempt_at: Option<i64>,
    pub last_error: Option<String>,
    pub created_at: i64,
}

impl fmt::Display for OutboxRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{{status: {}, attempts: {}, next_retry_at: {}, last_attempt_at: {}, last_error: {:?}, \
             payload: {}}}",
            self.status,
            self.attempts,
            opt(self.next_retry_at),
            opt(self.last_attempt_at),
            self.last_error,
            self.payload,
        )
    }
}

/// One dead letter, every column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadRow {
    pub id: i64,
    pub aggregate_id: String,
    pub event_type: String,
    pub payload: String,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub reason: String,
    pub created_at: i64,
    pub failed_at: i64,
}

impl fmt::Display for DeadRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{{reason: {:?}, attempts: {}, last_error: {:?}, failed_at: {}, created_at: {}, \
             payload: {}}}",
            self.reason,
            self.attempts,
            self.last_error,
            self.failed_at,
            self.created_at,
            self.payload,
        )
    }
}

/// `NULL` or the number.
pub fn opt(value: Option<i64>) -> String {
    value.map_or("NULL".to_owned(), |v| v.to_string())
}

/// Writes a row with the given state; returns its id.
pub fn seed(conn: &Connection, payload: &str, status: &str, attempts: i64, created_at: i64) -> i64 {
    let last_error = (attempts > 0).then(|| format!("error of attempt {attempts}"));
    let last_attempt_at = (attempts > 0).then_some(created_at + 500);
    // A pending row that has failed before carries the schedule its last failure gave it (due
    // 1 ms after it was written, so the due order stays the order of writing): a row failed now
    // must lose it, whatever the branch.
    let next_retry_at = (attempts > 0 && status == "pending").then_some(created_at + 1);
    conn.execute(
        "INSERT INTO outbox (aggregate_id, event_type, payload, status, attempts,
                             next_retry_at, last_attempt_at, last_error, created_at)
         VALUES (?1, 'OrderPlaced', ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            format!("order-{created_at}"),
            payload,
            status,
            attempts,
            next_retry_at,
            last_attempt_at,
            last_error,
            created_at
        ],
    )
    .expect("seeding an outbox row");
    conn.last_insert_rowid()
}

/// Writes a pending row, never tried, created at `created_at`; returns its id.
pub fn write(conn: &Connection, payload: &str, created_at: i64) -> i64 {
    seed(conn, payload, "pending", 0, created_at)
}

/// Puts a dead letter straight into `dead_letters`, as an earlier move would have.
pub fn seed_dead(conn: &Connection, dead: &DeadRow) {
    conn.execute(
        "INSERT INTO dead_letters (id, aggregate_id, event_type, payload, attempts, last_error,
                                   reason, created_at, failed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            dead.id,
            dead.aggregate_id,
            dead.event_type,
            dead.payload,
            dead.attempts,
            dead.last_error,
            dead.reason,
            dead.created_at,
            dead.failed_at
        ],
    )
    .expect("seeding a dead letter");
}

/// A dead letter of event `id` that failed `attempts` times.
pub fn dead(id: i64, reason: &str, attempts: i64) -> DeadRow {
    DeadRow {
        id,
        aggregate_id: format!("order-{id}"),
        event_type: "OrderPlaced".to_owned(),
        payload: format!(r#"{{"order":{id}}}"#),
        attempts,
        last_error: Some("503 Service Unavailable".to_owned()),
        reason: reason.to_owned(),
        created_at: 1_000,
        failed_at: 9_000,
    }
}

pub fn outbox_row(conn: &Connection, id: i64) -> Option<OutboxRow> {
    conn.query_row(
        "SELECT id, aggregate_id, event_type, payload, status, attempts, next_retry_at,
                last_attempt_at, last_error, created_at
           FROM outbox WHERE id = ?1",
        [id],
        |row| {
            Ok(OutboxRow {
                id: row.get(0)?,
                aggregate_id: row.get(1)?,
                event_type: row.get(2)?,
                payload: row.get(3)?,
                status: row.get(4)?,
                attempts: row.get(5)?,
                next_retry_at: row.get(6)?,
                last_attempt_at: row.get(7)?,
                last_error: row.get(8)?,
                created_at: row.get(9)?,
            })
        },
    )
    .optional()
    .expect("reading an outbox row")
}

pub fn dead_row(conn: &Connection, id: i64) -> Option<DeadRow> {
    conn.query_row(
        "SELECT id, aggregate_id, event_type, payload, attempts, last_error, reason, created_at,
                failed_at
           FROM dead_letters WHERE id = ?1",
        [id],
        |row| {
            Ok(DeadRow {
                id: row.get(0)?,
                aggregate_id: row.get(1)?,
                event_type: row.get(2)?,
                payload: row.get(3)?,
                attempts: row.get(4)?,
                last_error: row.get(5)?,
                reason: row.get(6)?,
                created_at: row.get(7)?,
                failed_at: row.get(8)?,
            })
        },
    )
    .optional()
    .expect("reading a dead letter")
}

/// Every id in `table`, with its payload.
pub fn contents(conn: &Connection, table: &str) -> BTreeMap<i64, String> {
    let mut statement = conn
        .prepare(&format!("SELECT id, payload FROM {table}"))
        .expect("reading a table");
    statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .expect("reading a table")
        .collect::<rusqlite::Result<_>>()
        .expect("reading a table")
}

pub fn ids(conn: &Connection, table: &str) -> BTreeSet<i64> {
    contents(conn, table).into_keys().collect()
}

/// A write that fails while injected: a temporary trigger aborting the statement, so the
/// statements before it in the same transaction have already run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    InsertIntoOutbox,
    UpdateOutbox,
    DeleteFromOutbox,
    InsertIntoDeadLetters,
    DeleteFromDeadLetters,
}

impl Fault {
    pub fn statement(self) -> &'static str {
        match self {
            Fault::InsertIntoOutbox => "INSERT INTO outbox",
            Fault::UpdateOutbox => "UPDATE outbox",
            Fault::DeleteFromOutbox => "DELETE FROM outbox",
            Fault::InsertIntoDeadLetters => "INSERT INTO dead_letters",
            Fault::DeleteFromDeadLetters => "DELETE FROM dead_letters",
        }
    }

    fn parts(self) -> (&'static str, &'static str) {
        match self {
            Fault::InsertIntoOutbox => ("INSERT", "outbox"),
            Fault::UpdateOutbox => ("UPDATE", "outbox"),
            Fault::DeleteFromOutbox => ("DELETE", "outbox"),
            Fault::InsertIntoDeadLetters => ("INSERT", "dead_letters"),
            Fault::DeleteFromDeadLetters => ("DELETE", "dead_letters"),
        }
    }
}

pub fn inject(conn: &Connection, fault: Fault) {
    let (operation, table) = fault.parts();
    conn.execute_batch(&format!(
        "CREATE TEMP TRIGGER IF NOT EXISTS check_fault_{operation}_{table}
             BEFORE {operation} ON main.{table}
         BEGIN SELECT RAISE(ABORT, 'injected fault: {}'); END;",
        fault.statement()
    ))
    .expect("injecting a fault");
}

pub fn clear(conn: &Connection, fault: Fault) {
    let (operation, table) = fault.parts();
    conn.execute_batch(&format!(
        "DROP TRIGGER IF EXISTS temp.check_fault_{operation}_{table};"
    ))
    .expect("clearing a fault");
}

/// What the scripted broker does with a payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Ack,
    Transient,
    Permanent,
}

/// A broker that answers by payload: listed payloads are rejected for good, or fail
/// transiently a number of times (`u32::MAX`: always); every other payload is acknowledged.
/// It records the ids it was called with and those it acknowledged.
#[derive(Debug, Default)]
pub struct Script {
    pub poison: BTreeSet<String>,
    pub flaky: BTreeMap<String, u32>,
    pub calls: Vec<i64>,
    pub acked: Vec<i64>,
}

/// Longer than chapter 16's 200-byte summary: a dead letter keeps the broker's words whole.
pub const POISON_MESSAGE: &str = "schema violation: total is not a number: field `total` of \
     event OrderPlaced (schema version 3) must be a decimal string written with a point, such as \
     \"12.50\", but the payload holds \"12,50\"; the consumer refuses the event for good";
pub const TRANSIENT_MESSAGE: &str = "503 Service Unavailable";

impl Script {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn poison(mut self, payload: &str) -> Self {
        self.poison.insert(payload.to_owned());
        self
    }

    pub fn flaky(mut self, payload: &str, times: u32) -> Self {
        self.flaky.insert(payload.to_owned(), times);
        self
    }

    pub fn calls_for(&self, id: i64) -> usize {
        self.calls.iter().filter(|&&call| call == id).count()
    }

    pub fn answer(&mut self, payload: &str) -> Answer {
        if self.poison.contains(payload) {
            return Answer::Permanent;
        }
        if let Some(left) = self.flaky.get_mut(payload)
            && *left > 0
        {
            *left = left.saturating_sub(1);
            return Answer::Transient;
        }
        Answer::Ack
    }
}

impl Broker for Script {
    fn publish(&mut self, event: &Event) -> Result<(), PublishError> {
        self.calls.push(event.id);
        assert!(
            self.calls.len() <= 10_000,
            "the relay called the broker more than 10,000 times in one check; a poison \
             message must be tried once per pass at most, never in a loop"
        );
        match self.answer(&event.payload) {
            Answer::Ack => {
                self.acked.push(event.id);
                Ok(())
            }
            Answer::Transient => Err(PublishError::Transient(TRANSIENT_MESSAGE.to_owned())),
            Answer::Permanent => Err(PublishError::Permanent(POISON_MESSAGE.to_owned())),
        }
    }
}

/// The text of an error or a panic, for a message.
pub fn describe<T: fmt::Debug, E: fmt::Display>(outcome: &Result<Result<T, E>, String>) -> String {
    match outcome {
        Ok(Ok(value)) => format!("Ok({value:?})"),
        Ok(Err(error)) => format!("Err({error})"),
        Err(panic) => format!("a panic ({panic})"),
    }
}
