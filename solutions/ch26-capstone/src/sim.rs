//! Given: the world and its driver. One run of the checkout under one seed's chaos, on tokio's
//! paused clock, in a single thread: deterministic per seed, and a minute of virtual time costs
//! a few milliseconds.
//!
//! The pieces, and who writes them:
//!
//! ```text
//!  customers ──place_order──▶ orders + outbox ──relay_pass (you)──▶ broker
//!                                  ▲  (one transaction)                 │ delivers, at least once
//!                                  │                                    ▼
//!                           next_retry_at              consume_order_placed (you)
//!                                                                       │ first delivery only
//!                                                                       ▼
//!                                      run_checkout (you) ── run_step (you) ──▶ inventory,
//!                                                                               payment, shipping
//! ```
//!
//! The driver places the orders at their planned moments, runs the relay (and restarts it when
//! it crashes), hands every delivered event to the consumer and runs the sagas it starts. The
//! run ends when every order has settled and the outbox is empty, or at the horizon.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::sync::Notify;
use tokio::task::{JoinHandle, LocalSet};
use tokio::time::Instant;

use crate::budget::BudgetConfig;
use crate::chaos::{ChaosLevels, ChaosSchedule};
use crate::db::Db;
use crate::model::{Consumed, Millis, OrderId, OrderPlaced, SagaOutcome, Step, millis};
use crate::policy::{CheckoutConfig, RelayConfig};
use crate::report::{OrderReport, RunReport, ServiceReport};
use crate::services::{Broker, Client, Clients, Service};

/// The simulation's clock: milliseconds of tokio's (paused) time since the run started.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    /// A clock that reads 0 now.
    pub fn start() -> Self {
        Self {
            start: Instant::now(),
        }
    }

    /// Milliseconds since the start.
    pub fn now(&self) -> Millis {
        millis(self.start.elapsed())
    }

    /// The tokio instant of a moment of this clock.
    pub fn instant(&self, at: Millis) -> Instant {
        self.start + Duration::from_millis(u64::try_from(at).unwrap_or(0))
    }
}

/// Everything a run is made of, except the seed.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Orders the customers try to place.
    pub orders: u32,
    /// The orders arrive at random moments within this time.
    pub arrivals: Duration,
    /// The chaos stops at this moment.
    pub calm_at: Duration,
    /// The run must have settled by then: every order terminal, the outbox empty.
    pub deadline: Duration,
    /// The simulation stops here, settled or not.
    pub horizon: Duration,
    pub checkout: CheckoutConfig,
    pub relay: RelayConfig,
    /// The retry budget of each service's client; `None` for clients without one.
    pub budget: Option<BudgetConfig>,
    pub chaos: ChaosLevels,
}

impl Default for Scenario {
    /// The chapter's scenario: 30 orders within 40 s, chaos for 45 s, settled by 120 s.
    fn default() -> Self {
        Self {
            orders: 30,
            arrivals: Duration::from_secs(40),
            calm_at: Duration::from_secs(45),
            deadline: Duration::from_secs(120),
            horizon: Duration::from_secs(300),
            checkout: CheckoutConfig::default(),
            relay: RelayConfig::default(),
            budget: Some(BudgetConfig::default()),
            chaos: ChaosLevels::default(),
        }
    }
}

/// The shortest pause between two passes of the relay.
const MIN_PASS_GAP: Duration = Duration::from_millis(10);
/// How long the broker takes to deliver an event to the consumer.
const DELIVERY_DELAY: Duration = Duration::from_millis(20);

/// Runs the checkout under the chaos of `seed` and reports what happened.
///
/// Builds its own single-threaded tokio runtime with a paused clock: call it from ordinary,
/// synchronous code (a `#[test]`, `main`), not from inside another runtime.
pub fn simulate(seed: u64, scenario: &Scenario) -> RunReport {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime can always be built");
    let local = LocalSet::new();
    local.block_on(&runtime, World::run(seed, scenario.clone()))
}

/// Everything one run shares.
struct World {
    seed: u64,
    scenario: Scenario,
    schedule: ChaosSchedule,
    clock: Clock,
    db: Db,
    services: Vec<Rc<Service>>,
    clients: Clients,
    broker: Broker,
    /// A new order was committed: the relay may have work.
    new_row: Notify,
    /// Something finished: the driver looks whether the run has settled.
    progress: Notify,
    /// Deliveries and sagas still running.
    live: Cell<usize>,
    arrivals_done: Cell<bool>,
    /// A task panicked: the run stops.
    panicked: Cell<bool>,
    tasks: RefCell<Vec<JoinHandle<()>>>,
    deliveries: RefCell<BTreeMap<OrderId, u32>>,
    saga_starts: RefCell<BTreeMap<OrderId, u32>>,
    outcomes: RefCell<BTreeMap<OrderId, (SagaOutcome, Millis)>>,
    errors: RefCell<Vec<String>>,
    rolled_back: Cell<u32>,
    relay_crashes: Cell<u32>,
}

