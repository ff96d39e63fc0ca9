//! Checks of `retry_immediately`'s call counts: exactly `1 + max_retries` calls on a permanent
//! failure, `k + 1` when the service recovers after `k` failures, one call when `max_retries = 0`,
//! and never a call after an `Ok`. Also home of the scripted service the other checks use.

use std::time::Instant;

use exercise::retry_immediately;

use super::support::catch;

/// A loop still calling after this many calls is taken to never give up.
const CALL_LIMIT: u32 = 200_000;

/// The panic the service raises to stop a loop that never gives up.
const RUNAWAY: &str = "the retry loop never gave up";

/// `1 call`, `3 calls`: a count with its noun, for messages.
pub fn count(n: u32, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// How a service that fails its first `failures` calls is described in messages.
fn recovering(failures: u32) -> String {
    match failures {
        0 => "a service that answers at once".to_owned(),
        1 => "a service that fails its first call, then answers".to_owned(),
        _ => format!("a service that fails its first {failures} calls, then answers"),
    }
}

/// A scripted service: call `n` (counted from 1) answers `Ok(n)` when `succeeds(n)`, else `Err(n)`.
///
/// It remembers when (in real time) each call came, and stops a runaway loop with a panic after
/// [`CALL_LIMIT`] calls, so a loop that never gives up fails with a message instead of hanging.
pub struct Service {
    succeeds: Box<dyn Fn(u32) -> bool>,
    calls: u32,
    instants: Vec<Instant>,
}

impl Service {
    fn new(succeeds: impl Fn(u32) -> bool + 'static) -> Self {
        Self {
            succeeds: Box::new(succeeds),
            calls: 0,
            instants: Vec::new(),
        }
    }

    /// Fails the first `failures` calls, then answers every call.
    pub fn failing_first(failures: u32) -> Self {
        Self::new(move |call| call > failures)
    }

    /// A permanent failure: every call fails.
    pub fn always_failing() -> Self {
        Self::new(|_| false)
    }

    /// Answers only call number `call`; every call before and after it fails.
    pub fn succeeding_only_at(call: u32) -> Self {
        Self::new(move |n| n == call)
    }

    fn call(&mut self) -> Result<u32, u32> {
        self.calls += 1;
        if self.calls > CALL_LIMIT {
            panic!("{RUNAWAY}");
        }
        self.instants.push(Instant::now());
        if (self.succeeds)(self.calls) {
            Ok(self.calls)
        } else {
            Err(self.calls)
        }
    }

    /// When each call came, in real time.
    pub fn instants(&self) -> &[Instant] {
        &self.instants
    }
}

/// One call of the learner's `retry_immediately` against a scripted service.
pub struct Run {
    max_retries: u32,
    outcome: Result<Result<u32, u32>, String>,
    pub service: Service,
}

/// Runs `retry_immediately(max_retries, …)` against `service`, catching a panic of the graded code.
pub fn run(max_retries: u32, mut service: Service) -> Run {
    let outcome = catch(|| retry_immediately(max_retries, || service.call()));
    Run {
        max_retries,
        outcome,
        service,
    }
}

impl Run {
    /// What the loop returned. A panic, or a loop that never gave up, fails the check here with a
    /// message that starts with `setting` (what was being run).
    pub fn result(&self, setting: &str) -> Result<u32, u32> {
        match &self.outcome {
            Ok(result) => *result,
            Err(message) if message == RUNAWAY => panic!(
                "{setting}, your loop never gave up: it was still calling after 200 000 calls. \
                 Count the retries and stop after the call that leaves none: 1 + max_retries \
                 calls at most"
            ),
            Err(message) if message.contains("overflow") => panic!(
                "{setting}, retry_immediately panicked after {}: {message}{}",
                count(self.calls(), "call"),
                overflow_cause(message, self.max_retries, self.calls())
            ),
            Err(message) => panic!("{setting}, retry_immediately panicked: {message}"),
        }
    }

    /// How many times the loop called the service.
    pub fn calls(&self) -> u32 {
        self.service.calls.min(CALL_LIMIT)
    }
}

/// What an overflow panic (`message`) after `calls` calls with `max_retries` points to, judged
/// from the operation that overflowed and when; empty when nothing fits.
fn overflow_cause(message: &str, max_retries: u32, calls: u32) -> &'static str {
    if message.contains("subtract") {
        ". A subtraction went below zero: with a budget as small as this, max_retries - 1 or \
         calls - retries does not exist. Compare counts instead (is retries below max_retries?) \
         (§1.4)"
    } else if max_retries == u32::MAX && calls <= 2 {
        // Only a sum computed from the budget itself overflows this early: max_retries + 1.
        ". A sum overflowed before the first retry: with max_retries = u32::MAX, max_retries + 1 \
         does not exist. Ask \"is a retry left?\" (retries < max_retries) before spending one, \
         and no number in the loop ever passes max_retries (§1.4)"
    } else if calls > u32::from(u8::MAX) && calls <= max_retries {
        ". Your counter ran out of room long before the budget: a counter narrower than the u32 \
         budget (a u8 stops at 255, a u16 at 65,535) must count to any u32 (§1.4)"
    } else {
        ""
    }
}

