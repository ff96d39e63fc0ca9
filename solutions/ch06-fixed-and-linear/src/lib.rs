//! Chapter 6 — Fixed and linear backoff, and why they march in step: the reference solution.
//!
//! Two retry policies as iterators of delays ([`Fixed`] and [`Linear`]; `None` means give up),
//! and [`load_per_window`], which shows what a server sees when many clients that failed
//! together follow the same deterministic policy: they come back together, every time.

use std::time::Duration;

mod policy;

pub use policy::{Fixed, Linear};

// ANCHOR: fixed
impl Iterator for Fixed {
    type Item = Duration;

    /// The delay before the next retry, or `None` once `max_retries` delays have been handed out.
    fn next(&mut self) -> Option<Duration> {
        if self.retries >= self.max_retries {
            return None;
        }
        self.retries += 1;
        Some(self.delay)
    }
}
// ANCHOR_END: fixed

// ANCHOR: linear
impl Linear {
    /// The delay before retry number `retry + 1` (so `retry` counts from 0, as chapters 7 and 8
    /// count `attempt`): `initial + retry · increment`.
    ///
    /// The arithmetic saturates: a delay too long for a `Duration` is `Duration::MAX` (about
    /// 585 billion years), never a panic and never a wrap-around to something short.
    pub fn delay(&self, retry: u32) -> Duration {
        self.increment
            .saturating_mul(retry)
            .saturating_add(self.initial)
    }
}

impl Iterator for Linear {
    type Item = Duration;

    /// The delay before the next retry, or `None` once `max_retries` delays have been handed out.
    fn next(&mut self) -> Option<Duration> {
        if self.retries >= self.max_retries {
            return None;
        }
        let delay = self.delay(self.retries);
        self.retries += 1;
        Some(delay)
    }
}
// ANCHOR_END: linear

// ANCHOR: load_per_window
/// How many retries reach the server in each time window when `clients` clients, which all made
/// their first call at t = 0 and saw it fail, follow the same `schedule` of delays in step.
///
/// `schedule` lists the delays before retries 1, 2, 3, … (what a policy yields). Every call is
/// taken to fail at once, so retry `r` arrives at the sum of the first `r` delays. Window `k`
/// covers `[k · window, (k + 1) · window)`: an arrival exactly on a boundary counts in the later
/// window. The result runs from window 0 up to the window of the last retry, so it has
/// `floor(total / window) + 1` entries; an empty schedule has no retries and gives an empty `Vec`.
///
/// The histogram is dense: keep `total / window` to a size you would allocate.
///
/// # Panics
///
/// If `window` is zero.
pub fn load_per_window(schedule: &[Duration], clients: usize, window: Duration) -> Vec<usize> {
    assert!(
        !window.is_zero(),
        "load_per_window needs a window longer than zero"
    );
    let arrivals = arrival_times(schedule);
    let Some(&last) = arrivals.last() else {
        return Vec::new();
    };
    let mut load = vec![0; window_index(last, window) + 1];
    for at in arrivals {
        load[window_index(at, window)] += clients;
    }
    load
}

/// When each retry arrives: the running sums of the delays, saturating at `Duration::MAX`.
fn arrival_times(schedule: &[Duration]) -> Vec<Duration> {
    schedule
        .iter()
        .scan(Duration::ZERO, |at, &delay| {
            *at = at.saturating_add(delay);
            Some(*at)
        })
        .collect()
}

/// The window `[k · window, (k + 1) · window)` that holds the instant `at`: `k = floor(at / window)`,
/// computed in whole nanoseconds, so no rounding can move an arrival across a boundary.
fn window_index(at: Duration, window: Duration) -> usize {
    usize::try_from(at.as_nanos() / window.as_nanos()).unwrap_or(usize::MAX)
}
// ANCHOR_END: load_per_window
