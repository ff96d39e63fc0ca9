//! Checks of one relay pass: what it publishes, in which order, and what it writes back.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use exercise::RelayStats;

use super::fixture::{
    FileDb, Reply, TestBroker, count, event_of, ids, memory_db, outbox_rows, relay, seed_many,
    seed_order,
};
use super::support::catch;

fn stats(fetched: usize, published: usize, failed: usize) -> RelayStats {
    RelayStats {
        fetched,
        published,
        failed,
    }
}

#[test]
fn publishes_and_marks_sent() {
    let conn = memory_db();
    let orders = seed_many(&conn, 3);
    // Every column is the row's own: an event of another type with a payload of its own, and an
    // order changed after its event was written (the event still says what was committed).
    conn.execute(
        "INSERT INTO outbox (aggregate_id, event_type, payload, status, created_at)
         VALUES (?1, 'OrderConfirmed', '{\"confirmed\":true}', 'pending', 3500)",
        [orders[0]],
    )
    .expect("seeding an event of another type");
    conn.execute(
        "UPDATE orders SET amount_cents = 999 WHERE id = ?1",
        [orders[1]],
    )
    .expect("changing an order after its event was written");
    let rows = outbox_rows(&conn);
    let mut broker = TestBroker::acking();

    let result = relay(&conn, &mut broker, 10_000, 10);

    assert_eq!(
        result,
        stats(4, 4, 0),
        "one pass over 4 pending events with a broker that acknowledges everything should \
         return RelayStats {{ fetched: 4, published: 4, failed: 0 }}; yours returned {result:?}",
    );
    for row in &rows {
        let sent: Vec<_> = broker.delivered.iter().filter(|e| e.id == row.id).collect();
        assert_eq!(
            sent.len(),
            1,
            "the event of outbox row {} should reach the broker once in this pass; it arrived \
             {} time(s)",
            row.id,
            sent.len(),
        );
        let event = sent[0];
        assert!(
            event.aggregate_id == row.aggregate_id
                && event.event_type == row.event_type
                && event.payload == row.payload
                && event.created_at == row.created_at,
            "the event handed to the broker must carry the outbox row's columns as they are \
             stored (an outbox holds events of several types, and a payload says what was \
             committed, even if the order changed since); for row {} the table holds \
             (aggregate_id {}, {:?}, {}, created_at {}) and the broker got {event:?}",
            row.id,
            row.aggregate_id,
            row.event_type,
            row.payload,
            row.created_at,
        );
    }
    for row in outbox_rows(&conn) {
        assert!(
            row.status == "sent" && row.sent_at == Some(10_000),
            "after the broker acknowledged it, outbox row {} must be status 'sent' with sent_at \
             = now (10000); yours is status {:?}, sent_at {:?}",
            row.id,
            row.status,
            row.sent_at,
        );
    }
}

#[test]
fn keeps_sent_rows() {
    let conn = memory_db();
    seed_many(&conn, 4);
    let mut broker = TestBroker::acking();
    relay(&conn, &mut broker, 10_000, 10);

    let rows = outbox_rows(&conn);
    let sent = rows.iter().filter(|row| row.status == "sent").count();
    assert!(
        rows.len() == 4 && sent == 4,
        "after publishing 4 events the outbox must still hold 4 rows, all 'sent' with their \
         sent_at: they are the record of what was published and when; yours holds {} row(s), \
         {sent} of them 'sent'. Mark rows, don't delete them",
        rows.len(),
    );
}

