//! The checks on PostgreSQL: every scenario of `scenarios.rs` in a schema of its own, and one
//! that only PostgreSQL needs: row locks, and claims that skip the rows others are claiming.
//!
//! Without `WORKBOOK_POSTGRES_URL` each check is skipped (`support::skip`): it earns nothing and
//! says how to run it.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use exercise::{OutboxStore, PostgresStore};

use super::fixture::{
    Db, LEASE, MINUTE, PostgresDb, Seed, T0, claim, ids, ids_of, lease, many_rows, skip_postgres,
    with_postgres,
};
use super::scenarios;
use super::support::{catch, show};

#[test]
fn claims_only_due_rows() {
    with_postgres("claims_only_due_rows", scenarios::claims_only_due_rows);
}

#[test]
fn claims_oldest_first_up_to_limit() {
    with_postgres(
        "claims_oldest_first",
        scenarios::claims_oldest_first_up_to_limit,
    );
}

#[test]
fn writes_the_lease() {
    with_postgres("writes_the_lease", scenarios::writes_the_lease);
}

#[test]
fn claim_sql_keeps_its_parameters() {
    with_postgres(
        "claim_sql_parameters",
        scenarios::claim_sql_keeps_its_parameters,
    );
}

#[test]
fn skips_rows_under_a_valid_lease() {
    with_postgres(
        "skips_valid_leases",
        scenarios::skips_rows_under_a_valid_lease,
    );
}

#[test]
fn reclaims_expired_leases() {
    with_postgres(
        "reclaims_expired_leases",
        scenarios::reclaims_expired_leases,
    );
}

#[test]
fn mark_sent_requires_the_lease() {
    with_postgres(
        "mark_sent_requires_lease",
        scenarios::mark_sent_requires_the_lease,
    );
}

#[test]
fn expired_lease_cannot_mark() {
    with_postgres(
        "expired_lease_cannot_mark",
        scenarios::expired_lease_cannot_mark,
    );
}

#[test]
fn reschedule_gives_the_row_back() {
    with_postgres(
        "reschedule_gives_back",
        scenarios::reschedule_gives_the_row_back,
    );
}

/// The run of four workers (scenarios::run_workers), made once per process and judged by four
/// checks: whichever check comes first runs it, the others read its report.
fn workers(check: impl FnOnce(&scenarios::Report)) {
    static RUN: OnceLock<Result<scenarios::Report, String>> = OnceLock::new();
    let Some(url) = PostgresStore::url_from_env() else {
        skip_postgres()
    };
    let run =
        RUN.get_or_init(|| catch(|| scenarios::run_workers(&PostgresDb::new(url, "workers"))));
    check(run.as_ref().unwrap_or_else(|message| panic!("{message}")));
}

#[test]
fn every_row_published_at_least_once() {
    workers(scenarios::every_row_published_at_least_once);
}

#[test]
fn no_row_held_by_two_workers() {
    workers(scenarios::no_row_held_by_two_workers);
}

#[test]
fn crashed_leases_are_reclaimed() {
    workers(scenarios::crashed_leases_are_reclaimed);
}

#[test]
fn nothing_is_lost() {
    workers(scenarios::nothing_is_lost);
}

/// How long the learner's claim may wait for a row lock before PostgreSQL cancels it.
const STATEMENT_TIMEOUT: Duration = Duration::from_millis(500);

/// Worker "a"'s claim of 4 rows, made while another transaction holds rows 1 to 4 by
/// `holder_sql` (`$1` = the end of a lease) and has not committed; `holding` says what it does,
/// for the messages. The claim must take the next free rows at once: [5, 6, 7, 8].
fn claim_beside(db: &PostgresDb, holder_sql: &str, holding: &str) {
    db.seed(&many_rows(10));
    let mut holder = db.main();
    let mut other = db.connect();
    other
        .client()
        .batch_execute(&format!(
            "SET statement_timeout = {}",
            STATEMENT_TIMEOUT.as_millis()
        ))
        .unwrap_or_else(|error| panic!("setting statement_timeout failed: {error}"));
    let mut transaction = holder
        .client()
        .transaction()
        .unwrap_or_else(|error| panic!("beginning the check's transaction failed: {error}"));
    transaction
        .query(holder_sql, &[&(T0 + LEASE)])
        .unwrap_or_else(|error| panic!("the check's own transaction failed: {error}"));
    let started = Instant::now();
    let result = catch(|| other.claim_due("a", T0, LEASE, 4));
    let waited = started.elapsed();
    transaction
        .commit()
        .unwrap_or_else(|error| panic!("committing the check's transaction failed: {error}"));
    drop(holder);
    let claimed = match result {
        Ok(Ok(rows)) => rows,
        Ok(Err(error)) => panic!(
            "while another transaction was {holding}, worker \"a\"'s claim_due waited {} and \
             failed: {error}. A claim must not wait for rows another claim holds: pick with FOR \
             UPDATE SKIP LOCKED, so it takes the next free rows at once (the check cancels a \
             statement after {})",
            show(waited),
            show(STATEMENT_TIMEOUT),
        ),
        Err(message) => panic!("claim_due(worker = \"a\", now = T0, …) panicked: {message}"),
    };
    assert!(
        ids_of(&claimed) == [5, 6, 7, 8],
        "while another transaction was {holding}, worker \"a\" claimed with limit 4 and got \
         {}; expected the next free rows [5, 6, 7, 8]",
        ids(&ids_of(&claimed)),
    );
}

