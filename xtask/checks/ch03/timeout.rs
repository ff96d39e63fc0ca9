//! Checks of `call_with_timeout`: one attempt, cut at exactly its limit, and cancelled when cut.
//!
//! Also the probe service the retry checks share: a scripted service that records, on tokio's
//! clock, when each call started and how it ended (answered, or dropped unfinished).

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::time::Duration;

use exercise::{AttemptError, call_with_timeout};
use tokio::time::Instant;

use super::support::show;

pub const MS: Duration = Duration::from_millis(1);

/// How long (virtual time) a check waits for the graded code before calling it a hang: an hour.
pub const PATIENCE: Duration = Duration::from_secs(3_600);

/// What one probe call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Answer `Ok(call number)` after this long.
    Answer(Duration),
    /// Fail with `Err(call number)` after this long.
    FailAfter(Duration),
    /// Never answer.
    Hang,
}

impl Step {
    /// How long an attempt running this step lasts under `limit`.
    pub fn lasts(self, limit: Duration) -> Duration {
        match self {
            Step::Answer(latency) | Step::FailAfter(latency) => latency.min(limit),
            Step::Hang => limit,
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Answer(latency) => write!(f, "answer after {}", show(*latency)),
            Step::FailAfter(latency) => write!(f, "fail after {}", show(*latency)),
            Step::Hang => write!(f, "hang"),
        }
    }
}

/// A script for a message: `[hang, answer after 50 ms]`.
pub fn show_script(script: &[Step]) -> String {
    let steps: Vec<String> = script.iter().map(Step::to_string).collect();
    format!("[{}]", steps.join(", "))
}

/// How a probe call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Answered,
    Dropped,
}

/// The record of one probe call.
#[derive(Debug, Clone, Copy)]
pub struct CallRecord {
    pub started: Instant,
    /// How many earlier calls were still alive (started, neither answered nor dropped).
    pub alive_before: u32,
    pub ended: Option<(Instant, Ending)>,
}

/// A scripted service that remembers when each call started and how it ended. Call `n` (from 1)
/// plays step `n` of the script; calls past the end repeat the last step.
pub struct Probe {
    script: Vec<Step>,
    calls: RefCell<Vec<CallRecord>>,
}

impl Probe {
    pub fn new(script: &[Step]) -> Self {
        Self {
            script: script.to_vec(),
            calls: RefCell::new(Vec::new()),
        }
    }

    #[allow(clippy::manual_async_fn)]
    pub fn call(&self) -> impl Future<Output = Result<u32, u32>> + '_ {
        async move {
            let number = {
                let mut calls = self.calls.borrow_mut();
                let alive_before = calls.iter().filter(|call| call.ended.is_none()).count() as u32;
                calls.push(CallRecord {
                    started: Instant::now(),
                    alive_before,
                    ended: None,
                });
                calls.len() as u32
            };
            let mut guard = Guard {
                probe: self,
                number,
                answered: false,
            };
            let step = self.script[(number as usize - 1).min(self.script.len() - 1)];
            let outcome = match step {
                Step::Answer(latency) => {
                    tokio::time::sleep(latency).await;
                    Ok(number)
                }
                Step::FailAfter(latency) => {
                    tokio::time::sleep(latency).await;
                    Err(number)
                }
                Step::Hang => std::future::pending().await,
            };
            guard.answered = true;
            outcome
        }
    }

    pub fn records(&self) -> Vec<CallRecord> {
        self.calls.borrow().clone()
    }

    pub fn count(&self) -> u32 {
        self.calls.borrow().len() as u32
    }

    /// When each call started, relative to `origin`, for a message.
    pub fn starts(&self, origin: Instant) -> Vec<Duration> {
        self.records()
            .iter()
            .map(|call| call.started - origin)
            .collect()
    }
}

/// Lives in a probe call's future and records how the call ended when the future goes away.
struct Guard<'a> {
    probe: &'a Probe,
    number: u32,
    answered: bool,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        let ending = if self.answered {
            Ending::Answered
        } else {
            Ending::Dropped
        };
        if let Ok(mut calls) = self.probe.calls.try_borrow_mut() {
            calls[self.number as usize - 1].ended = Some((Instant::now(), ending));
        }
    }
}

