//! Checks of the whole pipeline: every committed order's event is published at least once,
//! whatever the broker and the relay process do, and nothing is published for an order that
//! does not exist.

use std::collections::BTreeSet;

use exercise::{FailBetweenInserts, NewOrder, NoFaults};
use rand::RngExt;

use super::fixture::{
    CRASH, FileDb, Reply, TestBroker, count, ids, memory_db, order_rows, outbox_rows, place_many,
    relay,
};
use super::support::{catch, seeded};

/// Passes the relay gets to drain a flaky broker before the check gives up.
const MAX_PASSES: i64 = 400;

#[test]
fn every_committed_order_published() {
    for seed in 0..8 {
        let mut conn = memory_db();
        let orders: Vec<i64> = place_many(&mut conn, 30)
            .into_iter()
            .map(|id| id.0)
            .collect();
        let mut rng = seeded(seed);
        let mut broker = TestBroker::scripted(move |_, _| {
            if rng.random_bool(0.5) {
                Reply::Refuse
            } else {
                Reply::Ack
            }
        });

        let mut passes = 0;
        while count(&conn, "outbox WHERE status = 'pending'") > 0 && passes < MAX_PASSES {
            passes += 1;
            relay(&conn, &mut broker, 100_000 + 1_000 * passes, 7);
        }
        let pending = count(&conn, "outbox WHERE status = 'pending'");
        assert_eq!(
            pending,
            0,
            "with a broker that refuses half of all publishes (seed {seed}), {MAX_PASSES} relay \
             passes of limit 7 over 30 events should have drained the outbox; {pending} row(s) \
             are still pending after {} publish attempts",
            broker.attempts.len(),
        );
        let published: BTreeSet<i64> = broker.delivered_aggregates().into_iter().collect();
        let missing: Vec<i64> = orders
            .iter()
            .copied()
            .filter(|order| !published.contains(order))
            .collect();
        assert!(
            missing.is_empty(),
            "every committed order's event must eventually reach the broker; with a broker that \
             refuses half of all publishes (seed {seed}), after {passes} passes and {} publish \
             attempts the outbox shows nothing pending, yet the events of orders {} were never \
             acknowledged: rows were marked sent without an ack",
            broker.attempts.len(),
            ids(&missing),
        );
    }
}

/// Runs a pass that the broker crashes on outbox row `target`, "restarts" the relay process on
/// a new connection, and runs one more pass. Returns the broker and the database.
fn crash_and_restart(name: &str, crash: Reply) -> (TestBroker, FileDb, i64, Vec<i64>) {
    let db = FileDb::create(name);
    let mut conn = db.open();
    place_many(&mut conn, 6);
    let events: Vec<i64> = outbox_rows(&conn).iter().map(|row| row.id).collect();
    let target = events[3];
    let mut broker = TestBroker::scripted(move |event, nth| {
        if event.id == target && nth == 1 {
            crash
        } else {
            Reply::Ack
        }
    });

    match catch(|| exercise::relay_once(&conn, &mut broker, 10_000, 100)) {
        Err(message) if message == CRASH => {}
        Err(message) => panic!("relay_once(now = 10000, limit = 100) panicked: {message}"),
        Ok(result) => panic!(
            "the broker was set to crash the relay while publishing outbox row {target} (the 4th \
             of 6 pending events), but your relay_once returned {result:?} without publishing it"
        ),
    }
    // The process is gone: whatever it had not committed is rolled back when its connection
    // closes. A new process opens the database and runs the relay again.
    drop(conn);
    let conn = db.open();
    relay(&conn, &mut broker, 20_000, 100);
    let pending = count(&conn, "outbox WHERE status = 'pending'");
    assert_eq!(
        pending, 0,
        "after the crash and one more pass, nothing should be pending; {pending} row(s) are"
    );
    drop(conn);
    (broker, db, target, events)
}

#[test]
fn crash_after_publish_republishes() {
    let (broker, _db, target, events) = crash_and_restart("crash_after", Reply::CrashAfterSend);
    let deliveries = broker.deliveries();
    let lost: Vec<i64> = events
        .iter()
        .copied()
        .filter(|id| !deliveries.contains_key(id))
        .collect();
    assert!(
        lost.is_empty(),
        "after a crash and a restart, events {} never reached the broker: they are lost",
        ids(&lost),
    );
    let times = broker.times_delivered(target);
    assert!(
        times >= 2,
        "the broker stored event {target}, then the relay crashed before it could mark the row \
         sent. The row must still be pending after the restart, so the next pass publishes it \
         again: at-least-once delivery allows exactly this duplicate (expected 2 deliveries). \
         Yours delivered it {times} time(s): the row was marked sent before the broker's ack",
    );
}

