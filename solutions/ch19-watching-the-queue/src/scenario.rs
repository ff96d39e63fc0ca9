//! Given: a simulated outbox living through two incidents, to watch with the dashboard
//! (`examples/outage.rs` and section 19.7 of the book).
//!
//! Orders arrive at a steady two per second and each writes one event. Once a second a relay
//! takes up to [`BATCH`] due rows, oldest first, and publishes them. Two things go wrong:
//!
//! - the broker is down during [`BROKER_DOWN`]: every publish fails with a 503, and the relay
//!   reschedules the row with capped full jitter (chapter 16), until a row has failed
//!   [`MAX_ATTEMPTS`] times and is moved to the dead letters (chapter 17);
//! - the relay itself is stopped during [`RELAY_DOWN`]: no pass runs at all.
//!
//! Nothing sleeps: the simulation is a loop over millisecond timestamps, and its randomness is
//! seeded. [`timeline`] and [`dashboards`] watch it with this crate's own [`crate::snapshot`],
//! [`crate::render`] and [`crate::alerts`].

use std::fmt::Write as _;
use std::ops::Range;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rusqlite::{Connection, params};

use crate::db;
use crate::model::{Alert, MINUTE, Millis, SECOND, Thresholds, clock};
use crate::{alerts, render, snapshot};

/// The seed of the run the book shows.
pub const SEED: u64 = 19;

/// 2026-01-01 00:00:00 UTC: the simulation's first moment.
pub const T0: Millis = 1_767_225_600_000;
/// A new order (and its event) every this many milliseconds: two per second.
pub const ORDER_EVERY: Millis = 500;
/// The relay runs a pass every this many milliseconds...
pub const PASS_EVERY: Millis = SECOND;
/// ...and takes at most this many due rows per pass.
pub const BATCH: i64 = 50;
/// The broker fails every publish from one minute after [`T0`] until three minutes after.
pub const BROKER_DOWN: Range<Millis> = 60 * SECOND..180 * SECOND;
/// No relay pass runs from five minutes after [`T0`] until seven minutes after.
pub const RELAY_DOWN: Range<Millis> = 300 * SECOND..420 * SECOND;
/// The first backoff is at most this long; each later one may be twice as long...
pub const BASE: Millis = SECOND;
/// ...up to this cap.
pub const CAP: Millis = 60 * SECOND;
/// The failure that brings a row's `attempts` to this number makes it a dead letter.
pub const MAX_ATTEMPTS: u32 = 10;

/// The alert thresholds of the simulation: the defaults, except that a pending row may wait
/// one minute at most (nothing waits longer than a second while all is well).
pub fn thresholds() -> Thresholds {
    Thresholds {
        max_oldest_pending: MINUTE,
        ..Thresholds::default()
    }
}

/// The simulated outbox: a database, a clock that only moves forward, and seeded randomness.
pub struct Simulation {
    conn: Connection,
    rng: StdRng,
    /// Milliseconds since [`T0`].
    elapsed: Millis,
    next_order: Millis,
    next_pass: Millis,
    orders: i64,
}

impl Simulation {
    /// A fresh simulation at [`T0`], with nothing written yet.
    pub fn new(seed: u64) -> rusqlite::Result<Self> {
        Ok(Self {
            conn: db::open_in_memory()?,
            rng: StdRng::seed_from_u64(seed),
            elapsed: 0,
            next_order: 0,
            next_pass: 0,
            orders: 0,
        })
    }

    /// The database, to read the dashboard from.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The current moment, in milliseconds on the table's clock.
    pub fn now(&self) -> Millis {
        T0 + self.elapsed
    }

    /// Milliseconds since the simulation started.
    pub fn elapsed(&self) -> Millis {
        self.elapsed
    }

