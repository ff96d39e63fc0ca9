//! The invariants of the checkout, each held over the chapter's scenario under 100 seeds.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use exercise::report::RunReport;
use exercise::services::{Answer, PublishAnswer};
use exercise::{Action, BudgetConfig, IdempotencyKey, OrderId, SagaOutcome, Scenario, Step};

use super::sweep::{at, describe, fail_if_any, first_violation as violations, history};

#[test]
fn no_double_charge() {
    let found = violations(|report| {
        let payment = report.service(Step::Payment);
        report.orders.iter().find_map(|order| {
            let charges: Vec<&IdempotencyKey> = payment
                .effects
                .iter()
                .filter(|effect| effect.order == order.order && effect.action == Action::Execute)
                .map(|effect| &effect.key)
                .collect();
            (charges.len() > 1).then(|| {
                let keys: Vec<String> = charges.iter().map(ToString::to_string).collect();
                format!(
                    "{} was charged {} times, under the keys {} (its event was delivered {} \
                     time(s), {} saga(s) started); {}",
                    order.order,
                    charges.len(),
                    keys.join(", "),
                    order.deliveries,
                    order.saga_starts,
                    history(report, Step::Payment, order.order, Action::Execute),
                )
            })
        })
    });
    fail_if_any(
        "every order is charged at most once",
        "The payment service deduplicates on the idempotency key: mint one key per step, before \
         its first attempt, and send that same key with every attempt; and let only the first \
         delivery of an event start a saga",
        found,
    );
}

#[test]
fn no_lost_event() {
    let found = violations(|report| {
        report.orders.iter().find_map(|order| {
            (order.received == 0).then(|| {
                let publishes: Vec<String> = report
                    .publishes
                    .iter()
                    .filter(|publish| publish.order == order.order)
                    .take(4)
                    .map(|publish| format!("{} at {}", answer(publish.answer), at(publish.at)))
                    .collect();
                let sent = order
                    .sent_at
                    .map_or_else(String::new, |sent| format!(", sent_at {}", at(sent)));
                format!(
                    "{} was committed at {} but the broker never received its event; its \
                     outbox row ended `{}`{sent}; its publishes: [{}]",
                    order.order,
                    at(order.placed_at),
                    order.outbox_status,
                    publishes.join(", "),
                )
            })
        })
    });
    fail_if_any(
        "every committed order's event reaches the broker at least once",
        "Publish first and mark the row sent only after the broker's acknowledgement, bound each \
         publish with a timeout, and leave a failed row pending with its next_retry_at until it \
         has used cfg.max_attempts: a relay that dies between the publish and the mark then \
         publishes again instead of losing the event",
        found,
    );
}

fn answer(answer: PublishAnswer) -> String {
    match answer {
        PublishAnswer::Acked => "acked".to_owned(),
        PublishAnswer::SlowAck { latency } => {
            format!("acked after {} ms", latency.as_millis())
        }
        PublishAnswer::Unavailable { retry_after: None } => "503".to_owned(),
        PublishAnswer::Unavailable {
            retry_after: Some(hint),
        } => format!("503 with Retry-After {} s", hint.as_secs()),
        PublishAnswer::Lost => "lost, never answered".to_owned(),
        PublishAnswer::Rejected => "422, refused for good".to_owned(),
        PublishAnswer::Crashed {
            after_receive: true,
        } => "relay crashed after the broker received it".to_owned(),
        PublishAnswer::Crashed {
            after_receive: false,
        } => "relay crashed before sending".to_owned(),
    }
}

