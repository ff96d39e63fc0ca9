//! Checks of `dead_letter`: what a dead letter keeps, which rows may move, and atomicity under
//! an injected fault between the insert and the delete.

use exercise::{OutboxError, Reason, dead_letter};
use rusqlite::Connection;

use super::fixture::{Fault, clear, dead_row, describe, inject, outbox_row, seed};
use super::support::catch;

/// The learner's `dead_letter`, with a panic turned into `Err(text)`.
fn move_row(
    conn: &mut Connection,
    id: i64,
    reason: Reason,
    now: i64,
) -> Result<exercise::Result<()>, String> {
    catch(|| dead_letter(conn, id, reason, now))
}

#[test]
fn keeps_reason_attempts_payload() {
    let mut conn = super::fixture::db();
    let poison = seed(&conn, r#"{"order":7,"total":"12,50"}"#, "failed", 1, 3_000);
    let exhausted = seed(&conn, r#"{"order":8,"total":"8.00"}"#, "failed", 5, 4_000);
    // The reason is the caller's word, never guessed from the attempts: a poison message at its
    // last attempt is rejected (§17.3), and with max_attempts = 1 an exhausted row has failed once.
    let late_poison = seed(&conn, r#"{"order":9,"total":"1,00"}"#, "failed", 5, 5_000);
    let exhausted_at_once = seed(&conn, r#"{"order":10,"total":"2.00"}"#, "failed", 1, 6_000);
    for (id, reason, now) in [
        (poison, Reason::Rejected, 42_000),
        (exhausted, Reason::Exhausted, 43_000),
        (late_poison, Reason::Rejected, 44_000),
        (exhausted_at_once, Reason::Exhausted, 45_000),
    ] {
        let before = outbox_row(&conn, id).expect("seeded");
        let outcome = move_row(&mut conn, id, reason, now);
        assert!(
            matches!(outcome, Ok(Ok(()))),
            "dead_letter(id = {id}, {reason:?}, now = {now}) on a failed row should succeed; \
             yours gave {}",
            describe(&outcome)
        );
        let Some(dead) = dead_row(&conn, id) else {
            panic!(
                "after dead_letter(id = {id}, …) there is no row with id {id} in dead_letters: \
                 the dead letter must keep the event's id"
            );
        };
        let mut wrong = Vec::new();
        if dead.reason != reason.as_str() {
            wrong.push(format!(
                "reason = {:?} (expected {:?})",
                dead.reason,
                reason.as_str()
            ));
        }
        if dead.attempts != before.attempts {
            wrong.push(format!(
                "attempts = {} (expected {})",
                dead.attempts, before.attempts
            ));
        }
        if dead.payload != before.payload {
            wrong.push(format!(
                "payload = {} (expected {})",
                dead.payload, before.payload
            ));
        }
        if dead.last_error != before.last_error {
            wrong.push(format!(
                "last_error = {:?} (expected {:?})",
                dead.last_error, before.last_error
            ));
        }
        if dead.failed_at != now {
            wrong.push(format!(
                "failed_at = {} (expected now = {now})",
                dead.failed_at
            ));
        }
        if (&dead.aggregate_id, &dead.event_type, dead.created_at)
            != (&before.aggregate_id, &before.event_type, before.created_at)
        {
            wrong.push(format!(
                "aggregate_id / event_type / created_at = {} / {} / {} (expected {} / {} / {})",
                dead.aggregate_id,
                dead.event_type,
                dead.created_at,
                before.aggregate_id,
                before.event_type,
                before.created_at
            ));
        }
        assert!(
            wrong.is_empty(),
            "the dead letter of row {id} must keep what the operator needs to decide: the \
             reason, the attempts, the payload and the last error; yours has {}",
            wrong.join(", ")
        );
        assert!(
            outbox_row(&conn, id).is_none(),
            "after dead_letter(id = {id}, …) the row is still in the outbox too: a move deletes \
             the original, or the event exists twice"
        );
    }
}

#[test]
fn only_failed_rows() {
    let mut conn = super::fixture::db();
    let pending = seed(&conn, r#"{"order":1}"#, "pending", 2, 1_000);
    let sent = seed(&conn, r#"{"order":2}"#, "sent", 0, 2_000);
    for (id, status) in [(pending, "pending"), (sent, "sent")] {
        let before = outbox_row(&conn, id).expect("seeded");
        let outcome = move_row(&mut conn, id, Reason::Exhausted, 50_000);
        let after = outbox_row(&conn, id);
        let dead = dead_row(&conn, id);
        assert!(
            matches!(outcome, Ok(Err(_))) && after.as_ref() == Some(&before) && dead.is_none(),
            "dead_letter on row {id}, which is {status}, must be refused (an Err) and change \
             nothing: only failed rows become dead letters, a pending row may be in flight; \
             yours gave {}, and the row is now {} in the outbox and {} in dead_letters",
            describe(&outcome),
            after.map_or("missing".to_owned(), |row| row.to_string()),
            dead.map_or("absent".to_owned(), |row| row.to_string()),
        );
        // The row exists: the refusal says which status it has, not that it is missing.
        assert!(
            matches!(&outcome, Ok(Err(OutboxError::NotFailed { id: refused, status: said }))
                if *refused == id && said == status),
            "dead_letter on row {id}, which exists and is {status}, must be refused with \
             OutboxError::NotFailed {{ id: {id}, status: \"{status}\" }} (NotFound is for a row \
             that is not there); yours gave {}",
            describe(&outcome),
        );
    }
    let outcome = move_row(&mut conn, 999, Reason::Rejected, 50_000);
    assert!(
        matches!(outcome, Ok(Err(OutboxError::NotFound { id: 999, .. })))
            && dead_row(&conn, 999).is_none(),
        "dead_letter(id = 999) for a row that does not exist must be \
         Err(OutboxError::NotFound {{ table: \"outbox\", id: 999 }}) and write nothing; yours gave {}",
        describe(&outcome)
    );
}

#[test]
fn atomic_under_fault() {
    for fault in [Fault::DeleteFromOutbox, Fault::InsertIntoDeadLetters] {
        let mut conn = super::fixture::db();
        let id = seed(&conn, r#"{"order":5,"total":"12,50"}"#, "failed", 3, 1_000);
        let before = outbox_row(&conn, id).expect("seeded");
        inject(&conn, fault);
        let outcome = move_row(&mut conn, id, Reason::Rejected, 20_000);
        let open = !conn.is_autocommit();
        if open {
            let _ = conn.execute_batch("ROLLBACK");
        }
        clear(&conn, fault);
        assert!(
            !open,
            "when `{}` failed, your dead_letter returned {} and left a transaction open on the \
             connection; end it on every path (a rusqlite Transaction rolls back when dropped)",
            fault.statement(),
            describe(&outcome)
        );
        let after = outbox_row(&conn, id);
        let dead = dead_row(&conn, id);
        let place = match (&after, &dead) {
            (Some(_), Some(_)) => "in both tables: the event now exists twice",
            (None, None) => "in neither table: the event is lost",
            (None, Some(_)) => "only in dead_letters, although the move failed",
            (Some(_), None) => "only in the outbox",
        };
        assert!(
            after.as_ref() == Some(&before) && dead.is_none() && !matches!(outcome, Ok(Ok(()))),
            "with an injected fault on `{}`, dead_letter(id = {id}) should fail and leave the \
             row in the outbox, unchanged, and nowhere else; yours gave {} and the row is {place} \
             (outbox: {}). Put the insert and the delete in one transaction",
            fault.statement(),
            describe(&outcome),
            after.map_or("-".to_owned(), |row| row.to_string()),
        );
        // Without the fault, the same move succeeds: the fault was the only obstacle.
        let retry = move_row(&mut conn, id, Reason::Rejected, 21_000);
        assert!(
            matches!(retry, Ok(Ok(())))
                && outbox_row(&conn, id).is_none()
                && dead_row(&conn, id).is_some(),
            "after the fault on `{}` was cleared, dead_letter(id = {id}) should succeed and move \
             the row, under its own id; yours gave {}, and row {id} is {} the outbox and {} \
             dead_letters",
            fault.statement(),
            describe(&retry),
            if outbox_row(&conn, id).is_some() {
                "still in"
            } else {
                "gone from"
            },
            if dead_row(&conn, id).is_some() {
                "in"
            } else {
                "not in"
            },
        );
    }
}
