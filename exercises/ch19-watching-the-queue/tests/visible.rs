//! Visible tests: run them with `cargo xtask check ch19` (or `cargo test -p ch19_watching_the_queue`).
//! The grader runs hidden checks beside them.

use ch19_watching_the_queue::db::{open_in_memory, write_event};
use ch19_watching_the_queue::{
    Alert, Dashboard, SECOND, Thresholds, alerts, due_now, oldest_pending_age, render, waiting,
};

/// 2026-01-01 00:00:00 UTC.
const NOW: i64 = 1_767_225_600_000;

#[test]
fn a_new_row_is_due_and_a_rescheduled_one_waits() {
    let conn = open_in_memory().unwrap();
    write_event(&conn, "order-1", "OrderPlaced", "{}", NOW - 10 * SECOND).unwrap();
    let later = write_event(&conn, "order-2", "OrderPlaced", "{}", NOW - 5 * SECOND).unwrap();
    conn.execute(
        "UPDATE outbox SET attempts = 1, next_retry_at = ?2 WHERE id = ?1",
        (later, NOW + SECOND),
    )
    .unwrap();

    assert_eq!(due_now(&conn, NOW).unwrap(), 1);
    assert_eq!(waiting(&conn, NOW).unwrap(), 1);
    assert_eq!(oldest_pending_age(&conn, NOW).unwrap(), Some(10 * SECOND));
}

#[test]
fn the_layout_of_the_doc_comment() {
    let dashboard = Dashboard {
        due_now: 12,
        waiting: 30,
        oldest_pending_age: Some(245 * SECOND),
        attempts: vec![(0, 40), (1, 20), (12, 1)],
        dead_letters: 3,
        dead_letters_last_hour: 1,
    };
    let expected = "\
due now                   12
waiting                   30
oldest pending      00:04:05
dead letters               3
dead letters (1 h)         1
pending rows by attempts
   0 | ######################################## 40
   1 | #################### 20
  12 | # 1
";
    assert_eq!(render(&dashboard), expected);
}

#[test]
fn a_quiet_queue_raises_no_alert_and_a_stuck_one_does() {
    let thresholds = Thresholds::default(); // 5 min, 0 dead letters, 100 rows with 5+ attempts
    let quiet = Dashboard {
        due_now: 3,
        oldest_pending_age: Some(2 * SECOND),
        attempts: vec![(0, 3)],
        ..Dashboard::default()
    };
    assert_eq!(alerts(&quiet, &thresholds), []);

    let stuck = Dashboard {
        oldest_pending_age: Some(thresholds.max_oldest_pending + 1),
        ..quiet
    };
    assert_eq!(
        alerts(&stuck, &thresholds),
        [Alert::OldestPending {
            age: thresholds.max_oldest_pending + 1,
            limit: thresholds.max_oldest_pending,
        }]
    );
}