#[test]
fn skips_locked_rows() {
    with_postgres("skips_locked_rows", |db| {
        // Another worker is in the middle of its claim: rows 1 to 4 are locked, not committed.
        claim_beside(
            db,
            "WITH due AS (SELECT id FROM outbox ORDER BY id LIMIT 4 FOR UPDATE)
             UPDATE outbox SET locked_by = 'h', locked_until = $1
               FROM due WHERE outbox.id = due.id",
            "claiming rows [1, 2, 3, 4] (locked, not yet committed)",
        );
        for row in db.rows().iter().take(4) {
            assert!(
                row.locked_by.as_deref() == Some("h"),
                "rows [1, 2, 3, 4] were claimed by the other transaction, but after both claims \
                 row {} has {}",
                row.id,
                lease(row),
            );
        }
    });
}

#[test]
fn claim_locks_rows_exclusively() {
    // §18.5: two claims running at the same moment "lock disjoint rows, and neither waits for
    // the other". A claim that picks its rows FOR SHARE SKIP LOCKED breaks that: share locks do
    // not exclude each other, so two such claims pick the same rows, and the second one's
    // UPDATE then waits for the first and leases the rows again once it commits (a race the
    // four-worker run catches only now and then). Here another transaction has picked rows 1
    // to 4 with FOR SHARE, the moment such a claim spends between its CTE and its UPDATE. A
    // claim that locks FOR UPDATE (or FOR NO KEY UPDATE) cannot lock those rows and skips
    // them; one that locks FOR SHARE takes them too, and its UPDATE waits.
    with_postgres("locks_exclusively", |db| {
        claim_beside(
            db,
            "SELECT id, $1::bigint FROM outbox ORDER BY id LIMIT 4 FOR SHARE",
            "picking rows [1, 2, 3, 4] with FOR SHARE (a share-locking claim between its CTE \
             and its UPDATE)",
        );
    });
}

#[test]
fn returns_rows_in_due_order() {
    // §18.3: "PostgreSQL does not promise an order either. The claim sorts the returned rows".
    // On a small, never-analysed table the planner joins the CTE to the outbox row by row, and
    // RETURNING happens to come out in due order. Once the table has statistics (autovacuum
    // analyses any busy table), it hashes the CTE and scans the outbox, and RETURNING follows
    // the table's physical order. Here the rows were inserted by id and became due newest id
    // first, so the two orders are opposite.
    with_postgres("returns_due_order", |db| {
        let rows: Vec<Seed> = (1..=300)
            .map(|id| Seed::new(id, T0 - MINUTE - id))
            .collect();
        db.seed(&rows);
        db.main()
            .client()
            .batch_execute("ANALYZE outbox")
            .unwrap_or_else(|error| panic!("ANALYZE outbox failed: {error}"));
        let mut store = db.main();
        let mut next = 300;
        for (worker, limit) in [("a", 25), ("b", 100)] {
            let claimed = ids_of(&claim(&mut *store, worker, T0, LEASE, limit));
            let expected: Vec<i64> = (next - limit as i64 + 1..=next).rev().collect();
            let mut same_rows = claimed.clone();
            same_rows.sort_unstable();
            let mut wanted = expected.clone();
            wanted.sort_unstable();
            assert!(
                claimed == expected,
                "300 rows, inserted in the order of their ids, became due in the opposite order \
                 (row 300 first); after ANALYZE, worker {worker:?} claimed with limit {limit} \
                 and got rows {}; expected {} in due order. {}",
                ids(&claimed),
                ids(&expected),
                if same_rows == wanted {
                    "The right rows, in another order: PostgreSQL's RETURNING gives rows in \
                     whatever order the plan produced them; sort the claimed rows with \
                     OutboxRow::due_order"
                } else {
                    "Other rows: each claim takes the oldest due rows that no valid lease holds \
                     (worker \"a\"'s rows are leased for 30 s)"
                },
            );
            next -= limit as i64;
        }
    });
}

/// The check's hold on worker "a"'s claim: a trigger makes any `UPDATE` that writes
/// `locked_by = 'a'` wait for an advisory lock that the check's own connection holds. A claim
/// that picks its rows and writes its lease in one statement (or in one transaction) keeps its
/// row locks while it waits there; one that picked them in a statement of its own has already
/// let them go.
const HOLD_CLAIMS_OF_A: &str = "
    CREATE FUNCTION hold_claims_of_a() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_advisory_xact_lock_shared(TG_ARGV[0]::bigint);
        RETURN NEW;
    END $$;
    CREATE TRIGGER hold_claims_of_a BEFORE UPDATE ON outbox FOR EACH ROW
        WHEN (NEW.locked_by = 'a') EXECUTE FUNCTION hold_claims_of_a(%KEY%);";

