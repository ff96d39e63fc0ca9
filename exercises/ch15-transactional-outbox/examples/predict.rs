//! Predict, then run: how a relay drains the outbox, and what a crash in the middle costs.
//!
//! `cargo run -p ch15_transactional_outbox --example predict` uses your `place_order` and
//! `relay_once` (finish the exercise first) and prints two experiments (book §15.7):
//!
//! 1. 100 orders, a broker that refuses 30 % of publishes, a relay that takes 10 rows per pass:
//!    how many passes and publish attempts until nothing is pending?
//! 2. The relay process dies while it publishes the 4th of 10 events, once after the broker
//!    stored the event and once before. After a restart and one more pass, how many events
//!    arrived twice, and how many never arrived? The same for a relay that marks a row `sent`
//!    *before* publishing it.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;

use ch15_transactional_outbox::schema::migrate;
use ch15_transactional_outbox::{
    Broker, BrokerError, FlakyBroker, Millis, NewOrder, NoFaults, OutboxEvent, place_order,
    relay_once,
};
use rusqlite::{Connection, params};

/// The seed of the flaky broker: the same seed, the same run.
const SEED: u64 = 15;
/// The message of the simulated crash.
const CRASH: &str = "the relay process died";

fn pending(conn: &Connection) -> i64 {
    conn.query_row(
        "SELECT COUNT(*) FROM outbox WHERE status = 'pending'",
        [],
        |row| row.get(0),
    )
    .expect("counting pending rows")
}

/// Places `count` orders, one every 10 ms from t = 1 s.
fn place_orders(conn: &mut Connection, count: i64) {
    for i in 0..count {
        let order = NewOrder::new(format!("customer-{i}"), 1_000 + i);
        place_order(conn, &order, 1_000 + 10 * i, &mut NoFaults).expect("placing an order");
    }
}

fn drain_a_flaky_broker() {
    let mut conn = Connection::open_in_memory().expect("opening a database");
    migrate(&conn).expect("creating the schema");
    place_orders(&mut conn, 100);

    let mut broker = FlakyBroker::new(0.3, SEED);
    let mut passes = 0;
    // A relay that never marks anything would loop forever: give up after 1 000 passes.
    while pending(&conn) > 0 && passes < 1_000 {
        passes += 1;
        let now = 10_000 + 1_000 * passes;
        relay_once(&conn, &mut broker, now, 10).expect("a relay pass");
    }
    let distinct: BTreeSet<i64> = broker.delivered().iter().map(|event| event.id).collect();
    println!("1. 100 orders, a broker that refuses 30 % of publishes, 10 rows per pass");
    println!("   passes until nothing was pending: {passes}");
    println!("   publish attempts:                 {}", broker.attempts());
    println!(
        "   events delivered:                 {}",
        broker.delivered().len()
    );
    println!("   distinct events delivered:        {}", distinct.len());
}

/// Where the simulated crash strikes during the publish of one event.
#[derive(Clone, Copy)]
enum Crash {
    /// The broker stored the event; the process died before it heard the acknowledgement.
    AfterTheBrokerStoredIt,
    /// The process died before the event left it.
    BeforeTheBrokerStoredIt,
}

/// A broker that kills the relay process (a panic) while it publishes the event `crash_on`.
struct CrashingBroker {
    crash_on: Option<(i64, Crash)>,
    delivered: BTreeMap<i64, usize>,
}

impl Broker for CrashingBroker {
    fn publish(&mut self, event: &OutboxEvent) -> Result<(), BrokerError> {
        match self.crash_on {
            Some((id, Crash::BeforeTheBrokerStoredIt)) if id == event.id => {
                self.crash_on = None;
                panic::panic_any(CRASH);
            }
            Some((id, Crash::AfterTheBrokerStoredIt)) if id == event.id => {
                self.crash_on = None;
                *self.delivered.entry(event.id).or_default() += 1;
                panic::panic_any(CRASH);
            }
            _ => {
                *self.delivered.entry(event.id).or_default() += 1;
                Ok(())
            }
        }
    }
}

