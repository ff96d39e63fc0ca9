//! Checks of `retry_with_budget`: the budget bounds retries in an outage, stays out of the way in
//! health, hears every outcome, and works beside the per-request cap.

use std::future::{Ready, ready};

use exercise::{RetryBudget, retry_with_budget};

use super::budget::{Event, apply, budget, tokens};

/// The attempts per request in this chapter's scenarios.
const ATTEMPTS: u32 = 3;
/// The requests of the outage and health scenarios.
const REQUESTS: u32 = 1_000;

/// What one request did: its result, and for each of its calls whether it was a retry and how
/// many tokens the budget held when the call went out.
struct Request {
    result: Result<u64, u64>,
    calls: Vec<f64>,
}

/// Sends one request through `retry_with_budget`. `fails(n)` says whether the request's call
/// number `n` (from 1) fails; `total` counts calls across requests and names each error.
async fn send(
    budget: &RetryBudget,
    attempts: u32,
    total: &mut u64,
    fails: impl Fn(u32) -> bool,
) -> Request {
    let mut calls = Vec::new();
    let op = || -> Ready<Result<u64, u64>> {
        calls.push(tokens(budget));
        *total += 1;
        let number = calls.len() as u32;
        ready(if fails(number) {
            Err(*total)
        } else {
            Ok(*total)
        })
    };
    let result = retry_with_budget(op, attempts, budget).await;
    Request { result, calls }
}

/// Records `failures` failures on `budget` (built with `max_tokens`), and fails with a message
/// about the budget's own rules unless it then holds `max_tokens - failures` tokens: a check of
/// the loop means nothing on a budget that does not count.
fn drain(budget: &RetryBudget, max_tokens: f64, failures: u32) {
    for _ in 0..failures {
        apply(budget, Event::Failure);
    }
    let (held, expected) = (tokens(budget), max_tokens - f64::from(failures));
    assert!(
        (held - expected).abs() < 0.000_5,
        "before the request: RetryBudget::new({max_tokens}, 0.1) after {failures} failure(s) \
         should hold {expected:.3} tokens; yours holds {held:.3}. The loop's checks need the \
         budget's own rules first (a failure takes one token): see \
         budget.failure_costs_one_token",
    );
}

