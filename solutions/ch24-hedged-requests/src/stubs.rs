//! Given: a scripted backend that records every request it receives and how each one ended.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::policy::{Attempt, Code};

/// How one request ended, as the backend saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Still running.
    Running,
    /// The backend sent its answer.
    Answered,
    /// The caller dropped the request before the answer (it was cancelled).
    Cancelled,
}

/// One request the backend received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    pub attempt: Attempt,
    pub at: Instant,
    pub ending: Ending,
}

/// A backend that answers request number `n` with the `n`-th scripted reply, after its latency.
/// Requests beyond the script get the last reply. Clones share one record.
#[derive(Debug, Clone)]
pub struct Backend {
    script: Arc<Vec<(Duration, Result<u32, Code>)>>,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Backend {
    /// A backend that answers request `n` with `script[n]`: (latency, reply).
    pub fn scripted(script: Vec<(Duration, Result<u32, Code>)>) -> Self {
        assert!(!script.is_empty(), "a script needs at least one reply");
        Self {
            script: Arc::new(script),
            received: Arc::default(),
        }
    }

    /// One request. The future owns what it needs, so it can be spawned.
    pub fn send(&self, attempt: Attempt) -> impl Future<Output = Result<u32, Code>> + Send + use<> {
        let index = (attempt.number as usize).min(self.script.len() - 1);
        let (latency, reply) = self.script[index];
        let received = Arc::clone(&self.received);
        let slot = {
            let mut log = lock(&received);
            log.push(Received {
                attempt,
                at: Instant::now(),
                ending: Ending::Running,
            });
            log.len() - 1
        };
        async move {
            let mut ending = Ends {
                log: received,
                slot,
                ending: Ending::Cancelled,
            };
            tokio::time::sleep(latency).await;
            ending.ending = Ending::Answered;
            reply
        }
    }

    /// Every request received so far, in the order they arrived.
    pub fn received(&self) -> Vec<Received> {
        lock(&self.received).clone()
    }
}

/// Writes how a request ended when its future is dropped, answered or not.
struct Ends {
    log: Arc<Mutex<Vec<Received>>>,
    slot: usize,
    ending: Ending,
}

impl Drop for Ends {
    fn drop(&mut self) {
        lock(&self.log)[self.slot].ending = self.ending;
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
