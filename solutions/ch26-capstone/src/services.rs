//! Given: the simulated services. Inventory, payment and shipping answer the orchestrator's
//! calls; the broker takes the relay's publishes and delivers events to the consumer. Each one
//! follows the chaos schedule, and writes down every call it receives, so the checks can
//! replay the run.
//!
//! Like a real payment API, every service deduplicates on the idempotency key: the first
//! outcome for a key and action (success or refusal) is saved, and a later call with the same
//! key and action gets it again without any work being done twice. A call with a *new* key is
//! new work: that is how a retry with a fresh key charges a card twice. A key names one request:
//! a compensation that comes with a key an execution used is refused (422), and one that does
//! not name the execution it undoes is refused too (400). Undoing work that was never done
//! under the named key does nothing, successfully.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet, VecDeque};
use std::future::pending;
use std::rc::Rc;
use std::time::Duration;

use tokio::sync::Notify;

use crate::budget::{BudgetConfig, RetryBudget};
use crate::chaos::{BrokerChaos, Fate, PublishFate, RelayCrash, ServiceChaos};
use crate::model::{
    Action, Call, IdempotencyKey, Millis, OrderId, OrderPlaced, ServiceError, Step,
};
use crate::sim::Clock;

/// How a service answered one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Did the work and answered `Ok`.
    Done,
    /// Answered with the saved outcome of an earlier call with the same key: nothing done.
    Replayed,
    /// Refused for good: 402 (card declined) or 409 (out of stock). Saved under the key.
    Refused,
    /// 503 Service Unavailable with `Retry-After`: nothing done.
    Unavailable { retry_after: Duration },
    /// 500 Internal Server Error: nothing done.
    Failed,
    /// Never answered: nothing done.
    Hung,
}

/// One call that reached a service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord {
    /// When it arrived.
    pub at: Millis,
    pub order: OrderId,
    pub action: Action,
    pub key: IdempotencyKey,
    /// The execution key a compensation named as the work it undoes.
    pub undoes: Option<IdempotencyKey>,
    /// The attempt number the caller sent.
    pub attempt: u32,
    pub answer: Answer,
    /// How long the answer took; `None` if it never came.
    pub latency: Option<Duration>,
}

/// Work a service did: a reservation, a charge, a booking, or the undoing of one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effect {
    pub at: Millis,
    pub order: OrderId,
    pub action: Action,
    pub key: IdempotencyKey,
}

#[derive(Debug, Default)]
struct ServiceState {
    calls: Vec<CallRecord>,
    /// Calls so far per order and action: the `nth` of the chaos draw.
    counts: HashMap<(OrderId, Action), u32>,
    /// The first outcome of every key and action.
    saved: HashMap<(IdempotencyKey, Action), Result<(), ServiceError>>,
    /// The keys whose work is done, and not undone.
    done: HashSet<IdempotencyKey>,
    effects: Vec<Effect>,
}

/// A simulated remote service: inventory, payment or shipping.
#[derive(Debug)]
pub struct Service {
    chaos: ServiceChaos,
    clock: Clock,
    state: RefCell<ServiceState>,
}

impl Service {
    pub fn new(chaos: ServiceChaos, clock: Clock) -> Self {
        Self {
            chaos,
            clock,
            state: RefCell::default(),
        }
    }

    pub fn step(&self) -> Step {
        self.chaos.step
    }

    /// Handles one call, as the chaos schedule says.
    pub async fn handle(&self, call: &Call) -> Result<(), ServiceError> {
        let at = self.clock.now();
        let nth = {
            let mut state = self.state.borrow_mut();
            let count = state.counts.entry((call.order, call.action)).or_default();
            *count += 1;
            *count
        };
        let (answer, latency, result) = match self.chaos.fate(at, call.order, call.action, nth) {
            Fate::Unavailable { retry_after } => (
                Answer::Unavailable { retry_after },
                Some(Duration::from_millis(5)),
                Err(ServiceError::http(503, Some(retry_after))),
            ),
            Fate::Fail => (
                Answer::Failed,
                Some(Duration::from_millis(20)),
                Err(ServiceError::http(500, None)),
            ),
            Fate::Hang => (Answer::Hung, None, Ok(())),
            Fate::Answer { latency } | Fate::Slow { latency } => {
                let (answer, result) = self.process(call, at);
                (answer, Some(latency), result)
            }
        };
        self.state.borrow_mut().calls.push(CallRecord {
            at,
            order: call.order,
            action: call.action,
            key: call.key.clone(),
            undoes: call.undoes.clone(),
            attempt: call.attempt,
            answer,
            latency,
        });
        match latency {
            Some(latency) => {
                tokio::time::sleep(latency).await;
                result
            }
            None => pending().await,
        }
    }