/// Whether a fresh `RetryBudget::new(10, 0.1)` brought to exactly 5 tokens allows a retry.
fn budget_at_half() -> bool {
    let fresh = budget(10.0, 0.1);
    for _ in 0..5 {
        apply(&fresh, Event::Failure);
    }
    fresh.can_retry()
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[tokio::test]
async fn outage_stays_within_budget() {
    let budget = budget(10.0, 0.1);
    let mut total = 0;
    for request in 1..=REQUESTS {
        let sent = send(&budget, ATTEMPTS, &mut total, |_| true).await;
        if let Some(held) = sent.calls.iter().skip(1).find(|&&held| held <= 5.0) {
            // Which pitfall: a budget that says yes at exactly half, or a loop that asks first.
            let at_half = budget_at_half();
            let why = if at_half {
                "your can_retry() says yes at exactly 5 tokens: a retry needs a count strictly \
                 above max_tokens / 2 (pitfall \"`>=` instead of `>` at the threshold\")"
            } else {
                "the failure that triggers a retry counts first: call on_failure(), then ask \
                 can_retry() (pitfall \"Asking before recording the failure\")"
            };
            panic!(
                "in a full outage with RetryBudget::new(10, 0.1), request {request} sent a retry \
                 while the budget held {held:.3} tokens; a retry is allowed only while the count \
                 is above 5 (max_tokens / 2), and {why}"
            );
        }
        assert!(
            sent.result.is_err(),
            "request {request} returned {:?} from a service that fails every call",
            sent.result,
        );
    }
    let left = tokens(&budget);
    let why = if !(0.0..=10.0).contains(&left) {
        format!(
            "your budget now holds {left:.3} tokens, outside [0, 10]: a failure on an empty \
             budget must leave 0 (pitfall \"No floor on failures\": an unsigned count wraps \
             around below zero)"
        )
    } else if (left - 10.0).abs() < 0.000_5 {
        "your budget still holds all 10 tokens after 1,000 failed requests: record every \
         failure with on_failure(), which takes one token"
            .to_owned()
    } else if total >= 3 * u64::from(REQUESTS) {
        "no retry was ever refused: after each failure, ask can_retry() before retrying".to_owned()
    } else if total <= u64::from(REQUESTS) + 10 {
        "a few retries too many: record every failure, the last one of each request included, \
         before asking can_retry() (pitfalls \"Asking before recording the failure\" and \
         \"Recording only failures that are retried\"), and keep the per-request cap (\"The \
         budget replaces the per-request cap\")"
            .to_owned()
    } else {
        "ask can_retry() after every failure, once that failure is recorded".to_owned()
    };
    assert!(
        total <= u64::from(REQUESTS) + 3,
        "in a full outage, 1,000 requests with attempts = 3 and RetryBudget::new(10, 0.1) should \
         reach the service 1,003 times: 1,000 first attempts and 3 retries, made while failures \
         drain the count from 10 to 5 (a per-request cap alone makes 3,000). Yours made {} \
         calls ({:.2}× the requests): {why}",
        thousands(total),
        total as f64 / f64::from(REQUESTS),
    );
    assert!(
        left.abs() < 0.000_5,
        "after 1,000 failed requests the budget should be empty (0.000 tokens); yours holds \
         {left:.3}: report every failure with on_failure()",
    );
}

#[tokio::test]
async fn health_never_refuses() {
    let budget = budget(10.0, 0.1);
    let mut total = 0;
    let mut failing_requests = 0;
    for request in 1..=REQUESTS {
        // A burst of four failing requests at the start, then one request in twenty fails once;
        // every retry succeeds.
        let fails_once = request <= 4 || (request > 20 && request % 20 == 7);
        if fails_once {
            failing_requests += 1;
        }
        let sent = send(&budget, ATTEMPTS, &mut total, |call| {
            fails_once && call == 1
        })
        .await;
        if let Err(error) = sent.result {
            let held = tokens(&budget);
            panic!(
                "in health no retry may be refused: with RetryBudget::new(10, 0.1), a burst of 4 \
                 failing requests and then one request in twenty failing once (each retry \
                 succeeds) never brings the count below 6.3 tokens, so every failed call can be \
                 retried. \
                 Yours gave up on request {request} with Err({error}) after {} call(s); your \
                 budget now holds {held:.3} tokens",
                sent.calls.len(),
            );
        }
    }
    let expected = u64::from(REQUESTS) + failing_requests;
    assert_eq!(
        total,
        expected,
        "1,000 requests of which {failing_requests} fail once should make {} calls (one retry \
         each for the failing ones); yours made {}",
        thousands(expected),
        thousands(total),
    );
}

#[tokio::test]
async fn reports_every_outcome() {
    // (attempts, what the request's calls do, the calls it should make, the count after it)
    let script: [(u32, &[bool], usize, f64, &str); 9] = [
        (ATTEMPTS, &[true, true, true], 3, 7.0, "three failed calls"),
        (
            ATTEMPTS,
            &[true, false],
            2,
            6.1,
            "a failure, then a success",
        ),
        (ATTEMPTS, &[false], 1, 6.2, "a success at once"),
        (
            ATTEMPTS,
            &[true, true, true],
            2,
            4.2,
            "two failures, then a refused retry",
        ),
        (ATTEMPTS, &[false], 1, 4.3, "a success at once"),
        // A request that may not retry still reports: its outcome is traffic the budget counts.
        (1, &[true], 1, 3.3, "one failed call, no retry allowed"),
        (0, &[false], 1, 3.4, "a success, attempts = 0 read as 1"),
        (1, &[false], 1, 3.5, "a success, no retry allowed"),
        (0, &[true], 1, 2.5, "a failure, attempts = 0 read as 1"),
    ];
    let budget = budget(10.0, 0.1);
    let mut total = 0;
    for (request, &(attempts, plan, calls, expected, what)) in (1..).zip(&script) {
        // A call the script does not plan (a loop that calls too often) fails.
        let sent = send(&budget, attempts, &mut total, |call| {
            plan.get(call as usize - 1).copied().unwrap_or(true)
        })
        .await;
        let held = tokens(&budget);
        let why = if sent.calls.len() != calls {
            "The number of calls is off: after a failure, record it first and then ask \
             can_retry() (pitfall \"Asking before recording the failure\"), retry only while \
             attempts remain (\"The budget replaces the per-request cap\"), and stop at the \
             first Ok"
        } else {
            "The calls are right and the count is not: report every outcome to the budget, \
             on_success() for an Ok and on_failure() for every Err, the last one included, also \
             for a request that may not retry (pitfall \"Recording only failures that are \
             retried, or never successes\")"
        };
        assert!(
            sent.calls.len() == calls && (held - expected).abs() < 0.000_5,
            "with one RetryBudget::new(10, 0.1) for every request, request {request} (attempts = \
             {attempts}, {what}) should make {calls} call(s) and leave {expected:.3} tokens; \
             yours made {} call(s) and left {held:.3}. {why}",
            sent.calls.len(),
        );
    }
}

#[tokio::test]
async fn asks_before_each_retry() {
    // (max_tokens, failures recorded before the request, attempts, calls expected, why)
    let cases = [
        (
            10.0,
            5,
            5,
            1,
            "5.000 tokens: not above 5, so no retry at all",
        ),
        (
            10.0,
            3,
            10,
            2,
            "7.000 tokens: the first failure leaves 6 (retry), the second 5 (refused)",
        ),
        (
            10.0,
            0,
            10,
            5,
            "10.000 tokens: retries while 9, 8, 7, 6 are left; refused at 5",
        ),
        // A budget of 1,000 tokens and a request allowed 1,000 attempts: the budget stops it
        // after 500 calls, not a limit of 10 or 100 calls of the loop's own.
        (
            1_000.0,
            0,
            1_000,
            500,
            "1,000.000 tokens (max_tokens = 1,000): retries while 999 … 501 are left; refused \
             at 500",
        ),
        // 2^16 + 3 attempts are 65,539, not the 3 that a count compared as u16 sees.
        (
            1_000.0,
            0,
            (1 << 16) + 3,
            500,
            "1,000.000 tokens (max_tokens = 1,000): retries while 999 … 501 are left; refused \
             at 500",
        ),
    ];
    for (max_tokens, drained, attempts, expected, why) in cases {
        let budget = budget(max_tokens, 0.1);
        drain(&budget, max_tokens, drained);
        let mut total = 0;
        let sent = send(&budget, attempts, &mut total, |_| true).await;
        assert!(
            sent.calls.len() == expected && sent.result == Err(total),
            "ask the budget after every failure: a request to a failing service with attempts = \
             {attempts}, starting from {why}, should make {expected} call(s) and return the last \
             error, Err({expected}); yours made {} call(s) and returned {:?}",
            sent.calls.len(),
            sent.result,
        );
    }
}

#[tokio::test]
async fn attempts_still_capped() {
    // (attempts, does every call fail, calls expected)
    let cases = [
        (3, true, 3),
        (1, true, 1),
        (0, true, 1),
        (3, false, 1),
        (2, true, 2),
    ];
    for (attempts, failing, expected) in cases {
        let budget = budget(10.0, 0.1);
        let mut total = 0;
        let sent = send(&budget, attempts, &mut total, |_| failing).await;
        let service = if failing {
            "a failing service"
        } else {
            "a healthy service"
        };
        let result = if failing { Err(total) } else { Ok(1) };
        assert!(
            sent.calls.len() == expected && sent.result == result,
            "the budget adds a limit, it does not replace the per-request cap: with a full \
             budget, attempts = {attempts} and {service}, the request should make {expected} \
             call(s) and return {result:?}; yours made {} call(s) and returned {:?}",
            sent.calls.len(),
            sent.result,
        );
    }
}

/// One request on tokio's paused clock against a service that fails every call: how long after
/// its last call the loop returned, and how many calls it made.
async fn timed_outage_request(budget: &RetryBudget, attempts: u32) -> (u64, std::time::Duration) {
    let last_call = std::cell::Cell::new(tokio::time::Instant::now());
    let calls = std::cell::Cell::new(0u64);
    let op = || {
        last_call.set(tokio::time::Instant::now());
        calls.set(calls.get() + 1);
        ready(Err::<(), u64>(calls.get()))
    };
    let _ = retry_with_budget(op, attempts, budget).await;
    (calls.get(), last_call.get().elapsed())
}

#[tokio::test(start_paused = true)]
async fn refusal_returns_at_once() {
    // (failures recorded before the request, attempts, calls expected, why the loop stops)
    let cases = [
        (
            5,
            3,
            1,
            "the budget holds 5.000 tokens and refuses the retry",
        ),
        (
            3,
            3,
            2,
            "the budget refuses the second retry at 5.000 tokens",
        ),
        (
            0,
            3,
            3,
            "the attempts run out while the budget still allows retries",
        ),
    ];
    for (drained, attempts, expected, why) in cases {
        let budget = budget(10.0, 0.1);
        drain(&budget, 10.0, drained);
        let (calls, waited) = timed_outage_request(&budget, attempts).await;
        assert!(
            calls == expected && waited.is_zero(),
            "a refused retry is not postponed: the failure goes back to the caller at once, \
             without waiting for tokens (A6). With attempts = {attempts} against a service that \
             fails every call, {why}: the request should make {expected} call(s) and return the \
             moment the last one fails; yours made {calls} call(s) and returned {} after it \
             (virtual time)",
            super::support::show(waited),
        );
    }
}
