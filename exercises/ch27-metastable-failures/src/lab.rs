//! Given: the metastability lab behind the figures of chapter 27 and its "predict, then run".
//!
//! A discrete-event simulation on a virtual clock, seeded, so every run is reproducible. One
//! server works through its queue one request at a time: 10 ms each, a capacity of 100 requests
//! a second. For a few seconds (the trigger) every request takes 20 ms instead, which halves the
//! capacity. Clients start calls at random (a Poisson stream of `load × 100` calls a second);
//! each attempt carries a deadline one second after it is sent, and the client gives up on the
//! attempt at that deadline. A client retries at once after a timeout or an overload answer, up
//! to three attempts per call. Dropping a request costs the server nothing; serving one costs the
//! whole service time, whether its caller is still waiting or not.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::{AdmissionQueue, Overloaded, QueueConfig, Request, Time};

/// Requests the server serves per second outside the trigger.
pub const CAPACITY: u32 = 100;
/// The time to serve one request, outside the trigger and during it.
pub const SERVICE: Duration = Duration::from_millis(10);
pub const SLOW_SERVICE: Duration = Duration::from_millis(20);
/// Each attempt's deadline, counted from when it is sent.
pub const TIMEOUT: Duration = Duration::from_secs(1);
/// Attempts per call at most, when the client retries.
pub const ATTEMPTS: u32 = 3;
/// The length of a run, and when its trigger begins.
pub const SECONDS: u32 = 90;
pub const TRIGGER_START: u32 = 10;
/// The last seconds of a run, over which [`recovered`] judges it.
pub const JUDGED: u32 = 30;

/// The fixed server's settings: at most two seconds of work queued, LIFO once the oldest request
/// has waited 100 ms, and no request kept waiting more than half a second.
pub const FIXED: QueueConfig = QueueConfig {
    max_len: 200,
    lifo_after: Duration::from_millis(100),
    max_wait: Duration::from_millis(500),
};

/// Settings under which only the deadline rule ever drops a request.
const NEVER: Duration = Duration::from_secs(3600);

/// The client and server of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setup {
    /// A plain FIFO server that serves everything; clients make one attempt.
    NoRetries,
    /// A plain FIFO server that serves everything; clients retry.
    NaiveRetries,
    /// Clients retry; the server drops requests whose deadline has passed.
    DropExpired,
    /// As `DropExpired`, and the server switches to LIFO while a queue stands.
    AdaptiveLifo,
    /// Clients retry; the server uses all three rules with the [`FIXED`] settings.
    AllThree,
}

impl Setup {
    pub const ALL: [Setup; 5] = [
        Setup::NoRetries,
        Setup::NaiveRetries,
        Setup::DropExpired,
        Setup::AdaptiveLifo,
        Setup::AllThree,
    ];

    fn attempts(self) -> u32 {
        match self {
            Setup::NoRetries => 1,
            _ => ATTEMPTS,
        }
    }

    fn queue(self) -> Queue {
        let config = match self {
            Setup::NoRetries | Setup::NaiveRetries => return Queue::Plain(VecDeque::new()),
            Setup::DropExpired => QueueConfig {
                max_len: usize::MAX,
                lifo_after: NEVER,
                max_wait: NEVER,
            },
            Setup::AdaptiveLifo => QueueConfig {
                max_len: usize::MAX,
                lifo_after: FIXED.lifo_after,
                max_wait: NEVER,
            },
            Setup::AllThree => FIXED,
        };
        Queue::Admission(AdmissionQueue::new(config))
    }
}

/// One run's conditions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scenario {
    /// Calls started per second, as a share of [`CAPACITY`].
    pub load: f64,
    /// How long capacity stays halved, from [`TRIGGER_START`].
    pub trigger: Duration,
    pub seed: u64,
}

/// What happened in one second of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Second {
    /// Calls the clients started.
    pub offered: u32,
    /// Attempts that reached the server, retries included.
    pub attempts: u32,
    /// Requests the server finished serving, whether anyone still waited for them or not.
    pub served: u32,
    /// Calls that succeeded: served before their attempt's deadline.
    pub goodput: u32,
    /// Requests answered with an overload error.
    pub shed: u32,
}

/// Whether a run ended healthy: over its last [`JUDGED`] seconds, at least 90 % of the calls
/// started were served in time.
pub fn recovered(seconds: &[Second]) -> bool {
    let tail = &seconds[seconds.len() - JUDGED as usize..];
    let offered: u32 = tail.iter().map(|s| s.offered).sum();
    let goodput: u32 = tail.iter().map(|s| s.goodput).sum();
    f64::from(goodput) >= 0.9 * f64::from(offered)
}

/// The server's queue: a plain FIFO, or the chapter's admission queue.
enum Queue {
    Plain(VecDeque<Request>),
    Admission(AdmissionQueue),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A client starts a new call.
    NewCall,
    /// An attempt's deadline: its client gives up on it.
    Deadline(u64),
    /// The server finishes the request it was serving.
    Done(u64),
}

/// One call of a client.
struct Call {
    attempts: u32,
    /// The id of the attempt the client is waiting for, if any.
    waiting_for: Option<u64>,
}

