//! Diagnose (book §18.2 and §18.3): a first draft of the claim that reads, then writes. Two
//! workers, each on its own connection to one outbox file, run it in an unlucky interleaving.
//!
//!     cargo run -p ch18_many_publishers --example race
//!
//! It needs none of your code: the draft below is the one to diagnose.

use ch18_many_publishers::{Millis, SqliteStore};
use rusqlite::params;

/// 2026-01-01 00:00:00 UTC, in milliseconds.
const T0: Millis = 1_767_225_600_000;

// ANCHOR: draft
/// Step 1 of the draft claim: which rows to take.
fn pick(store: &SqliteStore, limit: i64) -> rusqlite::Result<Vec<i64>> {
    let mut pick = store.connection().prepare(
        "SELECT id FROM outbox WHERE locked_by IS NULL AND status = 'pending'
          ORDER BY id LIMIT ?1",
    )?;
    let ids = pick.query_map([limit], |row| row.get(0))?;
    ids.collect()
}

/// Step 2 of the draft claim: say that they are taken.
fn take(store: &SqliteStore, worker: &str, ids: &[i64]) -> rusqlite::Result<()> {
    for id in ids {
        store.connection().execute(
            "UPDATE outbox SET locked_by = ?1 WHERE id = ?2",
            params![worker, id],
        )?;
    }
    Ok(())
}
// ANCHOR_END: draft

fn main() -> rusqlite::Result<()> {
    let folder = std::env::temp_dir().join(format!("ch18-race-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a scratch folder");
    let path = folder.join("outbox.db");
    let a = SqliteStore::open(&path)?;
    let b = SqliteStore::open(&path)?;
    for order in 1..=8 {
        a.insert_event(order, "{}", T0)?;
    }
    // The unlucky interleaving: both pick before either takes.
    let picked_by_a = pick(&a, 4)?;
    let picked_by_b = pick(&b, 4)?;
    take(&a, "a", &picked_by_a)?;
    take(&b, "b", &picked_by_b)?;
    println!("worker a believes it holds {picked_by_a:?}");
    println!("worker b believes it holds {picked_by_b:?}");
    let table: Vec<String> = a
        .all_rows()?
        .iter()
        .filter_map(|row| Some(format!("{}: {}", row.id, row.locked_by.as_deref()?)))
        .collect();
    println!("the table says          {}", table.join(", "));
    drop((a, b));
    let _ = std::fs::remove_dir_all(&folder);
    Ok(())
}
