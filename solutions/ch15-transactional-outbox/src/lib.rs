//! Chapter 15 — The transactional outbox: the reference solution.
//!
//! Two functions. [`place_order`] writes an order and the event announcing it in one local
//! transaction, so either both exist or neither does. [`relay_once`] publishes the oldest pending
//! events to a broker and marks each one `sent` only after the broker has acknowledged it, so an
//! event can be published twice but never lost.

use rusqlite::{Connection, params};

pub mod broker;
pub mod error;
pub mod faults;
pub mod model;
pub mod schema;

pub use broker::{Broker, BrokerError, FlakyBroker, RecordingBroker};
pub use error::{Error, Fault};
pub use faults::{FailBetweenInserts, FaultPoint, NoFaults};
pub use model::{
    Millis, NewOrder, ORDER_PLACED, OrderId, OutboxEvent, RelayStats, order_placed_payload,
};

// ANCHOR: place_order
/// Stores `order` and its `OrderPlaced` event atomically, and returns the new order's id.
///
/// Both rows are written inside one transaction: if anything fails between the two inserts (a
/// statement, the process, or the fault a test injects through `faults`), the transaction is
/// rolled back and neither row exists.
pub fn place_order(
    conn: &mut Connection,
    order: &NewOrder,
    now: Millis,
    faults: &mut impl FaultPoint,
) -> Result<OrderId, Error> {
    let tx = conn.transaction()?;

    tx.execute(
        "INSERT INTO orders (customer, amount_cents, created_at) VALUES (?1, ?2, ?3)",
        params![order.customer, order.amount_cents, now],
    )?;
    let order_id = OrderId(tx.last_insert_rowid());

    faults.between_inserts(&tx)?;

    tx.execute(
        "INSERT INTO outbox (aggregate_id, event_type, payload, status, created_at)
         VALUES (?1, ?2, ?3, 'pending', ?4)",
        params![
            order_id.0,
            ORDER_PLACED,
            order_placed_payload(order_id, order),
            now
        ],
    )?;

    // Until this line, dropping `tx` (an early return through `?`, a panic) rolls both back.
    tx.commit()?;
    Ok(order_id)
}
// ANCHOR_END: place_order

// ANCHOR: relay_once
/// One pass of the relay: publishes up to `limit` pending events, oldest first, and marks each
/// one `sent` (with `sent_at = now`) as soon as the broker has acknowledged it.
///
/// A refused publish leaves its row `pending` for the next pass and does not stop the batch. A
/// crash after the broker's acknowledgement and before the mark leaves the row `pending` too, so
/// the next pass publishes it again: delivery is at least once.
pub fn relay_once(
    conn: &Connection,
    broker: &mut impl Broker,
    now: Millis,
    limit: usize,
) -> Result<RelayStats, Error> {
    // Read the batch first and hold no statement or transaction open while the broker works.
    let batch = fetch_pending(conn, limit)?;
    let mut stats = RelayStats {
        fetched: batch.len(),
        ..RelayStats::default()
    };

    for event in &batch {
        match broker.publish(event) {
            Ok(()) => {
                mark_sent(conn, event.id, now)?;
                stats.published += 1;
            }
            // Nothing to undo: the row is still pending and the next pass will try it again.
            Err(_) => stats.failed += 1,
        }
    }
    Ok(stats)
}
// ANCHOR_END: relay_once

// ANCHOR: fetch_pending
/// The `limit` oldest pending events: by `created_at`, then by id for events of the same
/// millisecond.
fn fetch_pending(conn: &Connection, limit: usize) -> Result<Vec<OutboxEvent>, Error> {
    let mut statement = conn.prepare(
        "SELECT id, aggregate_id, event_type, payload, created_at
         FROM outbox
         WHERE status = 'pending'
         ORDER BY created_at, id
         LIMIT ?1",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let events = statement
        .query_map([limit], |row| {
            Ok(OutboxEvent {
                id: row.get(0)?,
                aggregate_id: row.get(1)?,
                event_type: row.get(2)?,
                payload: row.get(3)?,
                created_at: row.get(4)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(events)
}

/// Records the broker's acknowledgement of outbox row `id`. The row stays, as history.
fn mark_sent(conn: &Connection, id: i64, now: Millis) -> Result<(), Error> {
    conn.execute(
        "UPDATE outbox SET status = 'sent', sent_at = ?1 WHERE id = ?2 AND status = 'pending'",
        params![now, id],
    )?;
    Ok(())
}
// ANCHOR_END: fetch_pending