#[test]
fn every_order_terminal() {
    let found = violations(|report| {
        report.orders.iter().find_map(|order| {
            let end = match order.outcome {
                Some(outcome) if outcome.is_terminal() => return None,
                Some(outcome) => format!(
                    "ended `{outcome}`: a step gave up and nothing was undone (stock {} \
                     reserved, card charged {} time(s))",
                    net(report, Step::Inventory, order.order),
                    net(report, Step::Payment, order.order),
                ),
                None if order.saga_starts == 0 => format!(
                    "never settled: no saga started (event received {} time(s), delivered {} \
                     time(s))",
                    order.received, order.deliveries
                ),
                None => {
                    let last = Step::ALL
                        .iter()
                        .flat_map(|step| {
                            report
                                .service(*step)
                                .calls
                                .iter()
                                .filter(|call| call.order == order.order)
                                .map(move |call| (call.at, *step, call))
                        })
                        .max_by_key(|(time, _, _)| *time);
                    let last = last.map_or_else(
                        || "it never called a service".to_owned(),
                        |(_, step, call)| format!("its last call: {step} {}", describe(call)),
                    );
                    let end = report
                        .ended_at
                        .map_or_else(|| format!("the horizon, {}", at(report.horizon)), at);
                    format!("never settled: its saga was still running at {end}; {last}")
                }
            };
            Some(format!("{} {end}", order.order))
        })
    });
    fail_if_any(
        "every order ends completed, compensated or handed to a human",
        "Give every attempt a timeout, end a step at once on a permanent error and after \
         max_attempts otherwise, and when a step gives up compensate the completed steps \
         (NeedsHuman if a compensation gives up): never leave a saga `failed` or running",
        found,
    );
}

fn net(report: &RunReport, step: Step, order: OrderId) -> i64 {
    report.service(step).net_effect(order)
}

#[test]
fn load_within_budget() {
    let budget = BudgetConfig::default();
    let found = violations(|report| {
        report.services.iter().find_map(|service| {
            [Action::Execute, Action::Compensate]
                .into_iter()
                .find_map(|action| {
                    let first = service.first_attempts_of(action);
                    let total = service.total_of(action);
                    let bound = budget.load_bound(first);
                    (total > bound).then(|| {
                        let unavailable = service
                            .calls
                            .iter()
                            .filter(|call| call.action == action)
                            .filter(|call| matches!(call.answer, Answer::Unavailable { .. }))
                            .count();
                        let busiest = service
                            .calls_per_operation()
                            .into_iter()
                            .filter(|((_, of), _)| *of == action)
                            .max_by_key(|(_, calls)| *calls)
                            .map(|((order, _), calls)| format!("{order} alone made {calls}"))
                            .unwrap_or_default();
                        format!(
                            "the {} service received {total} {action} calls for {first} first \
                             attempts, more than the bound (1 + 0.1) · {first} + 10 / 2 + 1 = \
                             {bound}; {unavailable} of them were turned away with 503; {busiest}",
                            service.step,
                        )
                    })
                })
        })
    });
    fail_if_any(
        "each service's load stays within its retry budget",
        "Tell the client's budget for the action (client.budget(action)) about every outcome: \
         on_success, and on_failure for each transient failure or timeout; and retry only while \
         can_retry() says yes. During a 503 storm the budget runs dry and the saga gives up \
         instead of piling on",
        found,
    );
}

#[test]
fn settles_before_deadline() {
    let found = violations(|report| {
        let pending = report
            .orders
            .iter()
            .filter(|order| order.outbox_status == "pending")
            .count();
        let unsettled = report
            .orders
            .iter()
            .filter(|order| order.outcome.is_none())
            .count();
        match report.ended_at {
            Some(end) if end <= report.deadline => None,
            Some(end) => Some(format!(
                "the run settled at {}, after the deadline of {}",
                at(end),
                at(report.deadline)
            )),
            None => Some(format!(
                "the run had not settled at the horizon, {} (deadline {}): {unsettled} order(s) \
                 without an ending saga, {pending} outbox row(s) still pending",
                at(report.horizon),
                at(report.deadline)
            )),
        }
    });
    fail_if_any(
        "the whole run settles before its deadline",
        "Chaos ends at 45 s; after that, a correct relay publishes within its capped backoff and \
         a correct saga ends within its steps' time budgets. A run that goes on is retrying \
         something forever: a permanent error, a step without max_attempts or total_budget, or \
         a relay stuck on a publish without a timeout",
        found,
    );
}

