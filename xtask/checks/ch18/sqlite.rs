//! The checks on SQLite: every scenario of `scenarios.rs` on a database file in the check's
//! scratch folder, and two that only SQLite needs: its single write lock, met head-on.

use std::sync::{Arc, Mutex, OnceLock};

use exercise::{OutboxRow, OutboxStore, SqliteStore};

use super::fixture::{Db, LEASE, SqliteDb, T0, claim, ids, ids_of, lease, many_rows};
use super::scenarios;
use super::support::catch;

#[test]
fn claims_only_due_rows() {
    scenarios::claims_only_due_rows(&SqliteDb::in_memory());
}

#[test]
fn claims_oldest_first_up_to_limit() {
    scenarios::claims_oldest_first_up_to_limit(&SqliteDb::in_memory());
}

#[test]
fn writes_the_lease() {
    scenarios::writes_the_lease(&SqliteDb::in_memory());
}

#[test]
fn claim_sql_keeps_its_parameters() {
    scenarios::claim_sql_keeps_its_parameters(&SqliteDb::in_memory());
}

#[test]
fn skips_rows_under_a_valid_lease() {
    scenarios::skips_rows_under_a_valid_lease(&SqliteDb::in_memory());
}

#[test]
fn reclaims_expired_leases() {
    scenarios::reclaims_expired_leases(&SqliteDb::in_memory());
}

#[test]
fn mark_sent_requires_the_lease() {
    scenarios::mark_sent_requires_the_lease(&SqliteDb::in_memory());
}

#[test]
fn expired_lease_cannot_mark() {
    scenarios::expired_lease_cannot_mark(&SqliteDb::in_memory());
}

#[test]
fn reschedule_gives_the_row_back() {
    scenarios::reschedule_gives_the_row_back(&SqliteDb::in_memory());
}

/// The run of four workers (scenarios::run_workers), made once per process and judged by four
/// checks: whichever check comes first runs it, the others read its report.
fn workers() -> &'static scenarios::Report {
    static RUN: OnceLock<Result<scenarios::Report, String>> = OnceLock::new();
    let run = RUN.get_or_init(|| catch(|| scenarios::run_workers(&SqliteDb::file("workers"))));
    run.as_ref().unwrap_or_else(|message| panic!("{message}"))
}

#[test]
fn every_row_published_at_least_once() {
    scenarios::every_row_published_at_least_once(workers());
}

#[test]
fn no_row_held_by_two_workers() {
    scenarios::no_row_held_by_two_workers(workers());
}

#[test]
fn crashed_leases_are_reclaimed() {
    scenarios::crashed_leases_are_reclaimed(workers());
}

#[test]
fn nothing_is_lost() {
    scenarios::nothing_is_lost(workers());
}

/// A claim of the learner's store, or its panic or error as text.
fn try_claim(store: &mut SqliteStore, worker: &str) -> Result<Vec<OutboxRow>, String> {
    match catch(|| store.claim_due(worker, T0, LEASE, 5)) {
        Ok(Ok(rows)) => Ok(rows),
        Ok(Err(error)) => Err(format!("returned an error: {error}")),
        Err(message) => Err(format!("panicked: {message}")),
    }
}

/// Worker "a" claims while another connection holds the write lock. SQLite calls a's busy
/// handler when a's claim has to wait; the handler releases the lock and, when `rival` is given,
/// lets worker "b" claim in full right there, in the middle of a's claim. Returns a's result and
/// b's (None when the handler never ran).
type Outcome = (
    Result<Vec<OutboxRow>, String>,
    Option<Result<Vec<OutboxRow>, String>>,
);

fn claim_while_locked(db: &SqliteDb, rival: Option<SqliteStore>) -> Outcome {
    let holder = db.connect();
    holder
        .connection()
        .execute_batch("BEGIN IMMEDIATE")
        .unwrap_or_else(|error| panic!("taking the write lock for the check failed: {error}"));
    let rival_result = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&rival_result);
    let mut parked = Some((holder, rival));
    let mut a = db.connect();
    a.connection_mut()
        .busy_handler(Some(move |attempt: i32| {
            if let Some((holder, rival)) = parked.take() {
                let _ = holder.connection().execute_batch("COMMIT");
                drop(holder);
                if let Some(mut rival) = rival {
                    *slot.lock().unwrap() = Some(try_claim(&mut rival, "b"));
                }
            }
            std::thread::yield_now();
            attempt < 100_000
        }))
        .unwrap_or_else(|error| panic!("installing the check's busy handler failed: {error}"));
    let mine = try_claim(&mut a, "a");
    // Dropping the handler ends the other connections, if it never ran.
    let _ = a.connection_mut().busy_handler(None::<fn(i32) -> bool>);
    let theirs = rival_result.lock().unwrap().take();
    (mine, theirs)
}

