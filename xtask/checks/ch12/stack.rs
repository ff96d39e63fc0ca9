//! Checks of the refactored stack, `Frontend -> Service -> Repository -> backend`: who retries,
//! how often the backend is called, what happens to "overloaded; don't retry", and who waits.
//!
//! The checks bring their own backend and their own counters between the layers (they do not
//! rely on the exercise's stubs), and build the stack with the learner's constructors.

use std::cell::RefCell;
use std::time::Duration;

use exercise::{CallError, Downstream, Frontend, Repository, RetryPolicy, Service};
use tokio::time::Instant;

use super::support::{gaps, show, show_all};

/// The frontend's attempts in the checks that use the standard policy.
const ATTEMPTS: u32 = 4;
const MS: Duration = Duration::from_millis(1);
/// How long a request may run (virtual time) before the checks call it a retry loop that never
/// ends.
const HOUR: Duration = Duration::from_secs(3_600);

/// The checks' backend: answers its first calls as scripted (`Some(error)` fails, `None`
/// answers), then fails with `afterwards` or answers, and records when each call arrived.
struct Script {
    replies: Vec<Option<CallError>>,
    afterwards: Option<CallError>,
    arrivals: RefCell<Vec<Instant>>,
}

impl Script {
    fn new(failures: &[CallError], afterwards: Option<CallError>) -> Self {
        Self::replies(
            &failures.iter().copied().map(Some).collect::<Vec<_>>(),
            afterwards,
        )
    }

    fn replies(replies: &[Option<CallError>], afterwards: Option<CallError>) -> Self {
        Self {
            replies: replies.to_vec(),
            afterwards,
            arrivals: RefCell::new(Vec::new()),
        }
    }

    fn healthy() -> Self {
        Self::new(&[], None)
    }

    fn down() -> Self {
        Self::new(&[], Some(CallError::Unavailable))
    }

    fn overloaded() -> Self {
        Self::new(&[], Some(CallError::Overloaded))
    }

    fn failing_first(failures: usize) -> Self {
        Self::new(&vec![CallError::Unavailable; failures], None)
    }
}

impl Downstream for Script {
    async fn call(&self) -> Result<u32, CallError> {
        let mut arrivals = self.arrivals.borrow_mut();
        arrivals.push(Instant::now());
        let call = arrivals.len();
        match self
            .replies
            .get(call - 1)
            .copied()
            .unwrap_or(self.afterwards)
        {
            Some(error) => Err(error),
            None => Ok(call as u32),
        }
    }
}

/// A counter between two layers: records when each call to the wrapped layer arrived.
struct Hop<D> {
    inner: D,
    arrivals: RefCell<Vec<Instant>>,
}

impl<D> Hop<D> {
    fn new(inner: D) -> Self {
        Self {
            inner,
            arrivals: RefCell::new(Vec::new()),
        }
    }
}

impl<D: Downstream> Downstream for Hop<D> {
    async fn call(&self) -> Result<u32, CallError> {
        self.arrivals.borrow_mut().push(Instant::now());
        self.inner.call().await
    }
}

/// What one request did.
struct Run {
    /// The frontend's answer, or `None` if it was still retrying after an hour of virtual time.
    result: Option<Result<u32, CallError>>,
    /// When each call arrived at the service, the repository and the backend.
    to_service: Vec<Instant>,
    to_repository: Vec<Instant>,
    to_backend: Vec<Instant>,
    started: Instant,
    returned: Instant,
}

impl Run {
    fn counts(&self) -> (usize, usize, usize) {
        (
            self.to_service.len(),
            self.to_repository.len(),
            self.to_backend.len(),
        )
    }

    /// The calls at each hop, for a message.
    fn hops(&self) -> String {
        let (service, repository, backend) = self.counts();
        format!(
            "frontend→service {service}, service→repository {repository}, repository→backend \
             {backend} call(s)"
        )
    }

    fn outcome(&self) -> String {
        match self.result {
            Some(result) => format!("{result:?}"),
            None => "no answer: it was still retrying after an hour (virtual time)".to_owned(),
        }
    }
}

