//! Given: what a service can answer, what a call through the limiter can fail with, and a
//! stand-in for a service with a fixed number of workers.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;

/// How a request can fail at the service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceError {
    /// The service refused the request because it is overloaded (HTTP 503, gRPC
    /// `RESOURCE_EXHAUSTED`): a signal that the limit is too high.
    Overloaded,
    /// The service answered with another failure (a 404, a bad argument): no signal about load.
    Failed(String),
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceError::Overloaded => write!(f, "the service is overloaded"),
            ServiceError::Failed(why) => write!(f, "the request failed: {why}"),
        }
    }
}

impl std::error::Error for ServiceError {}

/// What a call through the limiter can fail with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitError {
    /// The limit was reached: the request was refused at once and never started.
    Rejected,
    /// The request started but took longer than its timeout, and was abandoned.
    TimedOut,
    /// The request started and the service answered with an error.
    Service(ServiceError),
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitError::Rejected => write!(f, "rejected: the concurrency limit is reached"),
            LimitError::TimedOut => write!(f, "the request timed out"),
            LimitError::Service(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for LimitError {}

/// A service with a fixed number of workers. A request waits in line (first come, first
/// served) for a free worker, then holds it for `service_time`. It can be told to refuse the
/// next few requests as overloaded, the way a flaky dependency does.
#[derive(Debug)]
pub struct Service {
    workers: Semaphore,
    service_time: Duration,
    refuse_next: AtomicU32,
    served: AtomicU32,
}

impl Service {
    /// A service with `workers` workers, each taking `service_time` per request.
    pub fn new(workers: usize, service_time: Duration) -> Self {
        Self {
            workers: Semaphore::new(workers),
            service_time,
            refuse_next: AtomicU32::new(0),
            served: AtomicU32::new(0),
        }
    }

    /// The next `count` requests are refused at once with [`ServiceError::Overloaded`].
    pub fn refuse_next(&self, count: u32) {
        self.refuse_next.store(count, Ordering::SeqCst);
    }

    /// One request: `Ok` with the request's number once a worker has served it, or
    /// `Overloaded` at once while refusing.
    pub async fn handle(&self) -> Result<u32, ServiceError> {
        let refusing = self
            .refuse_next
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(1)
            })
            .is_ok();
        if refusing {
            return Err(ServiceError::Overloaded);
        }
        let _worker = self
            .workers
            .acquire()
            .await
            .expect("the service never closes its workers");
        tokio::time::sleep(self.service_time).await;
        Ok(self.served.fetch_add(1, Ordering::SeqCst) + 1)
    }

    /// How many requests the service has served.
    pub fn served(&self) -> u32 {
        self.served.load(Ordering::SeqCst)
    }
}
