//! Checks of the hand-over: a compensation that keeps failing goes to a human, within its limit,
//! and the other completed steps are still undone.

use exercise::CompensationPolicy;
use exercise::ErrorKind::{Permanent, Transient};

use super::fixture::{
    GUARD_CALLS, Kind, compensated, error_message, fails, list, ok, policy, run, run_saga, stuck,
};
use super::support::show;

#[tokio::test(start_paused = true)]
async fn gives_up_after_max_attempts() {
    let steps = [
        ok("inventory"),
        ok("payment").compensation_stuck(Transient),
        fails("shipping", Permanent),
    ];
    // 300: beyond the caps a loop might hide (10, 100, a u8 counter's 255).
    for max_attempts in [4, 1, 2, 300] {
        let policy = CompensationPolicy {
            max_attempts,
            ..policy()
        };
        let run = run_saga("order-21", &steps, 7, policy).await;
        let refunds = run.count("payment", Kind::Compensate);
        assert!(
            run.outcome.is_some(),
            "payment's compensation fails every time; with max_attempts = {max_attempts} the \
             orchestrator must give up after {max_attempts} call(s) and hand the saga to a \
             human; yours was still retrying after {} of virtual time, having called it \
             {refunds} times: a compensation's retries need a limit",
            show(run.returned),
        );
        assert!(
            refunds == max_attempts as usize,
            "payment's compensation fails every time with a transient error; with max_attempts \
             = {max_attempts} it must be called exactly {max_attempts} time(s) (the first attempt \
             included) before the saga goes to a human; yours called it {refunds} time(s){} and \
             ended {}",
            if refunds as u32 > GUARD_CALLS {
                format!(" (the check stopped failing it after {GUARD_CALLS} calls)")
            } else {
                String::new()
            },
            run.outcome_text(),
        );
        let last_error = error_message("payment", Kind::Compensate, max_attempts);
        let named = stuck(&run.outcome).is_some_and(|stuck| {
            stuck.len() == 1
                && stuck[0].step == "payment"
                && stuck[0].error.message == last_error
                && stuck[0].error.kind == Transient
        });
        assert!(
            named,
            "a compensation that keeps failing is handed to a human: the saga must end \
             SagaOutcome::NeedsHuman naming the stuck step and its last error, stuck = [payment \
             (transient error {last_error:?})] (max_attempts = {max_attempts}); yours ended {}",
            run.outcome_text(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn keeps_undoing_others() {
    let one_stuck = [
        ok("inventory"),
        ok("payment"),
        ok("shipping").compensation_stuck(Transient),
        fails("invoice", Permanent),
    ];
    let two_stuck = [
        ok("inventory").compensation_stuck(Permanent),
        ok("payment"),
        ok("shipping").compensation_stuck(Transient),
        fails("invoice", Permanent),
    ];
    let cases = [
        (
            "shipping's compensation keeps failing",
            &one_stuck[..],
            vec!["shipping"],
            vec!["payment", "inventory"],
        ),
        (
            "shipping's compensation keeps failing and inventory's fails permanently",
            &two_stuck[..],
            vec!["shipping", "inventory"],
            vec!["payment"],
        ),
    ];
    for (story, steps, expected_stuck, expected_undone) in cases {
        let run = run(steps, 8).await;
        let order = run.compensation_order();
        let reached = ["shipping", "payment", "inventory"];
        let only = if order.len() < reached.len() {
            "only "
        } else {
            ""
        };
        assert!(
            order == reached,
            "invoice failed and {story}: a stuck compensation must not stop the others; every \
             completed step must still be compensated, newest first, {}, before the saga goes to \
             a human; yours compensated {only}{}",
            list(&reached),
            list(&order),
        );
        let stuck_names: Option<Vec<&str>> =
            stuck(&run.outcome).map(|stuck| stuck.iter().map(|s| s.step.as_str()).collect());
        assert!(
            stuck_names.as_ref() == Some(&expected_stuck)
                && compensated(&run.outcome).is_some_and(|names| names == &expected_undone),
            "invoice failed and {story}: the saga must end SagaOutcome::NeedsHuman with stuck = \
             {} and compensated = {}, so the human knows what is left to do; yours ended {}",
            list(&expected_stuck),
            list(&expected_undone),
            run.outcome_text(),
        );
    }
}
