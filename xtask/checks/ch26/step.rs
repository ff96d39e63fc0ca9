//! Checks of `run_step` at the edges the chapter's scenario never reaches: the attempt limit
//! counted exactly, each wait's full-jitter ceiling, an attempt cut at what is left of the
//! budget, a wait that would end exactly at the budget, and the retry budget told of every
//! outcome.

use std::rc::Rc;
use std::time::Duration;

use exercise::services::{CallRecord, Service};
use exercise::{Action, Client, Clock, ErrorKind, GaveUp, IdempotencyKey, OrderId, StepPolicy};
use tokio::time::Instant;

use super::doubles::{
    FAILED_LATENCY, MS, SEC, TICK, Trouble, UNAVAILABLE_LATENCY, budgeted_client, payment_service,
    policy, unlimited_client,
};
use super::support::{seeded, show, show_all};

/// One run of `run_step` for order 1: its result, how long it took, and the calls the service
/// received.
struct StepRun {
    result: Result<(), GaveUp>,
    took: Duration,
    calls: Vec<CallRecord>,
}

impl StepRun {
    /// When each call arrived, from the start of the step.
    fn starts(&self) -> Vec<Duration> {
        self.calls
            .iter()
            .map(|call| Duration::from_millis(call.at.unsigned_abs()))
            .collect()
    }

    fn outcome(&self) -> String {
        match &self.result {
            Ok(()) => "succeeded".to_owned(),
            Err(gave_up) => format!(
                "gave up with \"{}\" (maybe_done: {})",
                gave_up.error, gave_up.maybe_done
            ),
        }
    }
}

async fn run(
    service: &Rc<Service>,
    client: &Client,
    action: Action,
    policy: &StepPolicy,
    seed: u64,
) -> StepRun {
    let mut rng = seeded(seed);
    let key = IdempotencyKey::mint(&mut rng);
    let started = Instant::now();
    let result = exercise::run_step(client, OrderId(1), action, &key, policy, &mut rng).await;
    StepRun {
        result,
        took: started.elapsed(),
        calls: service.calls(),
    }
}

/// A fresh clock, the payment service in `trouble`, and a client with an unlimited budget.
async fn run_unlimited(trouble: Trouble, policy: &StepPolicy, seed: u64) -> StepRun {
    let service = payment_service(trouble, Clock::start());
    let client = unlimited_client(&service);
    run(&service, &client, Action::Execute, policy, seed).await
}

#[tokio::test(start_paused = true)]
async fn attempts_counted_from_one() {
    // Every call fails with a 500; nothing but max_attempts stops the step (no retry budget,
    // a minute of time budget, waits of at most 40 ms). 300: beyond the caps a loop might hide
    // (10, 100, a u8's 255); its 300 calls take at most 18 s.
    for max_attempts in [1u32, 2, 3, 5, 300] {
        let policy = policy(max_attempts, 10 * MS, 40 * MS, SEC, 60 * SEC);
        let step = run_unlimited(Trouble::Fails, &policy, u64::from(max_attempts)).await;
        let numbers: Vec<u32> = step.calls.iter().map(|call| call.attempt).collect();
        let expected: Vec<u32> = (1..=max_attempts).collect();
        let gave_up = matches!(
            &step.result,
            Err(GaveUp { error, maybe_done: false }) if error.kind == ErrorKind::Transient
        );
        assert!(
            numbers == expected && gave_up,
            "with max_attempts = {max_attempts} (attempts in all, the first one included) and a \
             service that answers every call with a 500, the step must make exactly \
             {max_attempts} call(s), numbered {expected:?} in `Call::attempt` (counted from 1), \
             then give up with the last 500 and maybe_done = false. Yours made {} call(s) \
             numbered {numbers:?} and {}{}",
            numbers.len(),
            step.outcome(),
            if numbers == expected {
                ". The calls are right; the end is not: return the last 500 as GaveUp, with \
                 maybe_done true only after a timeout"
            } else if numbers.len() == expected.len() {
                ". Number each call from 1"
            } else {
                ". Give up when the attempt just made is the max_attempts-th, not before or after"
            },
        );
    }
}

