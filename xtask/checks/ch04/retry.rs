//! The basics of `retry_until`: success, the attempt limit, the last error, the per-attempt
//! timeout, and a deadline that has passed before the call. Also the scripted service and the
//! `run` helper the other files of this chapter use.

use std::cell::RefCell;
use std::time::Duration;

use exercise::{CancelToken, Policy, RetryError, retry_until};
use tokio::time::Instant;

use super::support::{show, show_all};

pub const MS: Duration = Duration::from_millis(1);
pub const SEC: Duration = Duration::from_secs(1);

/// What one call of a [`Service`] does.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    /// `Ok(call number)` after this latency.
    Succeed(Duration),
    /// `Err(call number)` after this latency.
    Fail(Duration),
    /// Never answers.
    Hang,
}

/// A service that follows a script (its last step repeats) and records when each call started.
pub struct Service {
    script: Vec<Step>,
    starts: RefCell<Vec<Instant>>,
}

impl Service {
    pub fn new(script: &[Step]) -> Self {
        Self {
            script: script.to_vec(),
            starts: RefCell::new(Vec::new()),
        }
    }

    /// Every call fails at once.
    pub fn failing_fast() -> Self {
        Self::new(&[Step::Fail(Duration::ZERO)])
    }

    /// Every call hangs.
    pub fn hanging() -> Self {
        Self::new(&[Step::Hang])
    }

    async fn call(&self) -> Result<u32, u32> {
        let number = {
            let mut starts = self.starts.borrow_mut();
            starts.push(Instant::now());
            starts.len()
        };
        let step = self.script[(number - 1).min(self.script.len() - 1)];
        let number = number as u32;
        match step {
            Step::Succeed(latency) => {
                tokio::time::sleep(latency).await;
                Ok(number)
            }
            Step::Fail(latency) => {
                tokio::time::sleep(latency).await;
                Err(number)
            }
            Step::Hang => std::future::pending().await,
        }
    }
}

/// One run of the learner's `retry_until`, with every time measured from its start.
pub struct Run {
    pub result: Result<u32, RetryError<u32>>,
    /// When each call started, measured from the start of the run.
    pub starts: Vec<Duration>,
    /// When `retry_until` returned, measured from the start of the run.
    pub returned: Duration,
}

impl Run {
    pub fn calls(&self) -> usize {
        self.starts.len()
    }

    /// The call start times, for a message.
    pub fn starts(&self) -> String {
        show_all(&self.starts, 8)
    }
}

/// Runs `retry_until` with a deadline `deadline_after` from now.
pub async fn run(
    service: Service,
    deadline_after: Duration,
    policy: &Policy,
    cancel: &CancelToken,
) -> Run {
    let started = Instant::now();
    let deadline = started + deadline_after;
    let result = retry_until(deadline, policy, || service.call(), cancel).await;
    let returned = Instant::now() - started;
    let starts = service
        .starts
        .borrow()
        .iter()
        .map(|start| *start - started)
        .collect();
    Run {
        result,
        starts,
        returned,
    }
}

/// Runs `retry_until` with a deadline `deadline_after` from now and a token nobody cancels.
pub async fn run_uncancelled(service: Service, deadline_after: Duration, policy: &Policy) -> Run {
    run(service, deadline_after, policy, &CancelToken::new()).await
}

#[tokio::test(start_paused = true)]
async fn success_after_failures() {
    let service = Service::new(&[
        Step::Fail(100 * MS),
        Step::Fail(100 * MS),
        Step::Succeed(100 * MS),
    ]);
    let policy = Policy::fixed(5, SEC, 500 * MS);
    let run = run_uncancelled(service, 60 * SEC, &policy).await;
    assert!(
        run.result == Ok(3) && run.calls() == 3 && run.returned == 1_300 * MS,
        "a service that fails twice (100 ms each) and then answers, under Policy::fixed(5 \
         attempts, 1 s per attempt, 500 ms sleeps) with a 60 s deadline, should give Ok(3) after \
         3 calls starting at [0 ms, 600 ms, 1.2 s], returning at 1.3 s; yours gave {:?} after {} \
         call(s) starting at {}, returning at {}",
        run.result,
        run.calls(),
        run.starts(),
        show(run.returned),
    );
}

