//! Given: the report of a run. The raw record (every order, every call every service received,
//! every publish) and a summary of it: outcome counts, load per service, and the five
//! invariants of the chapter, each held or broken.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use crate::budget::BudgetConfig;
use crate::chaos::{ChaosSchedule, seconds};
use crate::model::{Action, Millis, OrderId, SagaOutcome, Step};
use crate::services::{Answer, CallRecord, Effect, PublishRecord};

/// What happened to one committed order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderReport {
    pub order: OrderId,
    pub placed_at: Millis,
    /// The outbox row's status at the end: `pending` or `sent`.
    pub outbox_status: String,
    /// Failed publish attempts recorded in the outbox row.
    pub publish_failures: u32,
    pub sent_at: Option<Millis>,
    /// How many times the broker received the order's event.
    pub received: u32,
    /// How many copies of the event reached the consumer.
    pub deliveries: u32,
    /// How many sagas the consumer started for the order.
    pub saga_starts: u32,
    /// How the (last) saga ended; `None` if none ended.
    pub outcome: Option<SagaOutcome>,
    pub ended_at: Option<Millis>,
    /// The service that refuses this order for good, if one does (the chaos plan).
    pub refused_by: Option<Step>,
}

/// Everything one service saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceReport {
    pub step: Step,
    pub calls: Vec<CallRecord>,
    pub effects: Vec<Effect>,
}

impl ServiceReport {
    /// Calls received, retries included.
    pub fn total(&self) -> u64 {
        self.calls.len() as u64
    }

    /// First attempts: the distinct operations asked for, one per order and action.
    pub fn first_attempts(&self) -> u64 {
        let operations: BTreeSet<(OrderId, Action)> = self
            .calls
            .iter()
            .map(|call| (call.order, call.action))
            .collect();
        operations.len() as u64
    }

    /// Calls of `action` received, retries included.
    pub fn total_of(&self, action: Action) -> u64 {
        self.count(|call| call.action == action) as u64
    }

    /// First attempts of `action`: one per order that asked for it.
    pub fn first_attempts_of(&self, action: Action) -> u64 {
        let orders: BTreeSet<OrderId> = self
            .calls
            .iter()
            .filter(|call| call.action == action)
            .map(|call| call.order)
            .collect();
        orders.len() as u64
    }

    /// The most calls the retry budgets allow this service to receive: the bound of the
    /// execute budget plus that of the compensate budget.
    pub fn load_bound(&self, budget: &BudgetConfig) -> u64 {
        [Action::Execute, Action::Compensate]
            .into_iter()
            .map(|action| budget.load_bound(self.first_attempts_of(action)))
            .sum()
    }

    /// How many calls each operation (order and action) took.
    pub fn calls_per_operation(&self) -> BTreeMap<(OrderId, Action), u32> {
        let mut counts = BTreeMap::new();
        for call in &self.calls {
            *counts.entry((call.order, call.action)).or_default() += 1;
        }
        counts
    }

    /// How many times work of `action` was done for `order`.
    pub fn effects_of(&self, order: OrderId, action: Action) -> usize {
        self.effects
            .iter()
            .filter(|effect| effect.order == order && effect.action == action)
            .count()
    }

    /// The work still standing for `order`: done minus undone.
    pub fn net_effect(&self, order: OrderId) -> i64 {
        self.effects_of(order, Action::Execute) as i64
            - self.effects_of(order, Action::Compensate) as i64
    }

    fn count(&self, matches: impl Fn(&CallRecord) -> bool) -> usize {
        self.calls.iter().filter(|call| matches(call)).count()
    }
}

/// How many orders ended in each state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutcomeCounts {
    pub completed: usize,
    pub compensated: usize,
    pub needs_human: usize,
    /// Gave up without compensating: not terminal.
    pub failed: usize,
    /// No saga ended: never published, never consumed, or still running.
    pub unsettled: usize,
}