/// Sends one request through `Frontend -> Service -> Repository -> backend`, built with the
/// learner's constructors, with a counter in front of the service and of the repository.
async fn run(backend: Script, policy: RetryPolicy) -> Run {
    let repository = Hop::new(Repository::new(&backend));
    let service = Hop::new(Service::new(&repository));
    let frontend = Frontend::new(&service, policy);
    let started = Instant::now();
    let result = tokio::time::timeout(HOUR, frontend.call()).await.ok();
    let returned = Instant::now();
    let to_service = service.arrivals.borrow().clone();
    let to_repository = repository.arrivals.borrow().clone();
    let to_backend = backend.arrivals.borrow().clone();
    Run {
        result,
        to_service,
        to_repository,
        to_backend,
        started,
        returned,
    }
}

/// A policy of `attempts` calls with the standard base and cap.
fn policy(attempts: u32, seed: u64) -> RetryPolicy {
    RetryPolicy::new(
        attempts,
        RetryPolicy::STANDARD_BASE,
        RetryPolicy::STANDARD_CAP,
        seed,
    )
}

/// `min(cap, base · 2^retry)` with the standard base (50 ms) and cap (500 ms).
fn ceiling(retry: u32) -> Duration {
    let base = RetryPolicy::STANDARD_BASE;
    base.saturating_mul(1u32 << retry.min(20))
        .min(RetryPolicy::STANDARD_CAP)
}

/// What a count of backend calls suggests, for a message.
fn diagnose(run: &Run, attempts: usize) -> &'static str {
    let (service, repository, backend) = run.counts();
    if backend == attempts.pow(3) && attempts > 1 {
        "that is every layer still retrying on its own, so the attempts multiply"
    } else if service == 1 && backend > 1 {
        "the frontend made one call and a layer below it retried: the one retry belongs in the \
         frontend"
    } else if repository != service || backend != repository {
        "a layer below the frontend still retries"
    } else if service > attempts {
        "the frontend made more attempts than its policy allows (`policy.attempts()` counts \
         calls, not retries)"
    } else {
        "the frontend gave up early"
    }
}

#[tokio::test(start_paused = true)]
async fn outage_backend_calls() {
    // 300: the frontend makes every attempt its policy allows, with no limit of its own (a
    // frontend that stops at 10 or 100 "to be safe" gives up early). 0 attempts still make one
    // call, as the shipped loop does and the task says: without one there is no error to return.
    for attempts in [ATTEMPTS, 3, 1, 0, 300] {
        let run = run(Script::down(), policy(attempts, 7)).await;
        let expected = attempts.max(1) as usize;
        assert!(
            run.to_backend.len() == expected,
            "in a total outage (every backend call fails with Unavailable) one request should \
             reach the backend once per attempt of the frontend (a policy of 0 attempts makes \
             one call), {expected} time(s) with a policy of {attempts} attempt(s); yours reached \
             it {} time(s) ({}); {}",
            run.to_backend.len(),
            run.hops(),
            diagnose(&run, expected),
        );
        assert!(
            run.result == Some(Err(CallError::Unavailable)),
            "in a total outage the request should fail with the last error, \
             Err(Unavailable), after {expected} backend call(s); yours returned {} ({})",
            run.outcome(),
            run.hops(),
        );
    }
}

/// Who retried an overload, or hid it, for a message.
fn overload_diagnosis(run: &Run, expected: usize) -> &'static str {
    let (service, repository, backend) = run.counts();
    let below = repository > service || backend > repository;
    let top = service > expected;
    if run.result == Some(Err(CallError::Unavailable)) {
        ": a layer below the frontend turned the overload signal into an ordinary failure; pass \
         errors up unchanged"
    } else if below && top {
        ": every layer retried it"
    } else if below {
        ": a layer below the frontend retried it"
    } else if top {
        ": the frontend retried it; ask `error.is_retryable()` before retrying"
    } else {
        ""
    }
}