#[test]
fn retry_after_respected() {
    let found = violations(|report| {
        for service in &report.services {
            let mut last: BTreeMap<(&IdempotencyKey, Action), &exercise::services::CallRecord> =
                BTreeMap::new();
            for call in &service.calls {
                if let Some(previous) = last.insert((&call.key, call.action), call)
                    && let Answer::Unavailable { retry_after } = previous.answer
                    && call.at < previous.at + retry_after.as_millis() as i64
                {
                    return Some(format!(
                        "{} told {}'s {} to come back in {} s (503 at {}), but the next \
                         attempt came at {}, after {} ms",
                        service.step,
                        call.order,
                        call.action,
                        retry_after.as_secs(),
                        at(previous.at),
                        at(call.at),
                        call.at - previous.at
                    ));
                }
            }
        }
        let mut last_publish = BTreeMap::new();
        for publish in &report.publishes {
            if let Some(previous) = last_publish.insert(publish.event_id, publish)
                && let PublishAnswer::Unavailable {
                    retry_after: Some(hint),
                } = previous.answer
                && publish.at < previous.at + hint.as_millis() as i64
            {
                return Some(format!(
                    "the broker told the relay to come back in {} s with {}'s event (503 at \
                     {}), but the relay published it again at {}",
                    hint.as_secs(),
                    publish.order,
                    at(previous.at),
                    at(publish.at)
                ));
            }
        }
        None
    });
    fail_if_any(
        "a 503 with Retry-After is not retried before the server said",
        "When the error is ErrorKind::RetryAfter(hint), wait the hint (within the total budget) \
         instead of a backoff draw, in run_step and in relay_pass alike",
        found,
    );
}

#[test]
fn permanent_errors_not_retried() {
    // A refusal counts once the caller heard it: answered within the attempt's timeout.
    let timeout = Scenario::default().checkout.execute.per_attempt_timeout;
    let found = violations(|report| {
        for service in &report.services {
            let mut refused: BTreeSet<(&IdempotencyKey, Action)> = BTreeSet::new();
            for call in &service.calls {
                if refused.contains(&(&call.key, call.action)) {
                    return Some(format!(
                        "{} refused {}'s {} for good, and answered in time, yet it was called \
                         again with the same key; {}",
                        service.step,
                        call.order,
                        call.action,
                        history(report, service.step, call.order, call.action)
                    ));
                }
                let heard = call.latency.is_some_and(|latency| latency < timeout);
                if call.answer == Answer::Refused && heard {
                    refused.insert((&call.key, call.action));
                }
            }
        }
        None
    });
    fail_if_any(
        "a permanent refusal (402 card declined, 409 out of stock) is not retried",
        "ErrorKind::Permanent ends the step at once: waiting will not change a declined card; \
         compensate instead",
        found,
    );
}

#[test]
fn duplicate_events_start_one_saga() {
    let found = violations(|report| {
        report.orders.iter().find_map(|order| {
            let wrong = (order.deliveries > 0 && order.saga_starts != 1) || order.saga_starts > 1;
            wrong.then(|| {
                format!(
                    "{}'s event was delivered {} time(s) and {} saga(s) started for it",
                    order.order, order.deliveries, order.saga_starts
                )
            })
        })
    });
    fail_if_any(
        "each order's event starts exactly one saga, however often it is delivered",
        "The relay and the broker deliver at least once, so copies come. In \
         consume_order_placed, insert the event id into `inbox` with ON CONFLICT DO NOTHING \
         and answer Start only when a row was inserted",
        found,
    );
}

#[test]
fn effects_match_outcomes() {
    let found = violations(|report| {
        report.orders.iter().find_map(|order| {
            let nets: Vec<i64> = Step::ALL
                .iter()
                .map(|step| net(report, *step, order.order))
                .collect();
            let expected: i64 = match order.outcome {
                Some(SagaOutcome::Completed) => 1,
                Some(SagaOutcome::Compensated) => 0,
                Some(SagaOutcome::NeedsHuman) => {
                    return needs_no_human(report, order.order, &nets);
                }
                _ => return None,
            };
            (nets.iter().any(|net| *net != expected)).then(|| {
                format!(
                    "{} ended `{}` but the work still standing is: stock reserved {}, card \
                     charged {}, shipment booked {} (expected {expected} each)",
                    order.order,
                    order.outcome.map_or("?", SagaOutcome::as_str),
                    nets[0],
                    nets[1],
                    nets[2]
                )
            })
        })
    });
    fail_if_any(
        "a completed order has its stock, charge and shipment; a compensated one has none; one \
         that needs a human had a compensation give up",
        "Return Completed only when all three steps succeeded. Before Compensated, undo every \
         step that may have done its work, naming the key its execution used: the completed \
         ones, and the one that gave up if one of its attempts timed out (`maybe_done`), since \
         a lost answer does not mean the work was not done. NeedsHuman is for an order whose \
         compensation gave up; when every undo succeeded it is Compensated",
        found,
    );
}

