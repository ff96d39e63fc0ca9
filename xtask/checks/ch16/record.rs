//! Checks of `record_failure`: the fields it writes, the Retry-After hint, permanent failures,
//! the attempt limit, and a short, well-formed `last_error`.

use std::time::Duration;

use exercise::{BackoffConfig, Failure, GiveUp, LAST_ERROR_MAX_BYTES, OutboxRow, Outcome, Status};

use super::fixture::{
    HOUR, MINUTE, SECOND, Seed, T0, ceiling, config, database, ms, record_failure, rel, row,
    show_outcome,
};
use super::support::seeded;

fn describe_row(row: &OutboxRow, now: i64) -> String {
    let at = |value: Option<i64>| value.map_or_else(|| "NULL".to_owned(), |v| rel(v, now));
    format!(
        "status '{}', attempts {}, next_retry_at {}, last_attempt_at {}, last_error {:?}",
        row.status,
        row.attempts,
        at(row.next_retry_at),
        at(row.last_attempt_at),
        row.last_error.as_deref().unwrap_or("NULL"),
    )
}

fn secs(value: u64) -> Duration {
    Duration::from_secs(value)
}

#[test]
fn transient_updates_every_field() {
    let cfg = BackoffConfig::default();
    let failure = Failure::Transient("connection reset by peer".into());
    let mut rng = seeded(16);
    // 100 rows that failed 0 times before, and 100 that failed twice; each fails once more.
    for before in [0u32, 2] {
        let conn = database();
        let limit = ceiling(before + 1, &cfg);
        let mut latest = 0;
        for id in 1..=100 {
            let created = T0 - 10 * SECOND;
            if before == 0 {
                Seed::new(id, created).insert(&conn);
            } else {
                Seed::waiting(id, created, before, T0).insert(&conn);
            }
            let outcome = record_failure(&conn, id, T0, &failure, &cfg, &mut rng);
            let shown = show_outcome(outcome, T0);
            let after = row(&conn, id);
            let fields_right = after.attempts == before + 1
                && after.last_attempt_at == Some(T0)
                && after.last_error.as_deref() == Some("transient: connection reset by peer")
                && after.status == Status::Pending
                && after.created_at == created
                && after.sent_at.is_none();
            let scheduled = after
                .next_retry_at
                .is_some_and(|at| (T0..=T0 + limit).contains(&at));
            assert!(
                fields_right
                    && scheduled
                    && after.next_retry_at.map(Outcome::RetryAt) == Some(outcome),
                "a row that had failed {before} time(s) failed again with Failure::Transient at \
                 `now`; record_failure returned {shown} and left the row with {}. Expected: \
                 status 'pending', attempts {}, next_retry_at within [now, now + {}] (the \
                 ceiling for attempts = {}) and equal to the returned RetryAt, last_attempt_at \
                 now, last_error \"transient: connection reset by peer\" (the failure's \
                 to_string()), and the other columns untouched",
                describe_row(&after, T0),
                before + 1,
                ms(limit),
                before + 1,
            );
            latest = latest.max(after.next_retry_at.unwrap_or(T0) - T0);
        }
        assert!(
            latest >= limit * 3 / 4,
            "after failure number {} the backoff ceiling is {}, but your \
             latest next_retry_at over 100 rows was now + {}: schedule with the new attempts count \
             (the one that includes this failure)",
            before + 1,
            ms(limit),
            ms(latest),
        );
    }
}