/// One invariant of the run: held, or broken with the first example.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invariant {
    pub name: &'static str,
    /// `None` if it held; otherwise what broke it.
    pub broken: Option<String>,
}

/// The report of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    pub seed: u64,
    pub deadline: Millis,
    pub horizon: Millis,
    pub calm_at: Millis,
    pub budget: Option<BudgetConfig>,
    /// When the run settled; `None` if it had not by the horizon (or a task panicked).
    pub ended_at: Option<Millis>,
    /// The messages of tasks that panicked.
    pub panics: Vec<String>,
    /// Database errors returned to the driver.
    pub errors: Vec<String>,
    /// Orders rolled back when the order service crashed between its inserts.
    pub rolled_back: u32,
    /// Every committed order.
    pub orders: Vec<OrderReport>,
    /// Inventory, payment and shipping, in that order.
    pub services: Vec<ServiceReport>,
    pub publishes: Vec<PublishRecord>,
    pub relay_crashes: u32,
    pub chaos: ChaosSchedule,
}

impl RunReport {
    /// What `step`'s service saw.
    pub fn service(&self, step: Step) -> &ServiceReport {
        &self.services[step as usize]
    }

    pub fn outcome_counts(&self) -> OutcomeCounts {
        let mut counts = OutcomeCounts::default();
        for order in &self.orders {
            match order.outcome {
                Some(SagaOutcome::Completed) => counts.completed += 1,
                Some(SagaOutcome::Compensated) => counts.compensated += 1,
                Some(SagaOutcome::NeedsHuman) => counts.needs_human += 1,
                Some(SagaOutcome::Failed) => counts.failed += 1,
                None => counts.unsettled += 1,
            }
        }
        counts
    }

    /// The chapter's invariants, evaluated on this run.
    pub fn invariants(&self) -> Vec<Invariant> {
        let payment = self.service(Step::Payment);
        let double_charge = self.orders.iter().find_map(|order| {
            let charges = payment.effects_of(order.order, Action::Execute);
            (charges > 1).then(|| format!("{} was charged {charges} times", order.order))
        });
        let lost = self.orders.iter().find_map(|order| {
            (order.received == 0).then(|| {
                format!(
                    "the event of {} never reached the broker (outbox row {})",
                    order.order, order.outbox_status
                )
            })
        });
        let unsettled = self.orders.iter().find_map(|order| match order.outcome {
            Some(outcome) if outcome.is_terminal() => None,
            Some(outcome) => Some(format!("{} ended {outcome}", order.order)),
            None => Some(format!("{} never settled", order.order)),
        });
        // Without budgets, the bound is the one the chapter's budgets would have kept.
        let budget = self.budget.unwrap_or_default();
        let overload = self.services.iter().find_map(|service| {
            [Action::Execute, Action::Compensate]
                .into_iter()
                .find_map(|action| {
                    let first = service.first_attempts_of(action);
                    let bound = budget.load_bound(first);
                    let total = service.total_of(action);
                    (total > bound).then(|| {
                        format!(
                            "{} received {total} {action} calls for {first} first attempts \
                             (bound {bound})",
                            service.step
                        )
                    })
                })
        });
        let late = match self.ended_at {
            Some(end) if end <= self.deadline => None,
            Some(end) => Some(format!("settled at {}", seconds(end))),
            None if !self.panics.is_empty() => Some("stopped early: a task panicked".to_owned()),
            None => Some(format!("not settled at {}", seconds(self.horizon))),
        };
        vec![
            Invariant {
                name: "no double charge",
                broken: double_charge,
            },
            Invariant {
                name: "no lost event",
                broken: lost,
            },
            Invariant {
                name: "every order terminal",
                broken: unsettled,
            },
            Invariant {
                name: "load within the retry budget's bound",
                broken: overload,
            },
            Invariant {
                name: "settled before the deadline",
                broken: late,
            },
        ]
    }

