//! Visible tests: run them with `cargo xtask check ch16` (or `cargo test -p ch16_outbox_backoff`).
//! The grader runs hidden checks beside them.

use std::time::Duration;

use ch16_outbox_backoff::db::{insert_event, load, open_in_memory};
use ch16_outbox_backoff::{
    BackoffConfig, Failure, GiveUp, ORDER_PLACED, Outcome, Status, fetch_due, next_retry_at,
    record_failure, truncate_error,
};
use rand::SeedableRng;
use rand::rngs::StdRng;

/// 2026-01-01 00:00:00 UTC.
const NOW: i64 = 1_767_225_600_000;

#[test]
fn first_retry_is_at_most_base_away() {
    let cfg = BackoffConfig::default(); // base 1 s, cap 60 s
    let mut rng = StdRng::seed_from_u64(16);
    for _ in 0..100 {
        let at = next_retry_at(NOW, 1, &cfg, &mut rng);
        assert!(
            (NOW..=NOW + 1_000).contains(&at),
            "{at} is not within 1 s of now"
        );
    }
}

#[test]
fn a_new_row_is_due_at_once() {
    let conn = open_in_memory().unwrap();
    let id = insert_event(&conn, 7, ORDER_PLACED, "{}", NOW).unwrap();
    let due = fetch_due(&conn, NOW, 10).unwrap();
    assert_eq!(due.iter().map(|row| row.id).collect::<Vec<_>>(), [id]);
}

#[test]
fn a_permanent_failure_is_not_retried() {
    let conn = open_in_memory().unwrap();
    let id = insert_event(&conn, 7, ORDER_PLACED, "{}", NOW).unwrap();
    let mut rng = StdRng::seed_from_u64(16);
    let failure = Failure::Permanent("invalid payload".into());
    let outcome = record_failure(
        &conn,
        id,
        NOW,
        &failure,
        &BackoffConfig::default(),
        &mut rng,
    );
    assert_eq!(outcome.unwrap(), Outcome::Failed(GiveUp::Permanent));
    let row = load(&conn, id).unwrap();
    assert_eq!(
        (row.status, row.attempts, row.next_retry_at),
        (Status::Failed, 1, None)
    );
}

#[test]
fn retry_after_is_followed() {
    let conn = open_in_memory().unwrap();
    let id = insert_event(&conn, 7, ORDER_PLACED, "{}", NOW).unwrap();
    let mut rng = StdRng::seed_from_u64(16);
    let failure = Failure::RateLimited {
        retry_after: Some(Duration::from_secs(30)),
    };
    let outcome = record_failure(
        &conn,
        id,
        NOW,
        &failure,
        &BackoffConfig::default(),
        &mut rng,
    );
    assert_eq!(outcome.unwrap(), Outcome::RetryAt(NOW + 30_000));
}

#[test]
fn short_errors_are_kept_whole() {
    assert_eq!(
        truncate_error("connection refused", 200),
        "connection refused"
    );
}
