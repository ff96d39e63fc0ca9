//! Shared by chapter 15's checks: databases, row readers, calls into the graded crate that turn
//! errors and panics into readable failures, and a broker that misbehaves on cue.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use exercise::{Broker, BrokerError, NewOrder, NoFaults, OrderId, OutboxEvent, RelayStats};
use rusqlite::{Connection, params};

use super::support::catch;

/// The panic message of a simulated crash of the relay process.
pub const CRASH: &str = "simulated crash of the relay process";

/// A fresh in-memory database with the chapter's schema.
pub fn memory_db() -> Connection {
    let conn = Connection::open_in_memory().expect("opening an in-memory database");
    exercise::schema::migrate(&conn).expect("creating the chapter's schema");
    conn
}

/// A database file in the check's scratch folder, for checks that "crash" a process and open
/// the database again, or that need a second connection.
pub struct FileDb {
    path: PathBuf,
}

impl FileDb {
    /// A new, empty database file named after the check, with the schema applied.
    pub fn create(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("ch15-{name}-{}.sqlite", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let db = Self { path };
        let conn = db.open();
        exercise::schema::migrate(&conn).expect("creating the chapter's schema");
        db
    }

    /// A new connection: what a freshly started process would get.
    pub fn open(&self) -> Connection {
        let conn = Connection::open(&self.path).expect("opening the database file");
        // Durability against power loss is not under test; skipping fsync keeps checks fast.
        conn.pragma_update(None, "synchronous", "OFF")
            .expect("setting synchronous = OFF");
        conn.busy_timeout(Duration::from_millis(200))
            .expect("setting a busy timeout");
        conn
    }
}

impl Drop for FileDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The number of rows of `table` (optionally with a WHERE clause).
pub fn count(conn: &Connection, table_and_filter: &str) -> i64 {
    conn.query_row(
        &format!("SELECT COUNT(*) FROM {table_and_filter}"),
        [],
        |row| row.get(0),
    )
    .expect("counting rows")
}

/// One row of the `orders` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderRow {
    pub id: i64,
    pub customer: String,
    pub amount_cents: i64,
    pub created_at: i64,
}

/// Every order, by id.
pub fn order_rows(conn: &Connection) -> Vec<OrderRow> {
    let mut statement = conn
        .prepare("SELECT id, customer, amount_cents, created_at FROM orders ORDER BY id")
        .expect("reading orders");
    statement
        .query_map([], |row| {
            Ok(OrderRow {
                id: row.get(0)?,
                customer: row.get(1)?,
                amount_cents: row.get(2)?,
                created_at: row.get(3)?,
            })
        })
        .and_then(|rows| rows.collect())
        .expect("reading orders")
}

/// One row of the `outbox` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    pub id: i64,
    pub aggregate_id: i64,
    pub event_type: String,
    pub payload: String,
    pub status: String,
    pub created_at: i64,
    pub sent_at: Option<i64>,
}

/// Every outbox row, by id.
pub fn outbox_rows(conn: &Connection) -> Vec<OutboxRow> {
    let mut statement = conn
        .prepare(
            "SELECT id, aggregate_id, event_type, payload, status, created_at, sent_at
             FROM outbox ORDER BY id",
        )
        .expect("reading the outbox");
    statement
        .query_map([], |row| {
            Ok(OutboxRow {
                id: row.get(0)?,
                aggregate_id: row.get(1)?,
                event_type: row.get(2)?,
                payload: row.get(3)?,
                status: row.get(4)?,
                created_at: row.get(5)?,
                sent_at: row.get(6)?,
            })
        })
        .and_then(|rows| rows.collect())
        .expect("reading the outbox")
}

/// The outbox row of order `aggregate_id`.
pub fn event_of(conn: &Connection, aggregate_id: i64) -> Option<OutboxRow> {
    outbox_rows(conn)
        .into_iter()
        .find(|row| row.aggregate_id == aggregate_id)
}

/// Calls the learner's `place_order` without faults; any error or panic fails the check.
pub fn place(conn: &mut Connection, customer: &str, amount_cents: i64, now: i64) -> OrderId {
    let order = NewOrder::new(customer, amount_cents);
    match catch(|| exercise::place_order(conn, &order, now, &mut NoFaults)) {
        Ok(Ok(id)) => id,
        Ok(Err(error)) => panic!(
            "place_order({customer:?}, {amount_cents} cents, now = {now}) without any fault \
             returned an error: {error}"
        ),
        Err(message) => panic!(
            "place_order({customer:?}, {amount_cents} cents, now = {now}) panicked: {message}"
        ),
    }
}

/// Places `count` orders at `1_000, 2_000, …` ms and returns their ids.
pub fn place_many(conn: &mut Connection, count: i64) -> Vec<OrderId> {
    (1..=count)
        .map(|i| place(conn, &format!("customer-{i}"), 100 * i, 1_000 * i))
        .collect()
}