#[tokio::test(start_paused = true)]
async fn overload_not_retried() {
    let cases = [
        (
            Script::overloaded(),
            1,
            "answers every call with Overloaded",
        ),
        (
            Script::new(&[CallError::Unavailable], Some(CallError::Overloaded)),
            2,
            "fails once with Unavailable, then answers Overloaded",
        ),
    ];
    for (backend, expected, case) in cases {
        let run = run(backend, policy(ATTEMPTS, 7)).await;
        let waited_after_overload =
            run.returned - run.to_backend.last().copied().unwrap_or(run.started);
        assert!(
            run.to_backend.len() == expected && run.result == Some(Err(CallError::Overloaded)),
            "\"overloaded; don't retry\" must not be retried by any layer: with a backend that \
             {case}, the request should reach it {expected} time(s) and fail with \
             Err(Overloaded) at once; yours reached it {} time(s) ({}) and returned {}{}",
            run.to_backend.len(),
            run.hops(),
            run.outcome(),
            overload_diagnosis(&run, expected),
        );
        assert!(
            waited_after_overload.is_zero(),
            "with a backend that {case}, the request should return as soon as the backend \
             answers Overloaded; yours waited another {} before returning",
            show(waited_after_overload),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn transient_recovers_at_top() {
    // The last case: 299 failures under a policy of 2^16 + 3 attempts, which a count compared as
    // u16 reads as 3.
    for (failures, attempts) in [
        (2, ATTEMPTS),
        (1, ATTEMPTS),
        (3, ATTEMPTS),
        (299, (1 << 16) + 3),
    ] {
        let run = run(Script::failing_first(failures), policy(attempts, 7)).await;
        let calls = failures + 1;
        let expected = Some(Ok(calls as u32));
        if run.result == expected && run.to_service.len() == 1 {
            panic!(
                "a backend that fails {failures} time(s) with Unavailable and then answers \
                 should be retried by the frontend, the one place that retries: {calls} calls \
                 from the frontend to the service, one backend call each. Your stack recovered, \
                 but below the top: {}",
                run.hops(),
            );
        }
        assert!(
            run.result == expected && run.counts() == (calls, calls, calls),
            "a backend that fails {failures} time(s) with Unavailable and then answers should \
             give {expected:?} under a policy of {attempts} attempts: the frontend retries the transient failures, {calls} calls in \
             all, one call per layer each; yours returned {} ({}){}",
            run.outcome(),
            run.hops(),
            if run.to_backend.len() == 1 {
                ": nobody retried the transient failure"
            } else {
                ""
            },
        );
    }
}

#[tokio::test(start_paused = true)]
async fn lower_layers_call_once() {
    let cases = [
        (Script::healthy(), "is healthy", Ok(1)),
        (Script::failing_first(2), "fails twice, then answers", Ok(3)),
        (
            Script::down(),
            "is down (every call fails)",
            Err(CallError::Unavailable),
        ),
        (
            Script::overloaded(),
            "is overloaded",
            Err(CallError::Overloaded),
        ),
    ];
    for (backend, case, outcome) in cases {
        let run = run(backend, policy(ATTEMPTS, 7)).await;
        assert!(
            run.result == Some(outcome),
            "each layer passes the outcome of its one call up unchanged: with a backend that \
             {case}, the request should return {outcome:?}; yours returned {} ({})",
            run.outcome(),
            run.hops(),
        );
        let (service, repository, backend) = run.counts();
        assert!(
            service >= 1 && repository == service && backend == repository,
            "each call the frontend makes must pass down the stack as exactly one call per \
             layer: the service calls the repository once, the repository calls the backend \
             once. With a backend that {case}, the frontend called the service {service} \
             time(s), the service called the repository {repository} time(s), and the \
             repository called the backend {backend} time(s){}",
            if service == 0 {
                ": the frontend never called the service"
            } else {
                ": a layer below the frontend still retries"
            },
        );
    }
}

#[tokio::test(start_paused = true)]
async fn only_top_layer_waits() {
    const SEEDS: u64 = 100;
    let mut sleeps_by_retry: Vec<Vec<Duration>> = vec![Vec::new(); ATTEMPTS as usize - 1];
    for seed in 0..SEEDS {
        let run = run(Script::down(), RetryPolicy::standard(seed)).await;
        assert!(
            run.counts() == (4, 4, 4),
            "to see who waits, a request in a total outage should make 4 calls at every hop; \
             yours made {} (seed {seed})",
            run.hops(),
        );
        for (attempt, ((to_service, to_repository), to_backend)) in run
            .to_service
            .iter()
            .zip(&run.to_repository)
            .zip(&run.to_backend)
            .enumerate()
        {
            let below = (*to_repository - *to_service).max(*to_backend - *to_service);
            assert!(
                below.is_zero(),
                "a call from the frontend should go down the stack without waiting: only the \
                 frontend sleeps, between its attempts. Attempt {} reached the backend {} after \
                 it reached the service (seed {seed})",
                attempt + 1,
                show(below),
            );
        }
        let before_first = run.to_service[0] - run.started;
        assert!(
            before_first.is_zero(),
            "the frontend's first call should go out at once; yours came after {} (seed {seed})",
            show(before_first),
        );
        let sleeps = gaps(&run.to_service);
        for (retry, sleep) in sleeps.iter().enumerate() {
            let limit = ceiling(retry as u32);
            assert!(
                *sleep <= limit,
                "the frontend's sleep before retry {} should be a full-jitter draw of at most {} \
                 (`policy.sleep_before_retry({retry})`, counted from 0); yours slept {} (seed \
                 {seed}, sleeps {})",
                retry + 1,
                show(limit),
                show(*sleep),
                show_all(&sleeps, 4),
            );
            sleeps_by_retry[retry].push(*sleep);
        }
        let trailing = run.returned - run.to_service[3];
        assert!(
            trailing.is_zero(),
            "after its last attempt failed, the frontend should return the error at once; yours \
             waited another {} (seed {seed})",
            show(trailing),
        );
    }
    for (retry, sleeps) in sleeps_by_retry.iter().enumerate() {
        let limit = ceiling(retry as u32);
        let mean = sleeps.iter().sum::<Duration>() / SEEDS as u32;
        assert!(
            mean >= limit / 4 && mean <= limit * 3 / 4,
            "the frontend should back off before every retry with a full-jitter sleep, uniform \
             in [0, {}] before retry {}, so about {} on average; over {SEEDS} seeded requests \
             yours averaged {}{}",
            show(limit),
            retry + 1,
            show(limit / 2),
            show(mean),
            if mean.is_zero() {
                ": it retried at once. Call `self.policy.sleep_before_retry(retry).await` \
                 between two attempts"
            } else {
                ""
            },
        );
    }
    // The sleeps are the frontend's own policy's draws, in order: a second policy with the same
    // settings and seed replays them exactly. Settings other than the standard ones, so that a
    // frontend that draws from a policy of its own shows.
    for seed in 0..8 {
        let settings = || RetryPolicy::new(ATTEMPTS, 30 * MS, 70 * MS, 1_000 + seed);
        let run = run(Script::down(), settings()).await;
        let replay = settings();
        let mut expected = Vec::new();
        for retry in 0..ATTEMPTS - 1 {
            let before = Instant::now();
            replay.sleep_before_retry(retry).await;
            expected.push(before.elapsed());
        }
        let sleeps = gaps(&run.to_service);
        assert!(
            sleeps == expected,
            "the frontend's sleeps should be its policy's draws, `policy.sleep_before_retry(r)` \
             for r = 0, 1, 2, in that order: with RetryPolicy::new(4, 30 ms, 70 ms, {}) a \
             policy seeded alike sleeps {}, and yours slept {}",
            1_000 + seed,
            show_all(&expected, 4),
            show_all(&sleeps, 4),
        );
    }
}

/// Several requests, one after the other, through one stack: each must be handled as if it were
/// the first, because every layer keeps nothing from one request to the next (section 12.6: "at
/// most `policy.attempts()` calls", "exactly one call per request").
/// One request of [`each_request_starts_afresh`]: the backend's replies to its calls (`None`
/// answers), what the request must return, and what the row stands for.
type Request<'a> = (&'a [Option<CallError>], Result<u32, CallError>, &'a str);

#[tokio::test(start_paused = true)]
async fn each_request_starts_afresh() {
    use CallError::{Overloaded, Unavailable};
    // One request per row, and what it must return after how many calls at every hop.
    let requests: [Request; 6] = [
        (&[None], Ok(1), "a healthy backend"),
        (&[Some(Unavailable); 4], Err(Unavailable), "a total outage"),
        (
            &[Some(Unavailable), Some(Unavailable), None],
            Ok(8),
            "two transient failures, then an answer",
        ),
        (
            &[Some(Overloaded)],
            Err(Overloaded),
            "an overloaded backend",
        ),
        (
            &[Some(Unavailable), None],
            Ok(11),
            "one transient failure, then an answer",
        ),
        (
            &[Some(Unavailable); 4],
            Err(Unavailable),
            "a total outage again",
        ),
    ];
    let script: Vec<Option<CallError>> = requests
        .iter()
        .flat_map(|(replies, _, _)| replies.iter().copied())
        .collect();
    let settings = || RetryPolicy::new(ATTEMPTS, 30 * MS, 70 * MS, 77);
    let backend = Script::replies(&script, Some(Unavailable));
    let repository = Hop::new(Repository::new(&backend));
    let service = Hop::new(Service::new(&repository));
    let frontend = Frontend::new(&service, settings());
    // A policy seeded alike replays the sleeps the frontend's policy draws, retry 0 first in
    // every request.
    let replay = settings();
    let mut seen = (0, 0, 0);
    for (number, (replies, expected, case)) in requests.iter().enumerate() {
        let number = number + 1;
        let started = Instant::now();
        let result = tokio::time::timeout(HOUR, frontend.call()).await.ok();
        let waited = Instant::now() - started;
        let arrivals = |hop: &RefCell<Vec<Instant>>, from: usize| hop.borrow()[from..].to_vec();
        let to_service = arrivals(&service.arrivals, seen.0);
        let to_repository = arrivals(&repository.arrivals, seen.1);
        let to_backend = arrivals(&backend.arrivals, seen.2);
        seen = (
            seen.0 + to_service.len(),
            seen.1 + to_repository.len(),
            seen.2 + to_backend.len(),
        );
        let calls = replies.len();
        let counts = (to_service.len(), to_repository.len(), to_backend.len());
        assert!(
            result == Some(*expected) && counts == (calls, calls, calls),
            "one stack serves many requests, and each starts afresh: no layer keeps a count, an \
             answer or a sleep from one request to the next. Request {number} of one stack \
             ({case}) should return {expected:?} after {calls} call(s) at every hop; yours \
             returned {} after frontend→service {}, service→repository {}, \
             repository→backend {} call(s)",
            match result {
                Some(result) => format!("{result:?}"),
                None => "no answer within an hour (virtual time)".to_owned(),
            },
            counts.0,
            counts.1,
            counts.2,
        );
        let mut expected_sleeps = Vec::new();
        let retries = if *expected == Err(Overloaded) {
            0
        } else {
            calls - 1
        };
        for retry in 0..retries {
            let before = Instant::now();
            replay.sleep_before_retry(retry as u32).await;
            expected_sleeps.push(before.elapsed());
        }
        let sleeps = gaps(&to_service);
        let expected_wait = expected_sleeps.iter().sum::<Duration>();
        assert!(
            sleeps == expected_sleeps && waited == expected_wait,
            "every request counts its retries from 0: request {number} of one stack ({case}) \
             should sleep `policy.sleep_before_retry(r)` for r = 0, 1, … between its calls, {} \
             with RetryPolicy::new(4, 30 ms, 70 ms, 77) seeded alike, {} in all; yours slept \
             {} and took {}",
            show_all(&expected_sleeps, 4),
            show(expected_wait),
            show_all(&sleeps, 4),
            show(waited),
        );
    }
}