/// Kept by every task while it runs: counts live work, and notices a panic.
struct Guard {
    world: Rc<World>,
    live: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.live {
            self.world.live.set(self.world.live.get() - 1);
        }
        if std::thread::panicking() {
            self.world.panicked.set(true);
        }
        self.world.progress.notify_one();
    }
}

impl World {
    async fn run(seed: u64, scenario: Scenario) -> RunReport {
        let world = Rc::new(World::new(seed, scenario));
        let weak = Rc::downgrade(&world);
        world.broker.set_deliver(Box::new(move |event, delay| {
            if let Some(world) = weak.upgrade() {
                world.deliver(event, delay);
            }
        }));

        world.spawn(false, Rc::clone(&world).arrivals());
        world.spawn(false, Rc::clone(&world).relay());
        let horizon = world.clock.instant(millis(world.scenario.horizon));
        let settled = tokio::time::timeout_at(horizon, world.settled())
            .await
            .is_ok();
        let ended_at = (settled && !world.panicked.get()).then(|| world.clock.now());

        let panics = world.stop().await;
        let report = world.report(ended_at, panics);
        // Break the cycle world → broker → deliver → world.
        world.broker.set_deliver(Box::new(|_, _| {}));
        report
    }

    fn new(seed: u64, scenario: Scenario) -> Self {
        let clock = Clock::start();
        let schedule = ChaosSchedule::generate(
            seed,
            scenario.orders,
            scenario.arrivals,
            scenario.calm_at,
            &scenario.chaos,
        );
        let services: Vec<Rc<Service>> = Step::ALL
            .into_iter()
            .map(|step| Rc::new(Service::new(schedule.service(step).clone(), clock)))
            .collect();
        let client = |step: Step| Client::new(Rc::clone(&services[step as usize]), scenario.budget);
        let clients = Clients {
            inventory: client(Step::Inventory),
            payment: client(Step::Payment),
            shipping: client(Step::Shipping),
        };
        let broker = Broker::new(
            schedule.broker.clone(),
            schedule.relay_crashes.clone(),
            schedule.calm_at,
            clock,
        );
        Self {
            seed,
            schedule,
            clock,
            db: Db::open_in_memory().expect("an in-memory database opens"),
            services,
            clients,
            broker,
            new_row: Notify::new(),
            progress: Notify::new(),
            live: Cell::new(0),
            arrivals_done: Cell::new(false),
            panicked: Cell::new(false),
            tasks: RefCell::default(),
            deliveries: RefCell::default(),
            saga_starts: RefCell::default(),
            outcomes: RefCell::default(),
            errors: RefCell::default(),
            rolled_back: Cell::new(0),
            relay_crashes: Cell::new(0),
            scenario,
        }
    }

    /// Runs `task` on this thread; `live` tasks keep the run from settling while they run.
    fn spawn(self: &Rc<Self>, live: bool, task: impl Future<Output = ()> + 'static) {
        if live {
            self.live.set(self.live.get() + 1);
        }
        let guard = Guard {
            world: Rc::clone(self),
            live,
        };
        let handle = tokio::task::spawn_local(async move {
            let _guard = guard;
            task.await;
        });
        self.tasks.borrow_mut().push(handle);
    }

    /// Waits until every order is placed, the outbox is empty and no delivery or saga runs,
    /// or until a task panics.
    async fn settled(&self) {
        loop {
            if self.panicked.get() {
                return;
            }
            let idle = self.arrivals_done.get() && self.live.get() == 0;
            if idle && self.db.pending_count() == Ok(0) {
                return;
            }
            self.progress.notified().await;
        }
    }

    /// The customers: each order at its planned moment.
    async fn arrivals(self: Rc<Self>) {
        for planned in &self.schedule.orders {
            tokio::time::sleep_until(self.clock.instant(planned.at)).await;
            let placed = self.db.place_order(
                &planned.customer,
                planned.amount_cents,
                self.clock.now(),
                planned.crash_between_inserts,
            );
            match placed {
                Ok(Some(_)) => self.new_row.notify_one(),
                Ok(None) => self.rolled_back.set(self.rolled_back.get() + 1),
                Err(error) => self.error(format!("place_order: {error}")),
            }
        }
        self.arrivals_done.set(true);
    }

    /// The relay: a pass, then a sleep until the next row falls due (or a new order comes);
    /// down for a while whenever a publish crashes it.
    async fn relay(self: Rc<Self>) {
        let mut rng = StdRng::seed_from_u64(self.seed ^ 0x5e1a_7000);
        loop {
            let crashed = tokio::select! {
                biased;
                () = self.broker.crashed() => true,
                result = crate::relay_pass(
                    &self.db, &self.broker, &self.clock, &self.scenario.relay, &mut rng,
                ) => {
                    if let Err(error) = result {
                        self.error(format!("relay_pass: {error}"));
                    }
                    false
                }
            };
            self.progress.notify_one();
            if crashed {
                self.relay_crashes.set(self.relay_crashes.get() + 1);
                tokio::time::sleep(self.broker.restart_delay()).await;
                continue;
            }
            // Sleep until the earliest next_retry_at, or until a new order is committed.
            let now = self.clock.now();
            let wake = match self.db.next_due_at() {
                Ok(Some(due)) => due.max(now + millis(MIN_PASS_GAP)),
                Ok(None) => Millis::MAX,
                Err(error) => {
                    self.error(format!("next_due_at: {error}"));
                    now + millis(MIN_PASS_GAP)
                }
            };
            let sleep = async {
                match wake {
                    Millis::MAX => std::future::pending().await,
                    wake => tokio::time::sleep_until(self.clock.instant(wake)).await,
                }
            };
            tokio::select! {
                biased;
                () = self.new_row.notified() => {}
                () = sleep => {}
            }
        }
    }

