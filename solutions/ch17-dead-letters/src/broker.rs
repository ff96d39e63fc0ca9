//! Given: the broker the relay publishes to, and a stub of it for tests and the book's run.

use std::fmt;

use crate::types::OutboxId;

/// One event as the relay hands it to the broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub id: OutboxId,
    pub aggregate_id: String,
    pub event_type: String,
    pub payload: String,
    /// Failed attempts so far (0 on the first try).
    pub attempts: u32,
}

/// Why the broker did not take an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublishError {
    /// Waiting may fix it: the broker is down, overloaded, or did not answer in time.
    Transient(String),
    /// Waiting will not fix it: the broker refuses this event. The event is a poison message.
    Permanent(String),
}

impl PublishError {
    /// What the broker said, to store in `last_error`.
    pub fn message(&self) -> &str {
        match self {
            PublishError::Transient(message) | PublishError::Permanent(message) => message,
        }
    }
}

impl fmt::Display for PublishError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PublishError::Transient(message) => write!(f, "transient: {message}"),
            PublishError::Permanent(message) => write!(f, "permanent: {message}"),
        }
    }
}

impl std::error::Error for PublishError {}

/// Where the relay publishes events. `Ok(())` is the broker's acknowledgement.
pub trait Broker {
    fn publish(&mut self, event: &Event) -> Result<(), PublishError>;
}

/// One call the stub received, and what it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub id: OutboxId,
    pub result: Result<(), PublishError>,
}

/// A broker that accepts every event except the payloads it was told to reject (for good) or
/// to fail (a few times, transiently). It records every call.
#[derive(Debug, Default)]
pub struct StubBroker {
    rejected: Vec<(String, String)>,
    flaky: Vec<(String, u32)>,
    calls: Vec<Call>,
}

impl StubBroker {
    /// A broker that accepts everything.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rejects `payload` permanently, saying `why`: a poison message.
    pub fn rejecting(mut self, payload: &str, why: &str) -> Self {
        self.rejected.push((payload.to_owned(), why.to_owned()));
        self
    }

    /// Fails the first `times` calls for `payload` with a transient `503 Service Unavailable`.
    pub fn failing_first(mut self, payload: &str, times: u32) -> Self {
        self.flaky.push((payload.to_owned(), times));
        self
    }

    /// The cause is fixed (the consumer was updated): `payload` is accepted from now on.
    pub fn accept(&mut self, payload: &str) {
        self.rejected.retain(|(rejected, _)| rejected != payload);
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> &[Call] {
        &self.calls
    }

    /// The ids the broker acknowledged, in order.
    pub fn published(&self) -> Vec<OutboxId> {
        self.calls
            .iter()
            .filter(|call| call.result.is_ok())
            .map(|call| call.id)
            .collect()
    }

    fn answer(&mut self, payload: &str) -> Result<(), PublishError> {
        if let Some((_, why)) = self.rejected.iter().find(|(p, _)| p == payload) {
            return Err(PublishError::Permanent(why.clone()));
        }
        if let Some((_, left)) = self
            .flaky
            .iter_mut()
            .find(|(p, left)| p == payload && *left > 0)
        {
            *left -= 1;
            return Err(PublishError::Transient(
                "503 Service Unavailable".to_owned(),
            ));
        }
        Ok(())
    }
}

impl Broker for StubBroker {
    fn publish(&mut self, event: &Event) -> Result<(), PublishError> {
        let result = self.answer(&event.payload);
        self.calls.push(Call {
            id: event.id,
            result: result.clone(),
        });
        result
    }
}
