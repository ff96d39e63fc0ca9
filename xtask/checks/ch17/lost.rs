//! The invariant of the chapter: whatever happens (poison messages, transient failures, moves,
//! requeues, and faults injected into any of them), every event ever written is in exactly one
//! of the two tables, under its own id, with its payload unchanged.

use std::collections::BTreeMap;

use exercise::{Reason, dead_letter, relay_once, requeue};
use rand::RngExt;
use rand::rngs::StdRng;
use rusqlite::Connection;

use super::fixture::{Fault, Script, clear, config, contents, ids, inject, write};
use super::support::{catch, seeded};

const FAULTS: [Fault; 5] = [
    Fault::InsertIntoOutbox,
    Fault::UpdateOutbox,
    Fault::DeleteFromOutbox,
    Fault::InsertIntoDeadLetters,
    Fault::DeleteFromDeadLetters,
];

/// One step of a seeded run.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// A new event; `poison` and `flaky` decide how the broker treats it.
    Write,
    /// A relay pass, then every failed row to the dead letters.
    Pass,
    /// The operator requeues this dead letter, having fixed its cause or not.
    Requeue { id: i64, fixed: bool },
    /// A sweep that tries to dead-letter this outbox row, whatever its status.
    Sweep { id: i64, reason: Reason },
}

/// Picks the next step; writes first, so there is something to work on.
fn pick(rng: &mut StdRng, conn: &Connection, written: usize) -> Step {
    let kind = rng.random_range(0..10);
    let dead: Vec<i64> = ids(conn, "dead_letters").into_iter().collect();
    let outbox: Vec<i64> = ids(conn, "outbox").into_iter().collect();
    match kind {
        _ if written < 3 => Step::Write,
        0..=2 => Step::Write,
        3..=5 => Step::Pass,
        6 | 7 if !dead.is_empty() => Step::Requeue {
            id: dead[rng.random_range(0..dead.len())],
            fixed: rng.random_bool(0.5),
        },
        _ if !outbox.is_empty() => Step::Sweep {
            id: outbox[rng.random_range(0..outbox.len())],
            reason: if rng.random_bool(0.5) {
                Reason::Rejected
            } else {
                Reason::Exhausted
            },
        },
        _ => Step::Pass,
    }
}

/// Runs `call`; a panic counts as a crash when a fault was injected, and fails the check
/// otherwise. Errors are expected under faults and ignored: only the database state matters.
fn attempt<T>(step: &str, fault: Option<Fault>, call: impl FnOnce() -> T) {
    if let Err(message) = catch(call) {
        assert!(
            fault.is_some(),
            "{step} panicked with no fault injected: {message}"
        );
    }
}

/// The invariant after a step: every id written is in exactly one table, with its payload.
fn verify(conn: &Connection, written: &BTreeMap<i64, String>, step: &str, seed: u64, n: usize) {
    let outbox = contents(conn, "outbox");
    let dead = contents(conn, "dead_letters");
    let strangers: Vec<i64> = outbox
        .keys()
        .chain(dead.keys())
        .filter(|id| !written.contains_key(id))
        .copied()
        .collect();
    let advice = if strangers.is_empty() {
        "Every move and requeue must be one transaction".to_owned()
    } else {
        format!(
            "The tables also hold ids {strangers:?} that were never written: an event keeps its \
             id when it moves, requeue included"
        )
    };
    for (id, payload) in written {
        let places: Vec<&String> = [outbox.get(id), dead.get(id)]
            .into_iter()
            .flatten()
            .collect();
        let problem = match places.as_slice() {
            [] => "is in neither table: it was lost".to_owned(),
            [found] if *found != payload => {
                format!("came back with payload {found} instead of {payload}")
            }
            [_] => continue,
            _ => "is in both tables: it now exists twice".to_owned(),
        };
        panic!(
            "nothing may be lost or doubled: after step {n} of seeded run {seed} ({step}), event \
             {id} {problem}. Events written: {}; the outbox holds {} row(s), dead_letters {}. \
             {advice}",
            written.len(),
            outbox.len(),
            dead.len()
        );
    }
    assert!(
        strangers.is_empty(),
        "after step {n} of seeded run {seed} ({step}), the tables hold ids {strangers:?} that \
         were never written: an event keeps its id when it moves, requeue included"
    );
}

#[test]
fn nothing_lost() {
    for seed in 0..8 {
        let mut rng = seeded(seed);
        let mut conn = super::fixture::db();
        let mut broker = Script::new();
        let mut written = BTreeMap::new();
        let cfg = config(3);
        let mut now = 0_i64;
        for n in 1..=50 {
            now += rng.random_range(200..1_500);
            let step = pick(&mut rng, &conn, written.len());
            if let Step::Write = step {
                // Writes happen without faults: they are chapter 15's business, not this one's.
                let payload = format!(r#"{{"seed":{seed},"event":{}}}"#, written.len());
                match rng.random_range(0..10) {
                    0 | 1 => broker = broker.poison(&payload),
                    2 | 3 => broker = broker.flaky(&payload, rng.random_range(1..6)),
                    _ => {}
                }
                let id = write(&conn, &payload, now);
                written.insert(id, payload);
                verify(&conn, &written, "an event written", seed, n);
                continue;
            }
            let fault = rng
                .random_bool(0.3)
                .then(|| FAULTS[rng.random_range(0..FAULTS.len())]);
            if let Some(fault) = fault {
                inject(&conn, fault);
            }
            let with = fault.map_or(String::new(), |f| {
                format!(", with a fault on `{}`", f.statement())
            });
            let description = match step {
                Step::Write => unreachable!("handled above"),
                Step::Pass => {
                    let mut pass_rng = seeded(seed * 1_000 + n as u64);
                    let mut report = None;
                    attempt("relay_once", fault, || {
                        report = relay_once(&conn, &mut broker, now, &cfg, &mut pass_rng).ok();
                    });
                    for (id, reason) in report.map(|r| r.failed).unwrap_or_default() {
                        attempt("dead_letter", fault, || {
                            let _ = dead_letter(&mut conn, id, reason, now);
                        });
                    }
                    format!("a relay pass and its dead letters{with}")
                }
                Step::Requeue { id, fixed } => {
                    if fixed {
                        broker.poison.remove(&written[&id]);
                    }
                    attempt("requeue", fault, || {
                        let _ = requeue(&mut conn, id, now);
                    });
                    format!("requeue({id}){with}")
                }
                Step::Sweep { id, reason } => {
                    attempt("dead_letter", fault, || {
                        let _ = dead_letter(&mut conn, id, reason, now);
                    });
                    format!("dead_letter({id}, {reason}){with}")
                }
            };
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            if let Some(fault) = fault {
                clear(&conn, fault);
            }
            verify(&conn, &written, &description, seed, n);
        }
    }
}