    /// Does the call's work, once per key and action.
    fn process(&self, call: &Call, at: Millis) -> (Answer, Result<(), ServiceError>) {
        let mut state = self.state.borrow_mut();
        let saved_key = (call.key.clone(), call.action);
        if let Some(saved) = state.saved.get(&saved_key) {
            return (Answer::Replayed, saved.clone());
        }
        if call.action == Action::Compensate {
            // A key names one request: the compensation must bring its own, and say what it undoes.
            let reused = state
                .saved
                .contains_key(&(call.key.clone(), Action::Execute));
            let refusal = match &call.undoes {
                _ if reused => Some(422),
                None => Some(400),
                Some(_) => None,
            };
            if let Some(status) = refusal {
                let result = Err(ServiceError::http(status, None));
                state.saved.insert(saved_key, result.clone());
                return (Answer::Refused, result);
            }
        }
        let (answer, result, did_work) = match call.action {
            Action::Execute if self.chaos.refuses(call.order) => {
                let status = if self.step() == Step::Payment {
                    402
                } else {
                    409
                };
                (
                    Answer::Refused,
                    Err(ServiceError::http(status, None)),
                    false,
                )
            }
            Action::Execute => (Answer::Done, Ok(()), state.done.insert(call.key.clone())),
            // Undoing work that was never done under that key does nothing, successfully.
            Action::Compensate => {
                let undone = call
                    .undoes
                    .as_ref()
                    .is_some_and(|undoes| state.done.remove(undoes));
                (Answer::Done, Ok(()), undone)
            }
        };
        if did_work {
            state.effects.push(Effect {
                at,
                order: call.order,
                action: call.action,
                key: call.key.clone(),
            });
        }
        state.saved.insert(saved_key, result.clone());
        (answer, result)
    }

    /// Every call received so far, in order.
    pub fn calls(&self) -> Vec<CallRecord> {
        self.state.borrow().calls.clone()
    }

    /// Every piece of work done so far, in order.
    pub fn effects(&self) -> Vec<Effect> {
        self.state.borrow().effects.clone()
    }

    /// Whether this service refuses `order` for good (the chaos plan).
    pub fn refuses(&self, order: OrderId) -> bool {
        self.chaos.refuses(order)
    }
}

/// The orchestrator's client for one service: the way to call it, and the retry budgets every
/// saga shares for it.
///
/// Two budgets: one for the steps' work, one for the compensations. The overload that makes
/// steps fail drains the first; the compensations that follow must not find their own budget
/// spent by it, or the cleanup would be refused by the very trouble it cleans up after.
#[derive(Debug)]
pub struct Client {
    service: Rc<Service>,
    execute: RetryBudget,
    compensate: RetryBudget,
}

impl Client {
    /// A client whose two budgets start as `budget` (both unlimited if `None`).
    pub fn new(service: Rc<Service>, budget: Option<BudgetConfig>) -> Self {
        let make = || budget.map_or_else(RetryBudget::unlimited, RetryBudget::new);
        Self {
            service,
            execute: make(),
            compensate: make(),
        }
    }

    /// Which step's service this is.
    pub fn step(&self) -> Step {
        self.service.step()
    }

    /// Makes one call: one attempt. It may take long, or never end: bound it with a timeout.
    pub async fn call(&self, call: &Call) -> Result<(), ServiceError> {
        self.service.handle(call).await
    }

    /// The retry budget for `action` calls to this service, shared by every saga.
    pub fn budget(&self, action: Action) -> &RetryBudget {
        match action {
            Action::Execute => &self.execute,
            Action::Compensate => &self.compensate,
        }
    }
}

/// The clients of the three services of the checkout.
#[derive(Debug)]
pub struct Clients {
    pub inventory: Client,
    pub payment: Client,
    pub shipping: Client,
}

impl Clients {
    /// The client of `step`'s service.
    pub fn get(&self, step: Step) -> &Client {
        match step {
            Step::Inventory => &self.inventory,
            Step::Payment => &self.payment,
            Step::Shipping => &self.shipping,
        }
    }
}

/// How the broker answered one publish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublishAnswer {
    /// Received and acknowledged in time.
    Acked,
    /// Received, acknowledged after `latency`.
    SlowAck { latency: Duration },
    /// 503: not received.
    Unavailable { retry_after: Option<Duration> },
    /// Lost on the way: not received, never answered.
    Lost,
    /// 422: refused for good, not received.
    Rejected,
    /// The relay crashed during this publish, before or after the broker received the event.
    Crashed { after_receive: bool },
}

/// One publish that reached the broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishRecord {
    pub at: Millis,
    pub event_id: i64,
    pub order: OrderId,
    pub answer: PublishAnswer,
}

/// Delivers an event to the consumer after a delay.
pub type Deliver = Box<dyn Fn(OrderPlaced, Duration)>;

#[derive(Default)]
struct BrokerState {
    publishes: Vec<PublishRecord>,
    counts: HashMap<i64, u32>,
    receipts: HashMap<i64, u32>,
}

