//! Given: the seeded chaos schedule. Everything that goes wrong in a run is decided here, from
//! the seed alone, so that a seed replays the same trouble every time.
//!
//! Two kinds of trouble:
//!
//! - **Windows**, drawn once per run from the seed: 503 storms with a `Retry-After` (every
//!   call in the window is turned away), latency spikes (every call in the window is done but
//!   answered too late), and relay crashes at given moments.
//! - **Per-call faults**, drawn for each call from a hash of the seed, the service, the order,
//!   the action and the call's number for that order and action: a 500, a slow answer, a call
//!   that never answers, and the business refusals (a declined card, no stock). A hash, not a
//!   shared generator, so that one order's retries do not change another order's luck.
//!
//! Nothing goes wrong after `calm_at`: from then on every call is answered at once. The
//! simulation's deadline is chosen so that a correct checkout always settles after the calm.

use std::fmt;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::model::{Action, Millis, OrderId, Step, millis};

/// How much chaos a run has. The defaults are the chapter's scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct ChaosLevels {
    /// Probability that the order service dies between the order's insert and the outbox's.
    pub placement_crash: f64,
    /// Per service: the most 503 storms in a run (0 to this many, evenly likely).
    pub max_storms: u32,
    /// A storm lasts from 3 to this many seconds.
    pub max_storm_secs: u64,
    /// Per service: the most latency spikes in a run.
    pub max_spikes: u32,
    /// Per call, outside windows: a 500, nothing done.
    pub failure_rate: f64,
    /// Per call, outside windows: done, but answered after 1.2 to 2.5 s.
    pub slow_rate: f64,
    /// Per call, outside windows: never answered, nothing done.
    pub hang_rate: f64,
    /// Per order: the card is declined (402), every time.
    pub decline_rate: f64,
    /// Per order: no stock (409), every time.
    pub out_of_stock_rate: f64,
    /// Broker: 503 storms in a run (0 to this many).
    pub broker_max_storms: u32,
    /// Broker, per publish: a 503 without `Retry-After`.
    pub broker_failure_rate: f64,
    /// Broker, per publish: the request is lost, never received, never answered.
    pub broker_lost_rate: f64,
    /// Broker, per publish: received, but acknowledged after 0.6 to 1.5 s.
    pub broker_slow_rate: f64,
    /// Broker, per event received: delivered to the consumer twice.
    pub broker_duplicate_rate: f64,
    /// Relay crashes in a run: 1 to this many.
    pub max_relay_crashes: u32,
}

impl Default for ChaosLevels {
    fn default() -> Self {
        Self {
            placement_crash: 0.05,
            max_storms: 1,
            max_storm_secs: 6,
            max_spikes: 1,
            failure_rate: 0.025,
            slow_rate: 0.015,
            hang_rate: 0.01,
            decline_rate: 0.10,
            out_of_stock_rate: 0.05,
            broker_max_storms: 1,
            broker_failure_rate: 0.04,
            broker_lost_rate: 0.03,
            broker_slow_rate: 0.04,
            broker_duplicate_rate: 0.05,
            max_relay_crashes: 3,
        }
    }
}

/// A stretch of virtual time, `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: Millis,
    pub end: Millis,
}

impl Window {
    pub fn contains(&self, at: Millis) -> bool {
        self.start <= at && at < self.end
    }
}

/// A 503 storm: every call in the window is turned away with this `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Storm {
    pub window: Window,
    pub retry_after: Duration,
}

/// A latency spike: every call in the window is done, and answered after `latency`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spike {
    pub window: Window,
    pub latency: Duration,
}

/// What happens to one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Done (or refused for a business reason), and answered after `latency`.
    Answer { latency: Duration },
    /// Done, and answered after `latency`: longer than any attempt waits.
    Slow { latency: Duration },
    /// Turned away with 503 and this `Retry-After`, nothing done.
    Unavailable { retry_after: Duration },
    /// 500 Internal Server Error, nothing done.
    Fail,
    /// Never answered, nothing done.
    Hang,
}

