//! Given: the types of this chapter. A moment in time, the dashboard the queries fill in, the
//! thresholds of the alert rules, and the alerts themselves.

use std::fmt;

/// A moment in time, or a span of it: milliseconds, as stored in the table.
///
/// The logic never reads a clock: the caller passes `now` in, so a test can say exactly when
/// "now" is.
pub type Millis = i64;

pub const SECOND: Millis = 1_000;
pub const MINUTE: Millis = 60 * SECOND;
pub const HOUR: Millis = 60 * MINUTE;

/// The retry queue at one moment: what [`crate::snapshot`] reads from the database.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dashboard {
    /// Pending rows the relay may take right now: never tried, or `next_retry_at <= now`.
    pub due_now: i64,
    /// Pending rows in backoff: `next_retry_at > now`.
    pub waiting: i64,
    /// `now − created_at` of the oldest pending row; `None` when no row is pending.
    pub oldest_pending_age: Option<Millis>,
    /// `(attempts, rows)` for the pending rows, one entry per `attempts` value that occurs,
    /// in ascending order of `attempts`.
    pub attempts: Vec<(u32, i64)>,
    /// Every row of the `dead_letters` table.
    pub dead_letters: i64,
    /// Dead letters whose `failed_at` lies in the hour up to now: `now − 1 h < failed_at ≤ now`.
    pub dead_letters_last_hour: i64,
}

/// When the alert rules fire. Each limit is the largest value that is still fine: a rule fires
/// only when its value is strictly above its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// The oldest pending row may have waited this long, and no longer.
    pub max_oldest_pending: Millis,
    /// This many dead letters per hour are tolerated.
    pub max_dead_letters_last_hour: i64,
    /// A pending row with at least this many failed attempts counts towards a retry storm.
    pub storm_min_attempts: u32,
    /// This many such rows are tolerated.
    pub max_storm_rows: i64,
}

impl Default for Thresholds {
    /// Five minutes of delay (longer than chapter 16's whole default backoff schedule, about
    /// four minutes), no dead letters, and at most 100 rows that failed five times or more.
    fn default() -> Self {
        Self {
            max_oldest_pending: 5 * MINUTE,
            max_dead_letters_last_hour: 0,
            storm_min_attempts: 5,
            max_storm_rows: 100,
        }
    }
}

/// A rule that fired, with the value that made it fire and the limit it crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alert {
    /// The oldest pending row has waited longer than `limit`: consumers see old events.
    OldestPending { age: Millis, limit: Millis },
    /// More rows than `limit` became dead letters in the last hour: people are needed.
    DeadLetters { last_hour: i64, limit: i64 },
    /// More than `limit` pending rows have failed `min_attempts` times or more.
    RetryStorm {
        rows: i64,
        min_attempts: u32,
        limit: i64,
    },
}

impl fmt::Display for Alert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Alert::OldestPending { age, limit } => write!(
                f,
                "oldest pending row has waited {} (limit {})",
                clock(*age),
                clock(*limit)
            ),
            Alert::DeadLetters { last_hour, limit } => write!(
                f,
                "{last_hour} dead letter(s) in the last hour (limit {limit})"
            ),
            Alert::RetryStorm {
                rows,
                min_attempts,
                limit,
            } => write!(
                f,
                "{rows} pending rows have failed {min_attempts}+ times (limit {limit})"
            ),
        }
    }
}

/// A span as `HH:MM:SS`, in whole seconds (cut, not rounded): `00:04:05`, `123:00:00`.
/// A negative span shows as `00:00:00`.
pub fn clock(span: Millis) -> String {
    let seconds = span.max(0) / SECOND;
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3_600,
        seconds / 60 % 60,
        seconds % 60
    )
}