    /// One line: the seed, the outcomes, and whether the five invariants held.
    pub fn summary(&self) -> String {
        let counts = self.outcome_counts();
        let broken = self
            .invariants()
            .into_iter()
            .filter(|invariant| invariant.broken.is_some())
            .count();
        let end = self
            .ended_at
            .map_or_else(|| "not settled".to_owned(), seconds);
        format!(
            "seed {}: {} orders, {} completed, {} compensated, {} needs human, {} failed, \
             {} unsettled; settled at {end}; {}",
            self.seed,
            self.orders.len(),
            counts.completed,
            counts.compensated,
            counts.needs_human,
            counts.failed,
            counts.unsettled,
            if broken == 0 {
                "the five invariants held".to_owned()
            } else {
                format!("{broken} of the five invariants broken")
            }
        )
    }
}

impl fmt::Display for RunReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let end = match self.ended_at {
            Some(end) => format!("settled at {}", seconds(end)),
            None if !self.panics.is_empty() => "stopped early: a task panicked".to_owned(),
            None => format!("not settled at {}", seconds(self.horizon)),
        };
        writeln!(
            f,
            "seed {}: {} orders placed, {} rolled back; {end} (deadline {})",
            self.seed,
            self.orders.len(),
            self.rolled_back,
            seconds(self.deadline)
        )?;
        writeln!(f)?;
        writeln!(f, "{}", self.chaos)?;
        writeln!(f)?;

        let counts = self.outcome_counts();
        writeln!(
            f,
            "outcomes   {} completed, {} compensated, {} needs human, {} failed, {} unsettled",
            counts.completed,
            counts.compensated,
            counts.needs_human,
            counts.failed,
            counts.unsettled
        )?;
        let received = self.orders.iter().filter(|o| o.received > 0).count();
        let twice = self.orders.iter().filter(|o| o.deliveries > 1).count();
        let restarts: u32 = self
            .orders
            .iter()
            .map(|o| o.saga_starts.saturating_sub(1))
            .sum();
        writeln!(
            f,
            "events     {received} received by the broker, {twice} delivered more than once, \
             {restarts} duplicate saga start(s), {} relay crash(es)",
            self.relay_crashes
        )?;
        writeln!(f)?;

        writeln!(
            f,
            "service    calls  first  retries  bound   503   500  slow/hung  refused"
        )?;
        for service in &self.services {
            let first = service.first_attempts();
            let bound = service.load_bound(&self.budget.unwrap_or_default());
            let unavailable =
                service.count(|call| matches!(call.answer, Answer::Unavailable { .. }));
            let failed = service.count(|call| call.answer == Answer::Failed);
            let slow = service.count(|call| {
                call.latency
                    .is_none_or(|latency| latency >= Duration::from_secs(1))
            });
            let refused = service.count(|call| call.answer == Answer::Refused);
            writeln!(
                f,
                "{:<9} {:>6} {:>6} {:>8} {:>6} {:>5} {:>5} {:>10} {:>8}",
                service.step.name(),
                service.total(),
                first,
                service.total() - first,
                bound,
                unavailable,
                failed,
                slow,
                refused
            )?;
        }
        let events: BTreeSet<i64> = self.publishes.iter().map(|p| p.event_id).collect();
        writeln!(
            f,
            "{:<9} {:>6} {:>6} {:>8} {:>6}",
            "broker",
            self.publishes.len(),
            events.len(),
            self.publishes.len() - events.len(),
            "-"
        )?;
        writeln!(f)?;

        writeln!(f, "invariants")?;
        for invariant in self.invariants() {
            match &invariant.broken {
                None => writeln!(f, "  held    {}", invariant.name)?,
                Some(example) => writeln!(f, "  BROKEN  {}: {example}", invariant.name)?,
            }
        }
        for panic in &self.panics {
            writeln!(f, "panic: {panic}")?;
        }
        for error in &self.errors {
            writeln!(f, "error: {error}")?;
        }
        Ok(())
    }
}