/// The simulated message broker. What it receives, it delivers to the consumer at least once.
pub struct Broker {
    chaos: BrokerChaos,
    clock: Clock,
    state: RefCell<BrokerState>,
    crashes: RefCell<VecDeque<RelayCrash>>,
    calm_at: Millis,
    crash_signal: Notify,
    last_crash: Cell<Option<RelayCrash>>,
    deliver: RefCell<Option<Deliver>>,
}

impl Broker {
    pub fn new(
        chaos: BrokerChaos,
        crashes: Vec<RelayCrash>,
        calm_at: Millis,
        clock: Clock,
    ) -> Self {
        Self {
            chaos,
            clock,
            state: RefCell::default(),
            crashes: RefCell::new(crashes.into()),
            calm_at,
            crash_signal: Notify::new(),
            last_crash: Cell::new(None),
            deliver: RefCell::new(None),
        }
    }

    /// Where received events go.
    pub fn set_deliver(&self, deliver: Deliver) {
        *self.deliver.borrow_mut() = Some(deliver);
    }

    /// Publishes one event. `Ok(())` is the broker's acknowledgement: the event is received and
    /// will be delivered. After an `Err`, or a publish that takes too long, the event may or may
    /// not have been received.
    pub async fn publish(&self, event: &OrderPlaced) -> Result<(), ServiceError> {
        let at = self.clock.now();
        let nth = {
            let mut state = self.state.borrow_mut();
            let count = state.counts.entry(event.event_id).or_default();
            *count += 1;
            *count
        };
        if let Some(crash) = self.due_crash(at) {
            if crash.after_receive {
                self.receive(event);
            }
            self.record(
                at,
                event,
                PublishAnswer::Crashed {
                    after_receive: crash.after_receive,
                },
            );
            self.last_crash.set(Some(crash));
            self.crash_signal.notify_one();
            return pending().await;
        }
        match self.chaos.fate(at, event.event_id, nth) {
            PublishFate::Ack { latency } => {
                self.record(at, event, PublishAnswer::Acked);
                tokio::time::sleep(latency).await;
                self.receive(event);
                Ok(())
            }
            PublishFate::SlowAck { latency } => {
                self.record(at, event, PublishAnswer::SlowAck { latency });
                self.receive(event);
                tokio::time::sleep(latency).await;
                Ok(())
            }
            PublishFate::Unavailable { retry_after } => {
                self.record(at, event, PublishAnswer::Unavailable { retry_after });
                tokio::time::sleep(Duration::from_millis(5)).await;
                Err(ServiceError::http(503, retry_after))
            }
            PublishFate::Lost => {
                self.record(at, event, PublishAnswer::Lost);
                pending().await
            }
            PublishFate::Rejected => {
                self.record(at, event, PublishAnswer::Rejected);
                tokio::time::sleep(Duration::from_millis(5)).await;
                Err(ServiceError::http(422, None))
            }
        }
    }

    /// Resolves when a publish has crashed the relay.
    pub async fn crashed(&self) {
        self.crash_signal.notified().await;
    }

    /// How long the relay stays down after its last crash.
    pub fn restart_delay(&self) -> Duration {
        self.last_crash
            .get()
            .map_or(Duration::ZERO, |crash| crash.restart_after)
    }

    /// Every publish received so far, in order.
    pub fn publishes(&self) -> Vec<PublishRecord> {
        self.state.borrow().publishes.clone()
    }

    /// How many times the broker received event `event_id`.
    pub fn receipts(&self, event_id: i64) -> u32 {
        self.state
            .borrow()
            .receipts
            .get(&event_id)
            .copied()
            .unwrap_or(0)
    }

    /// The crash planned for a publish at `at`, if one is due (never after the calm).
    fn due_crash(&self, at: Millis) -> Option<RelayCrash> {
        let mut crashes = self.crashes.borrow_mut();
        if at >= self.calm_at {
            crashes.clear();
            return None;
        }
        match crashes.front() {
            Some(crash) if crash.at <= at => crashes.pop_front(),
            _ => None,
        }
    }

    fn record(&self, at: Millis, event: &OrderPlaced, answer: PublishAnswer) {
        self.state.borrow_mut().publishes.push(PublishRecord {
            at,
            event_id: event.event_id,
            order: event.order,
            answer,
        });
    }

    /// The event is in the broker: deliver it, now and, if the chaos says so, once more.
    fn receive(&self, event: &OrderPlaced) {
        let nth = {
            let mut state = self.state.borrow_mut();
            let count = state.receipts.entry(event.event_id).or_default();
            *count += 1;
            *count
        };
        if let Some(deliver) = self.deliver.borrow().as_ref() {
            deliver(event.clone(), Duration::from_millis(20));
            if self.chaos.duplicates(event.event_id, nth) {
                deliver(event.clone(), Duration::from_millis(1_500));
            }
        }
    }
}