    /// The broker hands `event` to the consumer after `delay`.
    fn deliver(self: &Rc<Self>, event: OrderPlaced, delay: Duration) {
        let world = Rc::clone(self);
        self.spawn(true, async move {
            tokio::time::sleep(delay.max(DELIVERY_DELAY)).await;
            world.consume(event).await;
        });
    }

    /// One delivery: the consumer decides, and a first delivery runs the order's saga.
    async fn consume(&self, event: OrderPlaced) {
        let order = event.order;
        *self.deliveries.borrow_mut().entry(order).or_default() += 1;
        let now = self.clock.now();
        match crate::consume_order_placed(&self.db, &event, now) {
            Ok(Consumed::Start) => {}
            Ok(Consumed::Duplicate) => return,
            Err(error) => return self.error(format!("consume_order_placed: {error}")),
        }
        let start = {
            let mut starts = self.saga_starts.borrow_mut();
            let count = starts.entry(order).or_default();
            *count += 1;
            *count
        };
        let saga_seed = self.seed ^ (order.0 as u64) << 20 ^ u64::from(start) << 52;
        let mut rng = StdRng::seed_from_u64(saga_seed);
        let outcome =
            crate::run_checkout(order, &self.clients, &self.scenario.checkout, &mut rng).await;
        self.outcomes
            .borrow_mut()
            .insert(order, (outcome, self.clock.now()));
    }

    fn error(&self, message: String) {
        self.errors.borrow_mut().push(message);
    }

    /// Stops every task and returns the messages of those that panicked.
    async fn stop(&self) -> Vec<String> {
        let handles: Vec<JoinHandle<()>> = self.tasks.borrow_mut().drain(..).collect();
        let mut panics = Vec::new();
        for handle in handles {
            if !handle.is_finished() {
                handle.abort();
                continue;
            }
            if let Err(error) = handle.await
                && error.is_panic()
            {
                panics.push(panic_text(error.into_panic()));
            }
        }
        panics
    }

    fn report(&self, ended_at: Option<Millis>, panics: Vec<String>) -> RunReport {
        let orders = self.db.orders().unwrap_or_default();
        let deliveries = self.deliveries.borrow();
        let starts = self.saga_starts.borrow();
        let outcomes = self.outcomes.borrow();
        let payment = &self.services[Step::Payment as usize];
        let inventory = &self.services[Step::Inventory as usize];
        let orders = orders
            .into_iter()
            .map(|(order, placed_at)| {
                let outbox = self.db.outbox_state(order).ok().flatten();
                let refused_by = if inventory.refuses(order) {
                    Some(Step::Inventory)
                } else if payment.refuses(order) {
                    Some(Step::Payment)
                } else {
                    None
                };
                OrderReport {
                    order,
                    placed_at,
                    outbox_status: outbox
                        .as_ref()
                        .map_or_else(|| "missing".to_owned(), |row| row.status.clone()),
                    publish_failures: outbox.as_ref().map_or(0, |row| row.attempts),
                    sent_at: outbox.as_ref().and_then(|row| row.sent_at),
                    received: outbox
                        .as_ref()
                        .map_or(0, |row| self.broker.receipts(row.id)),
                    deliveries: deliveries.get(&order).copied().unwrap_or(0),
                    saga_starts: starts.get(&order).copied().unwrap_or(0),
                    outcome: outcomes.get(&order).map(|(outcome, _)| *outcome),
                    ended_at: outcomes.get(&order).map(|(_, at)| *at),
                    refused_by,
                }
            })
            .collect();
        RunReport {
            seed: self.seed,
            deadline: millis(self.scenario.deadline),
            horizon: millis(self.scenario.horizon),
            calm_at: self.schedule.calm_at,
            budget: self.scenario.budget,
            ended_at,
            panics,
            errors: self.errors.borrow().clone(),
            rolled_back: self.rolled_back.get(),
            orders,
            services: self
                .services
                .iter()
                .map(|service| ServiceReport {
                    step: service.step(),
                    calls: service.calls(),
                    effects: service.effects(),
                })
                .collect(),
            publishes: self.broker.publishes(),
            relay_crashes: self.relay_crashes.get(),
            chaos: self.schedule.clone(),
        }
    }
}

/// The message of a panic payload.
fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    }
}
