//! Checks of the saga log, read while the saga runs: after each attempt, during each attempt,
//! and at the end.

use std::time::Duration;

use exercise::{
    Action, OnExhausted, Saga, SagaLog, SagaStatus, StepPolicy, StepRecord, StepStatus,
};
use tokio::time::Instant;

use super::fixture::{Act, MS, Recorder, Run, SEC, TICK, policy, run};
use super::support::show;

const LATENCY: Duration = Duration::from_millis(100);

fn stopping() -> StepPolicy {
    StepPolicy {
        max_attempts: 5,
        base: 200 * MS,
        cap: SEC,
        on_exhausted: OnExhausted::Stop,
        ..policy()
    }
}

/// The step's record as last seen strictly before `before`, with the instant it was seen.
fn seen_before(run: &Run, before: Instant) -> Option<(Instant, &StepRecord)> {
    run.snapshots
        .iter()
        .rfind(|(at, _)| *at < before)
        .map(|(at, log): &(Instant, SagaLog)| (*at, &log.steps[0]))
}

fn show_record(run: &Run, record: &StepRecord) -> String {
    format!(
        "status {:?}, attempt_count {}, next_retry_at {}, last_error {:?}",
        record.status,
        record.attempt_count,
        record.next_retry_at.map_or("None".to_owned(), |at| format!(
            "{} into the run",
            show(run.at(at))
        )),
        record.last_error,
    )
}

/// A payment step whose calls take 100 ms and fail three times before one succeeds.
async fn flaky_run(seed: u64) -> (std::sync::Arc<Recorder>, Run) {
    let step = Recorder::slow(
        "payment",
        LATENCY,
        [Act::Transient, Act::Transient, Act::Transient, Act::Ok],
    );
    let saga = Saga::new("order-1").step(step.clone(), stopping());
    let run = run(&saga, seed).await;
    (step, run)
}