/// Awaits `future` for at most [`PATIENCE`] of virtual time, so a missing timeout fails with a
/// message instead of hanging; `what` names the call for that message.
pub async fn patiently<F: Future>(what: &str, future: F) -> F::Output {
    match tokio::time::timeout(PATIENCE, future).await {
        Ok(output) => output,
        Err(_) => panic!(
            "{what} was still waiting after an hour of (virtual) time: a call that never answers \
             must be cut when its limit passes; wrap each attempt in `tokio::time::timeout(limit, …)`"
        ),
    }
}

/// One `call_with_timeout` on a fresh probe: the result, the probe, and the (virtual) time taken.
async fn attempt(step: Step, limit: Duration) -> (Result<u32, AttemptError<u32>>, Probe, Duration) {
    let probe = Probe::new(&[step]);
    let started = Instant::now();
    let what = format!(
        "call_with_timeout(<a call that will {step}>, limit = {})",
        show(limit)
    );
    let result = patiently(&what, call_with_timeout(probe.call(), limit)).await;
    (result, probe, started.elapsed())
}

#[tokio::test(start_paused = true)]
async fn hang_cut_at_limit() {
    // Ten minutes: every Duration is a valid limit, so none is capped at a "sane" maximum.
    for limit in [
        MS,
        250 * MS,
        2_000 * MS,
        30_000 * MS,
        600_000 * MS,
        Duration::ZERO,
    ] {
        let (result, _, took) = attempt(Step::Hang, limit).await;
        assert!(
            result == Err(AttemptError::TimedOut),
            "call_with_timeout(<a call that never answers>, limit = {}) must return \
             Err(AttemptError::TimedOut); yours returned {result:?} after {}",
            show(limit),
            show(took),
        );
        assert!(
            took == limit,
            "a call that never answers must be cut after exactly limit = {}; yours gave up after \
             {}{}",
            show(limit),
            show(took),
            if took < limit {
                " of tokio's clock: wait on tokio's clock with `tokio::time::timeout`, not on the \
                 thread's, and pass `limit` itself, not a capped copy of it"
            } else if limit.is_zero() {
                ": a limit of zero cuts a call that is not ready at once; it never means \
                 \"no limit\""
            } else {
                ": pass `limit` itself to `tokio::time::timeout`"
            },
        );
    }
    // Limits between two ticks of tokio's 1 ms timer: the timer may fire at the next tick, never
    // before the limit (a limit that went through whole milliseconds on the way is cut early).
    for limit in [
        Duration::from_micros(1_500),
        Duration::from_nanos(2_999_999),
        Duration::from_nanos(1),
    ] {
        let (result, _, took) = attempt(Step::Hang, limit).await;
        let next_tick = Duration::from_millis(limit.as_nanos().div_ceil(1_000_000) as u64);
        assert!(
            result == Err(AttemptError::TimedOut) && took >= limit && took <= next_tick,
            "a call that never answers, under limit = {:?}, must be cut once the limit has \
             passed: at the limit, or at the next tick of tokio's 1 ms timer ({}), never before \
             it; yours returned {result:?} after {:?}{}",
            limit,
            show(next_tick),
            took,
            if result == Err(AttemptError::TimedOut) && took < limit {
                ". Cut before the limit: pass `limit` itself, not a number of whole milliseconds"
            } else {
                ""
            },
        );
    }
}

