//! Checks of the saga log: each step's status at the end, while its compensation is in flight,
//! and the errors and attempts it records.

use exercise::ErrorKind::{Permanent, Transient};
use exercise::StepStatus::{
    self, Compensated, Compensating, CompensationFailed, Failed, Pending, Succeeded,
};

use super::fixture::{Kind, Spec, error_message, fails, ok, run, run_watched, statuses};
use super::support::show;

#[tokio::test(start_paused = true)]
async fn statuses_at_end() {
    let cases: [(&str, Vec<Spec>, Vec<StepStatus>); 5] = [
        (
            "all three steps succeed",
            vec![ok("inventory"), ok("payment"), ok("shipping")],
            vec![Succeeded, Succeeded, Succeeded],
        ),
        (
            "shipping fails and both compensations succeed",
            vec![ok("inventory"), ok("payment"), fails("shipping", Permanent)],
            vec![Compensated, Compensated, Failed],
        ),
        (
            "payment (step 2 of 4) fails",
            vec![
                ok("inventory"),
                fails("payment", Permanent),
                ok("shipping"),
                ok("invoice"),
            ],
            vec![Compensated, Failed, Pending, Pending],
        ),
        (
            "invoice fails and shipping's compensation keeps failing",
            vec![
                ok("inventory"),
                ok("payment"),
                ok("shipping").compensation_stuck(Transient),
                fails("invoice", Permanent),
            ],
            vec![Compensated, Compensated, CompensationFailed, Failed],
        ),
        (
            "invoice fails, inventory's compensation is refused and shipping's keeps failing",
            vec![
                ok("inventory").compensation_stuck(Permanent),
                ok("payment"),
                ok("shipping").compensation_stuck(Transient),
                fails("invoice", Permanent),
            ],
            vec![CompensationFailed, Compensated, CompensationFailed, Failed],
        ),
    ];
    for (story, steps, expected) in cases {
        let run = run(&steps, 9).await;
        assert!(
            run.statuses() == expected,
            "when {story}, the log must end with the statuses {} (one per step, in order); \
             yours ends with {}",
            statuses(&expected),
            statuses(&run.statuses()),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn compensating_in_flight() {
    let steps = [
        ok("inventory"),
        ok("payment").compensation_fails(2, Transient),
        fails("shipping", Permanent),
    ];
    let run = run(&steps, 10).await;
    for (number, call) in run.calls_to("payment", Kind::Compensate).iter().enumerate() {
        let attempt = number as u32 + 1;
        let seen = &call.seen;
        assert!(
            seen.status == Compensating && seen.compensation_attempts == attempt,
            "while attempt {attempt} of payment's compensation was in flight, its log record \
             said status = {}, compensation_attempts = {}; it must say compensating, {attempt}: \
             write the record before the call, so a reader sees the compensation under way",
            seen.status,
            seen.compensation_attempts,
        );
    }
}

#[tokio::test(start_paused = true)]
async fn compensating_while_waiting() {
    // Payment's compensation fails 3 times, then succeeds on attempt 4 of 4: three waits, each
    // read on every 1 ms tick. Seed 17 draws waits of several ms each, so every wait is read.
    let steps = [
        ok("inventory"),
        ok("payment").compensation_fails(3, Transient),
        fails("shipping", Permanent),
    ];
    let (run, samples) = run_watched(&steps, 17, 1).await;
    let refunds = run.calls_to("payment", Kind::Compensate);
    let mut read = 0;
    for (number, pair) in refunds.windows(2).enumerate() {
        let failed = number as u32 + 1;
        let (from, to) = (pair[0].at, pair[1].at);
        let message = error_message("payment", Kind::Compensate, failed);
        // Strictly between the two calls the saga is asleep: nothing else can be under way.
        for sample in samples.iter().filter(|s| from < s.at && s.at < to) {
            read += 1;
            let seen = &sample.record;
            assert!(
                seen.status == Compensating
                    && seen.compensation_attempts == failed
                    && seen.last_error.as_deref() == Some(message.as_str()),
                "payment's compensation attempt {failed} failed at {} and attempt {} came at \
                 {}; while the next attempt was awaited, at {}, its log record said status = \
                 {}, compensation_attempts = {}, last_error = {:?}; it must say compensating, \
                 {failed} (the attempts started), last_error = {message:?}: a compensation whose \
                 next attempt is awaited is still under way, and each failure is in the log as \
                 soon as it happens",
                show(from),
                failed + 1,
                show(to),
                show(sample.at),
                seen.status,
                seen.compensation_attempts,
                seen.last_error,
            );
        }
    }
    assert!(
        read > 0,
        "payment's compensation fails 3 times with a transient error before it succeeds; the \
         log was to be read during the waits between its attempts, but there were none to read \
         (its calls came at {:?}): back off between attempts, on tokio's clock",
        refunds.iter().map(|call| show(call.at)).collect::<Vec<_>>(),
    );
}

#[tokio::test(start_paused = true)]
async fn errors_recorded() {
    let steps = [
        ok("inventory"),
        ok("payment").compensation_stuck(Transient),
        fails("shipping", Permanent),
    ];
    let run = run(&steps, 11).await;
    let forward = error_message("shipping", Kind::Execute, 1);
    let shipping = &run.log[2];
    assert!(
        shipping.last_error.as_deref() == Some(forward.as_str()),
        "shipping's execution failed with {forward:?}: its log record's last_error must hold \
         that message; yours holds {:?}",
        shipping.last_error,
    );
    let last = error_message("payment", Kind::Compensate, 4);
    let payment = &run.log[1];
    assert!(
        payment.compensation_attempts == 4 && payment.last_error.as_deref() == Some(last.as_str()),
        "payment's compensation failed 4 times and was handed to a human: its log record must \
         say compensation_attempts = 4 and last_error = {last:?}, the last error, for the \
         operator; yours says compensation_attempts = {}, last_error = {:?}",
        payment.compensation_attempts,
        payment.last_error,
    );
    let inventory = &run.log[0];
    assert!(
        inventory.compensation_attempts == 1 && inventory.last_error.is_none(),
        "inventory's compensation succeeded on its first attempt: its record must say \
         compensation_attempts = 1 and no last_error; yours says {}, {:?}",
        inventory.compensation_attempts,
        inventory.last_error,
    );

    // A compensation that failed twice and then succeeded keeps its most recent error.
    let steps = [
        ok("inventory"),
        ok("payment").compensation_fails(2, Transient),
        fails("shipping", Permanent),
    ];
    let retried = super::fixture::run(&steps, 13).await;
    let last = error_message("payment", Kind::Compensate, 2);
    let payment = &retried.log[1];
    assert!(
        payment.status == Compensated
            && payment.compensation_attempts == 3
            && payment.last_error.as_deref() == Some(last.as_str()),
        "payment's compensation failed twice, then succeeded on attempt 3: its record must say \
         compensated, compensation_attempts = 3, and keep the most recent error, last_error = \
         {last:?} (last_error is the step's most recent error, not cleared by a success); yours \
         says {}, {}, {:?}",
        payment.status,
        payment.compensation_attempts,
        payment.last_error,
    );
}
