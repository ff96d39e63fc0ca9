//! Checks that a step never runs past its total budget.

use exercise::{OnExhausted, Saga, StepPolicy};

use super::fixture::{Act, MS, Recorder, SEC, policy, run};
use super::support::{show, show_all};

#[tokio::test(start_paused = true)]
async fn no_attempt_after_budget() {
    let budget = 5 * SEC;
    let policy = StepPolicy {
        max_attempts: 50,
        base: 200 * MS,
        cap: 2 * SEC,
        per_attempt_timeout: SEC,
        total_budget: budget,
        max_hint: 10 * SEC,
        on_exhausted: OnExhausted::Stop,
    };
    for seed in 0..30 {
        let step = Recorder::slow("shipping", 300 * MS, [Act::Transient]);
        let saga = Saga::new("order-1").step(step.clone(), policy.clone());
        let run = run(&saga, seed).await;
        let starts: Vec<_> = step
            .attempt_instants()
            .iter()
            .map(|at| run.at(*at))
            .collect();
        let late = starts.iter().copied().find(|start| *start > budget);
        let took = run.at(run.ended);
        assert!(
            late.is_none() && took <= budget,
            "a step with a 5 s budget (attempts of 300 ms that always fail, up to 50 of them, \
             full jitter from 200 ms to 2 s) must be over within 5 s: no attempt may start \
             after it, and a sleep that would end past it must not be started. Yours started \
             attempts at {} and ended the step after {} (seed {seed})",
            show_all(&starts, 12),
            show(took),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn timeout_cut_to_remaining() {
    let budget = 10 * SEC;
    let policy = StepPolicy {
        max_attempts: 10,
        base: 100 * MS,
        cap: SEC,
        per_attempt_timeout: 4 * SEC,
        total_budget: budget,
        max_hint: 10 * SEC,
        on_exhausted: OnExhausted::Stop,
    };
    for seed in 0..20 {
        let step = Recorder::scripted("payment", [Act::Hang]);
        let saga = Saga::new("order-2").step(step.clone(), policy.clone());
        let run = run(&saga, seed).await;
        let starts: Vec<_> = step
            .attempt_instants()
            .iter()
            .map(|at| run.at(*at))
            .collect();
        let took = run.at(run.ended);
        assert!(
            took <= budget && step.attempts() >= 3,
            "every attempt of this step hangs; its timeout is 4 s and its budget 10 s, so the \
             third attempt (starting after about 8.1 s) must be cut off when the budget ends: \
             its timeout is min(4 s, what is left of the budget). Yours started attempts at \
             {} and ended the step after {} (seed {seed})",
            show_all(&starts, 6),
            show(took),
        );
    }
}
