//! Checks of `relay_once`: a poison message is failed at once and does not block the rows
//! behind it; transient failures are rescheduled until the attempts run out.

use exercise::{Reason, RelayConfig, RelayReport, relay_once};
use rusqlite::Connection;

use super::fixture::{POISON_MESSAGE, Script, TRANSIENT_MESSAGE, config, outbox_row, seed, write};
use super::support::{catch, seeded};

/// One pass of the learner's relay; a panic or an error fails the check with its text.
fn pass(
    conn: &Connection,
    broker: &mut Script,
    now: i64,
    max_attempts: u32,
    seed: u64,
) -> RelayReport {
    pass_with(conn, broker, now, &config(max_attempts), seed)
}

/// One pass under a policy of the check's own.
fn pass_with(
    conn: &Connection,
    broker: &mut Script,
    now: i64,
    cfg: &RelayConfig,
    seed: u64,
) -> RelayReport {
    let mut rng = seeded(seed);
    let outcome = catch(|| relay_once(conn, broker, now, cfg, &mut rng));
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
        let conn = super::fixture::db();
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
             {:?}) and left rows {:?} unsent: {}",
            shape.join(", "),
            good,
            broker.acked,
            broker.calls,
            pending,
            if broker.acked == good {
                "the broker accepted them, so each is marked sent (queue::mark_sent) as soon as \
                 it is acknowledged"
            } else {
                "a permanent failure must mark its row failed and let the pass go on to the next \
                 row"
            },
        );
        assert_eq!(
            report.sent, good,
            "the report of the pass should list the sent rows {good:?}; yours lists {:?}",
            report.sent
        );
    }
    // Many refusals in one pass, permanent and transient, among rows the broker accepts: no
    // number of failures ends the pass ("stop after ten poison messages" leaves the rows
    // behind them unsent). 120 due rows, batch_size 200: every third is poison, every fifth
    // (not poison) fails transiently.
    let conn = super::fixture::db();
    let mut broker = Script::new();
    let mut good = Vec::new();
    conn.execute_batch("BEGIN").expect("seeding rows");
    for n in 0..120 {
        let payload = format!(r#"{{"order":{n}}}"#);
        let id = write(&conn, &payload, n * 10);
        if n % 3 == 0 {
            broker = broker.poison(&payload);
        } else if n % 5 == 0 {
            broker = broker.flaky(&payload, 1);
        } else {
            good.push(id);
        }
    }
    conn.execute_batch("COMMIT").expect("seeding rows");
    let cfg = RelayConfig {
        batch_size: 200,
        ..config(5)
    };
    let report = pass_with(&conn, &mut broker, 5_000, &cfg, 9);
    assert!(
        broker.calls.len() == 120 && broker.acked == good && report.sent == good,
        "120 rows were due with batch_size = 200, 40 of them poison and 16 failing transiently; \
         one pass should call the broker for all 120, in order, and send the {} it accepts; \
         yours called it {} time(s) and sent {} row(s). {}",
        good.len(),
        broker.calls.len(),
        report.sent.len(),
        if broker.calls.len() < 120 && short_even_without_refusals(&cfg) {
            "A pass over 120 rows that the broker all accepts stops short too: a pass takes up \
             to cfg.batch_size rows, the caller's number, with no ceiling of its own"
        } else {
            "No number of refusals ends a pass: each is recorded on its row, and the pass goes \
             on"
        },
    );
}