#[test]
fn failed_publish_stays_pending() {
    let conn = memory_db();
    seed_many(&conn, 3);
    let rows = outbox_rows(&conn);
    let refused = rows[1].id;
    // The broker refuses the second event the first time it sees it.
    let mut broker = TestBroker::scripted(move |event, nth| {
        if event.id == refused && nth == 1 {
            Reply::Refuse
        } else {
            Reply::Ack
        }
    });

    let first = relay(&conn, &mut broker, 10_000, 10);
    let after_first = outbox_rows(&conn);
    let row = after_first.iter().find(|row| row.id == refused);
    assert!(
        row.is_some_and(|row| row.status == "pending" && row.sent_at.is_none()),
        "the broker refused outbox row {refused}, so it must stay 'pending' with sent_at NULL \
         for the next pass; after your pass {}",
        row.map_or("the row is gone".to_owned(), |row| format!(
            "it is status {:?}, sent_at {:?}",
            row.status, row.sent_at
        )),
    );
    let batch: Vec<i64> = rows.iter().map(|row| row.id).collect();
    let mut attempted = broker.attempts.clone();
    attempted.sort_unstable();
    assert!(
        broker.attempts == batch,
        "in one pass over outbox rows {} (oldest first) with the broker refusing row {refused}, \
         the broker was asked to publish rows {}: {}",
        ids(&batch),
        ids(&broker.attempts),
        if attempted == batch {
            "every row got its attempt, in another order than oldest first"
        } else if attempted.len() < batch.len() {
            "one refused publish must not stop the pass: every row of the batch gets its attempt"
        } else {
            "each row of the batch gets exactly one attempt in a pass"
        },
    );
    assert_eq!(
        first,
        stats(3, 2, 1),
        "a pass over 3 events where the broker refused one should return RelayStats {{ fetched: \
         3, published: 2, failed: 1 }}; yours returned {first:?}",
    );
    let others_sent = after_first
        .iter()
        .filter(|row| row.id != refused && row.status == "sent")
        .count();
    assert_eq!(
        others_sent, 2,
        "the two acknowledged rows must be 'sent' after the pass; {others_sent} are",
    );

    let second = relay(&conn, &mut broker, 20_000, 10);
    let row = event_of(&conn, rows[1].aggregate_id);
    assert!(
        second == stats(1, 1, 0)
            && row
                .as_ref()
                .is_some_and(|row| row.status == "sent" && row.sent_at == Some(20_000))
            && broker.times_delivered(refused) == 1,
        "the next pass must publish the refused row again and mark it sent at that pass's now \
         (20000): expected RelayStats {{ fetched: 1, published: 1, failed: 0 }} and one delivery; \
         yours returned {second:?}, the row is {}, and the broker holds it {} time(s)",
        row.as_ref().map_or("gone".to_owned(), |row| format!(
            "status {:?}, sent_at {:?}",
            row.status, row.sent_at
        )),
        broker.times_delivered(refused),
    );

    // A broker that is down refuses everything: nothing may be marked, and no number of
    // refusals ends the pass early (every row of the batch still gets its attempt).
    let conn = memory_db();
    seed_many(&conn, 30);
    let mut down = TestBroker::scripted(|_, _| Reply::Refuse);
    let result = relay(&conn, &mut down, 10_000, 50);
    let pending = count(&conn, "outbox WHERE status = 'pending' AND sent_at IS NULL");
    assert!(
        result == stats(30, 0, 30) && pending == 30 && down.attempts.len() == 30,
        "with a broker that refuses every publish, a pass with limit 50 over 30 rows must try \
         all 30, leave them pending and return RelayStats {{ fetched: 30, published: 0, failed: \
         30 }}; yours made {} publish call(s), returned {result:?} and left {pending} row(s) \
         pending. A refusal never stops the pass, however many there are",
        down.attempts.len(),
    );
}

/// Five orders whose ids follow insertion order while their created_at does not (two servers'
/// clocks can disagree): the times and the orders' ids.
fn seed_out_of_order(conn: &rusqlite::Connection) -> ([i64; 5], Vec<i64>) {
    let times = [5_000, 1_000, 3_000, 1_000, 2_000];
    let orders = times
        .iter()
        .enumerate()
        .map(|(i, &now)| seed_order(conn, &format!("customer-{i}"), 100, now))
        .collect();
    (times, orders)
}

#[test]
fn oldest_first() {
    let conn = memory_db();
    // Ids follow insertion order, created_at does not: clocks of two servers can disagree.
    let (times, orders) = seed_out_of_order(&conn);
    let mut expected: Vec<(i64, i64)> = times.iter().copied().zip(orders.iter().copied()).collect();
    expected.sort();
    let expected: Vec<i64> = expected.into_iter().map(|(_, order)| order).collect();

    let mut broker = TestBroker::acking();
    relay(&conn, &mut broker, 10_000, 10);
    let got = broker.delivered_aggregates();
    let mut about = got.clone();
    about.sort_unstable();
    assert!(
        got == expected,
        "orders {} were created at {:?} ms, so one pass must publish their events oldest first, \
         by created_at and then by id: the events of orders {}. Yours published events about \
         orders {}{}",
        ids(&orders),
        times,
        ids(&expected),
        ids(&got),
        if about == orders {
            ": the right events, in another order"
        } else {
            ": not the events of these orders. An event's aggregate_id is its row's \
             aggregate_id column, as stored"
        },
    );
}