/// The fault of a `NeedsHuman` order that had nothing for a human: each step it compensated
/// heard its last undo succeed, in time, and none of its work is left standing (None when an
/// undo gave up, or its success may have come too late to be heard).
fn needs_no_human(report: &RunReport, order: OrderId, nets: &[i64]) -> Option<String> {
    let policy = Scenario::default().checkout.compensate;
    // A margin of a millisecond each way: an answer at the very edge of a timeout or of the
    // budget may have been heard or not, and either outcome is then right.
    let margin = Duration::from_millis(1);
    let heard_success = |step: Step| -> Option<bool> {
        let undos: Vec<_> = report
            .service(step)
            .calls
            .iter()
            .filter(|call| call.order == order && call.action == Action::Compensate)
            .collect();
        let (first, last) = (undos.first()?, undos.last()?);
        let in_time = last.latency.is_some_and(|latency| {
            let answered_at = last.at + (latency + margin).as_millis() as i64;
            latency + margin < policy.per_attempt_timeout
                && answered_at < first.at + policy.total_budget.as_millis() as i64
        });
        Some(in_time && matches!(last.answer, Answer::Done | Answer::Replayed))
    };
    let heard: Vec<bool> = Step::ALL.into_iter().filter_map(heard_success).collect();
    let all_undone = !heard.is_empty() && heard.iter().all(|ok| *ok);
    (all_undone && nets.iter().all(|net| *net == 0)).then(|| {
        format!(
            "{order} ended `needs_human`, but the last compensation of each step it undid was \
             answered with success in time, and none of its work is left standing"
        )
    })
}

#[test]
fn compensations_newest_first() {
    let found = violations(|report| {
        report.orders.iter().find_map(|order| {
            let first_compensation = |step: Step| {
                report
                    .service(step)
                    .calls
                    .iter()
                    .find(|call| call.order == order.order && call.action == Action::Compensate)
                    .map(|call| (call.at, step))
            };
            let undone: Vec<(i64, Step)> = Step::ALL
                .into_iter()
                .rev()
                .filter_map(first_compensation)
                .collect();
            undone.windows(2).find_map(|pair| {
                let ((newer_at, newer), (older_at, older)) = (pair[0], pair[1]);
                (older_at < newer_at).then(|| {
                    format!(
                        "{}'s {older} step was undone at {}, before its {newer} step at {}",
                        order.order,
                        at(older_at),
                        at(newer_at)
                    )
                })
            })
        })
    });
    fail_if_any(
        "compensations run newest first",
        "Keep the steps to undo in a list in the order they ran and walk it with \
         `.iter().rev()`: the refund before the release",
        found,
    );
}

#[test]
fn one_key_per_step() {
    let found = violations(|report| {
        // Each step of an order has a key of its own: no two services see one order's
        // executions under the same key.
        let mut steps_of: BTreeMap<(OrderId, &IdempotencyKey), Step> = BTreeMap::new();
        for service in &report.services {
            for call in &service.calls {
                if call.action != Action::Execute {
                    continue;
                }
                let first = *steps_of
                    .entry((call.order, &call.key))
                    .or_insert(service.step);
                if first != service.step {
                    return Some(format!(
                        "{}'s {} and {} steps both carried the key {}: each step has a key of \
                         its own, minted once before its first attempt",
                        call.order, first, service.step, call.key
                    ));
                }
            }
        }
        for service in &report.services {
            let mut keys: BTreeMap<(OrderId, Action), BTreeSet<&IdempotencyKey>> = BTreeMap::new();
            for call in &service.calls {
                keys.entry((call.order, call.action))
                    .or_default()
                    .insert(&call.key);
            }
            for ((order, action), used) in &keys {
                if used.len() > 1 {
                    return Some(format!(
                        "{order}'s {action} at {} used {} different keys; {}",
                        service.step,
                        used.len(),
                        history(report, service.step, *order, *action)
                    ));
                }
            }
            for call in &service.calls {
                if call.action != Action::Compensate {
                    continue;
                }
                let executed = keys
                    .get(&(call.order, Action::Execute))
                    .and_then(|used| used.iter().next().copied());
                let Some(executed) = executed else {
                    continue;
                };
                if &call.key == executed || call.undoes.as_ref() != Some(executed) {
                    return Some(format!(
                        "{}'s compensation at {} carried the key {} and named {} as the work it \
                         undoes; its execution used {executed}. A compensation is a request of \
                         its own: its own key, never its execution's (a key names one request, \
                         and the service refuses the reuse with 422), and the execution's key \
                         as its reference",
                        call.order,
                        service.step,
                        call.key,
                        call.undoes
                            .as_ref()
                            .map_or("nothing".to_owned(), ToString::to_string),
                    ));
                }
            }
        }
        None
    });
    fail_if_any(
        "one idempotency key per step on every attempt; the compensation its own, naming the \
         step's",
        "Mint the key in run_checkout, once per step before its first attempt, and pass it to \
         run_step for the execution and again for the compensation; in run_step, send a \
         compensation under key.undo() with undoes = Some(key)",
        found,
    );
}