    /// Runs every order and relay pass up to and including `elapsed` ms after [`T0`]. When an
    /// order and a pass fall on the same moment, the order is written first.
    pub fn run_until(&mut self, elapsed: Millis) -> rusqlite::Result<()> {
        loop {
            let next = self.next_order.min(self.next_pass);
            if next > elapsed {
                break;
            }
            self.elapsed = next;
            if self.next_order == next {
                self.orders += 1;
                let order = format!("order-{}", self.orders);
                let payload = format!(r#"{{"order_id":"{order}"}}"#);
                db::write_event(&self.conn, &order, "OrderPlaced", &payload, self.now())?;
                self.next_order += ORDER_EVERY;
            }
            if self.next_pass == next {
                if !RELAY_DOWN.contains(&next) {
                    self.relay_pass()?;
                }
                self.next_pass += PASS_EVERY;
            }
        }
        self.elapsed = elapsed;
        Ok(())
    }

    fn broker_is_up(&self) -> bool {
        !BROKER_DOWN.contains(&self.elapsed)
    }

    /// One relay pass: publish the due rows, or record their failure.
    fn relay_pass(&mut self) -> rusqlite::Result<()> {
        let now = self.now();
        let due: Vec<(i64, u32)> = {
            let mut statement = self.conn.prepare_cached(
                "SELECT id, attempts FROM outbox
                 WHERE status = 'pending' AND (next_retry_at IS NULL OR next_retry_at <= ?1)
                 ORDER BY COALESCE(next_retry_at, created_at), created_at
                 LIMIT ?2",
            )?;
            let rows =
                statement.query_map(params![now, BATCH], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        for (id, attempts) in due {
            if self.broker_is_up() {
                self.conn.execute(
                    "UPDATE outbox SET status = 'sent', next_retry_at = NULL WHERE id = ?1",
                    [id],
                )?;
                continue;
            }
            let attempts = attempts + 1;
            if attempts >= MAX_ATTEMPTS {
                self.dead_letter(id, attempts, now)?;
            } else {
                let ceiling = BASE.saturating_mul(1 << (attempts - 1).min(30)).min(CAP);
                let next_retry_at = now + self.rng.random_range(0..=ceiling);
                self.conn.execute(
                    "UPDATE outbox
                     SET attempts = ?2, next_retry_at = ?3, last_attempt_at = ?4,
                         last_error = '503 Service Unavailable'
                     WHERE id = ?1",
                    params![id, attempts, next_retry_at, now],
                )?;
            }
        }
        Ok(())
    }

    /// Moves a row that used its last attempt to the dead letters, in one transaction.
    fn dead_letter(&mut self, id: i64, attempts: u32, now: Millis) -> rusqlite::Result<()> {
        let transaction = self.conn.transaction()?;
        transaction.execute(
            "INSERT INTO dead_letters
                    (id, aggregate_id, event_type, payload, attempts, last_error, reason,
                     created_at, failed_at)
             SELECT id, aggregate_id, event_type, payload, ?2, last_error, 'exhausted',
                    created_at, ?3
               FROM outbox WHERE id = ?1",
            params![id, attempts, now],
        )?;
        transaction.execute("DELETE FROM outbox WHERE id = ?1", [id])?;
        transaction.commit()
    }
}

/// What is broken `at` ms after [`T0`]: `"broker down"`, `"relay down"`, or nothing.
pub fn incident(at: Millis) -> &'static str {
    if BROKER_DOWN.contains(&at) {
        "broker down"
    } else if RELAY_DOWN.contains(&at) {
        "relay down"
    } else {
        ""
    }
}

/// The short name of an alert, for a table.
fn alert_name(alert: &Alert) -> &'static str {
    match alert {
        Alert::OldestPending { .. } => "oldest pending",
        Alert::DeadLetters { .. } => "dead letters",
        Alert::RetryStorm { .. } => "retry storm",
    }
}

/// The dashboard every 30 s for eight minutes, one Markdown table row each, with the alerts of
/// [`thresholds`] that fire.
pub fn timeline(seed: u64) -> rusqlite::Result<String> {
    let thresholds = thresholds();
    let mut simulation = Simulation::new(seed)?;
    let mut text = String::from(
        "| time | incident | due now | waiting | oldest pending | rows with 5+ attempts \
         | dead letters (1 h) | alerts |\n|---|---|--:|--:|--:|--:|--:|---|\n",
    );
    for at in (30..=480).step_by(30).map(|s| s * SECOND) {
        simulation.run_until(at)?;
        let dashboard = snapshot(simulation.conn(), simulation.now())?;
        let storm: i64 = dashboard
            .attempts
            .iter()
            .filter(|&&(attempts, _)| attempts >= thresholds.storm_min_attempts)
            .map(|&(_, rows)| rows)
            .sum();
        let fired: Vec<&str> = alerts(&dashboard, &thresholds)
            .iter()
            .map(alert_name)
            .collect();
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} | {storm} | {} | {} |",
            clock(at),
            incident(at),
            dashboard.due_now,
            dashboard.waiting,
            dashboard
                .oldest_pending_age
                .map_or_else(|| "-".to_owned(), clock),
            dashboard.dead_letters_last_hour,
            fired.join(", "),
        );
    }
    Ok(text)
}

/// The rendered dashboard and its alerts at each of `moments` (ms after [`T0`], ascending).
pub fn dashboards(seed: u64, moments: &[Millis]) -> rusqlite::Result<String> {
    let thresholds = thresholds();
    let mut simulation = Simulation::new(seed)?;
    let mut blocks = Vec::new();
    for &at in moments {
        simulation.run_until(at)?;
        let dashboard = snapshot(simulation.conn(), simulation.now())?;
        let mut block = format!("=== {} ({})\n", clock(at), incident(at));
        block.push_str(&render(&dashboard));
        for alert in alerts(&dashboard, &thresholds) {
            let _ = writeln!(block, "ALERT {alert}");
        }
        blocks.push(block);
    }
    Ok(blocks.join("\n"))
}