#[test]
fn poison_failed_at_once() {
    let conn = super::fixture::db();
    let first = write(&conn, r#"{"order":1}"#, 0);
    // A poison message that already failed twice transiently: the permanent failure decides.
    let poison = seed(&conn, r#"{"order":2,"total":"12,50"}"#, "pending", 2, 10);
    let fresh_poison = write(&conn, r#"{"order":3,"total":"1,00"}"#, 20);
    // A poison message at its last allowed attempt: both rules apply, the permanent one decides.
    let last_poison = seed(&conn, r#"{"order":4,"total":"2,00"}"#, "pending", 4, 30);
    let mut broker = Script::new()
        .poison(r#"{"order":2,"total":"12,50"}"#)
        .poison(r#"{"order":3,"total":"1,00"}"#)
        .poison(r#"{"order":4,"total":"2,00"}"#);

    let report = pass(&conn, &mut broker, 5_000, 5, 2);

    for (id, attempts_before) in [(poison, 2), (fresh_poison, 0), (last_poison, 4)] {
        let row = outbox_row(&conn, id).expect("the relay must not delete rows");
        let expected_attempts = attempts_before + 1;
        assert!(
            row.status == "failed"
                && row.attempts == expected_attempts
                && row.last_attempt_at == Some(5_000)
                && row.next_retry_at.is_none()
                && row.last_error.as_deref() == Some(POISON_MESSAGE),
            "the broker rejected row {id} for good at t = 5000 ms, with the message \
             \"{POISON_MESSAGE}\"; the row should be failed at once, with attempts = \
             {expected_attempts}, last_attempt_at = 5000, no next_retry_at, and exactly what the \
             broker said in last_error (PublishError::message, not its Display); yours is {row}. \
             A poison message is never rescheduled: retrying the same payload cannot succeed"
        );
        assert_eq!(
            broker.calls_for(id),
            1,
            "row {id} is a poison message: the pass should try it once; yours called the broker \
             {} times for it",
            broker.calls_for(id)
        );
    }
    let expected = vec![
        (poison, Reason::Rejected),
        (fresh_poison, Reason::Rejected),
        (last_poison, Reason::Rejected),
    ];
    assert_eq!(
        report.failed, expected,
        "the report should list the three poison rows as failed with Reason::Rejected (a \
         permanent failure, whatever the attempts: row {last_poison} used its 5th and last \
         attempt, and is still rejected, not exhausted); yours lists {:?}",
        report.failed
    );
    assert!(
        report.retrying.is_empty() && report.sent == vec![first],
        "the pass sent row {first} and failed the three poison rows: nothing waits for a retry, \
         so the report's retrying list is empty; yours lists sent {:?}, retrying {:?}",
        report.sent,
        report.retrying,
    );

    // An hour later, the poison rows are left alone: they wait for dead_letter, not the broker.
    let calls_before = broker.calls.len();
    let later = pass(&conn, &mut broker, 3_605_000, 5, 3);
    let retried: Vec<i64> = broker.calls[calls_before..].to_vec();
    assert!(
        retried.is_empty() && later.failed.is_empty(),
        "an hour after the poison rows {poison}, {fresh_poison} and {last_poison} were failed, \
         another pass \
         called the broker for {retried:?} and reported {:?} as failed; a failed row is never \
         published again (row {first} was already sent)",
        later.failed
    );
}

#[test]
fn transient_rescheduled() {
    let conn = super::fixture::db();
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
            && row.last_error.as_deref() == Some(TRANSIENT_MESSAGE)
            && (5_000..=6_000).contains(&due),
        "row {flaky} failed transiently (\"{TRANSIENT_MESSAGE}\") at t = 5000 ms with 5 attempts \
         allowed; it should stay pending with attempts = 1, last_attempt_at = 5000, exactly \
         the broker's message in last_error and next_retry_at = queue::retry_at(now, 1, …) in [5000, 6000]; yours is \
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
    // 300: a limit past any round number a relay might keep as its own ceiling (10, 100, 255).
    for max_attempts in [3, 300] {
        exhausted_after(max_attempts);
    }
    // max_attempts is a u32: a limit of 2^16 + 3 is not 3 (a count compared as u16 would be).
    let conn = super::fixture::db();
    let id = seed(&conn, r#"{"order":1}"#, "pending", 3, 0);
    let mut broker = Script::new().flaky(r#"{"order":1}"#, 1);
    let report = pass(&conn, &mut broker, 9_000, 65_539, 12);
    let row = outbox_row(&conn, id).expect("the relay must not delete rows");
    assert!(
        row.status == "pending" && row.attempts == 4 && report.retrying == vec![id],
        "with max_attempts = 65,539, row {id} failed transiently for the 4th time: it has \
         attempts left, so it stays pending with attempts = 4 and is reported as retrying; \
         yours is {row}, reported failed {:?}, retrying {:?}",
        report.failed,
        report.retrying,
    );
}

/// Whether one pass over 120 due rows that the broker all accepts calls it fewer than 120
/// times under `cfg`: a pass that stops short without any refusal keeps a ceiling of its own.
fn short_even_without_refusals(cfg: &RelayConfig) -> bool {
    let conn = super::fixture::db();
    conn.execute_batch("BEGIN").expect("seeding rows");
    for n in 0..120 {
        write(&conn, &format!(r#"{{"order":{n}}}"#), n * 10);
    }
    conn.execute_batch("COMMIT").expect("seeding rows");
    let mut broker = Script::new();
    pass_with(&conn, &mut broker, 5_000, cfg, 9);
    broker.calls.len() < 120
}

/// A row that always fails transiently is failed after exactly `max_attempts` calls.
fn exhausted_after(max_attempts: u32) {
    let conn = super::fixture::db();
    let id = write(&conn, r#"{"order":1}"#, 0);
    let mut broker = Script::new().flaky(r#"{"order":1}"#, u32::MAX);
    let mut now = 1_000;
    let mut history = Vec::new();
    for round in 0..u64::from(max_attempts) * 2 {
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
                last_steps(&history),
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
         failed after {max_attempts} calls; yours was still retrying after {} calls ({}): {}",
        broker.calls.len(),
        last_steps(&history),
        if outbox_row(&conn, id).is_some_and(|row| row.attempts == 0) {
            "its attempts never grew. Each failure counts: attempts + 1 on the row"
        } else {
            "without a limit, retries never end. Fail the row once its attempts reach \
             max_attempts"
        },
    );
}

/// The last few steps of a long history, for a message.
fn last_steps(history: &[String]) -> String {
    let skipped = history.len().saturating_sub(6);
    let shown = history[skipped..].join("; ");
    if skipped == 0 {
        shown
    } else {
        format!("… {skipped} earlier passes …; {shown}")
    }
}

#[test]
fn exhausted_past_the_limit() {
    // Rows that had already failed more often than max_attempts allows (the limit was lowered
    // since): one more transient failure fails them; it never reschedules them.
    let conn = super::fixture::db();
    let over = seed(&conn, r#"{"order":1}"#, "pending", 6, 0);
    let at = seed(&conn, r#"{"order":2}"#, "pending", 3, 10);
    let mut broker = Script::new()
        .flaky(r#"{"order":1}"#, u32::MAX)
        .flaky(r#"{"order":2}"#, u32::MAX);
    let report = pass(&conn, &mut broker, 9_000, 4, 5);
    for (id, before) in [(over, 6), (at, 3)] {
        let row = outbox_row(&conn, id).expect("the relay must not delete rows");
        assert!(
            row.status == "failed" && row.attempts == before + 1 && row.next_retry_at.is_none(),
            "row {id} had failed {before} times, max_attempts is 4, and it failed transiently \
             once more: its attempts reach (or pass) the limit, so it is failed, with attempts \
             = {} and no next_retry_at; yours is {row}",
            before + 1,
        );
    }
    assert!(
        report.failed == vec![(over, Reason::Exhausted), (at, Reason::Exhausted)]
            && report.retrying.is_empty(),
        "both rows should be reported failed with Reason::Exhausted, and neither as retrying (a \
         failed row waits for no next_retry_at); yours reported failed {:?}, retrying {:?}",
        report.failed,
        report.retrying,
    );
    // A limit of zero allows no retry: the first transient failure reaches past it ("reach"
    // means "reach or pass"; zero is not "unlimited").
    let conn = super::fixture::db();
    let fresh = write(&conn, r#"{"order":3}"#, 0);
    let mut broker = Script::new().flaky(r#"{"order":3}"#, u32::MAX);
    let report = pass(&conn, &mut broker, 9_000, 0, 7);
    let row = outbox_row(&conn, fresh).expect("the relay must not delete rows");
    assert!(
        row.status == "failed"
            && row.attempts == 1
            && row.next_retry_at.is_none()
            && report.failed == vec![(fresh, Reason::Exhausted)],
        "with max_attempts = 0, row {fresh} failed transiently for the first time: its attempts \
         (1) pass the limit, so it is failed with Reason::Exhausted, attempts = 1 and no \
         next_retry_at; yours is {row}, and the report lists failed {:?}, retrying {:?}",
        report.failed,
        report.retrying,
    );
}

#[test]
fn past_the_limit_still_published() {
    // §17.3: a row already past max_attempts "ends at its next transient failure": it is still
    // published, and only the broker's answer decides. One the broker acknowledges is sent; a
    // poison message is rejected with the broker's words. Failing them without a call
    // dead-letters events that would have gone through.
    let conn = super::fixture::db();
    let over = seed(&conn, r#"{"order":1}"#, "pending", 6, 0);
    let at = seed(&conn, r#"{"order":2}"#, "pending", 4, 10);
    let poison = seed(&conn, r#"{"order":3,"total":"12,50"}"#, "pending", 5, 20);
    let mut broker = Script::new().poison(r#"{"order":3,"total":"12,50"}"#);
    let report = pass(&conn, &mut broker, 9_000, 4, 8);
    assert!(
        broker.calls == vec![over, at, poison],
        "rows {over}, {at} and {poison} had already failed 6, 4 and 5 times with max_attempts = \
         4, and were due: the pass should still publish each of them once, in order ({:?}); \
         yours called the broker for {:?}. The limit is applied to a failure, after the broker \
         has answered",
        vec![over, at, poison],
        broker.calls,
    );
    for id in [over, at] {
        let row = outbox_row(&conn, id).expect("the relay must not delete rows");
        assert!(
            row.status == "sent",
            "row {id} was past max_attempts but the broker acknowledged it: it should be sent; \
             yours is {row}"
        );
    }
    let row = outbox_row(&conn, poison).expect("the relay must not delete rows");
    assert!(
        row.status == "failed"
            && row.attempts == 6
            && row.last_error.as_deref() == Some(POISON_MESSAGE)
            && report.failed == vec![(poison, Reason::Rejected)]
            && report.sent == vec![over, at],
        "the broker acknowledged rows {over} and {at} and rejected row {poison} for good: the \
         report should list sent {:?} and failed [({poison}, Rejected)], and row {poison} be \
         failed with attempts 6 and last_error {POISON_MESSAGE:?}; yours reported sent {:?}, \
         failed {:?}, and row {poison} is {row}",
        vec![over, at],
        report.sent,
        report.failed,
    );
}

#[test]
fn transient_schedule_counts_this_failure() {
    // The row had failed twice; this failure is its third, so its next_retry_at is exactly what
    // queue::retry_at(now, 3, …) draws from the pass's generator (its first draw of the pass).
    let cfg = config(10);
    for (seed_value, before) in [(71u64, 2i64), (72, 3), (73, 0)] {
        let conn = super::fixture::db();
        let flaky = seed(&conn, r#"{"order":1}"#, "pending", before, 0);
        let mut broker = Script::new().flaky(r#"{"order":1}"#, 1);
        let now = 60_000;
        pass(&conn, &mut broker, now, 10, seed_value);
        let attempts = u32::try_from(before + 1).unwrap_or(u32::MAX);
        let expected = exercise::queue::retry_at(now, attempts, &cfg, &mut seeded(seed_value));
        let wrong_count =
            exercise::queue::retry_at(now, attempts - 1, &cfg, &mut seeded(seed_value));
        let row = outbox_row(&conn, flaky).expect("the relay must not delete rows");
        assert!(
            row.next_retry_at == Some(expected),
            "row {flaky} had failed {before} time(s) and failed transiently again at t = {now}; \
             its next_retry_at should be queue::retry_at(now, {attempts}, cfg, rng), counting \
             this failure (= {expected} with this pass's generator){}; yours is {row}",
            if row.next_retry_at == Some(wrong_count) && wrong_count != expected {
                format!(
                    ". Yours equals retry_at(now, {}, …): the attempts before this failure",
                    attempts - 1
                )
            } else {
                String::new()
            },
        );
    }
}

#[test]
fn at_most_batch_size() {
    // Twelve due rows and batch_size = 10: one pass publishes the ten oldest, the next the rest.
    let conn = super::fixture::db();
    let ids: Vec<i64> = (0..12)
        .map(|n| write(&conn, &format!(r#"{{"order":{n}}}"#), 1_000 - n * 10))
        .collect();
    let mut oldest_first = ids.clone();
    oldest_first.reverse();
    let mut broker = Script::new();
    pass(&conn, &mut broker, 5_000, 5, 6);
    assert!(
        broker.calls == oldest_first[..10],
        "12 rows were due and cfg.batch_size is 10: one pass should publish the 10 oldest \
         ({:?}), in order; yours called the broker for {:?}",
        &oldest_first[..10],
        broker.calls,
    );
    // A batch size of zero takes nothing: it is a size like any other, not "no limit".
    let conn = super::fixture::db();
    let waiting = write(&conn, r#"{"order":1}"#, 0);
    let cfg = RelayConfig {
        batch_size: 0,
        ..config(5)
    };
    let mut broker = Script::new();
    let report = pass_with(&conn, &mut broker, 5_000, &cfg, 6);
    assert!(
        broker.calls.is_empty() && report == RelayReport::default(),
        "with cfg.batch_size = 0, a pass takes no row: row {waiting} was due, and yours called \
         the broker for {:?} and reported {report:?}",
        broker.calls,
    );
    // The batch size is the caller's, however large: 1,500 of 1,600 due rows in one pass, past
    // any round number (100, 1,000) a relay might keep as its own ceiling.
    let conn = super::fixture::db();
    conn.execute_batch("BEGIN").expect("seeding rows");
    let ids: Vec<i64> = (0..1_600)
        .map(|n| write(&conn, &format!(r#"{{"order":{n}}}"#), n * 10))
        .collect();
    conn.execute_batch("COMMIT").expect("seeding rows");
    let cfg = RelayConfig {
        batch_size: 1_500,
        ..config(5)
    };
    let mut broker = Script::new();
    pass_with(&conn, &mut broker, 100_000, &cfg, 6);
    assert!(
        broker.calls == ids[..1_500],
        "1,600 rows were due and cfg.batch_size is 1,500: one pass should publish the 1,500 \
         oldest, in order; yours called the broker {} time(s){}. The batch size is the \
         caller's, with no ceiling of the relay's own",
        broker.calls.len(),
        match (broker.calls.first(), broker.calls.last()) {
            (Some(first), Some(last)) => format!(", for rows {first} to {last}"),
            _ => String::new(),
        },
    );
}
