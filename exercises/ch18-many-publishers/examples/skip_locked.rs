//! A neighbouring problem (book §18.5): a plain job queue on PostgreSQL, where a worker takes a
//! job by deleting it. Worker 1 is in the middle of taking two jobs (locked, not committed) when
//! worker 2 takes two, first with `FOR UPDATE SKIP LOCKED`, then with `FOR UPDATE` alone.
//!
//!     WORKBOOK_POSTGRES_URL=postgres://… cargo run -p ch18_many_publishers --example skip_locked
//!
//! It needs a PostgreSQL server (book §18.9) and none of your code. It works in a schema of its
//! own, `ch18_skip_locked`, and drops it at the end.

use ch18_many_publishers::{PostgresStore, Result};

// ANCHOR: take
/// Takes up to `$1` jobs, the oldest first, skipping jobs another transaction has locked.
const TAKE_SKIPPING: &str = "
    WITH next AS (
        SELECT id FROM jobs
         ORDER BY queued_at, id
         LIMIT $1
           FOR UPDATE SKIP LOCKED)
    DELETE FROM jobs USING next
     WHERE jobs.id = next.id
 RETURNING jobs.id";
// ANCHOR_END: take

/// The same without `SKIP LOCKED`: it waits for locked jobs.
const TAKE_WAITING: &str = "
    WITH next AS (
        SELECT id FROM jobs ORDER BY queued_at, id LIMIT $1 FOR UPDATE)
    DELETE FROM jobs USING next WHERE jobs.id = next.id RETURNING jobs.id";

fn ids(rows: &[postgres::Row]) -> Vec<i64> {
    let mut ids: Vec<i64> = rows.iter().map(|row| row.get(0)).collect();
    ids.sort_unstable();
    ids
}

fn main() -> Result<()> {
    let Some(url) = PostgresStore::url_from_env() else {
        println!("set WORKBOOK_POSTGRES_URL to run this example (book §18.9)");
        return Ok(());
    };
    let schema = "ch18_skip_locked";
    let mut one = PostgresStore::connect(&url, schema)?;
    let mut two = PostgresStore::connect(&url, schema)?;
    one.client().batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};
         CREATE TABLE jobs (id BIGINT PRIMARY KEY, queued_at BIGINT NOT NULL);
         INSERT INTO jobs SELECT n, 1000 + n FROM generate_series(1, 8) AS n;"
    ))?;
    let mut taking = one.client().transaction()?;
    let held = taking.query(TAKE_SKIPPING, &[&2i64])?;
    println!("worker 1, not yet committed, holds jobs {:?}", ids(&held));
    let skipped = two.client().query(TAKE_SKIPPING, &[&2i64])?;
    println!(
        "worker 2, FOR UPDATE SKIP LOCKED, takes   {:?} at once",
        ids(&skipped)
    );
    two.client().batch_execute("SET statement_timeout = 300")?;
    match two.client().query(TAKE_WAITING, &[&2i64]) {
        Ok(rows) => println!("worker 2, FOR UPDATE, takes {:?}", ids(&rows)),
        Err(error) => println!(
            "worker 2, FOR UPDATE alone, waits for worker 1 until cancelled: {}",
            error.as_db_error().map_or("no answer", |db| db.message())
        ),
    }
    taking.commit()?;
    one.client()
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))?;
    Ok(())
}
