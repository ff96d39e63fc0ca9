//! Checks of `consume_order_placed` run directly, with its documented parameters: the event and
//! the moment it arrived. The scenario only ever sees the consumer through the saga it starts;
//! these checks look at what it writes into `inbox` and at the one statement that decides.

use exercise::{Consumed, Db, OrderId, OrderPlaced, consume_order_placed};

/// An event whose id differs from its order's, so that a consumer that confuses the two shows.
fn event(event_id: i64, order: i64) -> OrderPlaced {
    OrderPlaced {
        event_id,
        order: OrderId(order),
        amount_cents: 1_000,
    }
}

/// The inbox, row by row: (event_id, order_id, received_at).
fn inbox(db: &Db) -> Vec<(i64, i64, i64)> {
    let conn = db.conn();
    let mut statement = conn
        .prepare("SELECT event_id, order_id, received_at FROM inbox ORDER BY event_id")
        .expect("the inbox query of the check");
    statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .expect("the inbox rows")
        .collect::<Result<_, _>>()
        .expect("the inbox rows")
}

#[test]
fn records_each_event_once() {
    // Event 7 (order 41) arrives at 1,000 ms and again at 2,500 ms; event 8 (order 42) at
    // 3,000 ms. The inbox keeps one row per event: its id, its order, and when it first came.
    let db = Db::open_in_memory().expect("an in-memory database");
    let answers = [
        consume_order_placed(&db, &event(7, 41), 1_000),
        consume_order_placed(&db, &event(7, 41), 2_500),
        consume_order_placed(&db, &event(8, 42), 3_000),
    ];
    let expected = [Consumed::Start, Consumed::Duplicate, Consumed::Start];
    assert!(
        answers
            .iter()
            .zip(&expected)
            .all(|(answer, expected)| answer.as_ref().ok() == Some(expected)),
        "event 7 arrives twice, then event 8: consume_order_placed must answer Start, \
         Duplicate, Start; yours answered {answers:?}",
    );
    let rows = inbox(&db);
    assert!(
        rows == [(7, 41, 1_000), (8, 42, 3_000)],
        "after event 7 (order 41) at 1000 ms, its copy at 2500 ms and event 8 (order 42) at \
         3000 ms, the inbox must hold one row per event, (event_id, order_id, received_at) = \
         [(7, 41, 1000), (8, 42, 3000)]: the event's id, its order's id and the `now` it first \
         arrived, a copy changing nothing; yours holds {rows:?}",
    );
}

#[test]
fn a_copy_between_check_and_insert() {
    // Two copies of event 9 arrive together. This check places the other copy's insert at the
    // worst moment: a trigger writes it just before this consumer's own insert runs (SQLite
    // does not fire a trigger from its own body, so it fires once). A consumer whose one
    // statement decides finds the row there and answers Duplicate; one that first asked
    // "have I seen it?" with a SELECT has already decided "new" and starts a second saga, or
    // fails on the key.
    let db = Db::open_in_memory().expect("an in-memory database");
    db.conn()
        .execute_batch(
            "CREATE TEMP TRIGGER other_copy_first BEFORE INSERT ON main.inbox
             WHEN NEW.event_id = 9
             BEGIN
                 INSERT OR IGNORE INTO main.inbox (event_id, order_id, received_at)
                 VALUES (9, 43, 4999);
             END;",
        )
        .expect("the check's trigger");
    let answer = consume_order_placed(&db, &event(9, 43), 5_000);
    let rows = inbox(&db);
    assert!(
        matches!(answer, Ok(Consumed::Duplicate)) && rows == [(9, 43, 4_999)],
        "two copies of event 9 arrived together, and the other copy's row landed in inbox just \
         before your insert ran (received at 4999 ms): yours must answer Duplicate and leave that \
         row as it is, [(9, 43, 4999)]; yours answered {answer:?} and the inbox holds {rows:?}. \
         Decide with the insert itself, one INSERT … ON CONFLICT (event_id) DO NOTHING whose \
         row count is the answer: a SELECT before the insert leaves the gap that section 26.5 \
         warns of",
    );
}