#[tokio::test(start_paused = true)]
async fn fast_answer_not_delayed() {
    for (latency, limit) in [
        (40 * MS, 1_000 * MS),
        (Duration::ZERO, 200 * MS),
        (199 * MS, 200 * MS),
        (40 * MS, Duration::MAX),
        // A slow answer under a limit far above it: the limit is not capped on the way.
        (3_000_000 * MS, Duration::MAX),
    ] {
        let (result, _, took) = attempt(Step::Answer(latency), limit).await;
        assert!(
            result == Ok(1) && took == latency,
            "a call that answers after {} under limit = {} must return its value, Ok(1), as soon \
             as it answers ({}); yours returned {result:?} after {}: the limit bounds an attempt, \
             it is not a wait",
            show(latency),
            if limit == Duration::MAX {
                "Duration::MAX (a limit that never passes; it must not overflow)".to_owned()
            } else {
                show(limit)
            },
            show(latency),
            show(took),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn op_error_passed_through() {
    for latency in [30 * MS, Duration::ZERO, 999 * MS] {
        let limit = 1_000 * MS;
        let (result, _, took) = attempt(Step::FailAfter(latency), limit).await;
        assert!(
            result == Err(AttemptError::Failed(1)) && took == latency,
            "a call that fails with its own error, Err(1), after {} (limit = 1 s) must give \
             Err(AttemptError::Failed(1)) after {}: it answered, so it did not time out; yours \
             returned {result:?} after {}",
            show(latency),
            show(latency),
            show(took),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn answer_at_limit_in_time() {
    // The same tie, many times over: an implementation that picks a side at random shows itself.
    // A limit of zero is a limit too: a call that answers at once (at 0 ms) arrives at exactly
    // the limit, so it is in time, not cut without a look (book §3.3).
    for round in 0..8 {
        for limit in [MS, 200 * MS, 5_000 * MS, Duration::ZERO] {
            for (step, expected) in [
                (Step::Answer(limit), Ok(1)),
                (Step::FailAfter(limit), Err(AttemptError::Failed(1))),
            ] {
                let (result, _, took) = attempt(step, limit).await;
                assert!(
                    result == expected && took == limit,
                    "a call that will {step} under limit = {} arrives at exactly the limit, \
                     which is in time: it must give {expected:?} after {}; yours returned \
                     {result:?} after {} (tie number {}). Look at the call before the timer, as \
                     `tokio::time::timeout` does",
                    show(limit),
                    show(limit),
                    show(took),
                    round + 1,
                );
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn abandoned_future_dropped() {
    let limit = 300 * MS;
    let origin = Instant::now();
    let (result, probe, took) = attempt(Step::Hang, limit).await;
    let call = probe.records().first().copied();
    let ended = call.and_then(|call| call.ended);
    assert!(
        matches!(ended, Some((at, Ending::Dropped)) if at - origin == limit),
        "when call_with_timeout gives up on a hanging call (limit = 300 ms), the call's future \
         must be dropped right then, which cancels it; yours returned {result:?} after {} and the \
         call's future was {}",
        show(took),
        match (call, ended) {
            (None, _) => "never even polled".to_owned(),
            (Some(_), None) => "still alive: it was kept (or leaked) instead of dropped".to_owned(),
            (Some(_), Some((at, _))) => format!("dropped at {}", show(at - origin)),
        },
    );

    // Inside the retry loop too: no attempt may outlive the timeout that abandoned it.
    let probe = Probe::new(&[Step::Hang, Step::Hang, Step::Answer(10 * MS)]);
    let start = Instant::now();
    let what =
        "retry_with_timeouts(<hang, hang, answer after 10 ms>, attempts = 3, limit = 100 ms)";
    let result = patiently(
        what,
        exercise::retry_with_timeouts(|| probe.call(), 3, 100 * MS),
    )
    .await;
    for (index, call) in probe.records().iter().enumerate() {
        assert!(
            call.alive_before == 0,
            "when call {} started (at {}), {} earlier call(s) were still alive; each timed-out \
             attempt must be dropped before the next one starts (script [hang, hang, answer after \
             10 ms], limit = 100 ms; your loop returned {result:?})",
            index + 1,
            show(call.started - start),
            call.alive_before,
        );
    }
}

#[tokio::test(start_paused = true)]
async fn does_not_block() {
    let wall = std::time::Instant::now();
    let virtual_start = Instant::now();
    for _ in 0..5 {
        let probe = Probe::new(&[Step::Hang]);
        let what = "call_with_timeout(<a call that never answers>, limit = 200 ms)";
        let _ = patiently(what, call_with_timeout(probe.call(), 200 * MS)).await;
    }
    let (blocked, advanced) = (wall.elapsed(), virtual_start.elapsed());
    assert!(
        blocked < 500 * MS,
        "five calls of call_with_timeout(<a call that never answers>, limit = 200 ms) blocked the \
         thread for {} of real time while tokio's paused clock moved {}: wait with tokio's timer \
         (`tokio::time::timeout`), never `std::thread::sleep`, which blocks the whole executor",
        show(blocked),
        show(advanced),
    );
}