#[test]
fn retry_after_preferred() {
    let cfg = BackoffConfig::default();
    let cases = [
        (
            0,
            Failure::RateLimited {
                retry_after: Some(secs(30)),
            },
            30 * SECOND,
        ),
        (
            0,
            Failure::Overloaded {
                retry_after: Some(secs(7)),
            },
            7 * SECOND,
        ),
        // A hint shorter than the backoff would be is followed too.
        (
            5,
            Failure::RateLimited {
                retry_after: Some(secs(2)),
            },
            2 * SECOND,
        ),
        (
            1,
            Failure::Overloaded {
                retry_after: Some(Duration::ZERO),
            },
            0,
        ),
        // Milliseconds count: a hint is not rounded to whole seconds.
        (
            3,
            Failure::RateLimited {
                retry_after: Some(Duration::from_millis(2_500)),
            },
            2_500,
        ),
        // Exactly max_hint is followed as it is.
        (
            0,
            Failure::Overloaded {
                retry_after: Some(secs(600)),
            },
            10 * MINUTE,
        ),
    ];
    let mut rng = seeded(16);
    let conn = database();
    let mut id = 0;
    for (before, failure, wait) in cases {
        for _ in 0..10 {
            id += 1;
            Seed::waiting(id, T0 - MINUTE, before, T0).insert(&conn);
            let outcome = record_failure(&conn, id, T0, &failure, &cfg, &mut rng);
            let shown = show_outcome(outcome, T0);
            let after = row(&conn, id);
            let text = failure.to_string();
            assert!(
                after.next_retry_at == Some(T0 + wait)
                    && outcome == Outcome::RetryAt(T0 + wait)
                    && after.attempts == before + 1
                    && after.last_attempt_at == Some(T0)
                    && after.last_error.as_deref() == Some(text.as_str())
                    && after.status == Status::Pending,
                "{failure:?} (after {before} earlier failure(s)) should schedule the next \
                 attempt exactly at now + {} (the server's hint, at most max_hint = 10 min), \
                 with no jitter, and count as a failure like any other: attempts {}, \
                 last_attempt_at now, last_error {text:?}, status 'pending'; record_failure \
                 returned {shown} and left the row with {}",
                ms(wait),
                before + 1,
                describe_row(&after, T0),
            );
        }
    }
    // Without a hint, a 429 or 503 falls back to the backoff.
    for failure in [
        Failure::RateLimited { retry_after: None },
        Failure::Overloaded { retry_after: None },
    ] {
        id += 1;
        Seed::new(id, T0 - MINUTE).insert(&conn);
        record_failure(&conn, id, T0, &failure, &cfg, &mut rng);
        let after = row(&conn, id);
        assert!(
            after
                .next_retry_at
                .is_some_and(|at| (T0..=T0 + SECOND).contains(&at)),
            "{failure:?} carries no Retry-After, so the first failure backs off within \
             [now, now + 1 s]; the row was left with {}",
            describe_row(&after, T0),
        );
    }
}

#[test]
fn retry_after_capped() {
    let cfg = BackoffConfig::default(); // max_hint = 10 min
    let cases = [
        Failure::RateLimited {
            retry_after: Some(secs(2 * 3_600)),
        },
        Failure::Overloaded {
            retry_after: Some(secs(601)),
        },
        Failure::Overloaded {
            retry_after: Some(Duration::MAX),
        },
    ];
    let mut rng = seeded(16);
    let conn = database();
    for (id, failure) in (1..).zip(cases) {
        Seed::new(id, T0 - MINUTE).insert(&conn);
        let outcome = record_failure(&conn, id, T0, &failure, &cfg, &mut rng);
        let shown = show_outcome(outcome, T0);
        let after = row(&conn, id);
        let capped = T0 + 10 * MINUTE;
        assert!(
            after.next_retry_at == Some(capped) && outcome == Outcome::RetryAt(capped),
            "{failure:?} asks for more than max_hint = 10 min: follow the hint but cap it, so \
             the next attempt is exactly at now + 10 min; record_failure returned {shown} and \
             left the row with {}",
            describe_row(&after, T0),
        );
    }
    // max_hint is the only cap on a hint: under a max_hint of a year, hints of 30 hours and
    // 60 days (past a day, and past u32::MAX milliseconds) are followed to the millisecond, and
    // longer ones are cut to the year. Under a max_hint of zero every hint is cut to zero: the
    // row is due at once (zero is a cap like any other, not "no cap").
    const DAY: i64 = 24 * HOUR;
    const YEAR: i64 = 365 * DAY;
    let long_hints = [
        (YEAR, 30 * HOUR + 1, 30 * HOUR + 1),
        (YEAR, 60 * DAY, 60 * DAY),
        (YEAR, YEAR, YEAR),
        (YEAR, 2 * YEAR, YEAR),
        (YEAR, i64::MAX, YEAR),
        (0, 30 * SECOND, 0),
        (0, 2 * HOUR, 0),
    ];
    for (id, (max_hint, hint, wait)) in (10..).zip(long_hints) {
        let cfg = config(SECOND, MINUTE, max_hint, 10);
        let failure = Failure::RateLimited {
            retry_after: Some(Duration::from_millis(hint as u64)),
        };
        Seed::new(id, T0 - MINUTE).insert(&conn);
        let outcome = record_failure(&conn, id, T0, &failure, &cfg, &mut rng);
        let shown = show_outcome(outcome, T0);
        let after = row(&conn, id);
        assert!(
            after.next_retry_at == Some(T0 + wait) && outcome == Outcome::RetryAt(T0 + wait),
            "a Retry-After of {} ({hint} ms) with max_hint = {} should schedule the next \
             attempt exactly at now + {wait} ms (min(hint, max_hint), to the millisecond, no cap \
             but max_hint); record_failure returned {shown}{} and left the row with {}",
            ms(hint),
            ms(max_hint),
            match outcome {
                Outcome::RetryAt(at) => format!(" (now + {} ms)", at - T0),
                Outcome::Failed(_) => String::new(),
            },
            describe_row(&after, T0),
        );
    }
}