#[test]
fn permanent_failure() {
    // 70 000 is past what a `u16` counts: any `u32` is a valid budget.
    for max_retries in [0, 1, 2, 3, 5, 10, 100, 300, 70_000] {
        let setting = format!("with max_retries = {max_retries} and a service that always fails");
        let run = run(max_retries, Service::always_failing());
        let result = run.result(&setting);
        let expected = max_retries + 1;
        assert!(
            run.calls() == expected && result.is_err(),
            "{setting}, the operation must be called exactly {} (1 + max_retries: the first \
             call, then one per retry) before the error is returned; yours called it {} and \
             returned {result:?}",
            count(expected, "time"),
            count(run.calls(), "time"),
        );
    }
}

#[test]
fn recovers_after_k() {
    for (failures, max_retries) in [
        (0, 2),
        (1, 2),
        (2, 2),
        (1, 5),
        (4, 10),
        (9, 9),
        (0, u32::MAX),
        (4, u32::MAX),
        (70_000, u32::MAX),
    ] {
        let setting = format!(
            "with max_retries = {max_retries} and {}",
            recovering(failures)
        );
        let run = run(max_retries, Service::failing_first(failures));
        let result = run.result(&setting);
        let answer = failures + 1;
        assert!(
            result == Ok(answer) && run.calls() == answer,
            "{setting}, the loop must return Ok({answer}) after exactly {} ({}, each followed \
             at once by a retry, then the answer); yours returned {result:?} after {}",
            count(answer, "call"),
            count(failures, "failure"),
            count(run.calls(), "call"),
        );
    }
    // One failure more than the retries cover: the answer would come one call too late.
    let setting = format!("with max_retries = 2 and {}", recovering(3));
    let run = run(2, Service::failing_first(3));
    let result = run.result(&setting);
    assert!(
        result == Err(3) && run.calls() == 3,
        "{setting}, the service would answer on call 4, but two retries end at call 3: the loop \
         must give up there and return Err(3); yours returned {result:?} after {}",
        count(run.calls(), "call"),
    );
}

#[test]
fn zero_retries() {
    let cases = [
        (
            "a service that always fails",
            Service::always_failing(),
            Err(1),
        ),
        (
            "a service that answers at once",
            Service::failing_first(0),
            Ok(1),
        ),
        (
            "a service that would answer on its second call",
            Service::failing_first(1),
            Err(1),
        ),
    ];
    for (service_name, service, expected) in cases {
        let setting = format!("with max_retries = 0 and {service_name}");
        let run = run(0, service);
        let result = run.result(&setting);
        assert!(
            result == expected && run.calls() == 1,
            "{setting}, the operation must be called exactly once (no retries at all) and its \
             result returned, {expected:?}; yours called it {} and returned {result:?}",
            count(run.calls(), "time"),
        );
    }
}

#[test]
fn stops_after_success() {
    let cases = [
        (
            3,
            "a service that answers every call",
            Service::failing_first(0),
            1,
        ),
        (
            5,
            "a service that answers only call 1",
            Service::succeeding_only_at(1),
            1,
        ),
        (
            10,
            "a service that answers only call 3",
            Service::succeeding_only_at(3),
            3,
        ),
    ];
    for (max_retries, service_name, service, answered) in cases {
        let setting = format!("with max_retries = {max_retries} and {service_name}");
        let run = run(max_retries, service);
        let result = run.result(&setting);
        assert!(
            result == Ok(answered) && run.calls() == answered,
            "{setting}, the loop must return Ok({answered}) as soon as call {answered} answers \
             and never call again: a retry after a success is pure extra load; yours made {} \
             and returned {result:?}",
            count(run.calls(), "call"),
        );
    }
}
