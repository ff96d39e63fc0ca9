//! Checks of `relay_once`: a poison message is failed at once and does not block the rows
//! behind it; transient failures are rescheduled until the attempts run out.

use exercise::{Reason, RelayReport, relay_once};
use rusqlite::Connection;

use crate::fixture::{POISON_MESSAGE, Script, TRANSIENT_MESSAGE, config, outbox_row, seed, write};
use crate::support::{catch, seeded};

/// One pass of the learner's relay; a panic or an error fails the check with its text.
fn pass(
    conn: &Connection,
    broker: &mut Script,
    now: i64,
    max_attempts: u32,
    seed: u64,
) -> RelayReport {
    let mut rng = seeded(seed);
    let outcome = catch(|| relay_once(conn, broker, now, &config(max_attempts), &mut rng));
    match outcome {
        Ok(Ok(report)) => report,
        Ok(Err(error)) => panic!(
            "relay_once(now = {now}) returned Err({error}); a broker's failure is recorded on its \
             row, it is not an error of the pass"
        ),
        Err(message) => panic!("relay_once(now = {now}) panicked: {message}"),
    }
}

#[test]
fn poison_does_not_block() {
    // The poison message at the front, in the middle, and twice in a row.
    let layouts: [&[bool]; 3] = [
        &[false, true, false, false],
        &[true, false, false],
        &[false, true, true, false, false],
    ];
    for layout in layouts {
        let conn = crate::fixture::db();
        let mut broker = Script::new();
        let mut ids = Vec::new();
        let mut good = Vec::new();
        for (n, &poison) in layout.iter().enumerate() {
            let payload = format!(r#"{{"order":{n},"poison":{poison}}}"#);
            let id = write(&conn, &payload, n as i64 * 10);
            ids.push(id);
            if poison {
                broker = broker.poison(&payload);
            } else {
                good.push(id);
            }
        }
        let shape: Vec<String> = ids
            .iter()
            .zip(layout)
            .map(|(id, &poison)| {
                if poison {
                    format!("{id} (poison)")
                } else {
                    id.to_string()
                }
            })
            .collect();
        let report = pass(&conn, &mut broker, 1_000, 5, 1);
        let pending: Vec<i64> = good
            .iter()
            .copied()
            .filter(|&id| outbox_row(&conn, id).is_some_and(|row| row.status != "sent"))
            .collect();
        assert!(
            broker.acked == good && pending.is_empty(),
            "rows {} were due at t = 1000 ms; a single relay_once pass should publish rows {:?} \
             in that order and step past the poison message; yours published {:?} (broker calls \
             {:?}) and left rows {:?} unsent: a permanent failure must mark its row failed and \
             let the pass go on to the next row",
            shape.join(", "),
            good,
            broker.acked,
            broker.calls,
            pending,
        );
        assert_eq!(
            report.sent, good,
            "the report of the pass should list the sent rows {good:?}; yours lists {:?}",
            report.sent
        );
    }
}

#[test]
fn poison_failed_at_once() {
    let conn = crate::fixture::db();
    let first = write(&conn, r#"{"order":1}"#, 0);
    // A poison message that already failed twice transiently: the permanent failure decides.
    let poison = seed(&conn, r#"{"order":2,"total":"12,50"}"#, "pending", 2, 10);
    let fresh_poison = write(&conn, r#"{"order":3,"total":"1,00"}"#, 20);
    let mut broker = Script::new()
        .poison(r#"{"order":2,"total":"12,50"}"#)
        .poison(r#"{"order":3,"total":"1,00"}"#);

    let report = pass(&conn, &mut broker, 5_000, 5, 2);

    for (id, attempts_before) in [(poison, 2), (fresh_poison, 0)] {
        let row = outbox_row(&conn, id).expect("the relay must not delete rows");
        let expected_attempts = attempts_before + 1;
        assert!(
            row.status == "failed"
                && row.attempts == expected_attempts
                && row.last_attempt_at == Some(5_000)
                && row
                    .last_error
                    .as_deref()
                    .is_some_and(|e| e.contains(POISON_MESSAGE)),
            "the broker rejected row {id} for good at t = 5000 ms (\"{POISON_MESSAGE}\"); the \
             row should be failed at once, with attempts = {expected_attempts}, last_attempt_at \
             = 5000 and the broker's message in last_error; yours is {row}. A poison message is \
             never rescheduled: retrying the same payload cannot succeed"
        );
        assert_eq!(
            broker.calls_for(id),
            1,
            "row {id} is a poison message: the pass should try it once; yours called the broker \
             {} times for it",
            broker.calls_for(id)
        );
    }
    let expected = vec![(poison, Reason::Rejected), (fresh_poison, Reason::Rejected)];
    assert_eq!(
        report.failed, expected,
        "the report should list both poison rows as failed with Reason::Rejected (a permanent \
         failure, whatever the attempts); yours lists {:?}",
        report.failed
    );

    // An hour later, the poison rows are left alone: they wait for dead_letter, not the broker.
    let calls_before = broker.calls.len();
    let later = pass(&conn, &mut broker, 3_605_000, 5, 3);
    let retried: Vec<i64> = broker.calls[calls_before..].to_vec();
    assert!(
        retried.is_empty() && later.failed.is_empty(),
        "an hour after the poison rows {poison} and {fresh_poison} were failed, another pass \
         called the broker for {retried:?} and reported {:?} as failed; a failed row is never \
         published again (row {first} was already sent)",
        later.failed
    );
}

#[test]
fn transient_rescheduled() {
    let conn = crate::fixture::db();
    let flaky = write(&conn, r#"{"order":1}"#, 0);
    let behind = write(&conn, r#"{"order":2}"#, 10);
    let mut broker = Script::new().flaky(r#"{"order":1}"#, 1);

    let report = pass(&conn, &mut broker, 5_000, 5, 4);

    let row = outbox_row(&conn, flaky).expect("the relay must not delete rows");
    let due = row.next_retry_at.unwrap_or(i64::MIN);
    assert!(
        row.status == "pending"
            && row.attempts == 1
            && row.last_attempt_at == Some(5_000)
            && row
                .last_error
                .as_deref()
                .is_some_and(|e| e.contains(TRANSIENT_MESSAGE))
            && (5_000..=6_000).contains(&due),
        "row {flaky} failed transiently (\"{TRANSIENT_MESSAGE}\") at t = 5000 ms with 5 attempts \
         allowed; it should stay pending with attempts = 1, last_attempt_at = 5000, the error \
         in last_error and next_retry_at = queue::retry_at(now, 1, …) in [5000, 6000]; yours is \
         {row}"
    );
    assert!(
        report.retrying == vec![flaky] && broker.acked == vec![behind],
        "after a transient failure of row {flaky}, the pass should report it as retrying and \
         still publish row {behind} behind it; yours reported retrying {:?}, failed {:?}, and \
         published {:?}",
        report.retrying,
        report.failed,
        broker.acked
    );
}

#[test]
fn exhausted_fails() {
    let conn = crate::fixture::db();
    let id = write(&conn, r#"{"order":1}"#, 0);
    let mut broker = Script::new().flaky(r#"{"order":1}"#, u32::MAX);
    let max_attempts = 3;
    let mut now = 1_000;
    let mut history = Vec::new();
    for round in 0..6 {
        let report = pass(&conn, &mut broker, now, max_attempts, 10 + round);
        let row = outbox_row(&conn, id).expect("the relay must not delete rows");
        history.push(format!(
            "t = {now}: {} after {} attempt(s)",
            row.status, row.attempts
        ));
        if row.status == "failed" {
            assert!(
                row.attempts == i64::from(max_attempts)
                    && broker.calls.len() == max_attempts as usize
                    && report.failed == vec![(id, Reason::Exhausted)],
                "with max_attempts = {max_attempts}, a row that always fails transiently \
                 should be failed after exactly {max_attempts} calls, with attempts = \
                 {max_attempts} and Reason::Exhausted in the report; yours made {} call(s), \
                 attempts = {}, report {:?} ({})",
                broker.calls.len(),
                row.attempts,
                report.failed,
                history.join("; ")
            );
            return;
        }
        // The next pass runs when the row is due again (or 8 s later if it has no time set).
        now = row
            .next_retry_at
            .map_or(now + 8_000, |due| due.max(now + 1));
    }
    panic!(
        "with max_attempts = {max_attempts}, a row that always fails transiently should be \
         failed after {max_attempts} calls; yours was still retrying after {} calls ({}): \
         without a limit, retries never end",
        broker.calls.len(),
        history.join("; ")
    );
}
