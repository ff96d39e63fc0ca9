//! A check of `run_checkout` driven directly: each action under the policy the configuration
//! gives it.

use std::rc::Rc;
use std::time::Duration;

use exercise::chaos::{Storm, Window};
use exercise::services::Service;
use exercise::{Action, Client, Clients, Clock, OrderId, SagaOutcome, Step};

use super::doubles::{MS, SEC, policy, quiet, schedule};
use super::support::seeded;

/// The service of `step`, with every call failing (500) if `fails`, and 503s with Retry-After
/// 100 ms for every call that arrives from 1 ms on, if `storm_after_first`.
fn service(step: Step, fails: bool, storm_after_first: bool, clock: Clock) -> Rc<Service> {
    let mut levels = quiet();
    if fails {
        levels.failure_rate = 1.0;
    }
    let mut chaos = schedule(26, &levels, Duration::from_secs(3_600))
        .service(step)
        .clone();
    if storm_after_first {
        chaos.storms = vec![Storm {
            window: Window {
                start: 1,
                end: exercise::millis(Duration::from_secs(3_600)),
            },
            retry_after: 100 * MS,
        }];
    }
    Rc::new(Service::new(chaos, clock))
}

#[tokio::test(start_paused = true)]
async fn each_action_under_its_policy() {
    // The inventory step succeeds at 0 ms, before a storm that turns away every later call to
    // inventory; payment succeeds; shipping fails with 500s. Executions may make 1 attempt,
    // compensations 3. So shipping gives up after 1 call (nothing done), payment is refunded
    // at once, and the release of the stock is tried 3 times, all refused by the storm: the
    // order goes to a human.
    let clock = Clock::start();
    let inventory = service(Step::Inventory, false, true, clock);
    let payment = service(Step::Payment, false, false, clock);
    let shipping = service(Step::Shipping, true, false, clock);
    let unlimited = |service: &Rc<Service>| Client::new(Rc::clone(service), None);
    let clients = Clients {
        inventory: unlimited(&inventory),
        payment: unlimited(&payment),
        shipping: unlimited(&shipping),
    };
    let cfg = exercise::CheckoutConfig {
        execute: policy(1, 10 * MS, 40 * MS, SEC, 10 * SEC),
        compensate: policy(3, 10 * MS, 40 * MS, SEC, 60 * SEC),
    };
    let mut rng = seeded(26);
    let outcome = exercise::run_checkout(OrderId(1), &clients, &cfg, &mut rng).await;
    let count = |service: &Rc<Service>, action: Action| {
        service
            .calls()
            .iter()
            .filter(|call| call.action == action)
            .count()
    };
    let seen = [
        count(&inventory, Action::Execute),
        count(&payment, Action::Execute),
        count(&shipping, Action::Execute),
        count(&payment, Action::Compensate),
        count(&inventory, Action::Compensate),
    ];
    assert!(
        seen == [1, 1, 1, 1, 3] && outcome == SagaOutcome::NeedsHuman,
        "execute policy: 1 attempt; compensate policy: 3 attempts. Inventory and payment \
         succeed, shipping answers 500, and every later call to inventory is turned away with \
         503 (Retry-After 100 ms). Expected 1 call to each step, 1 refund at payment, 3 \
         attempts to release the stock, and NeedsHuman; yours made [inventory, payment, \
         shipping] = {:?} execute calls, {} refund call(s), {} release call(s), and ended \
         {outcome}. Steps run under cfg.execute, compensations under cfg.compensate",
        &seen[..3],
        seen[3],
        seen[4],
    );
}
