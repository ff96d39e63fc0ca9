//! Visible tests: run them with `cargo xtask check ch18` (or `cargo test -p ch18_many_publishers`).
//! The grader runs hidden checks beside them, among them four workers on one database file and,
//! when `WORKBOOK_POSTGRES_URL` is set, the same checks on PostgreSQL.

use ch18_many_publishers::{OutboxStore, SqliteStore, Status};

/// 2026-01-01 00:00:00 UTC, in milliseconds.
const T0: i64 = 1_767_225_600_000;
const LEASE: i64 = 30_000;

/// A private in-memory outbox with three pending events, ids 1, 2 and 3, the oldest first.
fn outbox() -> SqliteStore {
    let store = SqliteStore::open_in_memory().unwrap();
    for order in 1..=3 {
        store
            .insert_event(order, &format!("{{\"order\":{order}}}"), T0 - 1_000 + order)
            .unwrap();
    }
    store
}

#[test]
fn a_claim_leases_the_oldest_due_rows() {
    let mut store = outbox();
    let claimed = store.claim_due("relay-1", T0, LEASE, 2).unwrap();
    let ids: Vec<i64> = claimed.iter().map(|row| row.id).collect();
    assert_eq!(ids, [1, 2]);
    for row in &claimed {
        assert_eq!(row.locked_by.as_deref(), Some("relay-1"));
        assert_eq!(row.locked_until, Some(T0 + LEASE));
    }
}

#[test]
fn a_second_worker_gets_only_the_rows_nobody_holds() {
    let mut store = outbox();
    store.claim_due("relay-1", T0, LEASE, 2).unwrap();
    let second = store.claim_due("relay-2", T0 + 1, LEASE, 10).unwrap();
    let ids: Vec<i64> = second.iter().map(|row| row.id).collect();
    assert_eq!(ids, [3]);
}

#[test]
fn only_the_lease_holder_marks_a_row_sent() {
    let mut store = outbox();
    store.claim_due("relay-1", T0, LEASE, 1).unwrap();
    assert!(!store.mark_sent(1, "relay-2", T0 + 5).unwrap());
    assert!(store.mark_sent(1, "relay-1", T0 + 5).unwrap());
    let row = store.load(1).unwrap();
    assert_eq!(row.status, Status::Sent);
    assert_eq!(row.sent_at, Some(T0 + 5));
}