/// Writes an order and its pending event directly in SQL, as a correct `place_order` would, so
/// the relay's checks do not depend on the learner's `place_order`. Returns the order's id.
/// Outbox ids start at 101, so no event's id equals its order's id: a relay that reads one
/// column for the other hands the broker a wrong event.
pub fn seed_order(conn: &Connection, customer: &str, amount_cents: i64, now: i64) -> i64 {
    conn.execute(
        "INSERT INTO orders (customer, amount_cents, created_at) VALUES (?1, ?2, ?3)",
        params![customer, amount_cents, now],
    )
    .expect("seeding an order");
    let id = conn.last_insert_rowid();
    let payload =
        exercise::order_placed_payload(OrderId(id), &NewOrder::new(customer, amount_cents));
    conn.execute(
        "INSERT INTO outbox (id, aggregate_id, event_type, payload, status, created_at)
         VALUES ((SELECT COALESCE(MAX(id), 100) + 1 FROM outbox), ?1, ?2, ?3, 'pending', ?4)",
        params![id, exercise::ORDER_PLACED, payload, now],
    )
    .expect("seeding an event");
    id
}

/// Seeds `count` orders with their events at `1_000, 2_000, …` ms and returns the order ids.
pub fn seed_many(conn: &Connection, count: i64) -> Vec<i64> {
    (1..=count)
        .map(|i| seed_order(conn, &format!("customer-{i}"), 100 * i, 1_000 * i))
        .collect()
}

/// Calls the learner's `relay_once`; an error or a panic fails the check.
pub fn relay(conn: &Connection, broker: &mut TestBroker, now: i64, limit: usize) -> RelayStats {
    match catch(|| exercise::relay_once(conn, broker, now, limit)) {
        Ok(Ok(stats)) => stats,
        Ok(Err(error)) => panic!(
            "relay_once(now = {now}, limit = {limit}) returned an error: {error}; a refused \
             publish is counted in RelayStats, not returned"
        ),
        Err(message) => panic!("relay_once(now = {now}, limit = {limit}) panicked: {message}"),
    }
}

/// What the test broker does with one publish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// Stores the event and acknowledges it.
    Ack,
    /// Refuses the event: nothing stored, `Err` returned.
    Refuse,
    /// The relay process dies before the event leaves it: nothing stored, and a panic.
    CrashBeforeSend,
    /// The broker stores the event, then the relay process dies before it hears the
    /// acknowledgement: a panic.
    CrashAfterSend,
}

type Script = Box<dyn FnMut(&OutboxEvent, usize) -> Reply>;

/// A broker whose every reply comes from a script, `(event, nth attempt for this event) →
/// Reply`, and which remembers every attempt and every stored event.
pub struct TestBroker {
    script: Script,
    /// Outbox ids, one per publish call, in call order.
    pub attempts: Vec<i64>,
    /// Events the broker stored, in arrival order, duplicates included.
    pub delivered: Vec<OutboxEvent>,
}

impl TestBroker {
    /// Acknowledges everything.
    pub fn acking() -> Self {
        Self::scripted(|_, _| Reply::Ack)
    }

    pub fn scripted(script: impl FnMut(&OutboxEvent, usize) -> Reply + 'static) -> Self {
        Self {
            script: Box::new(script),
            attempts: Vec::new(),
            delivered: Vec::new(),
        }
    }

    /// How many times the event of outbox row `id` was stored.
    pub fn times_delivered(&self, id: i64) -> usize {
        self.delivered.iter().filter(|event| event.id == id).count()
    }

    /// How many times `publish` was called for outbox row `id`.
    pub fn times_attempted(&self, id: i64) -> usize {
        self.attempts
            .iter()
            .filter(|&&attempt| attempt == id)
            .count()
    }

    /// Deliveries per outbox id.
    pub fn deliveries(&self) -> BTreeMap<i64, usize> {
        let mut map = BTreeMap::new();
        for event in &self.delivered {
            *map.entry(event.id).or_default() += 1;
        }
        map
    }

    /// The aggregate ids of the stored events, in arrival order.
    pub fn delivered_aggregates(&self) -> Vec<i64> {
        self.delivered
            .iter()
            .map(|event| event.aggregate_id)
            .collect()
    }
}

impl Broker for TestBroker {
    fn publish(&mut self, event: &OutboxEvent) -> Result<(), BrokerError> {
        let nth = self.times_attempted(event.id) + 1;
        self.attempts.push(event.id);
        match (self.script)(event, nth) {
            Reply::Ack => {
                self.delivered.push(event.clone());
                Ok(())
            }
            Reply::Refuse => Err(BrokerError {
                reason: format!("refused by the check (attempt {nth} of event {})", event.id),
            }),
            Reply::CrashBeforeSend => std::panic::panic_any(CRASH),
            Reply::CrashAfterSend => {
                self.delivered.push(event.clone());
                std::panic::panic_any(CRASH)
            }
        }
    }
}

/// A list of ids for a message: `[1, 2, 3]`.
pub fn ids(values: &[i64]) -> String {
    let parts: Vec<String> = values.iter().map(i64::to_string).collect();
    format!("[{}]", parts.join(", "))
}
