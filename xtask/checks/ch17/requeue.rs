//! Checks of `requeue`: the operator's way back resets attempts and schedule, the row is
//! fetched again, and the move is atomic.

use exercise::{Reason, relay_once, requeue};
use rusqlite::Connection;

use super::fixture::{
    Fault, Script, clear, config, contents, dead, dead_row, describe, inject, outbox_row, seed_dead,
};
use super::support::{catch, seeded};

fn put_back(conn: &mut Connection, id: i64, now: i64) -> Result<exercise::Result<i64>, String> {
    catch(|| requeue(conn, id, now))
}

#[test]
fn resets_attempts_and_schedule() {
    let mut conn = super::fixture::db();
    let letter = dead(12, Reason::Exhausted.as_str(), 6);
    seed_dead(&conn, &letter);
    let now = 20_000;
    let outcome = put_back(&mut conn, letter.id, now);
    assert!(
        matches!(outcome, Ok(Ok(12))),
        "requeue(12, now = {now}) of an existing dead letter should return Ok(12), the event's \
         own id; yours gave {}",
        describe(&outcome)
    );
    let Some(row) = outbox_row(&conn, letter.id) else {
        panic!(
            "after requeue(12, …) there is no row with id 12 in the outbox: the event must come \
             back under its own id (ids in the outbox: {:?})",
            contents(&conn, "outbox").keys().collect::<Vec<_>>()
        );
    };
    let due_now = row.next_retry_at.is_none_or(|at| at <= now);
    assert!(
        row.status == "pending" && row.attempts == 0 && due_now && row.last_error.is_none(),
        "a requeued event starts afresh: status pending, attempts 0, next_retry_at NULL or at \
         most now ({now}), last_error NULL; yours is {row}.{}{}{}{}",
        if row.status == "pending" {
            ""
        } else {
            " A row that is not pending is never fetched again."
        },
        if row.attempts == 0 {
            ""
        } else {
            " Kept attempts make it fail again at its first error."
        },
        if due_now {
            ""
        } else {
            " A later next_retry_at leaves the fixed event waiting."
        },
        if row.last_error.is_none() {
            ""
        } else {
            " An old last_error makes the fresh event look as if it had failed already."
        },
    );
    assert!(
        (
            &row.payload,
            &row.aggregate_id,
            &row.event_type,
            row.created_at
        ) == (
            &letter.payload,
            &letter.aggregate_id,
            &letter.event_type,
            letter.created_at
        ),
        "a requeued event is the same event, written when it was first written: expected \
         payload {} for {} / {}, created_at {}; got {} for {} / {}, created_at {}",
        letter.payload,
        letter.aggregate_id,
        letter.event_type,
        letter.created_at,
        row.payload,
        row.aggregate_id,
        row.event_type,
        row.created_at,
    );
    assert!(
        dead_row(&conn, letter.id).is_none(),
        "after requeue(12, …) the dead letter is still in dead_letters too: requeue moves it, \
         or the event exists twice"
    );
}

#[test]
fn fetched_again() {
    // An event that used up all 4 attempts, requeued: the next pass must publish it, and a
    // single transient failure must reschedule it, not fail it again at once.
    for transient_failures in [0, 1] {
        let mut conn = super::fixture::db();
        let letter = dead(30, Reason::Exhausted.as_str(), 4);
        seed_dead(&conn, &letter);
        let now = 100_000;
        let outcome = put_back(&mut conn, letter.id, now);
        assert!(
            matches!(outcome, Ok(Ok(_))),
            "requeue(30, now = {now}) should succeed; yours gave {}",
            describe(&outcome)
        );
        let mut broker = Script::new().flaky(&letter.payload, transient_failures);
        let mut rng = seeded(30);
        let report = catch(|| relay_once(&conn, &mut broker, now, &config(4), &mut rng));
        let row = outbox_row(&conn, letter.id);
        let shown = row
            .as_ref()
            .map_or("missing".to_owned(), |row| row.to_string());
        if transient_failures == 0 {
            assert!(
                broker.acked == vec![letter.id],
                "after requeue(30, now = {now}), a relay pass at the same instant should publish \
                 row 30; the broker was called for {:?} (pass: {}) and the row is {shown}",
                broker.calls,
                describe(&report)
            );
        } else {
            let cause = if row.as_ref().is_some_and(|row| row.attempts > 1) {
                "A requeue that keeps the old attempts fails the event again at its first error"
            } else {
                "One transient failure reschedules a row; only max_attempts of them fail it"
            };
            assert!(
                row.as_ref()
                    .is_some_and(|row| row.status == "pending" && row.attempts == 1),
                "row 30 had failed 4 of 4 attempts before the operator requeued it; after one \
                 transient failure in the next pass it should be pending with attempts = 1 and a \
                 new next_retry_at; yours is {shown} (pass: {}). {cause}",
                describe(&report)
            );
        }
    }
}