#[test]
fn limit_takes_the_oldest() {
    let conn = memory_db();
    // Ids follow insertion order, created_at does not, and the limit is smaller than the backlog:
    // the rows a pass takes are chosen by the oldest-first order itself, not by id and sorted
    // afterwards.
    let (times, orders) = seed_out_of_order(&conn);
    let mut broker = TestBroker::acking();
    let first = relay(&conn, &mut broker, 10_000, 2);
    let expected = [orders[1], orders[3]];
    let by_id = [orders[1], orders[0]];
    let got = broker.delivered_aggregates();
    let why = if got == by_id {
        ": those are the two lowest ids, put in created_at order afterwards. A pass takes the \
         rows of the oldest-first order itself: ORDER BY created_at, id goes before the LIMIT, \
         in the query"
    } else {
        ""
    };
    assert!(
        first == stats(2, 2, 0) && got == expected,
        "5 pending events of orders {} were created at {:?} ms; a pass with limit = 2 must \
         publish the 2 oldest, orders {} (created at 1,000 ms, tied and then by id). Yours \
         returned {first:?} and published the events of orders {}{why}",
        ids(&orders),
        times,
        ids(&expected),
        ids(&got),
    );
}

#[test]
fn respects_limit() {
    let conn = memory_db();
    let orders = seed_many(&conn, 5);

    let mut broker = TestBroker::acking();
    let none = relay(&conn, &mut broker, 10_000, 0);
    assert!(
        none == stats(0, 0, 0) && broker.attempts.is_empty(),
        "relay_once with limit = 0 must publish nothing; yours returned {none:?} after {} \
         publish call(s)",
        broker.attempts.len(),
    );
    let two = relay(&conn, &mut broker, 10_000, 2);
    assert!(
        two == stats(2, 2, 0) && broker.delivered_aggregates() == orders[..2],
        "relay_once with limit = 2 over 5 pending events must publish exactly the 2 oldest \
         (orders {}); yours returned {two:?} and published the events of orders {}",
        ids(&orders[..2]),
        ids(&broker.delivered_aggregates()),
    );
    let pending = count(&conn, "outbox WHERE status = 'pending'");
    assert_eq!(
        pending, 3,
        "after publishing 2 of 5 events, 3 must still be pending; {pending} are"
    );

    // The limit is the caller's, however large: 1,200 of a 1,500-row backlog, past any round
    // number (100, 1,000, 1,024) a relay might keep as a ceiling of its own.
    let conn = memory_db();
    conn.execute_batch(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500)
         INSERT INTO outbox (id, aggregate_id, event_type, payload, status, created_at)
         SELECT 100 + i, i, 'OrderPlaced', '{\"order_id\":' || i || '}', 'pending', 1000 * i
           FROM n",
    )
    .expect("seeding a backlog");
    let mut broker = TestBroker::acking();
    let big = relay(&conn, &mut broker, 2_000_000, 1_200);
    let in_order = broker.attempts.iter().copied().eq(101..=1_300);
    let calls = broker.attempts.len();
    assert!(
        big == stats(1_200, 1_200, 0) && in_order,
        "relay_once with limit = 1200 over 1,500 pending events must publish exactly the 1,200 \
         oldest (outbox rows 101 to 1300, in order); yours returned {big:?} after {calls} \
         publish call(s){}",
        if calls == 0 {
            ". These rows have no orders beside them: the relay publishes the outbox rows as \
             they are stored, with no other table involved"
        } else if calls < 1_200 {
            ". The limit is the caller's, with no ceiling of the relay's own"
        } else {
            ""
        },
    );
}

#[test]
fn sent_rows_not_republished() {
    let conn = memory_db();
    seed_many(&conn, 3);
    let mut broker = TestBroker::acking();
    relay(&conn, &mut broker, 10_000, 10);

    let again = relay(&conn, &mut broker, 20_000, 10);
    assert!(
        again == stats(0, 0, 0) && broker.delivered.len() == 3,
        "a second pass with nothing pending must fetch and publish nothing; yours returned \
         {again:?} and the broker now holds {} deliveries of 3 events. Select only status = \
         'pending'",
        broker.delivered.len(),
    );
    let late = seed_order(&conn, "late", 100, 15_000);
    let third = relay(&conn, &mut broker, 30_000, 10);
    assert!(
        third == stats(1, 1, 0) && broker.delivered_aggregates().last() == Some(&late),
        "after one more order, the next pass must publish only its event; yours returned \
         {third:?}",
    );
}