#[test]
fn claim_is_atomic() {
    // §18.3: choosing the rows and writing the lease "must be one step that no other claim can
    // get between". Worker "a" claims on a thread of its own and is held at its first write of
    // a lease; worker "b" then makes a whole claim, right there in the middle of a's, and the
    // hold is released. A claim whose SELECT … FOR UPDATE SKIP LOCKED ran as a statement of its
    // own (autocommitted) has released its row locks by then: "b" picks the same rows and both
    // workers lease them. A single statement keeps them locked: "b" skips them.
    with_postgres("claim_is_atomic", |db| {
        db.seed(&many_rows(10));
        let key = i64::from(std::process::id());
        let mut holder = db.connect();
        holder
            .client()
            .batch_execute(&HOLD_CLAIMS_OF_A.replace("%KEY%", &key.to_string()))
            .unwrap_or_else(|error| panic!("installing the check's trigger failed: {error}"));
        holder
            .client()
            .execute("SELECT pg_advisory_lock($1)", &[&key])
            .unwrap_or_else(|error| panic!("taking the check's advisory lock failed: {error}"));
        let mut a = db.connect();
        let mut b = db.connect();
        for store in [&mut a, &mut b] {
            store
                .client()
                .batch_execute("SET statement_timeout = 5000")
                .unwrap_or_else(|error| panic!("setting statement_timeout failed: {error}"));
        }
        let worker_a = std::thread::spawn(move || {
            let result = catch(|| a.claim_due("a", T0, LEASE, 4));
            drop(a);
            result
        });
        // Wait, without sleeping, until "a" waits for the hold (or has finished without it).
        let started = Instant::now();
        let held = loop {
            let waiting: i64 = holder
                .client()
                .query_one(
                    "SELECT COUNT(*) FROM pg_locks
                      WHERE locktype = 'advisory' AND NOT granted AND objid = $1::bigint::oid",
                    &[&key],
                )
                .and_then(|row| row.try_get(0))
                .unwrap_or_else(|error| panic!("reading pg_locks failed: {error}"));
            if waiting > 0 {
                break true;
            }
            if worker_a.is_finished() || started.elapsed() > Duration::from_secs(3) {
                break false;
            }
            std::thread::yield_now();
        };
        let theirs = catch(|| b.claim_due("b", T0, LEASE, 4));
        holder
            .client()
            .execute("SELECT pg_advisory_unlock($1)", &[&key])
            .unwrap_or_else(|error| panic!("releasing the check's advisory lock failed: {error}"));
        let mine = worker_a
            .join()
            .unwrap_or_else(|_| panic!("worker \"a\"'s thread panicked"));
        let mine = match mine {
            Ok(Ok(rows)) => rows,
            Ok(Err(error)) => panic!(
                "worker \"a\"'s claim_due(limit = 4), held at its first lease write while \
                 worker \"b\" claimed, returned an error: {error}"
            ),
            Err(message) => panic!("worker \"a\"'s claim_due panicked: {message}"),
        };
        let theirs = match theirs {
            Ok(Ok(rows)) => rows,
            Ok(Err(error)) => panic!(
                "worker \"b\" claimed (limit = 4) while worker \"a\"'s claim was held at its \
                 first lease write, and its claim_due returned an error: {error}{}",
                if held {
                    ". b must not wait for rows a's claim has locked: pick them with FOR UPDATE \
                     SKIP LOCKED"
                } else {
                    ""
                },
            ),
            Err(message) => panic!("worker \"b\"'s claim_due panicked: {message}"),
        };
        let both: Vec<i64> = ids_of(&mine)
            .into_iter()
            .filter(|id| ids_of(&theirs).contains(id))
            .collect();
        let table = db.rows();
        assert!(
            both.is_empty(),
            "worker \"b\" claimed in the middle of worker \"a\"'s claim (after a had picked its \
             rows, before it wrote their lease), and both got rows {}: \"a\" claimed {}, \"b\" \
             claimed {}, and the table says {}. Rows picked by one statement and leased by \
             another are free again in between: the pick and the lease must be one statement, \
             the CTE with FOR UPDATE SKIP LOCKED inside the UPDATE … RETURNING (or one \
             transaction that keeps the row locks until the lease is written; book §18.5)",
            ids(&both),
            ids(&ids_of(&mine)),
            ids(&ids_of(&theirs)),
            table
                .iter()
                .take(8)
                .map(|row| format!("row {} {}", row.id, lease(row)))
                .collect::<Vec<_>>()
                .join("; "),
        );
        let mut all = [ids_of(&mine), ids_of(&theirs)].concat();
        all.sort_unstable();
        assert!(
            all == [1, 2, 3, 4, 5, 6, 7, 8],
            "worker \"a\" claimed rows {} and worker \"b\", in the middle of a's claim, rows {}; \
             with limit 4 each, between them they should hold rows 1 to 8, the eight oldest, \
             once each",
            ids(&ids_of(&mine)),
            ids(&ids_of(&theirs)),
        );
    });
}
