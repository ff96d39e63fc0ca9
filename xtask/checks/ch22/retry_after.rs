//! Checks that a server's Retry-After is honoured, within the step's budget.

use std::time::Duration;

use exercise::{CancelToken, OnExhausted, Saga, StepPolicy, StepStatus};

use super::fixture::{Act, MS, Recorder, SEC, TICK, policy, run, run_with};
use super::support::{gaps, show, show_all};

#[tokio::test(start_paused = true)]
async fn honoured() {
    // A hint longer than the cap is still honoured: the server knows best, and it fits the budget.
    // The last case is long (2 days, under max_hint 7 days and a 30-day budget): it is slept as
    // given, not clamped to a minute, an hour or a day.
    let day = Duration::from_secs(86_400);
    let cases = [
        (1_500 * MS, 10 * SEC, 60 * SEC),
        (5 * SEC, 10 * SEC, 60 * SEC),
        (2 * day, 7 * day, 30 * day),
    ];
    for (hint, max_hint, budget) in cases {
        for seed in 0..5 {
            let step = Recorder::scripted("payment", [Act::RetryAfter(hint), Act::Ok]);
            let policy = StepPolicy {
                base: 100 * MS,
                cap: SEC,
                total_budget: budget,
                max_hint,
                on_exhausted: OnExhausted::Stop,
                ..policy()
            };
            let saga = Saga::new("order-1").step(step.clone(), policy);
            let limit = budget + 3_600 * SEC;
            let run = run_with(&saga, seed, &CancelToken::new(), limit)
                .await
                .unwrap_or_else(|| {
                    panic!(
                        "the first attempt failed with `Retry-After: {}` and the second \
                         succeeds; your saga was still running after {} of virtual time",
                        show(hint),
                        show(limit),
                    )
                });
            let gaps = gaps(&step.attempt_instants());
            let first = gaps.first().copied().unwrap_or_default();
            assert!(
                gaps.len() == 1 && first >= hint && first <= hint + TICK,
                "the first attempt failed with `Retry-After: {}` (base 100 ms, cap 1 s, max_hint \
                 {}, budget {}); the second attempt must come exactly {} later, the server's \
                 hint instead of a jittered backoff. Yours made {} attempt(s), with sleeps {} \
                 (seed {seed}; the saga ended {:?})",
                show(hint),
                show(max_hint),
                show(budget),
                show(hint),
                step.attempts(),
                show_all(&gaps, 4),
                run.status,
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn past_budget_gives_up() {
    for seed in 0..5 {
        let step = Recorder::scripted("payment", [Act::Transient, Act::RetryAfter(30 * SEC)]);
        let policy = StepPolicy {
            max_attempts: 5,
            base: 100 * MS,
            cap: SEC,
            total_budget: 10 * SEC,
            on_exhausted: OnExhausted::Stop,
            ..policy()
        };
        let saga = Saga::new("order-2").step(step.clone(), policy);
        let run = run(&saga, seed).await;
        let instants = step.attempt_instants();
        let last = instants.last().copied().unwrap_or(run.started);
        let record = &run.final_log().steps[0];
        assert!(
            step.attempts() == 2 && run.ended == last && record.status == StepStatus::Failed,
            "the second attempt failed with `Retry-After: 30 s` at {}, but the step's budget is \
             10 s: waiting 30 s would end past it, and coming back earlier would ignore the \
             server. Give up at once. Yours made {} attempt(s) (at {}), returned {} after the \
             last one, and left the step {:?}",
            show(run.at(instants.get(1).copied().unwrap_or(run.started))),
            step.attempts(),
            show_all(
                &instants.iter().map(|at| run.at(*at)).collect::<Vec<_>>(),
                6
            ),
            show(run.ended - last),
            record.status,
        );
    }
}

#[tokio::test(start_paused = true)]
async fn capped_at_max_hint() {
    // A hint longer than max_hint (10 s) is followed for 10 s, when the uncapped hint fits the
    // budget; when it does not, the step gives up at once, although the capped wait would fit.
    let cases = [
        (20 * SEC, 60 * SEC, Some(10 * SEC)),
        (10 * SEC, 60 * SEC, Some(10 * SEC)),
        (20 * SEC, 15 * SEC, None),
    ];
    for (hint, budget, expected) in cases {
        let step = Recorder::scripted("payment", [Act::RetryAfter(hint), Act::Ok]);
        let policy = StepPolicy {
            total_budget: budget,
            max_hint: 10 * SEC,
            on_exhausted: OnExhausted::Stop,
            ..policy()
        };
        let saga = Saga::new("order-3").step(step.clone(), policy);
        let run = run(&saga, 3).await;
        let gaps = gaps(&step.attempt_instants());
        let ok = match expected {
            Some(wait) => gaps.len() == 1 && gaps[0] >= wait && gaps[0] <= wait + TICK,
            None => step.attempts() == 1 && run.ended == step.attempt_instants()[0],
        };
        assert!(
            ok,
            "the first attempt failed with `Retry-After: {}`; max_hint is 10 s and the budget {}. \
             A hint is followed for at most max_hint (chapter 11: a bad header must not park the \
             step for a day), and the budget sees the hint as the server sent it: {}. Yours made \
             {} attempt(s), with waits {} (the saga ended {:?})",
            show(hint),
            show(budget),
            match expected {
                Some(wait) => format!("the second attempt must come {} later", show(wait)),
                None => "the server will not be ready in time, so give up at once".to_owned(),
            },
            step.attempts(),
            show_all(&gaps, 4),
            run.status,
        );
    }
}