#[test]
fn atomic_under_fault() {
    for fault in [Fault::DeleteFromDeadLetters, Fault::InsertIntoOutbox] {
        let mut conn = super::fixture::db();
        let letter = dead(44, Reason::Rejected.as_str(), 1);
        seed_dead(&conn, &letter);
        inject(&conn, fault);
        let outcome = put_back(&mut conn, letter.id, 50_000);
        let open = !conn.is_autocommit();
        if open {
            let _ = conn.execute_batch("ROLLBACK");
        }
        clear(&conn, fault);
        assert!(
            !open,
            "when `{}` failed, your requeue returned {} and left a transaction open on the \
             connection; end it on every path (a rusqlite Transaction rolls back when dropped)",
            fault.statement(),
            describe(&outcome)
        );
        let back = outbox_row(&conn, letter.id);
        let still = dead_row(&conn, letter.id);
        let place = match (&back, &still) {
            (Some(_), Some(_)) => "in both tables: the event now exists twice",
            (None, None) => "in neither table: the event is lost",
            (Some(_), None) => "only in the outbox, although the requeue failed",
            (None, Some(_)) => "only in dead_letters",
        };
        assert!(
            still.as_ref() == Some(&letter) && back.is_none() && !matches!(outcome, Ok(Ok(_))),
            "with an injected fault on `{}`, requeue(44) should fail and leave the dead letter \
             unchanged and nowhere else; yours gave {} and the event is {place}. Put the insert \
             and the delete in one transaction",
            fault.statement(),
            describe(&outcome),
        );
        let retry = put_back(&mut conn, letter.id, 51_000);
        assert!(
            matches!(retry, Ok(Ok(44))) && dead_row(&conn, letter.id).is_none(),
            "after the fault on `{}` was cleared, requeue(44) should succeed; yours gave {}",
            fault.statement(),
            describe(&retry)
        );
    }
}

#[test]
fn unknown_id() {
    let mut conn = super::fixture::db();
    let letter = dead(5, Reason::Rejected.as_str(), 1);
    seed_dead(&conn, &letter);
    let outbox_before = contents(&conn, "outbox");
    let outcome = put_back(&mut conn, 6, 10_000);
    assert!(
        matches!(outcome, Ok(Err(_)))
            && contents(&conn, "outbox") == outbox_before
            && dead_row(&conn, 5).as_ref() == Some(&letter),
        "requeue(6) when only dead letter 5 exists must be an Err and change nothing; yours \
         gave {} and the outbox now holds ids {:?}",
        describe(&outcome),
        contents(&conn, "outbox").keys().collect::<Vec<_>>()
    );
    // Twice the same requeue: the second finds nothing left to requeue.
    let first = put_back(&mut conn, 5, 10_000);
    let second = put_back(&mut conn, 5, 11_000);
    assert!(
        matches!(first, Ok(Ok(5))) && matches!(second, Ok(Err(_))),
        "requeue(5) twice: the first should return Ok(5), the second an Err (the dead letter is \
         gone); yours gave {} and then {}",
        describe(&first),
        describe(&second)
    );
}
