//! A neighbour of `place_order` and `relay_once`: the same rusqlite tools on a bank transfer.
//!
//! ```text
//! cargo run -p ch15_transactional_outbox --example transfer
//! ```
//!
//! A transfer debits one account, credits another and writes a line to a statement table: three
//! writes that must happen together or not at all. A statement printer then reads the latest
//! lines and does slow work with each. The program does not use your code.

use rusqlite::{Connection, Result, Transaction, named_params};

const SCHEMA: &str = "
    CREATE TABLE account (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
    CREATE TABLE statement (
        id      INTEGER PRIMARY KEY,
        account INTEGER NOT NULL,
        amount  INTEGER NOT NULL,
        at      INTEGER NOT NULL
    );
    INSERT INTO account (id, balance) VALUES (1, 100), (2, 0);
";

// ANCHOR: transfer
/// Moves `amount` from account `from` to account `to` at time `at`. When `crash_midway` is set,
/// it fails after the debit, as a process that dies there would.
fn transfer(
    conn: &mut Connection,
    from: i64,
    to: i64,
    amount: i64,
    at: i64,
    crash_midway: bool,
) -> Result<i64> {
    // BEGIN: nothing below is visible to other connections until the commit.
    let tx: Transaction<'_> = conn.transaction()?;
    let debit = "UPDATE account SET balance = balance - :amount WHERE id = :account";
    tx.execute(debit, named_params! {":amount": amount, ":account": from})?;
    if crash_midway {
        // Returning early drops `tx` without a commit: rusqlite rolls the debit back.
        return Err(rusqlite::Error::InvalidQuery);
    }
    let credit = "UPDATE account SET balance = balance + :amount WHERE id = :account";
    tx.execute(credit, named_params! {":amount": amount, ":account": to})?;
    let line = "INSERT INTO statement (account, amount, at) VALUES (:account, :amount, :at)";
    tx.execute(
        line,
        named_params! {":account": from, ":amount": -amount, ":at": at},
    )?;
    // The id SQLite gave the statement line, read on the same transaction that wrote it.
    let line_id = tx.last_insert_rowid();
    tx.commit()?;
    Ok(line_id)
}
// ANCHOR_END: transfer

// ANCHOR: latest_lines
/// The `count` latest statement lines, newest first, read completely before any slow work:
/// when this returns, the statement is finalised and no read lock is held.
fn latest_lines(conn: &Connection, count: i64) -> Result<Vec<(i64, i64, i64)>> {
    let mut query =
        conn.prepare("SELECT id, amount, at FROM statement ORDER BY at DESC, id DESC LIMIT ?1")?;
    let mut rows = query.query([count])?;
    let mut lines = Vec::new();
    while let Some(row) = rows.next()? {
        lines.push((row.get("id")?, row.get("amount")?, row.get("at")?));
    }
    Ok(lines)
}
// ANCHOR_END: latest_lines

fn balances(conn: &Connection) -> Result<(i64, i64)> {
    conn.query_row(
        "SELECT (SELECT balance FROM account WHERE id = 1), (SELECT balance FROM account WHERE id = 2)",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
}

fn main() -> Result<()> {
    let mut conn = Connection::open_in_memory()?;
    conn.execute_batch(SCHEMA)?;
    println!("balances at the start:           {:?}", balances(&conn)?);

    let crashed = transfer(&mut conn, 1, 2, 30, 1_000, true);
    println!("a transfer that fails midway:    {crashed:?}");
    println!("balances afterwards:             {:?}", balances(&conn)?);
    println!("transaction still open?          {}", !conn.is_autocommit());

    let line = transfer(&mut conn, 1, 2, 30, 2_000, false)?;
    transfer(&mut conn, 1, 2, 5, 2_000, false)?;
    println!("two transfers, the first line:   {line}");
    println!("balances afterwards:             {:?}", balances(&conn)?);

    for (id, amount, at) in latest_lines(&conn, 10)? {
        // The slow work (printing, mailing) happens here, with nothing held open.
        println!("statement line {id}: {amount} at {at} ms");
    }
    Ok(())
}