#[tokio::test(start_paused = true)]
async fn respects_max_attempts() {
    // 300 (30 s of sleeps, inside the 60 s): the loop keeps no cap of its own on the attempts.
    for attempts in [1, 2, 4, 300] {
        let policy = Policy::fixed(attempts, SEC, 100 * MS);
        let run = run_uncancelled(Service::failing_fast(), 60 * SEC, &policy).await;
        assert!(
            run.calls() == attempts as usize,
            "with max_attempts = {attempts}, plenty of time before the deadline (60 s) and a \
             service that always fails, the operation must be called exactly {attempts} time(s); \
             yours called it {} time(s), starting at {}",
            run.calls(),
            run.starts(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn returns_last_error() {
    let policy = Policy::fixed(4, SEC, 100 * MS);
    let run = run_uncancelled(Service::failing_fast(), 60 * SEC, &policy).await;
    assert!(
        run.result == Err(RetryError::Failed(4)) && run.returned == 300 * MS,
        "after 4 failed calls (each failing at once, 100 ms sleeps between them) the loop must \
         return the last call's error, Err(Failed(4)), at 300 ms, without a sleep after the last \
         attempt; yours returned {:?} at {}",
        run.result,
        show(run.returned),
    );
}

#[tokio::test(start_paused = true)]
async fn per_attempt_timeout() {
    let policy = Policy::fixed(3, 2 * SEC, SEC);
    let run = run_uncancelled(Service::hanging(), 60 * SEC, &policy).await;
    let expected = [Duration::ZERO, 3 * SEC, 6 * SEC];
    assert!(
        run.starts == expected
            && run.result == Err(RetryError::TimedOut)
            && run.returned == 8 * SEC,
        "with a service that hangs, 3 attempts cut off after 2 s each and 1 s sleeps (deadline \
         60 s, far away), the calls should start at [0 ms, 3 s, 6 s] and the loop return \
         Err(TimedOut) at 8 s; yours started calls at {} and returned {:?} at {}",
        run.starts(),
        run.result,
        show(run.returned),
    );
    // A long timeout is the policy's to choose: the loop caps no attempt of its own.
    let long = Policy::fixed(2, 600 * SEC, SEC);
    let run = run_uncancelled(Service::hanging(), 3_600 * SEC, &long).await;
    assert!(
        run.starts == [Duration::ZERO, 601 * SEC]
            && run.result == Err(RetryError::TimedOut)
            && run.returned == 1_201 * SEC,
        "with a service that hangs, 2 attempts cut off after 10 min each and a 1 s sleep \
         (deadline an hour away), each attempt runs its full 10 min: calls at [0 ms, 10 min 1 s] \
         and Err(TimedOut) at 20 min 1 s; yours started calls at {} and returned {:?} at {}{}",
        run.starts(),
        run.result,
        show(run.returned),
        if run.starts.get(1).is_some_and(|second| *second < 601 * SEC)
            || (run.starts.len() == 1 && run.returned < 600 * SEC)
        {
            ". Your first attempt was cut before its 10 min: cut an attempt after \
             min(per_attempt, time left), with no limit of your own"
        } else {
            ""
        },
    );
    // An answer that arrives at exactly the moment the attempt would be cut off is in time (as in
    // chapter 3): at the per-attempt timeout, and at a timeout truncated to the deadline.
    for (deadline, why) in [
        (60 * SEC, "at exactly its 2 s timeout"),
        (
            1_500 * MS,
            "at exactly its timeout, truncated to the 1.5 s left before the deadline",
        ),
    ] {
        let answer_after = (2 * SEC).min(deadline);
        let service = Service::new(&[Step::Succeed(answer_after)]);
        let run = run_uncancelled(service, deadline, &policy).await;
        assert!(
            run.result == Ok(1) && run.returned == answer_after && run.calls() == 1,
            "the first call answers Ok(1) {why} ({}): an answer that arrives at the very moment \
             the attempt would be cut off is in time, so the loop must return Ok(1) then. Race the \
             attempt against its timer with the answer looked at first (`tokio::time::timeout` \
             does). Yours made {} call(s) (starting at {}) and returned {:?} at {}",
            show(answer_after),
            run.calls(),
            run.starts(),
            run.result,
            show(run.returned),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn deadline_passed_before_start() {
    let policy = Policy::fixed(3, SEC, 100 * MS);
    let run = run_uncancelled(Service::failing_fast(), Duration::ZERO, &policy).await;
    assert!(
        run.result == Err(RetryError::DeadlineExceeded)
            && run.calls() == 0
            && run.returned.is_zero(),
        "called with a deadline that is already reached (deadline = now), the loop must return \
         Err(DeadlineExceeded) at once without calling the operation; yours returned {:?} after \
         {} call(s), at {}",
        run.result,
        run.calls(),
        show(run.returned),
    );
}

#[tokio::test(start_paused = true)]
async fn sleeps_follow_the_policy() {
    let policy = Policy::new(5, SEC, [100 * MS, 300 * MS, 700 * MS]);
    let text = "5 attempts of at most 1 s, sleeps [100 ms, 300 ms, 700 ms] (the last repeats)";
    let run = run_uncancelled(Service::failing_fast(), 60 * SEC, &policy).await;
    let expected = [Duration::ZERO, 100 * MS, 400 * MS, 1_100 * MS, 1_800 * MS];
    assert!(
        run.starts == expected && run.result == Err(RetryError::Failed(5)),
        "with a service that fails at once, {text} and a deadline 60 s away, the sleep after \
         failed attempt k is delay_after(k): calls at {} and Err(Failed(5)); yours started calls \
         at {} and returned {:?}",
        show_all(&expected, 8),
        run.starts(),
        run.result,
    );
    // A long sleep is the policy's to choose: the loop caps no delay of its own.
    let long = Policy::new(3, SEC, [100 * MS, 1_200 * SEC]);
    let run = run_uncancelled(Service::failing_fast(), 3_600 * SEC, &long).await;
    let long_expected = [Duration::ZERO, 100 * MS, 1_200_100 * MS];
    assert!(
        run.starts == long_expected && run.result == Err(RetryError::Failed(3)),
        "with a service that fails at once, 3 attempts, sleeps [100 ms, 20 min] and a deadline \
         an hour away, the 20-minute sleep is taken in full: calls at {} and Err(Failed(3)); \
         yours started calls at {} and returned {:?}",
        show_all(&long_expected, 8),
        run.starts(),
        run.result,
    );
    // The sleep that decides whether to go on is the one that would be taken next.
    let deadline = 600 * MS;
    let run = run_uncancelled(Service::failing_fast(), deadline, &policy).await;
    assert!(
        run.starts == expected[..3]
            && run.result == Err(RetryError::Failed(3))
            && run.returned == 400 * MS,
        "with the same policy and a deadline 600 ms away, the sleep after attempt 2 (300 ms, \
         ending at 400 ms) fits, whatever comes after it; attempt 3 fails at 400 ms and the sleep \
         after it, delay_after(3) = 700 ms, would end at 1.1 s, past the deadline: the loop must \
         return Err(Failed(3)) at once, at 400 ms, after calls at [0 ms, 100 ms, 400 ms]; \
         yours started calls at {} and returned {:?} at {}",
        run.starts(),
        run.result,
        show(run.returned),
    );
}