struct Lab {
    setup: Setup,
    scenario: Scenario,
    rng: StdRng,
    events: BinaryHeap<Reverse<(Time, u64, Event)>>,
    sequence: u64,
    queue: Queue,
    busy: bool,
    calls: Vec<Call>,
    /// For each attempt id, the call it belongs to.
    call_of: Vec<usize>,
    seconds: Vec<Second>,
}

/// Runs the lab once and returns what happened in each second.
pub fn simulate(setup: Setup, scenario: Scenario) -> Vec<Second> {
    let mut lab = Lab {
        setup,
        scenario,
        rng: StdRng::seed_from_u64(scenario.seed),
        events: BinaryHeap::new(),
        sequence: 0,
        queue: setup.queue(),
        busy: false,
        calls: Vec::new(),
        call_of: Vec::new(),
        seconds: vec![Second::default(); SECONDS as usize],
    };
    let first = lab.gap();
    lab.schedule(first, Event::NewCall);
    while let Some(Reverse((now, _, event))) = lab.events.pop() {
        lab.handle(now, event);
    }
    lab.seconds
}

impl Lab {
    fn schedule(&mut self, at: Time, event: Event) {
        self.sequence += 1;
        self.events.push(Reverse((at, self.sequence, event)));
    }

    /// The time to the next new call: exponential, for a Poisson stream of calls.
    fn gap(&mut self) -> Time {
        let rate = self.scenario.load * f64::from(CAPACITY);
        let uniform: f64 = self.rng.random();
        Duration::from_secs_f64(-(1.0 - uniform).ln() / rate)
    }

    fn second(&mut self, now: Time) -> Option<&mut Second> {
        self.seconds.get_mut(now.as_secs() as usize)
    }

    fn service_time(&self, start: Time) -> Duration {
        let trigger_start = Duration::from_secs(u64::from(TRIGGER_START));
        if start >= trigger_start && start < trigger_start + self.scenario.trigger {
            SLOW_SERVICE
        } else {
            SERVICE
        }
    }

    fn handle(&mut self, now: Time, event: Event) {
        match event {
            Event::NewCall => {
                if let Some(second) = self.second(now) {
                    second.offered += 1;
                    self.calls.push(Call {
                        attempts: 0,
                        waiting_for: None,
                    });
                    let call = self.calls.len() - 1;
                    self.send(call, now);
                    let next = now + self.gap();
                    self.schedule(next, Event::NewCall);
                }
            }
            Event::Deadline(id) => {
                let call = self.call_of[id as usize];
                if self.calls[call].waiting_for == Some(id) {
                    self.calls[call].waiting_for = None;
                    self.retry(call, now);
                }
            }
            Event::Done(id) => {
                self.busy = false;
                if let Some(second) = self.second(now) {
                    second.served += 1;
                }
                let call = self.call_of[id as usize];
                if self.calls[call].waiting_for == Some(id) {
                    self.calls[call].waiting_for = None;
                    if let Some(second) = self.second(now) {
                        second.goodput += 1;
                    }
                }
            }
        }
        self.start_work(now);
    }

    /// Sends a new attempt of `call` at `now`.
    fn send(&mut self, call: usize, now: Time) {
        let id = self.call_of.len() as u64;
        self.call_of.push(call);
        self.calls[call].attempts += 1;
        self.calls[call].waiting_for = Some(id);
        let request = Request {
            id,
            sent_at: now,
            deadline: now + TIMEOUT,
        };
        self.schedule(request.deadline, Event::Deadline(id));
        if let Some(second) = self.second(now) {
            second.attempts += 1;
        }
        let refused = match &mut self.queue {
            Queue::Plain(queue) => {
                queue.push_back(request);
                None
            }
            Queue::Admission(queue) => queue.push(request, now).err(),
        };
        if let Some(answer) = refused {
            self.answer(answer, now);
        }
    }

    /// Sends another attempt of `call`, if it has attempts left.
    fn retry(&mut self, call: usize, now: Time) {
        if self.calls[call].attempts < self.setup.attempts() {
            self.send(call, now);
        }
    }

    // ANCHOR: server_loop
    /// The client of a shed request receives its overload answer, classifies it as transient,
    /// and retries at once if it is still waiting for that attempt.
    fn answer(&mut self, answer: Overloaded, now: Time) {
        if let Some(second) = self.second(now) {
            second.shed += 1;
        }
        let call = self.call_of[answer.id as usize];
        if self.calls[call].waiting_for == Some(answer.id) {
            self.calls[call].waiting_for = None;
            self.retry(call, now);
        }
    }

    /// If the server is free, takes its next request.
    fn start_work(&mut self, now: Time) {
        while !self.busy {
            let (serve, shed) = match &mut self.queue {
                Queue::Plain(queue) => (queue.pop_front(), Vec::new()),
                Queue::Admission(queue) => {
                    let next = queue.next(now);
                    (next.serve, next.shed)
                }
            };
            let answered = !shed.is_empty();
            for answer in shed {
                self.answer(answer, now);
            }
            match serve {
                Some(request) => {
                    self.busy = true;
                    let done = now + self.service_time(now);
                    self.schedule(done, Event::Done(request.id));
                }
                // Answers may have brought retries into the queue: look again.
                None if answered => {}
                None => break,
            }
        }
    }
    // ANCHOR_END: server_loop
}