#[tokio::test(start_paused = true)]
async fn between_attempts() {
    for seed in 0..10 {
        let (step, run) = flaky_run(seed).await;
        let calls = step.calls();
        assert_eq!(
            calls.len(),
            4,
            "the step fails three times, then succeeds: 4 attempts"
        );
        for (n, pair) in calls.windows(2).enumerate() {
            let attempt = n as u32 + 1;
            let failed_at = pair[0].at + LATENCY;
            let next_at = pair[1].at;
            // A full-jitter draw of exactly 0 ns starts the next attempt at the instant of the
            // failure, with no moment in between to read the log. A correct solution draws it
            // with probability 1/(ceiling in ns + 1) per wait; over these 30 waits (ceilings
            // 200, 400 and 800 ms) that failed it with probability 8.8e-8, about 1 in 10^7.
            // Skipping such a wait, a correct solution never fails here; the three mutants this
            // check names are caught at every other wait.
            if next_at == failed_at {
                continue;
            }
            let Some((seen_at, record)) =
                seen_before(&run, next_at).filter(|(at, _)| *at >= failed_at)
            else {
                panic!(
                    "attempt {attempt} failed at {}, and attempt {} started at {}; in between, \
                     the log must say the step is waiting, but yours did not change after the \
                     failure (seed {seed})",
                    show(run.at(failed_at)),
                    attempt + 1,
                    show(run.at(next_at)),
                );
            };
            let next_ok = record
                .next_retry_at
                .is_some_and(|due| due <= next_at && next_at <= due + TICK);
            assert!(
                record.status == StepStatus::Retrying
                    && record.attempt_count == attempt
                    && next_ok
                    && record.last_error == pair[0].error,
                "between attempt {attempt} (failed at {}) and attempt {} (started at {}), the \
                 step's record must say: status Retrying, attempt_count {attempt}, \
                 next_retry_at = when attempt {} starts ({} into the run), last_error = {:?}. \
                 Write all four after the failure and before the sleep. At {} yours said: {} \
                 (seed {seed})",
                show(run.at(failed_at)),
                attempt + 1,
                show(run.at(next_at)),
                attempt + 1,
                show(run.at(next_at)),
                pair[0].error,
                show(run.at(seen_at)),
                show_record(&run, record),
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn during_attempt() {
    for seed in 0..10 {
        let (step, run) = flaky_run(seed).await;
        for (n, call) in step.calls().iter().enumerate() {
            let attempt = n as u32 + 1;
            let answer_at = call.at + LATENCY;
            let seen = seen_before(&run, answer_at).filter(|(at, _)| *at >= call.at);
            let Some((_, record)) = seen else {
                panic!(
                    "attempt {attempt} ran from {} to {}; the log must say so while it runs, \
                     but yours did not change when it started (seed {seed})",
                    show(run.at(call.at)),
                    show(run.at(answer_at)),
                );
            };
            assert!(
                record.status == StepStatus::Running
                    && record.attempt_count == attempt
                    && record.next_retry_at.is_none(),
                "while attempt {attempt} is in flight (from {}), the step's record must say: \
                 status Running, attempt_count {attempt} (counted before the call, so a crash \
                 mid-call leaves the truth behind), next_retry_at None (no retry is scheduled). \
                 Yours said: {} (seed {seed})",
                show(run.at(call.at)),
                show_record(&run, record),
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn final_fields() {
    let (flaky, succeeded) = flaky_run(1).await;
    let record = &succeeded.final_log().steps[0];
    let kept = flaky.calls().get(2).and_then(|call| call.error.clone());
    assert!(
        record.status == StepStatus::Succeeded
            && record.attempt_count == 4
            && record.next_retry_at.is_none()
            && record.last_error == kept,
        "a step that succeeds on its 4th attempt must end with status Succeeded, attempt_count \
         4, next_retry_at None, and keep the 3rd attempt's error {kept:?} in last_error (the \
         record of what happened); yours ended with {}",
        show_record(&succeeded, record),
    );

    let step = Recorder::slow("payment", LATENCY, [Act::Transient]);
    let policy = StepPolicy {
        max_attempts: 3,
        ..stopping()
    };
    let saga = Saga::new("order-2").step(step.clone(), policy);
    let run = run(&saga, 2).await;
    let record = &run.final_log().steps[0];
    let last_error = step.calls().last().and_then(|call| call.error.clone());
    assert!(
        record.status == StepStatus::Failed
            && record.attempt_count == 3
            && record.next_retry_at.is_none()
            && record.last_error == last_error
            && record.idempotency_key.is_some(),
        "a step that fails all 3 of its attempts must end with status Failed, attempt_count 3, \
         next_retry_at None (nothing is scheduled), last_error = the last attempt's {:?}, and \
         its idempotency key; yours ended with {} and key {:?}",
        last_error,
        show_record(&run, record),
        record.idempotency_key,
    );
}

#[tokio::test(start_paused = true)]
async fn compensation_logged() {
    // Shipping fails for good; payment's refund fails twice (100 ms calls), then goes through.
    let inventory = Recorder::slow("inventory", LATENCY, [Act::Ok]);
    let payment = Recorder::build(
        "payment",
        LATENCY,
        [Act::Transient, Act::Ok],
        [Act::Transient, Act::Transient, Act::Ok],
    );
    let shipping = Recorder::slow("shipping", LATENCY, [Act::Permanent]);
    let saga = Saga::new("order-3")
        .step(inventory.clone(), policy())
        .step(payment.clone(), policy())
        .step(shipping.clone(), policy());
    let run = run(&saga, 3).await;
    let executing = inventory.calls_of(Action::Execute)[0].at;
    let while_running: Vec<SagaStatus> = run
        .snapshots
        .iter()
        .filter(|(at, _)| *at >= executing && *at < executing + LATENCY)
        .map(|(_, log)| log.status)
        .collect();
    assert!(
        !while_running.is_empty()
            && while_running
                .iter()
                .all(|status| *status == SagaStatus::Running),
        "while the steps run, the saga's own status in the log must be Running; during \
         inventory's attempt yours said {while_running:?}",
    );
    let refunds = payment.calls_of(Action::Compensate);
    assert!(
        refunds.len() == 3,
        "payment's compensation fails twice, then succeeds: 3 compensation attempts expected, \
         yours made {}",
        refunds.len(),
    );
    for (n, call) in refunds.iter().enumerate() {
        let attempt = n as u32 + 1;
        let during = run
            .snapshots
            .iter()
            .rfind(|(at, _)| *at >= call.at && *at < call.at + LATENCY)
            .map(|(_, log)| log.clone());
        let Some(log) = during else {
            panic!(
                "compensation attempt {attempt} of payment ran from {}; the log must say so \
                 while it runs, but yours did not change when it started",
                show(run.at(call.at)),
            );
        };
        let record = &log.steps[1];
        assert!(
            call.ctx.attempt == attempt
                && record.status == StepStatus::Compensating
                && record.attempt_count == attempt
                && record.next_retry_at.is_none()
                && log.status == SagaStatus::Compensating,
            "attempt_count counts the attempts of the current action: while compensation \
             attempt {attempt} of payment is in flight, its context must say attempt \
             {attempt} and its record: status Compensating, attempt_count {attempt} (counted \
             from 1 again, not after its 2 execution attempts), next_retry_at None; and the saga \
             itself Compensating. Yours: context attempt {}, record {}, saga {:?}",
            call.ctx.attempt,
            show_record(&run, record),
            log.status,
        );
    }
    for (n, pair) in refunds.windows(2).enumerate() {
        let attempt = n as u32 + 1;
        // A wait drawn as exactly 0 ns (probability 1/(ceiling in ns + 1): with ceilings of 100
        // and 200 ms, 1.5e-8 for these two waits) leaves no moment between the attempts to
        // read; skipped, a correct solution never fails here.
        if pair[1].at == pair[0].at + LATENCY {
            continue;
        }
        let waiting = run
            .snapshots
            .iter()
            .rfind(|(at, _)| *at >= pair[0].at + LATENCY && *at < pair[1].at)
            .map(|(_, log)| log.steps[1].clone());
        let ok = waiting.as_ref().is_some_and(|record| {
            record.status == StepStatus::Compensating
                && record.attempt_count == attempt
                && record
                    .next_retry_at
                    .is_some_and(|due| due <= pair[1].at && pair[1].at <= due + TICK)
                && record.last_error == pair[0].error
        });
        assert!(
            ok,
            "between compensation attempts {attempt} and {} of payment, its record must say: \
             status Compensating, attempt_count {attempt}, next_retry_at = when the next attempt \
             starts ({}), last_error = {:?}; yours said {}",
            attempt + 1,
            show(run.at(pair[1].at)),
            pair[0].error,
            waiting.map_or("nothing new".to_owned(), |record| show_record(
                &run, &record
            )),
        );
    }
}
