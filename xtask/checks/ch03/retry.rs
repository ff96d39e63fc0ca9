//! Checks of `retry_with_timeouts`: a timeout per attempt, retried at once, and the total time
//! the schedule implies.

use std::time::Duration;

use exercise::{AttemptError, retry_with_timeouts};
use tokio::time::Instant;

use super::support::{show, show_all};
use super::timeout::{MS, Probe, Step, patiently, show_script};

/// The outcome of one retry run against a probe.
struct Run {
    result: Result<u32, AttemptError<u32>>,
    probe: Probe,
    /// When each call started, from the start of the run.
    starts: Vec<Duration>,
    /// How long the whole run took.
    took: Duration,
}

impl Run {
    /// The run in a sentence, for a message.
    fn observed(&self) -> String {
        format!(
            "yours returned {:?} after {}, with {} call(s) starting at {}",
            self.result,
            show(self.took),
            self.probe.count(),
            show_all(&self.starts, 8),
        )
    }
}

fn describe(script: &[Step], attempts: u32, limit: Duration) -> String {
    format!(
        "retry_with_timeouts(<{}>, attempts = {attempts}, limit = {})",
        show_script(script).trim_matches(['[', ']']),
        show(limit),
    )
}

async fn run(script: &[Step], attempts: u32, limit: Duration) -> Run {
    let probe = Probe::new(script);
    let origin = Instant::now();
    let what = describe(script, attempts, limit);
    let result = patiently(&what, retry_with_timeouts(|| probe.call(), attempts, limit)).await;
    let took = origin.elapsed();
    let starts = probe.starts(origin);
    Run {
        result,
        probe,
        starts,
        took,
    }
}

/// When each call of `script` should start, and when the run should end, if every attempt is cut
/// at `limit` and the next starts at once.
fn schedule(script: &[Step], calls: usize, limit: Duration) -> (Vec<Duration>, Duration) {
    let mut starts = Vec::new();
    let mut clock = Duration::ZERO;
    for call in 0..calls {
        starts.push(clock);
        clock += script[call.min(script.len() - 1)].lasts(limit);
    }
    (starts, clock)
}

#[tokio::test(start_paused = true)]
async fn next_attempt_starts_at_once() {
    let (script, limit) = ([Step::Hang, Step::Hang, Step::Answer(50 * MS)], 200 * MS);
    let run = run(&script, 3, limit).await;
    let (starts, end) = schedule(&script, 3, limit);
    assert!(
        run.starts == starts && run.result == Ok(3) && run.took == end,
        "with script {} and limit = 200 ms, each hanging call is cut at 200 ms and the next \
         starts at that very instant: calls at {}, Ok(3) after {}; {}",
        show_script(&script),
        show_all(&starts, 8),
        show(end),
        run.observed(),
    );
}

#[tokio::test(start_paused = true)]
#[allow(clippy::type_complexity)]
async fn total_time_matches_schedule() {
    let cases: [(&[Step], u32, Duration, Result<u32, AttemptError<u32>>); 3] = [
        (
            &[
                Step::Answer(500 * MS),
                Step::FailAfter(30 * MS),
                Step::Hang,
                Step::Answer(120 * MS),
            ],
            5,
            200 * MS,
            Ok(4),
        ),
        (
            &[Step::FailAfter(10 * MS)],
            3,
            1_000 * MS,
            Err(AttemptError::Failed(3)),
        ),
        (&[Step::Hang], 4, 75 * MS, Err(AttemptError::TimedOut)),
    ];
    for (script, attempts, limit, expected) in cases {
        let run = run(script, attempts, limit).await;
        let calls = match expected {
            Ok(call) => call,
            Err(_) => attempts,
        };
        let parts: Vec<String> = (0..calls as usize)
            .map(|call| show(script[call.min(script.len() - 1)].lasts(limit)))
            .collect();
        let (_, end) = schedule(script, calls as usize, limit);
        assert!(
            run.result == expected && run.took == end,
            "{} should take {} = {} in all (each attempt lasts until it answers or is cut at the \
             limit, and nothing waits in between) and return {expected:?}; {}",
            describe(script, attempts, limit),
            parts.join(" + "),
            show(end),
            run.observed(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn timeout_is_retried() {
    for attempts in [2, 3] {
        let script = [Step::Hang, Step::Answer(10 * MS)];
        let run = run(&script, attempts, 100 * MS).await;
        assert!(
            run.result == Ok(2) && run.probe.count() == 2,
            "a timeout is a transient failure and must be retried: {} should cut call 1 at \
             100 ms, call again, and return Ok(2); {}",
            describe(&script, attempts, 100 * MS),
            run.observed(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn each_attempt_gets_full_limit() {
    let script = [
        Step::FailAfter(150 * MS),
        Step::FailAfter(150 * MS),
        Step::Answer(150 * MS),
    ];
    let run = run(&script, 3, 200 * MS).await;
    assert!(
        run.result == Ok(3) && run.took == 450 * MS,
        "the limit bounds each attempt, not the whole loop: three calls of 150 ms each under \
         limit = 200 ms all finish in time, so {} must return Ok(3) after 450 ms; {}",
        describe(&script, 3, 200 * MS),
        run.observed(),
    );
}

#[tokio::test(start_paused = true)]
async fn attempts_on_permanent_hang() {
    let limit = 50 * MS;
    // 300: the loop keeps no cap of its own on the attempts it was given. 0 is read as 1 (the
    // stub says so): without a call there is no error to return.
    for attempts in [0, 1, 2, 3, 5, 300] {
        let run = run(&[Step::Hang], attempts, limit).await;
        let calls = attempts.max(1);
        let end = limit * calls;
        assert!(
            run.probe.count() == calls
                && run.result == Err(AttemptError::TimedOut)
                && run.took == end,
            "a service that never answers, retried with attempts = {attempts} and limit = 50 ms, \
             must be called exactly {calls} time(s) (0 is read as 1) and give \
             Err(AttemptError::TimedOut) after {}; {}",
            show(end),
            run.observed(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn returns_last_error() {
    let cases: [([Step; 2], AttemptError<u32>); 2] = [
        (
            [Step::Hang, Step::FailAfter(5 * MS)],
            AttemptError::Failed(2),
        ),
        (
            [Step::FailAfter(5 * MS), Step::Hang],
            AttemptError::TimedOut,
        ),
    ];
    for (script, expected) in cases {
        let run = run(&script, 2, 100 * MS).await;
        assert!(
            run.result == Err(expected),
            "when both attempts fail, the loop must return the error of the last one: {} should \
             give Err({expected:?}); {}",
            describe(&script, 2, 100 * MS),
            run.observed(),
        );
    }
}