#[test]
fn claim_waits_for_a_busy_writer() {
    let db = SqliteDb::file("claim_waits_for_a_busy_writer");
    db.seed(&many_rows(10));
    let (mine, _) = claim_while_locked(&db, None);
    match mine {
        Ok(rows) => assert!(
            ids_of(&rows) == [1, 2, 3, 4, 5],
            "after waiting for another connection's write lock, worker \"a\" should claim rows \
             [1, 2, 3, 4, 5]; it got {}",
            ids(&ids_of(&rows)),
        ),
        Err(error) if error.starts_with("panicked") => {
            panic!("claim_due(worker = \"a\", now = T0, lease_ms = 30 s, limit = 5) {error}")
        }
        Err(error) => panic!(
            "another connection held SQLite's write lock for a moment, and worker \"a\"'s \
             claim_due {error}. A transaction that has already read (BEGIN DEFERRED, the \
             default) cannot wait for the write lock: SQLite answers SQLITE_BUSY at once, \
             without the busy timeout. Begin the claim with BEGIN IMMEDIATE \
             (TransactionBehavior::Immediate): it waits for the lock before reading anything"
        ),
    }
}

#[test]
fn claim_is_atomic() {
    let db = SqliteDb::file("claim_is_atomic");
    db.seed(&many_rows(20));
    let (mine, theirs) = claim_while_locked(&db, Some(db.connect()));
    let mine = mine.unwrap_or_else(|error| {
        panic!("worker \"a\"'s claim_due, made while another connection wrote, {error}")
    });
    let theirs = match theirs {
        Some(result) => result.unwrap_or_else(|error| {
            panic!("worker \"b\"'s claim_due, made in the middle of worker \"a\"'s, {error}")
        }),
        // The claim never waited for the lock: let "b" claim after it instead.
        None => claim(&mut db.connect(), "b", T0, LEASE, 5),
    };
    let both: Vec<i64> = ids_of(&mine)
        .into_iter()
        .filter(|id| ids_of(&theirs).contains(id))
        .collect();
    assert!(
        both.is_empty(),
        "worker \"b\" claimed in the middle of worker \"a\"'s claim (between its statements, \
         while it waited for the write lock), and both got rows {}: \"a\" claimed {}, \"b\" \
         claimed {}. The rows a claim picks and the lease it writes must be one atomic step: a \
         single UPDATE … WHERE id IN (SELECT … LIMIT ?) RETURNING *, in a BEGIN IMMEDIATE \
         transaction, never a SELECT followed by a separate UPDATE",
        ids(&both),
        ids(&ids_of(&mine)),
        ids(&ids_of(&theirs)),
    );
    let rows = db.rows();
    for (worker, claimed) in [("a", &mine), ("b", &theirs)] {
        for row in claimed.iter() {
            let stored = &rows[(row.id - 1) as usize];
            assert!(
                stored.locked_by.as_deref() == Some(worker),
                "worker {worker:?}'s claim returned row {}, but the table says {}: the worker \
                 believes it holds a lease it does not have",
                row.id,
                lease(stored),
            );
        }
    }
}

#[test]
fn claim_searches_the_due_range() {
    let db = SqliteDb::in_memory();
    db.seed(&many_rows(20));
    let sql = catch(SqliteStore::claim_sql)
        .unwrap_or_else(|message| panic!("SqliteStore::claim_sql() panicked: {message}"));
    let store = db.main();
    let steps: Vec<String> = store
        .connection()
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .and_then(|mut plan| {
            plan.query_map(rusqlite::params!["p", T0 + LEASE, T0, 5], |row| row.get(3))?
                .collect()
        })
        .unwrap_or_else(|error| panic!("EXPLAIN QUERY PLAN of your claim_sql() failed: {error}"));
    let ranged = steps
        .iter()
        .any(|step| step.starts_with("SEARCH outbox USING INDEX outbox_due") && step.contains('<'));
    assert!(
        ranged,
        "EXPLAIN QUERY PLAN of your claim, on the given schema:\n  {}\nThe claim must find the \
         due rows as a range of the given index outbox_due, `SEARCH outbox USING INDEX \
         outbox_due (<expr><?)`. `SCAN outbox USING INDEX outbox_due` walks every pending entry \
         when fewer than `limit` rows are due: after an outage, every claim reads the whole \
         backlog. Bound the index's key, COALESCE(next_retry_at, created_at) <= ?3, as chapter \
         16's due query does (book §18.3)",
        steps.join("\n  "),
    );
}