/// The chaos of one service.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceChaos {
    pub step: Step,
    pub storms: Vec<Storm>,
    pub spikes: Vec<Spike>,
    failure_rate: f64,
    slow_rate: f64,
    hang_rate: f64,
    refusal_rate: f64,
    seed: u64,
    calm_at: Millis,
}

impl ServiceChaos {
    /// What happens to the `nth` call (counted from 1) for `order`'s `action`, arriving `at`.
    pub fn fate(&self, at: Millis, order: OrderId, action: Action, nth: u32) -> Fate {
        if at >= self.calm_at {
            return Fate::Answer {
                latency: self.latency(order, action, nth),
            };
        }
        if let Some(storm) = self.storms.iter().find(|s| s.window.contains(at)) {
            return Fate::Unavailable {
                retry_after: storm.retry_after,
            };
        }
        if let Some(spike) = self.spikes.iter().find(|s| s.window.contains(at)) {
            return Fate::Slow {
                latency: spike.latency,
            };
        }
        let draw = unit(hash(&[
            self.seed,
            salt(self.step),
            1,
            key(order, action),
            nth.into(),
        ]));
        if draw < self.failure_rate {
            Fate::Fail
        } else if draw < self.failure_rate + self.slow_rate {
            let spread = unit(hash(&[
                self.seed,
                salt(self.step),
                2,
                key(order, action),
                nth.into(),
            ]));
            Fate::Slow {
                latency: Duration::from_millis(1_200 + (spread * 1_300.0) as u64),
            }
        } else if draw < self.failure_rate + self.slow_rate + self.hang_rate {
            Fate::Hang
        } else {
            Fate::Answer {
                latency: self.latency(order, action, nth),
            }
        }
    }

    /// Whether this service refuses `order` for good: the payment service declines its card,
    /// the inventory service has no stock for it. Shipping refuses nobody.
    pub fn refuses(&self, order: OrderId) -> bool {
        self.refusal_rate > 0.0
            && unit(hash(&[self.seed, salt(self.step), 3, order.0 as u64])) < self.refusal_rate
    }

    /// An ordinary answer's latency: 10 to 80 ms.
    fn latency(&self, order: OrderId, action: Action, nth: u32) -> Duration {
        let draw = unit(hash(&[
            self.seed,
            salt(self.step),
            4,
            key(order, action),
            nth.into(),
        ]));
        Duration::from_millis(10 + (draw * 70.0) as u64)
    }
}

/// What happens to one publish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublishFate {
    /// Received and acknowledged after `latency`.
    Ack { latency: Duration },
    /// Received, and acknowledged after `latency`: longer than the relay waits.
    SlowAck { latency: Duration },
    /// 503, with the storm's `Retry-After` or none; not received.
    Unavailable { retry_after: Option<Duration> },
    /// Lost on the way: not received, never answered.
    Lost,
    /// Refused for good (422) after 5 ms: the event is malformed, chapter 17's poison message.
    /// Not received.
    Rejected,
}

/// The chaos of the message broker.
#[derive(Debug, Clone, PartialEq)]
pub struct BrokerChaos {
    pub storms: Vec<Storm>,
    /// The events the broker refuses for good, whenever they come. The scenario's chaos has
    /// none: waiting fixes everything it does.
    pub rejected: Vec<i64>,
    failure_rate: f64,
    lost_rate: f64,
    slow_rate: f64,
    duplicate_rate: f64,
    seed: u64,
    calm_at: Millis,
}

impl BrokerChaos {
    /// What happens to the `nth` publish (counted from 1) of event `event_id`, arriving `at`.
    pub fn fate(&self, at: Millis, event_id: i64, nth: u32) -> PublishFate {
        if self.rejected.contains(&event_id) {
            return PublishFate::Rejected;
        }
        let ack = PublishFate::Ack {
            latency: Duration::from_millis(5 + u64::from(nth % 3) * 5),
        };
        if at >= self.calm_at {
            return ack;
        }
        if let Some(storm) = self.storms.iter().find(|s| s.window.contains(at)) {
            return PublishFate::Unavailable {
                retry_after: Some(storm.retry_after),
            };
        }
        let draw = unit(hash(&[self.seed, 10, event_id as u64, nth.into()]));
        let (fail, lost, slow) = (self.failure_rate, self.lost_rate, self.slow_rate);
        if draw < fail {
            PublishFate::Unavailable { retry_after: None }
        } else if draw < fail + lost {
            PublishFate::Lost
        } else if draw < fail + lost + slow {
            let spread = unit(hash(&[self.seed, 11, event_id as u64, nth.into()]));
            PublishFate::SlowAck {
                latency: Duration::from_millis(600 + (spread * 900.0) as u64),
            }
        } else {
            ack
        }
    }