#[tokio::test(start_paused = true)]
async fn waits_are_full_jitter() {
    // Five attempts, each answered with a 500 after 20 ms: the wait before retry k is drawn
    // from [0, min(cap, base · 2^(k-1))], here [0, 100 ms], [0, 200 ms], then the cap of
    // 300 ms (between base · 2 and base · 4, so a ceiling one doubling off shows).
    let policy = policy(5, 100 * MS, 300 * MS, SEC, 60 * SEC);
    let ceilings = [100 * MS, 200 * MS, 300 * MS, 300 * MS];
    const SEEDS: u64 = 64;
    let mut shortest = [Duration::MAX; 4];
    let mut longest = [Duration::ZERO; 4];
    for seed in 0..SEEDS {
        let step = run_unlimited(Trouble::Fails, &policy, seed).await;
        let starts = step.starts();
        assert!(
            starts.len() == 5,
            "with max_attempts = 5 and a service that answers every call with a 500, the step \
             must make 5 calls; yours made {} (at {}) and {} (seed {seed})",
            starts.len(),
            show_all(&starts, 8),
            step.outcome(),
        );
        for (retry, pair) in starts.windows(2).enumerate() {
            let wait = (pair[1] - pair[0]).saturating_sub(FAILED_LATENCY);
            shortest[retry] = shortest[retry].min(wait);
            longest[retry] = longest[retry].max(wait);
            assert!(
                wait <= ceilings[retry] + TICK,
                "the wait before retry {} must be a full-jitter draw from [0, min(cap, base · \
                 2^{retry})] = [0, {}] (base 100 ms, cap 300 ms; the exponent is 0 before the \
                 first retry); yours waited {} (seed {seed}; the calls came at {}, each 500 \
                 answered after 20 ms). Count the retries from 0 \
                 (full_jitter(attempt - 1, …) after attempt number `attempt`), and keep the \
                 ceiling at most `cap`",
                retry + 1,
                show(ceilings[retry]),
                show(wait),
                show_all(&starts, 8),
            );
        }
    }
    // 64 uniform draws from [0, c] all land above c / 2, or all below it, with probability
    // 2^-64 each: 2^-61 for the eight tests here, so a full-jitter runner never fails by chance.
    for (retry, ceiling) in ceilings.iter().enumerate() {
        let half = *ceiling / 2;
        assert!(
            shortest[retry] <= half + TICK && longest[retry] >= half,
            "over {SEEDS} seeded steps, your waits before retry {} ranged from {} to {}: \
             full-jitter draws from [0, {}] fall on both sides of {} (a fixed wait, or a \
             ceiling that does not double, does not). Draw each wait with full_jitter from the \
             `rng` you are given, its ceiling doubling from `base` with every retry up to `cap`",
            retry + 1,
            show(shortest[retry]),
            show(longest[retry]),
            show(*ceiling),
            show(half),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn attempts_cut_at_timeout_and_budget() {
    // A service that never answers. (per attempt, total budget, calls, when the step ends):
    // 1 s within 2.5 s: attempts cut at 1 s, 1 s, then at what is left (0.3 to 0.5 s), so the
    //   step ends exactly at 2.5 s after three calls;
    // 5 s within 2 s: the one attempt is cut at the budget, 2 s, not at 5 s.
    // 2 h within 5 h: attempts cut at 2 h, 2 h, then the hour that is left, however long the
    //   policy's timeout (no cap of a minute or an hour of the runner's own).
    let regimes = [
        (SEC, 2_500 * MS, 3usize),
        (5 * SEC, 2 * SEC, 1),
        (7_200 * SEC, 18_000 * SEC, 3),
    ];
    for (per_attempt, total, calls) in regimes {
        let policy = policy(10, 100 * MS, 100 * MS, per_attempt, total);
        for seed in 0..8 {
            let step = run_unlimited(Trouble::Hangs, &policy, seed).await;
            let starts = step.starts();
            // Between two calls: one attempt cut at per_attempt_timeout, then a wait.
            let longest_gap = per_attempt + 100 * MS + TICK;
            let cut = starts.windows(2).all(|pair| {
                let gap = pair[1] - pair[0];
                gap >= per_attempt && gap <= longest_gap
            });
            let ended = step.took >= total && step.took <= total + TICK;
            let maybe_done = matches!(
                &step.result,
                Err(GaveUp {
                    maybe_done: true,
                    ..
                })
            );
            assert!(
                starts.len() == calls && cut && ended && maybe_done,
                "a service that never answers, per_attempt_timeout {} and total_budget {}, waits \
                 of at most 100 ms: each attempt must be cut at min(per_attempt_timeout, what is \
                 left of total_budget), so the step makes {calls} call(s), the last cut exactly \
                 when the budget runs out, and gives up at {} with maybe_done = true (a timed-out \
                 attempt may have done its work). Yours made {} call(s), at {}, and {} after {} \
                 (seed {seed})",
                show(per_attempt),
                show(total),
                show(total),
                starts.len(),
                show_all(&starts, 8),
                step.outcome(),
                show(step.took),
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn no_wait_ends_at_the_budget() {
    // A 503 with Retry-After 1 s, answered 5 ms after the call: the wait would end at 1.005 s.
    // A step whose budget ends exactly then must not start it; with 1 ms more, it must.
    let hint = SEC;
    let tie = UNAVAILABLE_LATENCY + hint;
    for (total, calls) in [(tie, 1usize), (tie + MS, 2)] {
        let policy = policy(10, 100 * MS, 2 * SEC, SEC, total);
        let trouble = Trouble::Storm {
            retry_after: hint,
            until: 3_600 * SEC,
        };
        let step = run_unlimited(trouble, &policy, 5).await;
        let starts = step.starts();
        let rule = if calls == 1 {
            "it would end exactly when the budget does, so it must not be started: the step \
             gives up after one call"
        } else {
            "it ends 1 ms before the budget does, so it is started and a second call made, \
             after which the next wait would end past the budget"
        };
        assert!(
            starts.len() == calls && step.result.is_err(),
            "total_budget {}, and every call is answered 503 with Retry-After 1 s after 5 ms: \
             the wait after the first call would end at 1.005 s; {rule}. Yours made {} call(s), \
             at {}, and {}. A wait is started only if elapsed + wait < total_budget",
            show(total),
            starts.len(),
            show_all(&starts, 8),
            step.outcome(),
        );
    }
    // A long hint is waited as given: Retry-After 2 h within a budget of 3 h. The second call
    // comes 2 h after the first 503 (answered 5 ms after the call); the wait after it would end
    // past the budget, so the step gives up then.
    let hint = 7_200 * SEC;
    let policy = policy(10, 100 * MS, 2 * SEC, SEC, 10_800 * SEC);
    let trouble = Trouble::Storm {
        retry_after: hint,
        until: 36_000 * SEC,
    };
    let step = run_unlimited(trouble, &policy, 5).await;
    let starts = step.starts();
    let second = UNAVAILABLE_LATENCY + hint;
    let on_time = starts
        .get(1)
        .is_some_and(|at| *at >= second && *at <= second + TICK);
    assert!(
        starts.len() == 2 && on_time && step.result.is_err(),
        "total_budget 3 h, and every call is answered 503 with Retry-After 2 h after 5 ms: the \
         step must wait the hint as the server sent it, so its second call comes at {}, and then \
         give up (a second wait would end past the budget). Yours made {} call(s), at {}, and \
         {}. Wait the Retry-After as given, however long: the time budget is its only limit",
        show(second),
        starts.len(),
        show_all(&starts, 8),
        step.outcome(),
    );
}

/// The tokens of `client`'s budget for `action`.
fn tokens(client: &Client, action: Action) -> f64 {
    client.budget(action).tokens().unwrap_or(f64::NAN)
}

#[tokio::test(start_paused = true)]
async fn budget_hears_every_outcome() {
    struct Regime {
        what: &'static str,
        trouble: Trouble,
        action: Action,
        drained: u32,
        max_attempts: u32,
        calls: usize,
        tokens: f64,
    }
    let storm = Trouble::Storm {
        retry_after: SEC,
        until: 3 * MS,
    };
    let regimes = [
        Regime {
            what: "a step that succeeds at once, its budget at 7 tokens",
            trouble: Trouble::None,
            action: Action::Execute,
            drained: 3,
            max_attempts: 4,
            calls: 1,
            tokens: 7.1,
        },
        Regime {
            what: "a compensation that succeeds at once, its budget at 7 tokens",
            trouble: Trouble::None,
            action: Action::Compensate,
            drained: 3,
            max_attempts: 4,
            calls: 1,
            tokens: 7.1,
        },
        Regime {
            what: "a step turned away once with 503 (Retry-After 1 s), then served, its budget \
                   full",
            trouble: storm,
            action: Action::Execute,
            drained: 0,
            max_attempts: 4,
            calls: 2,
            tokens: 9.1,
        },
        Regime {
            what: "a step whose two attempts both time out, its budget full",
            trouble: Trouble::Hangs,
            action: Action::Execute,
            drained: 0,
            max_attempts: 2,
            calls: 2,
            tokens: 8.0,
        },
        Regime {
            what: "a step refused for good (402), its budget at 8 tokens",
            trouble: Trouble::Refuses,
            action: Action::Execute,
            drained: 2,
            max_attempts: 4,
            calls: 1,
            tokens: 8.0,
        },
    ];
    for regime in regimes {
        let service = payment_service(regime.trouble, Clock::start());
        let client = budgeted_client(&service, regime.action, regime.drained);
        let policy = policy(regime.max_attempts, 10 * MS, 40 * MS, SEC, 60 * SEC);
        let step = run(&service, &client, regime.action, &policy, 3).await;
        let other = match regime.action {
            Action::Execute => Action::Compensate,
            Action::Compensate => Action::Execute,
        };
        let (left, untouched) = (tokens(&client, regime.action), tokens(&client, other));
        assert!(
            step.calls.len() == regime.calls
                && (left - regime.tokens).abs() < 1e-6
                && (untouched - 10.0).abs() < 1e-6,
            "{}: the {} budget (`client.budget(Action::{:?})`, the only one this call may touch) \
             must hear of every outcome: on_success after a success (+0.1), on_failure after \
             each transient failure or timeout (-1), nothing for a permanent refusal. After {} \
             call(s) it must hold {:.1} tokens; yours made {} call(s) and {}, and left it at \
             {left:.3} tokens and the {other:?} budget at {untouched:.3} (it starts at 10)",
            regime.what,
            regime.action,
            regime.action,
            regime.calls,
            regime.tokens,
            step.calls.len(),
            step.outcome(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn budget_paid_before_asked() {
    // A budget at 6 tokens: the failure brings it to 5, and only "more than 5" allows a retry.
    // A runner that asks before it pays sees 6 and retries once too often.
    let service = payment_service(Trouble::Fails, Clock::start());
    let client = budgeted_client(&service, Action::Execute, 4);
    let policy = policy(4, 10 * MS, 40 * MS, SEC, 60 * SEC);
    let step = run(&service, &client, Action::Execute, &policy, 9).await;
    let left = tokens(&client, Action::Execute);
    assert!(
        step.calls.len() == 1 && (left - 5.0).abs() < 1e-6 && step.result.is_err(),
        "the retry budget holds 6 tokens and the first call fails with a 500: recorded first \
         (on_failure, 5 tokens left), the budget then refuses a retry (can_retry() needs more \
         than 5), so the step gives up after one call with 5 tokens left. Yours made {} call(s), \
         {}, and left {left:.3} tokens. Record the outcome, then ask: on_failure() before \
         can_retry()",
        step.calls.len(),
        step.outcome(),
    );
}

#[tokio::test(start_paused = true)]
async fn no_wait_after_the_last_attempt() {
    // Every call is answered 503 with Retry-After 1 s, 5 ms after it arrives. A step that may
    // not retry gives up the moment that answer arrives, at 5 ms after its last call: a wait
    // comes only before a retry. (drained tokens, max_attempts, calls): the attempts used up
    // after two calls, or a budget at 6 tokens that refuses the first retry once the failure
    // is paid.
    let storm = Trouble::Storm {
        retry_after: SEC,
        until: 3_600 * SEC,
    };
    for (drained, max_attempts, calls) in [(0u32, 2u32, 2usize), (4, 4, 1)] {
        let service = payment_service(storm, Clock::start());
        let client = budgeted_client(&service, Action::Execute, drained);
        let policy = policy(max_attempts, 100 * MS, 2 * SEC, SEC, 60 * SEC);
        let step = run(&service, &client, Action::Execute, &policy, 11).await;
        let starts = step.starts();
        let last_answer = starts.last().copied().unwrap_or_default() + UNAVAILABLE_LATENCY;
        let why = if drained == 0 {
            "its two attempts are used"
        } else {
            "its budget (6 tokens, 5 once the first failure is paid) refuses a retry"
        };
        assert!(
            starts.len() == calls
                && step.result.is_err()
                && step.took >= last_answer
                && step.took <= last_answer + TICK,
            "every call is answered 503 with Retry-After 1 s after 5 ms, and {why}: the step \
             makes {calls} call(s) and gives up the moment the last 503 arrives, {} after the \
             start, without waiting out a Retry-After (or a backoff) before a retry it will not \
             make. Yours made {} call(s), at {}, and {} after {}. Decide whether to retry first; \
             wait only before a retry",
            show(last_answer),
            starts.len(),
            show_all(&starts, 8),
            step.outcome(),
            show(step.took),
        );
    }
}