/// The wrong order: mark the row `sent`, then publish. A crash between the two loses the event.
fn relay_marking_first(conn: &Connection, broker: &mut impl Broker, now: Millis, limit: usize) {
    let mut statement = conn
        .prepare(
            "SELECT id, aggregate_id, event_type, payload, created_at FROM outbox
             WHERE status = 'pending' ORDER BY created_at, id LIMIT ?1",
        )
        .expect("preparing the batch query");
    let batch: Vec<OutboxEvent> = statement
        .query_map([limit as i64], |row| {
            Ok(OutboxEvent {
                id: row.get(0)?,
                aggregate_id: row.get(1)?,
                event_type: row.get(2)?,
                payload: row.get(3)?,
                created_at: row.get(4)?,
            })
        })
        .and_then(|rows| rows.collect())
        .expect("reading the batch");
    // ANCHOR: mark_first
    for event in &batch {
        conn.execute(
            "UPDATE outbox SET sent_at = ?1, status = 'sent' WHERE id = ?2",
            params![now, event.id],
        )
        .expect("marking a row");
        if broker.publish(event).is_err() {
            // Too late: the row already says `sent`.
        }
    }
    // ANCHOR_END: mark_first
}

/// Runs one crash experiment on a database file, and returns (duplicates, lost events).
fn crash_experiment(crash: Crash, mark_first: bool, run: u32) -> (usize, usize) {
    let path: PathBuf =
        std::env::temp_dir().join(format!("ch15-predict-{}-{run}.sqlite", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut conn = Connection::open(&path).expect("creating the database file");
    migrate(&conn).expect("creating the schema");
    place_orders(&mut conn, 10);
    let fourth: i64 = conn
        .query_row(
            "SELECT id FROM outbox ORDER BY created_at, id LIMIT 1 OFFSET 3",
            [],
            |row| row.get(0),
        )
        .expect("finding the 4th event");

    let mut broker = CrashingBroker {
        crash_on: Some((fourth, crash)),
        delivered: BTreeMap::new(),
    };
    let relay = |conn: &Connection, broker: &mut CrashingBroker, now: Millis| {
        if mark_first {
            relay_marking_first(conn, broker, now, 100);
        } else {
            relay_once(conn, broker, now, 100).expect("a relay pass");
        }
    };
    // The first pass dies halfway. The process is gone: close the database, open it again.
    let crashed = panic::catch_unwind(AssertUnwindSafe(|| relay(&conn, &mut broker, 20_000)));
    assert!(crashed.is_err(), "the simulated crash did not happen");
    drop(conn);
    let conn = Connection::open(&path).expect("reopening the database file");
    relay(&conn, &mut broker, 30_000);
    drop(conn);
    let _ = std::fs::remove_file(&path);

    let duplicates = broker
        .delivered
        .values()
        .filter(|&&times| times > 1)
        .count();
    let lost = 10 - broker.delivered.len();
    (duplicates, lost)
}

fn crash_in_the_middle() {
    println!("2. the relay dies while publishing the 4th of 10 events; restart, one more pass");
    println!(
        "   | crash                       | publish, then mark     | mark, then publish     |"
    );
    println!(
        "   |-----------------------------|------------------------|------------------------|"
    );
    let mut run = 0;
    for (label, crash) in [
        ("after the broker stored it", Crash::AfterTheBrokerStoredIt),
        (
            "before the broker stored it",
            Crash::BeforeTheBrokerStoredIt,
        ),
    ] {
        let mut cells = Vec::new();
        for mark_first in [false, true] {
            run += 1;
            let (duplicates, lost) = crash_experiment(crash, mark_first, run);
            cells.push(format!("{duplicates} duplicate(s), {lost} lost"));
        }
        println!("   | {label:<27} | {:<22} | {:<22} |", cells[0], cells[1]);
    }
}

fn main() {
    // The simulated crashes are panics on purpose: keep their messages off the screen, and
    // show every other panic (a `todo!()` still in the exercise, for one) as usual.
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&CRASH) {
            default_hook(info);
        }
    }));
    drain_a_flaky_broker();
    println!();
    crash_in_the_middle();
}
