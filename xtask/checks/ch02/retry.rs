//! Checks of `retry_transient`: which failures it retries, how often, and when.
//!
//! The service here fails with an error that carries its own verdict, and the classifier just
//! reads it, so these checks test the loop apart from the learner's `classify`.

use std::cell::RefCell;
use std::time::Duration;

use exercise::{Retryability, retry_transient};
use tokio::time::Instant;

use super::support::{gaps, show, show_all};

const SECOND: Duration = Duration::from_secs(1);

/// The error of the scripted service: which call failed, and what a classifier should say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Failure {
    call: u32,
    verdict: Retryability,
}

/// A service that fails its first calls with a script of verdicts, then either answers with
/// the call's number or keeps failing with one verdict; it records when each call came.
struct Script {
    verdicts: Vec<Retryability>,
    afterwards: Option<Retryability>,
    calls: RefCell<Vec<Instant>>,
}

impl Script {
    fn then_success(verdicts: impl IntoIterator<Item = Retryability>) -> Self {
        Self {
            verdicts: verdicts.into_iter().collect(),
            afterwards: None,
            calls: RefCell::new(Vec::new()),
        }
    }

    fn always(verdict: Retryability) -> Self {
        Self {
            verdicts: Vec::new(),
            afterwards: Some(verdict),
            calls: RefCell::new(Vec::new()),
        }
    }

    fn then_always(
        verdicts: impl IntoIterator<Item = Retryability>,
        verdict: Retryability,
    ) -> Self {
        Self {
            afterwards: Some(verdict),
            ..Self::then_success(verdicts)
        }
    }

    async fn call(&self) -> Result<u32, Failure> {
        let mut calls = self.calls.borrow_mut();
        calls.push(Instant::now());
        let call = calls.len() as u32;
        let scripted = self.verdicts.get(call as usize - 1).copied();
        match scripted.or(self.afterwards) {
            Some(verdict) => Err(Failure { call, verdict }),
            None => Ok(call),
        }
    }
}

/// The outcome of one run: the result, when each call came, and when the loop started and
/// returned (tokio's paused clock).
struct Run {
    result: Result<u32, Failure>,
    calls: Vec<Instant>,
    started: Instant,
    returned: Instant,
}

impl Run {
    fn count(&self) -> usize {
        self.calls.len()
    }

    /// The result for a message: `Ok(3)`, `Err(call 2, Permanent)`.
    fn outcome(&self) -> String {
        match self.result {
            Ok(value) => format!("Ok({value})"),
            Err(Failure { call, verdict }) => format!("Err(call {call}, {})", describe(verdict)),
        }
    }
}

fn describe(verdict: Retryability) -> String {
    match verdict {
        Retryability::Transient => "Transient".to_owned(),
        Retryability::Permanent => "Permanent".to_owned(),
        Retryability::After(hint) => format!("After({})", show(hint)),
    }
}

async fn run(script: Script, max_attempts: u32) -> Run {
    let started = Instant::now();
    let result = retry_transient(
        max_attempts,
        || script.call(),
        |failure: &Failure| failure.verdict,
    )
    .await;
    Run {
        result,
        calls: script.calls.into_inner(),
        started,
        returned: Instant::now(),
    }
}