#[test]
fn no_lock_held_while_publishing() {
    let db = FileDb::create("no_lock");
    let relay_conn = db.open();
    seed_many(&relay_conn, 3);

    // While the relay publishes, a customer places an order through another connection that
    // will not wait for a lock.
    let shop = db.open();
    shop.busy_timeout(Duration::ZERO)
        .expect("setting a busy timeout");
    let blocked: Rc<RefCell<Vec<String>>> = Rc::default();
    let blocked_in_broker = Rc::clone(&blocked);
    let mut broker = TestBroker::scripted(move |event, _| {
        let insert = shop.execute(
            "INSERT INTO orders (customer, amount_cents, created_at) VALUES ('walk-in', 500, ?1)",
            [20_000 + event.id],
        );
        if let Err(error) = insert {
            blocked_in_broker
                .borrow_mut()
                .push(format!("during the publish of event {}: {error}", event.id));
        }
        Reply::Ack
    });
    relay(&relay_conn, &mut broker, 10_000, 10);
    let blocked = blocked.borrow();

    assert!(
        blocked.is_empty(),
        "while your relay was calling the broker, an order placed on another connection failed: \
         {}. The relay held a transaction (or an unfinished SELECT) open across the publish, \
         which locks the database against every writer for as long as the broker takes. Read \
         the batch into a Vec first, then publish and mark each row on its own",
        blocked.join("; "),
    );
}

#[test]
fn marks_only_the_published_row() {
    // Rows that share all but one column with each other: the same order and the same
    // millisecond but another event type; the same millisecond but another order.
    let conn = memory_db();
    let first = seed_order(&conn, "ada", 500, 1_000);
    conn.execute(
        "INSERT INTO outbox (aggregate_id, event_type, payload, status, created_at)
         VALUES (?1, 'OrderConfirmed', '{}', 'pending', 1000)",
        [first],
    )
    .expect("seeding a second event of the same order");
    seed_order(&conn, "bob", 700, 1_000);
    let rows = outbox_rows(&conn);
    for acked in rows.iter().map(|row| row.id) {
        conn.execute("UPDATE outbox SET status = 'pending', sent_at = NULL", [])
            .expect("resetting the outbox");
        let mut broker = TestBroker::scripted(move |event, _| {
            if event.id == acked {
                Reply::Ack
            } else {
                Reply::Refuse
            }
        });
        let result = relay(&conn, &mut broker, 9_000, 10);
        let after = outbox_rows(&conn);
        let wrong: Vec<String> = after
            .iter()
            .filter(|row| (row.status == "sent") != (row.id == acked))
            .map(|row| {
                format!(
                    "row {} (aggregate {}, {}, created_at {}) is {:?}",
                    row.id, row.aggregate_id, row.event_type, row.created_at, row.status
                )
            })
            .collect();
        assert!(
            wrong.is_empty() && result == stats(3, 1, 2),
            "three pending rows share columns: rows {} and {} belong to the same order, all \
             three were written at 1000 ms. The broker acknowledged only row {acked}, so only \
             that row may become 'sent' (mark it by its own id); yours returned {result:?} and \
             {}",
            rows[0].id,
            rows[1].id,
            if wrong.is_empty() {
                "marked the right row".to_owned()
            } else {
                wrong.join(", ")
            },
        );
    }
}

#[test]
fn database_failure_is_an_error() {
    let conn = memory_db();
    seed_many(&conn, 3);
    let rows = outbox_rows(&conn);
    let failing = rows[1].id;
    // The database refuses to mark the second event, as a full disk or an I/O error would.
    conn.execute_batch(&format!(
        "CREATE TRIGGER mark_fails BEFORE UPDATE ON outbox WHEN OLD.id = {failing}
         BEGIN SELECT RAISE(ABORT, 'disk I/O error (simulated by the check)'); END;"
    ))
    .expect("creating the check's trigger");
    let mut broker = TestBroker::acking();

    let result = catch(|| exercise::relay_once(&conn, &mut broker, 10_000, 10));

    match result {
        Ok(Err(exercise::Error::Db(_))) => {}
        Ok(Err(error)) => panic!(
            "when the database refuses to mark outbox row {failing} sent, relay_once should \
             return that database error (Error::Db); yours returned another error: {error}"
        ),
        Ok(Ok(stats)) => panic!(
            "the broker acknowledged outbox row {failing}, and then the database refused to mark \
             it sent (the UPDATE failed). relay_once returns Err when the database itself fails, \
             so that its caller learns the database is failing; yours returned Ok({stats:?}), \
             as if the pass had gone well. Propagate the error of the UPDATE with `?`"
        ),
        Err(message) => panic!("relay_once(now = 10000, limit = 10) panicked: {message}"),
    }
    let status = event_of(&conn, rows[1].aggregate_id).map(|row| row.status);
    assert_eq!(
        status.as_deref(),
        Some("pending"),
        "outbox row {failing}, whose mark failed, must still be pending",
    );
}
