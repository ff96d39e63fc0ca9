//! Given: the run the book shows in §17.7, printed by `examples/poison.rs`.
//!
//! Six orders are placed at t = 0. The payload of order 3 writes its total as `"12,50"`, which
//! the consumer behind the broker refuses for good: a poison message. The broker fails order 5
//! twice and order 6 four times with a transient `503`. The relay runs once a second and
//! dead-letters what fails. At 30 s an operator requeues every dead letter without looking at
//! them; at 60 s, once the consumer has been fixed to read such totals, order 3 is requeued
//! again.

use std::fmt::Write as _;

use rand::SeedableRng;
use rand::rngs::StdRng;
use rusqlite::{Connection, OptionalExtension};

use crate::broker::StubBroker;
use crate::db;
use crate::types::{Millis, OutboxId, RelayConfig, Result};

const POISON: &str = r#"{"order":3,"total":"12,50"}"#;
const FLAKY: &str = r#"{"order":5,"total":"8.00"}"#;
const DOWN: &str = r#"{"order":6,"total":"7.50"}"#;

/// The relay's policy in this run.
pub const CONFIG: RelayConfig = RelayConfig {
    batch_size: 10,
    max_attempts: 4,
    base_ms: 1_000,
    cap_ms: 30_000,
};

/// The run, as two Markdown tables: what happened at each step, and the dead letters the
/// operator finds at 29 s.
pub fn poison_run() -> Result<String> {
    let mut conn = db::open_in_memory()?;
    let payloads = [
        r#"{"order":1,"total":"25.00"}"#,
        r#"{"order":2,"total":"40.00"}"#,
        POISON,
        r#"{"order":4,"total":"19.90"}"#,
        FLAKY,
        DOWN,
    ];
    for (n, payload) in (1..).zip(payloads) {
        db::write_event(&conn, &format!("order-{n}"), "OrderPlaced", payload, 0)?;
    }
    let mut broker = StubBroker::new()
        .rejecting(POISON, r#"total "12,50" is not a number"#)
        .failing_first(FLAKY, 2)
        .failing_first(DOWN, 4);
    let mut rng = StdRng::seed_from_u64(17);
    let mut log = String::from(
        "| t | step | row | broker answered | row afterwards |\n|---:|---|---:|---|---|\n",
    );

    for second in 1..=29 {
        pass(&mut conn, &mut broker, second * 1_000, &mut rng, &mut log)?;
    }
    let dead = dead_letters(&conn)?;

    let requeue_all = |conn: &mut Connection, now: Millis, step: &str, log: &mut String| {
        let ids: Vec<OutboxId> = conn
            .prepare("SELECT id FROM dead_letters ORDER BY id")?
            .query_map([], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for (i, id) in ids.into_iter().enumerate() {
            crate::requeue(conn, id, now)?;
            let (time, step) = if i == 0 {
                (secs(now), step)
            } else {
                (String::new(), "")
            };
            let _ = writeln!(
                log,
                "| {time} | {step} | {id} | | {} |",
                where_is(conn, id)?
            );
        }
        Result::<()>::Ok(())
    };
    requeue_all(
        &mut conn,
        30_000,
        "operator requeues every dead letter",
        &mut log,
    )?;
    pass(&mut conn, &mut broker, 30_000, &mut rng, &mut log)?;
    broker.accept(POISON);
    requeue_all(
        &mut conn,
        60_000,
        "consumer fixed; operator requeues",
        &mut log,
    )?;
    pass(&mut conn, &mut broker, 60_000, &mut rng, &mut log)?;

    Ok(format!(
        "{log}\nThe `dead_letters` table at 29 s, as the operator finds it:\n\n{dead}"
    ))
}

/// The `dead_letters` table as Markdown.
fn dead_letters(conn: &Connection) -> Result<String> {
    let mut table = String::from(
        "| id | reason | attempts | last_error | created_at | failed_at |\n\
         |---:|---|---:|---|---:|---:|\n",
    );
    let mut statement = conn.prepare(
        "SELECT id, reason, attempts, last_error, created_at, failed_at
           FROM dead_letters ORDER BY id",
    )?;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        let _ = writeln!(
            table,
            "| {} | {} | {} | {} | {} | {} |",
            row.get::<_, OutboxId>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, i64>(2)?,
            row.get::<_, Option<String>>(3)?.unwrap_or_default(),
            secs(row.get(4)?),
            secs(row.get(5)?),
        );
    }
    Ok(table)
}

/// One relay pass at `now`, followed by moving what failed to the dead letters; one line of
/// `log` per broker call.
fn pass(
    conn: &mut Connection,
    broker: &mut StubBroker,
    now: Millis,
    rng: &mut StdRng,
    log: &mut String,
) -> Result<()> {
    let before = broker.calls().len();
    let report = crate::relay_once(conn, broker, now, &CONFIG, rng)?;
    for &(id, reason) in &report.failed {
        crate::dead_letter(conn, id, reason, now)?;
    }
    for (i, call) in broker.calls()[before..].iter().enumerate() {
        let (time, step) = if i == 0 {
            (secs(now), "relay pass")
        } else {
            (String::new(), "")
        };
        let answer = match &call.result {
            Ok(()) => "ack".to_owned(),
            Err(error) => error.to_string(),
        };
        let _ = writeln!(
            log,
            "| {time} | {step} | {} | {answer} | {} |",
            call.id,
            where_is(conn, call.id)?,
        );
    }
    Ok(())
}

/// Where row `id` is and in what state, in a few words.
fn where_is(conn: &Connection, id: OutboxId) -> Result<String> {
    let outbox = conn
        .query_row(
            "SELECT status, attempts, next_retry_at FROM outbox WHERE id = ?1",
            [id],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, Option<i64>>(2)?,
                ))
            },
        )
        .optional()?;
    if let Some((status, attempts, next)) = outbox {
        return Ok(match (status.as_str(), next) {
            ("pending", Some(at)) => {
                format!("pending, attempts {attempts}, due at {}", secs(at))
            }
            ("sent", _) if attempts == 0 => "sent".to_owned(),
            ("sent", _) => format!("sent, after {attempts} failed attempts"),
            _ => format!("{status}, attempts {attempts}"),
        });
    }
    let dead = conn
        .query_row(
            "SELECT reason, attempts FROM dead_letters WHERE id = ?1",
            [id],
            |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?)),
        )
        .optional()?;
    Ok(match dead {
        Some((reason, attempts)) => format!("**dead letter** ({reason}), attempts {attempts}"),
        None => "nowhere: lost!".to_owned(),
    })
}

/// Milliseconds as seconds: `1 s`, `1.655 s`.
fn secs(ms: Millis) -> String {
    if ms % 1_000 == 0 {
        format!("{} s", ms / 1_000)
    } else {
        format!("{:.3} s", ms as f64 / 1_000.0)
    }
}
