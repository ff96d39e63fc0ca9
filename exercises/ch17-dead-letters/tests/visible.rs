//! Visible tests: run them with `cargo xtask check ch17` (or `cargo test -p ch17_dead_letters`).
//! The grader runs hidden checks beside them.

use ch17_dead_letters::broker::StubBroker;
use ch17_dead_letters::{Reason, RelayConfig, db, dead_letter, relay_once, requeue};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rusqlite::Connection;

const POISON: &str = r#"{"total":"12,50"}"#;

/// A database with four events written at t = 0, 1, 2, 3 ms; the second is a poison message.
fn four_events() -> Connection {
    let conn = db::open_in_memory().unwrap();
    for (at, payload) in [
        r#"{"total":"1.00"}"#,
        POISON,
        r#"{"total":"3.00"}"#,
        r#"{"total":"4.00"}"#,
    ]
    .into_iter()
    .enumerate()
    {
        db::write_event(&conn, "order-1", "OrderPlaced", payload, at as i64).unwrap();
    }
    conn
}

#[test]
fn poison_message_does_not_block_the_rows_behind_it() {
    let conn = four_events();
    let mut broker = StubBroker::new().rejecting(POISON, "not a number");
    let mut rng = StdRng::seed_from_u64(17);

    let report = relay_once(&conn, &mut broker, 1_000, &RelayConfig::default(), &mut rng).unwrap();

    assert_eq!(broker.published(), vec![1, 3, 4]);
    assert_eq!(report.failed, vec![(2, Reason::Rejected)]);
    let status: String = conn
        .query_row("SELECT status FROM outbox WHERE id = 2", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert_eq!(status, "failed");
}

#[test]
fn a_dead_letter_keeps_its_reason_and_attempts() {
    let mut conn = four_events();
    let mut broker = StubBroker::new().rejecting(POISON, "not a number");
    let mut rng = StdRng::seed_from_u64(17);
    relay_once(&conn, &mut broker, 1_000, &RelayConfig::default(), &mut rng).unwrap();

    dead_letter(&mut conn, 2, Reason::Rejected, 2_000).unwrap();

    let (reason, attempts, failed_at): (String, i64, i64) = conn
        .query_row(
            "SELECT reason, attempts, failed_at FROM dead_letters WHERE id = 2",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (reason.as_str(), attempts, failed_at),
        ("rejected", 1, 2_000)
    );
    let left: i64 = conn
        .query_row("SELECT count(*) FROM outbox WHERE id = 2", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert_eq!(left, 0, "the row left the outbox");
}

#[test]
fn requeue_resets_attempts_and_the_row_is_published_again() {
    let mut conn = four_events();
    let mut broker = StubBroker::new().rejecting(POISON, "not a number");
    let mut rng = StdRng::seed_from_u64(17);
    relay_once(&conn, &mut broker, 1_000, &RelayConfig::default(), &mut rng).unwrap();
    dead_letter(&mut conn, 2, Reason::Rejected, 2_000).unwrap();

    broker.accept(POISON); // fix the cause first
    assert_eq!(requeue(&mut conn, 2, 5_000).unwrap(), 2);
    let attempts: i64 = conn
        .query_row("SELECT attempts FROM outbox WHERE id = 2", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert_eq!(attempts, 0);

    relay_once(&conn, &mut broker, 5_000, &RelayConfig::default(), &mut rng).unwrap();
    assert_eq!(broker.published(), vec![1, 3, 4, 2]);
}
