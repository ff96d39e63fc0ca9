//! Given: the message broker, as a trait, and two stand-ins for it.
//!
//! A real broker is reached over the network: a publish can fail, or succeed without the
//! sender ever hearing so. `publish` returning `Ok(())` is the broker's acknowledgement: the
//! event is stored on the broker's side and will reach the consumers.

use std::fmt;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::model::OutboxEvent;

/// Why the broker did not acknowledge an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerError {
    pub reason: String,
}

impl fmt::Display for BrokerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "broker refused the event: {}", self.reason)
    }
}

impl std::error::Error for BrokerError {}

/// Where the relay publishes events.
pub trait Broker {
    /// Sends one event. `Ok(())` is the acknowledgement; after an `Err` the event may or may not
    /// have arrived, and the sender must assume it did not.
    fn publish(&mut self, event: &OutboxEvent) -> Result<(), BrokerError>;
}

/// A broker that acknowledges everything and remembers what it received, in order.
#[derive(Debug, Clone, Default)]
pub struct RecordingBroker {
    delivered: Vec<OutboxEvent>,
}

impl RecordingBroker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every event received, in the order it arrived, duplicates included.
    pub fn delivered(&self) -> &[OutboxEvent] {
        &self.delivered
    }

    /// How many times the event of outbox row `id` arrived.
    pub fn times_delivered(&self, id: i64) -> usize {
        self.delivered.iter().filter(|event| event.id == id).count()
    }
}

impl Broker for RecordingBroker {
    fn publish(&mut self, event: &OutboxEvent) -> Result<(), BrokerError> {
        self.delivered.push(event.clone());
        Ok(())
    }
}

/// A broker that refuses each publish with probability `failure_rate`, drawn from a seeded
/// generator: the same seed gives the same failures in every run.
#[derive(Debug)]
pub struct FlakyBroker {
    failure_rate: f64,
    rng: StdRng,
    attempts: usize,
    delivered: Vec<OutboxEvent>,
}

impl FlakyBroker {
    /// Refuses a publish with probability `failure_rate`, clamped to 0.0 ..= 1.0.
    pub fn new(failure_rate: f64, seed: u64) -> Self {
        Self {
            failure_rate: failure_rate.clamp(0.0, 1.0),
            rng: StdRng::seed_from_u64(seed),
            attempts: 0,
            delivered: Vec::new(),
        }
    }

    /// How many times `publish` was called, refused calls included.
    pub fn attempts(&self) -> usize {
        self.attempts
    }

    /// Every event acknowledged, in the order it arrived, duplicates included.
    pub fn delivered(&self) -> &[OutboxEvent] {
        &self.delivered
    }

    /// How many times the event of outbox row `id` was acknowledged.
    pub fn times_delivered(&self, id: i64) -> usize {
        self.delivered.iter().filter(|event| event.id == id).count()
    }
}

impl Broker for FlakyBroker {
    fn publish(&mut self, event: &OutboxEvent) -> Result<(), BrokerError> {
        self.attempts += 1;
        if self.rng.random_bool(self.failure_rate) {
            return Err(BrokerError {
                reason: format!("unavailable (publish attempt {})", self.attempts),
            });
        }
        self.delivered.push(event.clone());
        Ok(())
    }
}
