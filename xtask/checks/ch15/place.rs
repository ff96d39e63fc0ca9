//! Checks of `place_order`: both rows, correctly filled, or neither.

use exercise::{Error, Fault, FaultPoint, NewOrder, NoFaults};
use rusqlite::Connection;

use super::fixture::{count, memory_db, order_rows, outbox_rows, place};
use super::support::catch;

const NOW: i64 = 1_700_000_000_000;

#[test]
fn order_and_event_written() {
    let mut conn = memory_db();
    // Older events of other aggregates, and an older order whose id leaves a gap, so that outbox
    // ids, order ids, the number of orders and the last row id before an order is inserted all
    // differ.
    conn.execute(
        "INSERT INTO outbox (aggregate_id, event_type, payload, status, created_at, sent_at)
         VALUES (900, 'CustomerRegistered', '{}', 'sent', 10, 20),
                (901, 'CustomerRegistered', '{}', 'sent', 11, 21)",
        [],
    )
    .expect("seeding the outbox");
    conn.execute(
        "INSERT INTO orders (id, customer, amount_cents, created_at) VALUES (40, 'eve', 1, 5)",
        [],
    )
    .expect("seeding the orders");

    for (customer, amount_cents, now) in [("ada", 1250, NOW), ("o'neil \"bob\"", 990, NOW + 7)] {
        let before = outbox_rows(&conn).len();
        let id = place(&mut conn, customer, amount_cents, now);

        let orders = order_rows(&conn);
        let order = orders.last().expect("an order row");
        assert!(
            order.id == id.0 && order.customer == customer && order.amount_cents == amount_cents,
            "place_order({customer:?}, {amount_cents} cents) returned OrderId({}) but the newest \
             orders row is {order:?}; it must hold the order as given, and the returned id must be \
             that row's id",
            id.0,
        );
        assert_eq!(
            order.created_at, now,
            "orders.created_at must be the `now` passed in ({now}); yours wrote {}. Never read \
             the wall clock inside the logic",
            order.created_at,
        );

        let outbox = outbox_rows(&conn);
        let new: Vec<_> = outbox[before..].to_vec();
        assert_eq!(
            new.len(),
            1,
            "placing one order must add exactly one outbox row; yours added {}",
            new.len(),
        );
        let event = &new[0];
        assert_eq!(
            event.aggregate_id, id.0,
            "the outbox row's aggregate_id must be the new order's id {}; yours is {} (the \
             outbox row's own id is {}: take the id right after inserting the order)",
            id.0, event.aggregate_id, event.id,
        );
        assert!(
            event.event_type == exercise::ORDER_PLACED
                && event.status == "pending"
                && event.created_at == now
                && event.sent_at.is_none(),
            "the new outbox row must be event_type 'OrderPlaced', status 'pending', created_at = \
             now ({now}) and sent_at NULL; yours is event_type {:?}, status {:?}, created_at {}, \
             sent_at {:?}",
            event.event_type,
            event.status,
            event.created_at,
            event.sent_at,
        );
        let payload: serde_json::Value = serde_json::from_str(&event.payload).unwrap_or_else(|e| {
            panic!(
                "the outbox payload {:?} is not valid JSON ({e}); use order_placed_payload",
                event.payload
            )
        });
        let expected = serde_json::json!({
            "order_id": id.0, "customer": customer, "amount_cents": amount_cents,
        });
        assert_eq!(
            payload, expected,
            "the outbox payload must describe the order: {expected}; yours is {payload}",
        );
    }
}

/// A fault point that looks at the database when `place_order` reaches it, then fails.
struct Probe {
    calls: u32,
    seen: Option<(i64, i64)>,
}

impl FaultPoint for Probe {
    fn between_inserts(&mut self, conn: &Connection) -> Result<(), Fault> {
        self.calls += 1;
        self.seen = Some((count(conn, "orders"), count(conn, "outbox")));
        Err(Fault {
            point: "between_inserts",
        })
    }
}

#[test]
fn fault_between_inserts_leaves_neither_row() {
    let mut conn = memory_db();
    let first = place(&mut conn, "ada", 1250, NOW);

    let mut probe = Probe {
        calls: 0,
        seen: None,
    };
    let order = NewOrder::new("bob", 990);
    let result = catch(|| exercise::place_order(&mut conn, &order, NOW + 1, &mut probe))
        .unwrap_or_else(|message| panic!("place_order with a fault injected panicked: {message}"));

    assert_eq!(
        probe.calls, 1,
        "place_order must call faults.between_inserts exactly once, after its first insert and \
         before its second; yours called it {} time(s)",
        probe.calls,
    );
    let (orders_seen, outbox_seen) = probe.seen.unwrap_or_default();
    assert!(
        orders_seen + outbox_seen == 3,
        "when place_order reached faults.between_inserts, exactly one of the two rows should have \
         been written (1 order and 1 event existed before); your code had {orders_seen} order(s) \
         and {outbox_seen} event(s) at that moment, so the fault did not strike between the inserts",
    );
    assert!(
        matches!(result, Err(Error::Fault(_))),
        "with a fault between the two inserts, place_order must return Err(Error::Fault(..)); \
         yours returned {result:?}",
    );
    let autocommit = conn.is_autocommit();
    let (orders, events) = (count(&conn, "orders"), count(&conn, "outbox"));
    assert!(
        autocommit,
        "after the fault your place_order returned with a transaction still open on the \
         connection (it sees {orders} order(s) and {events} event(s) that were never committed); \
         use `conn.transaction()`, which rolls back when dropped",
    );
    assert!(
        (orders, events) == (1, 1),
        "a fault between the two inserts must leave neither row: only the earlier order and its \
         event should exist, 1 and 1; after the fault the database holds {orders} order(s) and \
         {events} event(s). {}",
        if orders > events {
            "An order without its event is exactly the dual-write bug: write both in one transaction"
        } else {
            "An event without its order announces something that never happened"
        },
    );
    let ids: Vec<i64> = order_rows(&conn).iter().map(|row| row.id).collect();
    assert_eq!(
        ids,
        vec![first.0],
        "the order placed before the fault must survive it"
    );

    // The connection is still good for business.
    let next = catch(|| exercise::place_order(&mut conn, &order, NOW + 2, &mut NoFaults));
    assert!(
        matches!(next, Ok(Ok(_))) && count(&conn, "orders") == 2 && count(&conn, "outbox") == 2,
        "after a fault, the next place_order on the same connection must succeed and write both \
         rows; yours gave {next:?} and left {} order(s), {} event(s)",
        count(&conn, "orders"),
        count(&conn, "outbox"),
    );
}
