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
            assert!(
                claimed == expected,
                "300 rows, inserted in the order of their ids, became due in the opposite order \
                 (row 300 first); after ANALYZE, worker {worker:?} claimed with limit {limit} \
                 and got rows {}; expected {} in due order. PostgreSQL's RETURNING gives rows in \
                 whatever order the plan produced them: sort the claimed rows with \
                 OutboxRow::due_order",
                ids(&claimed),
                ids(&expected),
            );
            next -= limit as i64;
        }
    });
}
