//! Given: a scripted backend at the bottom of the stack, and a counter to put between two
//! layers. Both record when each call arrived (on tokio's clock), so a test can tell who called
//! whom, how often, and when.

use std::cell::{Cell, RefCell};

use tokio::time::Instant;

use crate::{CallError, Downstream};

/// The bottom of the stack: a backend whose calls fail or answer as its script says.
#[derive(Debug)]
pub struct Backend {
    failures: Vec<CallError>,
    afterwards: Option<CallError>,
    calls: Cell<u32>,
    arrivals: RefCell<Vec<Instant>>,
}

impl Backend {
    /// A backend whose first calls fail with `failures`, in order; every later call fails with
    /// `afterwards`, or answers when `afterwards` is `None`.
    pub fn new(failures: &[CallError], afterwards: Option<CallError>) -> Self {
        Self {
            failures: failures.to_vec(),
            afterwards,
            calls: Cell::new(0),
            arrivals: RefCell::new(Vec::new()),
        }
    }

    /// A healthy backend: every call answers.
    pub fn healthy() -> Self {
        Self::new(&[], None)
    }

    /// A total outage: every call fails with [`CallError::Unavailable`].
    pub fn down() -> Self {
        Self::new(&[], Some(CallError::Unavailable))
    }

    /// An overloaded backend that says so: every call fails with [`CallError::Overloaded`].
    pub fn overloaded() -> Self {
        Self::new(&[], Some(CallError::Overloaded))
    }

    /// A transient failure: the first `failures` calls fail with [`CallError::Unavailable`],
    /// then every call answers.
    pub fn failing_first(failures: usize) -> Self {
        Self::new(&vec![CallError::Unavailable; failures], None)
    }

    /// How many calls reached the backend.
    pub fn calls(&self) -> u32 {
        self.calls.get()
    }

    /// When each call reached the backend, in order.
    pub fn arrivals(&self) -> Vec<Instant> {
        self.arrivals.borrow().clone()
    }
}

impl Downstream for Backend {
    /// `Ok` with the call's number (counted from 1), or the error the script names for it.
    async fn call(&self) -> Result<u32, CallError> {
        let call = self.calls.get() + 1;
        self.calls.set(call);
        self.arrivals.borrow_mut().push(Instant::now());
        let scripted = usize::try_from(call - 1)
            .ok()
            .and_then(|index| self.failures.get(index));
        match scripted.copied().or(self.afterwards) {
            Some(error) => Err(error),
            None => Ok(call),
        }
    }
}

/// A layer wrapped in a counter: counts the calls made *to* it and records when they arrived,
/// then passes each call on unchanged.
#[derive(Debug)]
pub struct Counted<D> {
    inner: D,
    calls: Cell<u32>,
    arrivals: RefCell<Vec<Instant>>,
}

impl<D> Counted<D> {
    /// Wraps `inner`.
    pub fn new(inner: D) -> Self {
        Self {
            inner,
            calls: Cell::new(0),
            arrivals: RefCell::new(Vec::new()),
        }
    }

    /// How many calls were made to the wrapped layer.
    pub fn calls(&self) -> u32 {
        self.calls.get()
    }

    /// When each call to the wrapped layer arrived, in order.
    pub fn arrivals(&self) -> Vec<Instant> {
        self.arrivals.borrow().clone()
    }
}

impl<D: Downstream> Downstream for Counted<D> {
    async fn call(&self) -> Result<u32, CallError> {
        self.calls.set(self.calls.get() + 1);
        self.arrivals.borrow_mut().push(Instant::now());
        self.inner.call().await
    }
}