#[tokio::test(start_paused = true)]
async fn permanent_called_once() {
    for max_attempts in [1, 3, 5] {
        let run = run(Script::always(Retryability::Permanent), max_attempts).await;
        assert!(
            run.count() == 1 && run.result.is_err_and(|failure| failure.call == 1),
            "an operation whose error is Permanent must be called exactly once, even with \
             max_attempts = {max_attempts}, and its error returned; yours called it {} time(s) and \
             returned {}",
            run.count(),
            run.outcome(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn stops_at_first_permanent() {
    use Retryability::{Permanent, Transient};
    let script = Script::then_always([Transient, Transient, Permanent], Transient);
    let run = run(script, 10).await;
    let expected = Err(Failure {
        call: 3,
        verdict: Permanent,
    });
    assert!(
        run.count() == 3 && run.result == expected,
        "a service failing Transient, Transient, then Permanent (max_attempts = 10) must be \
         called 3 times and the loop must return the permanent error of call 3; yours made {} \
         call(s) and returned {}",
        run.count(),
        run.outcome(),
    );
}

#[tokio::test(start_paused = true)]
async fn transient_uses_every_attempt() {
    // 300: the loop keeps no cap of its own on the attempts it was given. 0 is read as 1 (the
    // stub says so): without a call there is no error to return.
    for max_attempts in [0, 1, 2, 3, 5, 8, 300] {
        let calls = max_attempts.max(1);
        let run = run(Script::always(Retryability::Transient), max_attempts).await;
        assert_eq!(
            run.count(),
            calls as usize,
            "with max_attempts = {max_attempts} and a service that always fails with a transient \
             error, the operation must be called exactly {calls} time(s) (0 is read as 1); yours \
             called it {} time(s)",
            run.count(),
        );
        assert!(
            run.result.is_err_and(|failure| failure.call == calls),
            "when the attempts run out, the loop must return the error of the last call, call \
             {calls}; yours returned {}",
            run.outcome(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn success_after_transient_failures() {
    for max_attempts in [3, 5] {
        let script = Script::then_success([Retryability::Transient; 2]);
        let run = run(script, max_attempts).await;
        assert!(
            run.result == Ok(3) && run.count() == 3,
            "a service that fails twice with a transient error and then succeeds, retried with \
             max_attempts = {max_attempts}, should give Ok(3) after exactly 3 calls; yours gave {} \
             after {} call(s)",
            run.outcome(),
            run.count(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn transient_retries_at_once() {
    let run = run(Script::always(Retryability::Transient), 4).await;
    let waits = gaps(&run.calls);
    assert!(
        run.count() == 4 && waits.iter().all(Duration::is_zero),
        "in this chapter a Transient error is retried at once (the delays come in Part II); with \
         4 attempts yours made {} call(s) and waited {} between them",
        run.count(),
        show_all(&waits, 6),
    );
}

#[tokio::test(start_paused = true)]
async fn honours_after_hint() {
    use Retryability::{After, Transient};
    let script = Script::then_success([After(2 * SECOND), Transient, After(SECOND / 2)]);
    let run = run(script, 5).await;
    let waits = gaps(&run.calls);
    let expected = [2 * SECOND, Duration::ZERO, SECOND / 2];
    assert!(
        run.result == Ok(4) && waits == expected,
        "a service failing After(2 s), Transient, After(500 ms) and then succeeding should be \
         called 4 times, with waits of exactly [2 s, 0 ms, 500 ms] between the calls: an After \
         hint is slept on tokio's clock, a Transient error retried at once. Yours returned {} \
         after {} call(s), waiting {}",
        run.outcome(),
        run.count(),
        show_all(&waits, 6),
    );
}

#[tokio::test(start_paused = true)]
async fn no_wait_after_last_attempt() {
    let run = run(Script::always(Retryability::After(10 * SECOND)), 3).await;
    let last_call = run.calls.last().copied().unwrap_or(run.started);
    let trailing = run.returned - last_call;
    assert!(
        run.count() == 3 && trailing.is_zero(),
        "a service that always fails with After(10 s), retried with max_attempts = 3, must be \
         called 3 times and the error returned at once after the third call: there is no fourth \
         call to wait for. Yours made {} call(s) and waited {} after the last one",
        run.count(),
        show(trailing),
    );
}

#[tokio::test(start_paused = true)]
async fn hint_slept_exactly() {
    use Retryability::After;
    let hints = [
        Duration::from_nanos(1_500_000_001),
        2 * 3_600 * SECOND,
        Duration::from_nanos(1),
        Duration::ZERO,
        Duration::from_micros(999),
    ];
    // tokio's timer rounds a sleep up to the next whole millisecond; nothing else may change it.
    let expected = hints.map(|hint| {
        let millis = hint.as_nanos().div_ceil(1_000_000);
        Duration::from_millis(u64::try_from(millis).expect("a few hours"))
    });
    let run = run(Script::then_success(hints.map(After)), 10).await;
    let waits = gaps(&run.calls);
    assert!(
        run.result == Ok(6) && waits == expected,
        "a service failing After(1.500000001 s), After(2 h), After(1 ns), After(0), After(999 µs) \
         and then succeeding should be called 6 times, each wait the hint before it, slept as \
         given: neither rounded down nor capped (capping a hint is chapter 11's job). tokio's \
         timer rounds a sleep up to the next millisecond, so the waits must be {:?}; yours \
         returned {} after {} call(s), waiting {:?}",
        expected,
        run.outcome(),
        run.count(),
        waits,
    );
    // The largest hint, Duration::MAX, is slept as given too: tokio's `sleep` takes it (it ends
    // in the far future), while adding it to the clock by hand overflows and panics.
    // A year of waiting tells a slept Duration::MAX from one capped at any sane-looking bound (an
    // hour, a day, a month).
    let script = Script::then_success([After(Duration::MAX)]);
    let year = 365 * 24 * 3_600 * SECOND;
    let finished = tokio::select! {
        late = self::run(script, 2) => Some(late.outcome()),
        () = tokio::time::sleep(year) => None,
    };
    assert!(
        finished.is_none(),
        "a service failing After(Duration::MAX) asks for the longest wait there is: after a year \
         of tokio's time the loop should still be sleeping (sleep the hint as given; capping it \
         is chapter 11's job); yours returned {}",
        finished.unwrap_or_default(),
    );
}

#[tokio::test(start_paused = true)]
async fn permanent_ends_the_loop_at_once() {
    use Retryability::{After, Permanent, Transient};
    // A permanent error after hinted waits, and a permanent error at the last allowed attempt.
    let cases = [
        (
            vec![After(SECOND), Transient, After(3 * SECOND), Permanent],
            6,
            4,
            vec![SECOND, Duration::ZERO, 3 * SECOND],
        ),
        (
            vec![After(2 * SECOND), After(5 * SECOND), Permanent],
            3,
            3,
            vec![2 * SECOND, 5 * SECOND],
        ),
    ];
    for (script, max_attempts, calls, expected_waits) in cases {
        let shown: Vec<String> = script.iter().map(|verdict| describe(*verdict)).collect();
        let run = run(Script::then_always(script, After(SECOND)), max_attempts).await;
        let waits = gaps(&run.calls);
        let last_call = run.calls.last().copied().unwrap_or(run.started);
        let trailing = run.returned - last_call;
        let expected = Err(Failure {
            call: calls,
            verdict: Permanent,
        });
        assert!(
            run.result == expected && waits == expected_waits && trailing.is_zero(),
            "a service failing {} (max_attempts = {max_attempts}) must be called {calls} times, \
             waiting {} between the calls, and the permanent error of call {calls} returned at \
             once, with no wait after it; yours returned {} after {} call(s), waiting {} between \
             them and {} after the last",
            shown.join(", "),
            show_all(&expected_waits, 6),
            run.outcome(),
            run.count(),
            show_all(&waits, 6),
            show(trailing),
        );
    }
}