#[test]
fn crash_before_ack_loses_nothing() {
    let (broker, _db, target, events) = crash_and_restart("crash_before", Reply::CrashBeforeSend);
    let deliveries = broker.deliveries();
    let lost: Vec<i64> = events
        .iter()
        .copied()
        .filter(|id| !deliveries.contains_key(id))
        .collect();
    assert!(
        lost.is_empty(),
        "the relay crashed while publishing event {target}, before the broker stored it. After \
         the restart and one more pass, events {} never reached the broker, yet their rows say \
         'sent': they are lost. Mark a row only after the broker's ack",
        ids(&lost),
    );
}

#[test]
fn rolled_back_orders_publish_nothing() {
    let mut conn = memory_db();
    let mut confirmed = Vec::new();
    let mut refused = Vec::new();
    for (i, fail) in [false, true, false, true, false].into_iter().enumerate() {
        let order = NewOrder::new(format!("customer-{i}"), 100);
        let now = 1_000 * (i as i64 + 1);
        let result = catch(|| {
            if fail {
                exercise::place_order(&mut conn, &order, now, &mut FailBetweenInserts)
            } else {
                exercise::place_order(&mut conn, &order, now, &mut NoFaults)
            }
        })
        .unwrap_or_else(|message| panic!("place_order panicked: {message}"));
        match (fail, result) {
            (false, Ok(id)) => confirmed.push(id.0),
            (false, Err(error)) => panic!("place_order without a fault returned {error}"),
            (true, Ok(id)) => panic!(
                "place_order with a fault between its inserts returned Ok({id:?}); the caller \
                 must be told the order failed"
            ),
            (true, Err(_)) => refused.push(i + 1),
        }
    }

    let mut broker = TestBroker::acking();
    relay(&conn, &mut broker, 10_000, 100);
    relay(&conn, &mut broker, 20_000, 100);

    let existing: Vec<i64> = order_rows(&conn).iter().map(|row| row.id).collect();
    let published = broker.delivered_aggregates();
    let phantom: Vec<i64> = published
        .iter()
        .copied()
        .filter(|id| !confirmed.contains(id))
        .collect();
    assert!(
        phantom.is_empty(),
        "of 5 orders, attempts {refused:?} failed and place_order said so; only orders {} were \
         confirmed, yet the relay published events about orders {}. Consumers now act on orders \
         the customer was told failed (the database holds orders {}). Nothing of a failed \
         place_order may be committed",
        ids(&confirmed),
        ids(&phantom),
        ids(&existing),
    );
    let stray: Vec<i64> = existing
        .iter()
        .copied()
        .filter(|id| !confirmed.contains(id))
        .collect();
    assert!(
        stray.is_empty(),
        "of 5 orders, attempts {refused:?} failed and place_order said so, yet the database holds \
         orders {} besides the confirmed {}: part of a failed place_order was committed: orders \
         that no event will ever announce",
        ids(&stray),
        ids(&confirmed),
    );
    let mut published = published;
    published.sort_unstable();
    assert!(
        existing == confirmed && published == confirmed,
        "the confirmed orders {} must exist and each must have its event published once; the \
         database holds orders {} and the broker received events about orders {}",
        ids(&confirmed),
        ids(&existing),
        ids(&published),
    );
}

#[test]
fn acked_rows_marked_at_once() {
    for (name, crash, in_flight) in [
        ("marked_at_once_after", Reply::CrashAfterSend, 2),
        ("marked_at_once_before", Reply::CrashBeforeSend, 1),
    ] {
        let (broker, db, target, events) = crash_and_restart(name, crash);
        let deliveries = broker.deliveries();
        let position = events.iter().position(|&id| id == target).unwrap_or(0) + 1;
        // A relay that publishes sent rows again also delivers events twice: one more pass,
        // with nothing pending, tells it from one whose marks were lost in the crash.
        let republished = {
            let conn = db.open();
            let mut idle = TestBroker::acking();
            relay(&conn, &mut idle, 30_000, 100);
            idle.attempts.len()
        };
        let twice: Vec<i64> = events
            .iter()
            .copied()
            .filter(|&id| id != target && deliveries.get(&id).copied().unwrap_or(0) > 1)
            .collect();
        let when = if crash == Reply::CrashAfterSend {
            "after the broker stored it"
        } else {
            "before the broker stored it"
        };
        assert!(
            twice.is_empty(),
            "the relay crashed while publishing event {target} (the {position}th of {}), {when}. \
             Each event acknowledged before that must already be marked sent, since a row is \
             marked as soon as the broker acknowledges it, so only the event in flight may be \
             published again after the restart (expected {in_flight} delivery of event \
             {target}, 1 of every other). Yours delivered events {} more than once: {}",
            events.len(),
            ids(&twice),
            if republished > 0 {
                format!(
                    "a pass with nothing pending still published {republished} event(s), so \
                     sent rows are selected again. Select only status = 'pending'"
                )
            } else {
                "their marks were still waiting when the process died. Mark each row right \
                 after its ack, not at the end of the pass"
                    .to_owned()
            },
        );
    }
}