#[test]
fn permanent_fails_at_once() {
    let cfg = BackoffConfig::default(); // max_attempts = 10
    let failure = Failure::Permanent("payload is not valid JSON".into());
    let mut rng = seeded(16);
    let conn = database();
    for (id, before) in [(1, 0u32), (2, 3)] {
        Seed::waiting(id, T0 - MINUTE, before, T0).insert(&conn);
        let outcome = record_failure(&conn, id, T0, &failure, &cfg, &mut rng);
        let shown = show_outcome(outcome, T0);
        let after = row(&conn, id);
        let right = outcome == Outcome::Failed(GiveUp::Permanent)
            && after.status == Status::Failed
            && after.attempts == before + 1
            && after.next_retry_at.is_none()
            && after.last_attempt_at == Some(T0)
            && after.last_error.as_deref() == Some("permanent: payload is not valid JSON");
        assert!(
            right,
            "a permanent failure (after {before} earlier failure(s), 10 attempts allowed) must \
             not be retried: expected Outcome::Failed(GiveUp::Permanent) and a row with status \
             'failed', attempts {}, next_retry_at NULL, last_attempt_at now, last_error \
             \"permanent: payload is not valid JSON\"; record_failure returned {shown} and \
             left the row with {}",
            before + 1,
            describe_row(&after, T0),
        );
    }
}

#[test]
fn attempt_limit() {
    // The last failure carries a Retry-After: a hint does not buy an attempt beyond the limit.
    let cycle = [
        Failure::Transient("connection refused".into()),
        Failure::Overloaded { retry_after: None },
        Failure::RateLimited {
            retry_after: Some(secs(10)),
        },
        Failure::Transient("timed out".into()),
    ];
    let mut rng = seeded(16);
    // 300: a limit past any round number a loop might keep as its own ceiling (25, 100, 255).
    for max_attempts in [5u32, 1, 3, 300] {
        let cfg = config(SECOND, MINUTE, 10 * MINUTE, max_attempts);
        let conn = database();
        Seed::new(1, T0).insert(&conn);
        let mut now = T0;
        let mut history = Vec::new();
        for failure_number in 1..=max_attempts + 1 {
            let failure = if failure_number == max_attempts {
                &cycle[2]
            } else {
                &cycle[(failure_number as usize - 1) % cycle.len()]
            };
            let outcome = record_failure(&conn, 1, now, failure, &cfg, &mut rng);
            let shown = show_outcome(outcome, now);
            let after = row(&conn, 1);
            history.push(shown.clone());
            let last = failure_number >= max_attempts;
            if last {
                assert!(
                    outcome == Outcome::Failed(GiveUp::AttemptsExhausted)
                        && after.status == Status::Failed
                        && after.next_retry_at.is_none()
                        && after.attempts == max_attempts,
                    "with max_attempts = {max_attempts}, failure number {failure_number} ({failure:?}) \
                     uses the last attempt, so the row must be given up: expected \
                     Failed(AttemptsExhausted), status 'failed', next_retry_at NULL, attempts \
                     {max_attempts}; got {shown} and a row with {}. Outcomes so far: [{}]",
                    describe_row(&after, now),
                    history.join(", "),
                );
                break;
            }
            let Outcome::RetryAt(at) = outcome else {
                panic!(
                    "with max_attempts = {max_attempts}, failure number {failure_number} \
                     ({failure:?}) still leaves attempts to use, but record_failure returned \
                     {shown}; the row was left with {}",
                    describe_row(&after, now),
                );
            };
            assert_eq!(
                after.status,
                Status::Pending,
                "after failure {failure_number} of {max_attempts} allowed the row should still \
                 be pending; it has {}",
                describe_row(&after, now),
            );
            now = at.max(now + 1);
        }
    }
    // max_attempts is a u32: a limit of 2^16 + 3 is not 3 (a count compared as u16 would be).
    let cfg = config(SECOND, MINUTE, 10 * MINUTE, 65_539);
    let conn = database();
    Seed::waiting(1, T0 - HOUR, 3, T0).insert(&conn);
    let outcome = record_failure(&conn, 1, T0, &cycle[0], &cfg, &mut rng);
    let after = row(&conn, 1);
    assert!(
        matches!(outcome, Outcome::RetryAt(_))
            && after.status == Status::Pending
            && after.attempts == 4,
        "with max_attempts = 65,539, a row's 4th failure leaves attempts to use: expected a \
         RetryAt and a pending row with attempts 4; got {} and a row with {}",
        show_outcome(outcome, T0),
        describe_row(&after, T0),
    );
}