#[test]
fn compensations_continue_after_stuck() {
    let found =
        violations(|report| {
            report.orders.iter().find_map(|order| {
                if order.outcome != Some(SagaOutcome::NeedsHuman) {
                    return None;
                }
                // Every step whose work was done for this order must have been asked to undo it.
                let compensated =
                    |step: Step| {
                        report.service(step).calls.iter().any(|call| {
                            call.order == order.order && call.action == Action::Compensate
                        })
                    };
                let executed = |step: Step| {
                    report.service(step).effects.iter().any(|effect| {
                        effect.order == order.order && effect.action == Action::Execute
                    })
                };
                let stuck: Vec<Step> = Step::ALL
                    .into_iter()
                    .filter(|step| compensated(*step) && net(report, *step, order.order) > 0)
                    .collect();
                Step::ALL
                    .into_iter()
                    .find(|step| executed(*step) && !compensated(*step))
                    .map(|left| {
                        format!(
                            "{} went to a human with its {left} step done and never compensated \
                         (compensations that gave up: {}); {}",
                            order.order,
                            stuck
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join(", "),
                            history(report, left, order.order, Action::Execute),
                        )
                    })
            })
        });
    fail_if_any(
        "a compensation that gives up does not stop the others",
        "Walk every step to undo, newest first, and remember the ones whose compensation gave \
         up instead of returning at the first: the stock is released even while the refund \
         waits for a person (book §21.5, rule 2)",
        found,
    );
}

#[test]
fn only_steps_that_may_have_run_are_compensated() {
    // An answer counts once the caller heard it: within the attempt's timeout.
    let timeout = Scenario::default().checkout.execute.per_attempt_timeout;
    let found = violations(|report| {
        report.services.iter().find_map(|service| {
            let undone: BTreeSet<OrderId> = service
                .calls
                .iter()
                .filter(|call| call.action == Action::Compensate)
                .map(|call| call.order)
                .collect();
            undone.into_iter().find_map(|order| {
                let executions: Vec<_> = service
                    .calls
                    .iter()
                    .filter(|call| call.order == order && call.action == Action::Execute)
                    .collect();
                // Refused, 503 and 500, heard in time, are answers that say no work was done.
                let definitely_failed = executions.iter().all(|call| {
                    let heard = call.latency.is_some_and(|latency| latency < timeout);
                    heard
                        && matches!(
                            call.answer,
                            Answer::Refused | Answer::Unavailable { .. } | Answer::Failed
                        )
                });
                definitely_failed.then(|| {
                    let why = if executions.is_empty() {
                        "it never ran".to_owned()
                    } else {
                        format!(
                            "every attempt of it was answered in time with a refusal or an \
                             error, so it committed nothing; {}",
                            history(report, service.step, order, Action::Execute)
                        )
                    };
                    format!("{order}'s {} step was compensated, but {why}", service.step)
                })
            })
        })
    });
    fail_if_any(
        "only a step that may have done its work is compensated",
        "Undo the steps that completed and the one that gave up only if one of its attempts \
         timed out (`maybe_done`); a step the service answered \"no\" on every attempt, or one \
         that never ran, has nothing to undo (book §21.3)",
        found,
    );
}