    /// Whether the broker delivers the `nth` receipt of event `event_id` twice.
    pub fn duplicates(&self, event_id: i64, nth: u32) -> bool {
        unit(hash(&[self.seed, 12, event_id as u64, nth.into()])) < self.duplicate_rate
    }
}

/// A crash of the relay: the first publish at or after `at` kills it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelayCrash {
    pub at: Millis,
    /// `true`: the broker received the event before the relay died, so the relay never hears
    /// the acknowledgement. `false`: the relay died before the event left.
    pub after_receive: bool,
    /// How long the relay stays down.
    pub restart_after: Duration,
}

/// One order the customers will place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedOrder {
    pub at: Millis,
    pub customer: String,
    pub amount_cents: i64,
    /// The order service dies between the two inserts: the order is rolled back.
    pub crash_between_inserts: bool,
}

/// Everything that will go wrong in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct ChaosSchedule {
    pub seed: u64,
    /// From this moment on, nothing goes wrong.
    pub calm_at: Millis,
    pub orders: Vec<PlannedOrder>,
    /// Inventory, payment and shipping, in that order.
    pub services: Vec<ServiceChaos>,
    pub broker: BrokerChaos,
    pub relay_crashes: Vec<RelayCrash>,
}

impl ChaosSchedule {
    /// The schedule of `seed`: `orders` orders arriving over `arrivals`, trouble until
    /// `calm_at`.
    pub fn generate(
        seed: u64,
        orders: u32,
        arrivals: Duration,
        calm_at: Duration,
        levels: &ChaosLevels,
    ) -> Self {
        let mut rng = StdRng::seed_from_u64(seed ^ 0x00c4_a05c_4ed0_1e23);
        let calm = millis(calm_at);

        let mut times: Vec<Millis> = (0..orders)
            .map(|_| rng.random_range(0..=millis(arrivals)))
            .collect();
        times.sort_unstable();
        let orders = times
            .into_iter()
            .enumerate()
            .map(|(index, at)| PlannedOrder {
                at,
                customer: format!("customer-{}", index + 1),
                amount_cents: rng.random_range(1_000..=20_000),
                crash_between_inserts: rng.random_bool(levels.placement_crash),
            })
            .collect();

        let services = Step::ALL
            .into_iter()
            .map(|step| {
                let storms = (0..rng.random_range(0..=levels.max_storms))
                    .map(|_| Storm {
                        window: window(&mut rng, calm, 3, levels.max_storm_secs.max(3)),
                        retry_after: Duration::from_secs(rng.random_range(1..=3)),
                    })
                    .collect();
                let spikes = (0..rng.random_range(0..=levels.max_spikes))
                    .map(|_| Spike {
                        window: window(&mut rng, calm, 2, 5),
                        latency: Duration::from_millis(rng.random_range(1_200..=3_000)),
                    })
                    .collect();
                let refusal_rate = match step {
                    Step::Inventory => levels.out_of_stock_rate,
                    Step::Payment => levels.decline_rate,
                    Step::Shipping => 0.0,
                };
                ServiceChaos {
                    step,
                    storms,
                    spikes,
                    failure_rate: levels.failure_rate,
                    slow_rate: levels.slow_rate,
                    hang_rate: levels.hang_rate,
                    refusal_rate,
                    seed,
                    calm_at: calm,
                }
            })
            .collect();

        let broker = BrokerChaos {
            storms: (0..rng.random_range(0..=levels.broker_max_storms))
                .map(|_| Storm {
                    window: window(&mut rng, calm, 2, 5),
                    retry_after: Duration::from_secs(rng.random_range(1..=2)),
                })
                .collect(),
            failure_rate: levels.broker_failure_rate,
            lost_rate: levels.broker_lost_rate,
            slow_rate: levels.broker_slow_rate,
            duplicate_rate: levels.broker_duplicate_rate,
            seed,
            calm_at: calm,
            rejected: Vec::new(),
        };

        let mut relay_crashes: Vec<RelayCrash> = (0..rng
            .random_range(1..=levels.max_relay_crashes.max(1)))
            .map(|_| RelayCrash {
                at: rng.random_range(0..calm.max(1)),
                after_receive: rng.random_bool(0.5),
                restart_after: Duration::from_millis(rng.random_range(500..=2_000)),
            })
            .collect();
        relay_crashes.sort_by_key(|crash| crash.at);

        Self {
            seed,
            calm_at: calm,
            orders,
            services,
            broker,
            relay_crashes,
        }
    }