#[test]
fn last_error_truncated() {
    let cfg = BackoffConfig::default();
    let long = "x".repeat(1_000);
    let cases = [
        (
            Failure::Transient(long.clone()),
            format!("transient: {long}"),
        ),
        (
            Failure::Permanent(long.clone()),
            format!("permanent: {long}"),
        ),
        (
            Failure::Transient("broker unreachable".into()),
            "transient: broker unreachable".to_owned(),
        ),
        // Exactly 200 bytes with the prefix: kept whole. 201: one byte goes.
        (
            Failure::Transient("y".repeat(189)),
            format!("transient: {}", "y".repeat(189)),
        ),
        (
            Failure::Permanent("z".repeat(190)),
            format!("permanent: {}", "z".repeat(190)),
        ),
    ];
    let mut rng = seeded(16);
    let conn = database();
    for (id, (failure, text)) in (1..).zip(cases) {
        Seed::new(id, T0 - HOUR).insert(&conn);
        record_failure(&conn, id, T0, &failure, &cfg, &mut rng);
        let stored = row(&conn, id).last_error.unwrap_or_default();
        let expected = &text[..text.len().min(LAST_ERROR_MAX_BYTES)];
        let why = if !text.starts_with(stored.as_str()) {
            "That is not the start of the failure's text: store failure.to_string() (its Display \
             text, such as \"transient: …\"), cut to size"
                .to_owned()
        } else if stored.len() > expected.len() {
            format!(
                "The column is a short summary for people and dashboards, not the whole error \
                 (LAST_ERROR_MAX_BYTES = {LAST_ERROR_MAX_BYTES})"
            )
        } else {
            format!(
                "A text that fits in LAST_ERROR_MAX_BYTES = {LAST_ERROR_MAX_BYTES} bytes is kept \
                 whole, and a longer one keeps exactly that many bytes"
            )
        };
        assert!(
            stored == expected,
            "a failure whose text is {} bytes long should leave last_error = its first {} \
             bytes; yours stored {} bytes, starting {:?}. {why}",
            text.len(),
            expected.len(),
            stored.len(),
            stored.chars().take(40).collect::<String>(),
        );
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn expected_prefix(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[test]
fn truncation_is_utf8_safe() {
    let cfg = BackoffConfig::default();
    let messages = [
        "é".repeat(300),
        "日本語のエラー".repeat(40),
        "🚀".repeat(100),
        format!("{}ü{}", "a".repeat(188), "b".repeat(100)),
        // A two-byte character that ends exactly at byte 200 stays.
        format!("{}é", "a".repeat(187)),
    ];
    let mut rng = seeded(16);
    let conn = database();
    for (id, message) in (1..).zip(messages) {
        let failure = Failure::Transient(message.clone());
        let text = format!("transient: {message}");
        Seed::new(id, T0 - HOUR).insert(&conn);
        record_failure(&conn, id, T0, &failure, &cfg, &mut rng);
        let stored = row(&conn, id).last_error.unwrap_or_default();
        let expected = expected_prefix(&text, LAST_ERROR_MAX_BYTES);
        let why = if !text.starts_with(stored.as_str()) {
            "That is not the start of the failure's text: store failure.to_string() (its \
             Display text), cut to size"
        } else if stored.len() > LAST_ERROR_MAX_BYTES {
            "Count bytes, not chars: a character here takes two to four bytes"
        } else {
            "Cut at the last char boundary (str::is_char_boundary) at or before the limit: no \
             shorter, and never inside a character"
        };
        assert!(
            stored == expected,
            "for a {}-byte error of multi-byte characters (starting {:?}), last_error should be \
             the longest prefix of at most {} bytes that ends between two characters: {} bytes. \
             Yours stored {} bytes{}. {why}",
            text.len(),
            text.chars().take(14).collect::<String>(),
            LAST_ERROR_MAX_BYTES,
            expected.len(),
            stored.len(),
            if expected.starts_with(&stored) || stored.starts_with(expected) {
                String::new()
            } else {
                format!(
                    ", starting {:?}",
                    stored.chars().take(14).collect::<String>()
                )
            },
        );
    }
}

#[test]
fn only_that_row() {
    let cfg = BackoffConfig::default();
    let conn = database();
    let seeds = [
        Seed::new(1, T0 - MINUTE),
        Seed::waiting(2, T0 - MINUTE, 2, T0 - SECOND),
        Seed::new(3, T0 - 30 * SECOND),
    ];
    for seed in &seeds {
        seed.insert(&conn);
    }
    let before: Vec<OutboxRow> = [1, 3].iter().map(|id| row(&conn, *id)).collect();
    let failure = Failure::Permanent("bad payload".into());
    record_failure(&conn, 2, T0, &failure, &cfg, &mut seeded(16));
    for (id, earlier) in [1, 3].into_iter().zip(before) {
        let now_row = row(&conn, id);
        assert!(
            now_row == earlier,
            "record_failure for row 2 changed row {id} as well: it had {} and now has {}. The \
             UPDATE must touch only the failed row (WHERE id = ?)",
            describe_row(&earlier, T0),
            describe_row(&now_row, T0),
        );
    }
}

#[test]
fn permanent_wins_at_the_last_attempt() {
    // Both rules apply at once: the failure is permanent and it uses the last attempt. The
    // permanent failure is the reason the row gives up; an operator reading GiveUp must be told
    // the payload is bad, not that the broker was down ten times.
    let cfg = config(SECOND, MINUTE, 10 * MINUTE, 4);
    let failure = Failure::Permanent("unknown topic".into());
    let mut rng = seeded(16);
    let conn = database();
    for (id, before) in [(1, 3u32), (2, 7)] {
        Seed::waiting(id, T0 - MINUTE, before, T0).insert(&conn);
        let outcome = record_failure(&conn, id, T0, &failure, &cfg, &mut rng);
        let after = row(&conn, id);
        assert!(
            outcome == Outcome::Failed(GiveUp::Permanent)
                && after.status == Status::Failed
                && after.next_retry_at.is_none()
                && after.attempts == before + 1,
            "a permanent failure that is also failure number {} with max_attempts = 4 should \
             give up as Failed(Permanent), the reason that holds whatever the count (a permanent \
             failure is decided first); record_failure returned {} and left the row with {}",
            before + 1,
            show_outcome(outcome, T0),
            describe_row(&after, T0),
        );
    }
}

#[test]
fn attempts_already_past_the_limit() {
    // A row that has failed more times than max_attempts allows (the limit was lowered since,
    // or the row was requeued by hand without a reset) must still end, not retry forever.
    let cfg = config(SECOND, MINUTE, 10 * MINUTE, 5);
    let failures = [
        Failure::Transient("connection refused".into()),
        Failure::RateLimited {
            retry_after: Some(secs(3)),
        },
    ];
    let mut rng = seeded(16);
    let conn = database();
    for (id, failure) in (1..).zip(failures) {
        Seed::waiting(id, T0 - HOUR, 8, T0).insert(&conn);
        let outcome = record_failure(&conn, id, T0, &failure, &cfg, &mut rng);
        let after = row(&conn, id);
        assert!(
            outcome == Outcome::Failed(GiveUp::AttemptsExhausted)
                && after.status == Status::Failed
                && after.attempts == 9,
            "a row that had already failed 8 times, with max_attempts = 5, failed again \
             ({failure:?}): it has used more than its attempts, so expected \
             Failed(AttemptsExhausted), status 'failed', attempts 9; record_failure returned {} \
             and left the row with {}. Give up when attempts reach the limit or pass it",
            show_outcome(outcome, T0),
            describe_row(&after, T0),
        );
    }
    // Far past the limit (a count no u8 or u16 holds), and a limit of zero: no failure is
    // allowed a retry, so the first one ends the row (zero is not "unlimited").
    for (id, before, max_attempts) in [(3, 100_000u32, 5u32), (4, 0, 0)] {
        let cfg = config(SECOND, MINUTE, 10 * MINUTE, max_attempts);
        let failure = Failure::Transient("connection refused".into());
        Seed::waiting(id, T0 - HOUR, before, T0).insert(&conn);
        let outcome = record_failure(&conn, id, T0, &failure, &cfg, &mut rng);
        let after = row(&conn, id);
        assert!(
            outcome == Outcome::Failed(GiveUp::AttemptsExhausted)
                && after.status == Status::Failed
                && after.attempts == before + 1,
            "a row that had already failed {before} time(s), with max_attempts = {max_attempts}, \
             failed again: that brings attempts past the limit, so expected \
             Failed(AttemptsExhausted), status 'failed', attempts {}; record_failure returned {} \
             and left the row with {}",
            before + 1,
            show_outcome(outcome, T0),
            describe_row(&after, T0),
        );
    }
}

#[test]
fn missing_row_is_an_error() {
    let cfg = BackoffConfig::default();
    let conn = database();
    Seed::new(1, T0 - MINUTE).insert(&conn);
    let failure = Failure::Transient("connection refused".into());
    let mut rng = seeded(16);
    let result =
        super::support::catch(|| exercise::record_failure(&conn, 42, T0, &failure, &cfg, &mut rng));
    let rows: i64 = conn
        .query_row("SELECT COUNT(*) FROM outbox", [], |r| r.get(0))
        .expect("counting rows");
    let untouched = row(&conn, 1).attempts == 0;
    match result {
        Ok(Err(rusqlite::Error::QueryReturnedNoRows)) if rows == 1 && untouched => {}
        other => panic!(
            "record_failure for row 42, which does not exist, should return \
             Err(QueryReturnedNoRows) and change nothing; it returned {}, and the table now has \
             {rows} row(s){}. A relay that believes it recorded a failure it did not write \
             loses the retry",
            match other {
                Ok(Ok(outcome)) => format!("Ok({})", show_outcome(outcome, T0)),
                Ok(Err(error)) => format!("Err({error:?})"),
                Err(panic) => format!("a panic ({panic})"),
            },
            if untouched {
                ""
            } else {
                ", and row 1 was changed"
            },
        ),
    }
}

#[test]
fn truncate_error_honours_max_bytes() {
    // truncate_error on its own, with limits other than 200: the limit is the parameter.
    let cases: [(&str, usize, &str); 8] = [
        ("héllo", 1, "h"),
        ("héllo", 2, "h"),
        ("héllo", 3, "hé"),
        ("日本", 4, "日"),
        ("日本", 6, "日本"),
        ("abc", 3, "abc"),
        ("abc", 0, ""),
        ("", 5, ""),
    ];
    for (message, max_bytes, expected) in cases {
        let got = super::support::catch(|| exercise::truncate_error(message, max_bytes).to_owned());
        assert!(
            got.as_deref() == Ok(expected),
            "truncate_error({message:?}, max_bytes = {max_bytes}) should be {expected:?}, the \
             longest prefix of at most {max_bytes} bytes that ends between two characters; yours \
             {}",
            match &got {
                Ok(text) => format!("returned {text:?}"),
                Err(panic) => format!("panicked: {panic}"),
            },
        );
    }
}
