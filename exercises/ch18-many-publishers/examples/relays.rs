//! Predict, then run (book §18.8): four relays share one outbox of 1,000 rows after a fifth one
//! died holding a lease, with leases of 5 s, 150 ms and 60 ms.
//!
//!     cargo run -p ch18_many_publishers --example relays
//!
//! The relays take turns on one thread, one step each (a claim, or one publish), and every step
//! moves the simulated clock on by 1 ms, so every run prints the same numbers.

use std::collections::BTreeMap;

use ch18_many_publishers::{Millis, OutboxRow, OutboxStore, Result, SqliteStore};

/// 2026-01-01 00:00:00 UTC, in milliseconds.
const T0: Millis = 1_767_225_600_000;
const ROWS: i64 = 1_000;
const BATCH: usize = 25;

/// One relay: its own connection, the batch it claimed, and how far it got.
struct Relay {
    name: &'static str,
    store: SqliteStore,
    batch: Vec<OutboxRow>,
    next: usize,
}

/// What the broker and the relays saw during one run.
#[derive(Default)]
struct Tally {
    publishes: BTreeMap<i64, u32>,
    lost_leases: u32,
    crashed_rows_back_at: Option<Millis>,
}

fn main() -> Result<()> {
    for lease_ms in [5_000, 150, 60] {
        run(lease_ms)?;
    }
    Ok(())
}

fn run(lease_ms: Millis) -> Result<()> {
    let path = std::env::temp_dir().join(format!("ch18-relays-{}.db", std::process::id()));
    let setup = SqliteStore::open(&path)?;
    for order in 1..=ROWS {
        setup.insert_event(order, &format!("{{\"order\":{order}}}"), T0 - ROWS + order)?;
    }
    let mut tally = Tally::default();

    // The crasher claims 50 rows, publishes the first 10, and dies before marking any.
    let mut crasher = SqliteStore::open(&path)?;
    let held: Vec<i64> = crasher
        .claim_due("crasher", T0, lease_ms, 50)?
        .iter()
        .map(|row| row.id)
        .collect();
    for id in &held[..10] {
        *tally.publishes.entry(*id).or_default() += 1;
    }

    let mut relays = Vec::new();
    for name in ["r1", "r2", "r3", "r4"] {
        let store = SqliteStore::open(&path)?;
        relays.push(Relay {
            name,
            store,
            batch: Vec::new(),
            next: 0,
        });
    }
    let mut now = T0;
    loop {
        let mut busy = false;
        for relay in &mut relays {
            now += 1;
            if relay.next == relay.batch.len() {
                relay.batch = relay.store.claim_due(relay.name, now, lease_ms, BATCH)?;
                relay.next = 0;
                if relay.batch.iter().any(|row| held.contains(&row.id)) {
                    tally.crashed_rows_back_at.get_or_insert(now);
                }
                busy |= !relay.batch.is_empty();
                continue;
            }
            busy = true;
            let id = relay.batch[relay.next].id;
            relay.next += 1;
            *tally.publishes.entry(id).or_default() += 1;
            if !relay.store.mark_sent(id, relay.name, now)? {
                tally.lost_leases += 1;
            }
        }
        if !busy {
            let pending: i64 = setup.connection().query_row(
                "SELECT COUNT(*) FROM outbox WHERE status = 'pending'",
                [],
                |row| row.get(0),
            )?;
            if pending == 0 {
                break;
            }
            now += 100;
        }
    }

    let total: u32 = tally.publishes.values().sum();
    let twice = tally.publishes.values().filter(|&&count| count > 1).count();
    println!("lease {lease_ms} ms:");
    println!("  rows published at least once   {}", tally.publishes.len());
    println!("  publishes in all               {total}");
    println!("  rows published more than once  {twice}");
    println!("  mark_sent refused (lease lost) {}", tally.lost_leases);
    match tally.crashed_rows_back_at {
        Some(at) => println!("  crasher's rows reclaimed from  T0 + {} ms", at - T0),
        None => println!("  crasher's rows reclaimed from  never"),
    }
    println!("  outbox empty at                T0 + {} ms", now - T0);
    drop((setup, crasher, relays));
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.clone().into_os_string();
        file.push(suffix);
        let _ = std::fs::remove_file(file);
    }
    Ok(())
}
