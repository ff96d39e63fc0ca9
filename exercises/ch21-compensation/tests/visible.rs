//! Visible tests: run them with `cargo xtask check ch21` (or `cargo test -p ch21_compensation`).
//! The grader runs hidden checks beside them.
//!
//! The first test shows how to mock a [`Step`] with mockall, for tests of your own.

use ch21_compensation::stubs::{Journal, StubStep};
use ch21_compensation::{
    BoxFuture, CompensationPolicy, ErrorKind, Saga, SagaOutcome, Step, StepContext, StepError,
    StepStatus,
};
use rand::SeedableRng;
use rand::rngs::StdRng;

// ANCHOR: mock
mockall::mock! {
    /// A step whose calls a test scripts: `MockPayment::new()`, then `expect_compensate()` …
    pub Payment {}

    impl Step for Payment {
        fn name(&self) -> &str;
        fn execute(&self, ctx: &StepContext) -> BoxFuture<'_, Result<(), StepError>>;
        fn compensate(&self, ctx: &StepContext) -> BoxFuture<'_, Result<(), StepError>>;
    }
}
// ANCHOR_END: mock

#[tokio::test(start_paused = true)]
async fn a_refund_that_meets_one_503_is_retried() {
    // ANCHOR: mock_test
    let mut payment = MockPayment::new();
    payment.expect_name().return_const("payment".to_owned());
    payment
        .expect_execute()
        .times(1)
        .returning(|_ctx| Box::pin(async { Ok(()) }));
    payment
        .expect_compensate()
        .withf(|ctx| {
            ctx.idempotency_key() == "order-7:payment:undo"
                && ctx.undoes().as_deref() == Some("order-7:payment")
        })
        .times(2)
        .returning(|ctx| {
            let first_attempt = ctx.attempt == 1;
            Box::pin(async move {
                if first_attempt {
                    Err(StepError::transient("HTTP 503 Service Unavailable"))
                } else {
                    Ok(())
                }
            })
        });
    let journal = Journal::new();
    let shipping = StubStep::shipping(&journal).failing_execute(1, ErrorKind::Permanent);

    let saga = Saga::new("order-7", CompensationPolicy::default())
        .step(payment)
        .step(shipping);
    let outcome = saga.run(&mut StdRng::seed_from_u64(7)).await;

    assert!(
        matches!(&outcome, SagaOutcome::Compensated { compensated, .. } if compensated == &["payment"]),
        "{outcome:?}"
    );
    assert_eq!(saga.log().record(0).status, StepStatus::Compensated);
    assert_eq!(saga.log().record(0).compensation_attempts, 2);
    // ANCHOR_END: mock_test
}

#[tokio::test(start_paused = true)]
async fn a_declined_shipment_is_undone_newest_first() {
    let journal = Journal::new();
    let saga = Saga::new("order-8", CompensationPolicy::default())
        .step(StubStep::inventory(&journal))
        .step(StubStep::payment(&journal))
        .step(StubStep::shipping(&journal).failing_execute(1, ErrorKind::Permanent));

    let outcome = saga.run(&mut StdRng::seed_from_u64(8)).await;

    assert_eq!(
        journal.calls(),
        [
            "inventory.execute",
            "payment.execute",
            "shipping.execute",
            "payment.compensate",
            "inventory.compensate",
        ]
    );
    assert!(
        matches!(outcome, SagaOutcome::Compensated { .. }),
        "{outcome:?}"
    );
    assert_eq!(
        saga.log().statuses(),
        [
            StepStatus::Compensated,
            StepStatus::Compensated,
            StepStatus::Failed
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_saga_that_succeeds_undoes_nothing() {
    let journal = Journal::new();
    let saga = Saga::new("order-9", CompensationPolicy::default())
        .step(StubStep::inventory(&journal))
        .step(StubStep::payment(&journal))
        .step(StubStep::shipping(&journal));

    let outcome = saga.run(&mut StdRng::seed_from_u64(9)).await;

    assert_eq!(outcome, SagaOutcome::Completed);
    assert_eq!(
        journal.calls(),
        ["inventory.execute", "payment.execute", "shipping.execute"]
    );
}