    /// The chaos of `step`'s service.
    pub fn service(&self, step: Step) -> &ServiceChaos {
        &self.services[step as usize]
    }
}

impl fmt::Display for ChaosSchedule {
    /// The schedule's windows, one line per service.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "chaos until {}: {} orders planned, {} roll back",
            seconds(self.calm_at),
            self.orders.len(),
            self.orders
                .iter()
                .filter(|o| o.crash_between_inserts)
                .count()
        )?;
        for chaos in &self.services {
            write!(f, "  {:<9}", chaos.step.name())?;
            write_windows(f, &chaos.storms, &chaos.spikes)?;
            writeln!(f)?;
        }
        write!(f, "  {:<9}", "broker")?;
        write_windows(f, &self.broker.storms, &[])?;
        writeln!(f)?;
        write!(f, "  {:<9}", "relay")?;
        for crash in &self.relay_crashes {
            let when = if crash.after_receive {
                "after receive"
            } else {
                "before send"
            };
            write!(
                f,
                " crash at {} ({when}, down {})",
                seconds(crash.at),
                seconds(millis(crash.restart_after))
            )?;
        }
        Ok(())
    }
}

fn write_windows(f: &mut fmt::Formatter<'_>, storms: &[Storm], spikes: &[Spike]) -> fmt::Result {
    if storms.is_empty() && spikes.is_empty() {
        return f.write_str(" no storm, no spike");
    }
    for storm in storms {
        write!(
            f,
            " 503 storm {}–{} (Retry-After {} s)",
            seconds(storm.window.start),
            seconds(storm.window.end),
            storm.retry_after.as_secs()
        )?;
    }
    for spike in spikes {
        write!(
            f,
            " spike {}–{} ({} ms)",
            seconds(spike.window.start),
            seconds(spike.window.end),
            spike.latency.as_millis()
        )?;
    }
    Ok(())
}

/// `12.3 s`.
pub fn seconds(at: Millis) -> String {
    format!("{:.1} s", at as f64 / 1_000.0)
}

/// A window of `min_secs` to `max_secs` seconds that ends before `calm`.
fn window(rng: &mut StdRng, calm: Millis, min_secs: u64, max_secs: u64) -> Window {
    let length = rng.random_range(
        millis(Duration::from_secs(min_secs))..=millis(Duration::from_secs(max_secs)),
    );
    let start = rng.random_range(0..=(calm - length).max(0));
    Window {
        start,
        end: start + length,
    }
}

fn salt(step: Step) -> u64 {
    step as u64 + 1
}

fn key(order: OrderId, action: Action) -> u64 {
    (order.0 as u64) << 1 | action as u64
}

/// SplitMix64 over a few words: a fixed, well-mixed hash, the same on every platform.
fn hash(words: &[u64]) -> u64 {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for &word in words {
        state = state.wrapping_add(word).wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        state = z ^ (z >> 31);
    }
    state
}

/// A hash as a number in `[0, 1)`.
fn unit(hash: u64) -> f64 {
    (hash >> 11) as f64 / (1u64 << 53) as f64
}
