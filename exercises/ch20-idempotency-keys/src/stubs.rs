//! Given: a payment backend that counts its charges, the server that puts your
//! [`IdempotencyStore`] in front of it, and a flaky network between client and server.
//!
//! Everything runs on tokio's clock, so a test under a paused clock takes no real time.

use std::collections::VecDeque;
use std::panic::resume_unwind;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::api::{ApiError, ChargeRequest, PaymentApi, PaymentError, Receipt};
use crate::key::IdempotencyKey;
use crate::{DEFAULT_TTL, IdempotencyStore};

/// Locks a mutex, ignoring poisoning: these stubs never leave their data half-updated.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The part of the payment service that moves money. It knows nothing about idempotency: every
/// call to [`PaymentBackend::charge`] is a new charge.
#[derive(Debug)]
pub struct PaymentBackend {
    latency: Duration,
    failures: Mutex<VecDeque<PaymentError>>,
    executions: AtomicU32,
    charges: Mutex<Vec<Receipt>>,
}

impl PaymentBackend {
    /// A backend whose every charge takes `latency` and succeeds.
    pub fn new(latency: Duration) -> Self {
        Self {
            latency,
            failures: Mutex::new(VecDeque::new()),
            executions: AtomicU32::new(0),
            charges: Mutex::new(Vec::new()),
        }
    }

    /// The same backend, but its first charges fail with `errors`, one each, in order.
    pub fn failing_first(self, errors: impl IntoIterator<Item = PaymentError>) -> Self {
        lock(&self.failures).extend(errors);
        self
    }

    /// Executes one charge: waits `latency`, then charges the card (or fails, if the script says
    /// so). A failed charge moves no money.
    pub async fn charge(&self, request: &ChargeRequest) -> Result<Receipt, PaymentError> {
        self.executions.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.latency).await;
        if let Some(error) = lock(&self.failures).pop_front() {
            return Err(error);
        }
        let mut charges = lock(&self.charges);
        let receipt = Receipt {
            charge_id: charges.len() as u32 + 1,
            customer: request.customer.clone(),
            amount_cents: request.amount_cents,
        };
        charges.push(receipt.clone());
        Ok(receipt)
    }

    /// How many times [`PaymentBackend::charge`] was called, successful or not.
    pub fn executions(&self) -> u32 {
        self.executions.load(Ordering::SeqCst)
    }

    /// Every charge that moved money, in order.
    pub fn charges(&self) -> Vec<Receipt> {
        lock(&self.charges).clone()
    }
}

/// The payment service: validates a request, then runs it through an [`IdempotencyStore`] in
/// front of the [`PaymentBackend`].
#[derive(Debug)]
pub struct PaymentServer {
    store: IdempotencyStore<Receipt, PaymentError>,
    backend: PaymentBackend,
}

impl PaymentServer {
    /// A server that remembers keys for [`DEFAULT_TTL`] (24 hours).
    pub fn new(backend: PaymentBackend) -> Self {
        Self::with_ttl(backend, DEFAULT_TTL)
    }

    /// A server that remembers keys for `ttl`.
    pub fn with_ttl(backend: PaymentBackend, ttl: Duration) -> Self {
        Self {
            store: IdempotencyStore::new(ttl),
            backend,
        }
    }

    pub fn backend(&self) -> &PaymentBackend {
        &self.backend
    }

    /// Handles one request. Validation comes first and touches nothing: a request refused with
    /// 400 leaves no trace under its key. Only a valid request reaches the store.
    pub async fn handle(
        &self,
        key: &IdempotencyKey,
        request: &ChargeRequest,
    ) -> Result<Receipt, ApiError> {
        if request.amount_cents == 0 {
            return Err(ApiError::Invalid("the amount must be positive".to_owned()));
        }
        match self
            .store
            .handle(key, request, || self.backend.charge(request))
            .await
        {
            Ok(outcome) => outcome.map_err(ApiError::Payment),
            Err(refusal) => Err(refusal.into()),
        }
    }
}

/// Calls straight to the server: a perfect network.
impl PaymentApi for PaymentServer {
    async fn charge(
        &self,
        key: &IdempotencyKey,
        request: &ChargeRequest,
    ) -> Result<Receipt, ApiError> {
        self.handle(key, request).await
    }
}

/// What the network does to one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The request reaches the server, and its answer comes back if it is ready within the
    /// timeout. If it is not, the client times out while the server carries on.
    Deliver,
    /// The request is lost on the way: the server never sees it, the client times out.
    LoseRequest,
    /// The server handles the request, then its answer is lost: the client times out although
    /// the charge happened. The classic double-charge setup.
    LoseResponse,
    /// The server is overloaded and answers 503 at once, without looking at the request.
    Unavailable,
}

/// A network between a client and a [`PaymentServer`], with a script of faults: the first call
/// meets the first fault, and so on; once the script runs out, every call is delivered.
///
/// The client waits at most `timeout` for an answer. The server runs each request on a task of
/// its own, so when the client gives up, the server does not: it finishes the work and saves
/// the outcome, exactly like a real server that never hears about the client's timeout.
#[derive(Debug)]
pub struct FlakyNetwork {
    server: Arc<PaymentServer>,
    timeout: Duration,
    faults: Mutex<VecDeque<Fault>>,
    keys: Mutex<Vec<IdempotencyKey>>,
}

impl FlakyNetwork {
    pub fn new(
        server: Arc<PaymentServer>,
        timeout: Duration,
        faults: impl IntoIterator<Item = Fault>,
    ) -> Self {
        Self {
            server,
            timeout,
            faults: Mutex::new(faults.into_iter().collect()),
            keys: Mutex::new(Vec::new()),
        }
    }

    /// How many calls the client made.
    pub fn calls(&self) -> usize {
        lock(&self.keys).len()
    }

    /// The idempotency key of every call, in order.
    pub fn keys(&self) -> Vec<IdempotencyKey> {
        lock(&self.keys).clone()
    }
}

impl PaymentApi for FlakyNetwork {
    async fn charge(
        &self,
        key: &IdempotencyKey,
        request: &ChargeRequest,
    ) -> Result<Receipt, ApiError> {
        let fault = lock(&self.faults).pop_front().unwrap_or(Fault::Deliver);
        lock(&self.keys).push(key.clone());
        let sent_at = Instant::now();
        match fault {
            Fault::Unavailable => return Err(ApiError::Unavailable),
            Fault::LoseRequest => {
                tokio::time::sleep(self.timeout).await;
                return Err(ApiError::Timeout);
            }
            Fault::Deliver | Fault::LoseResponse => {}
        }
        let server = Arc::clone(&self.server);
        let (key, request) = (key.clone(), request.clone());
        let server_task = tokio::spawn(async move { server.handle(&key, &request).await });
        let answer = match tokio::time::timeout(self.timeout, server_task).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(failure)) => match failure.try_into_panic() {
                // The server panicked (an unfinished store, say): let the panic reach the caller.
                Ok(panic) => resume_unwind(panic),
                Err(failure) => panic!("the server task did not finish: {failure}"),
            },
            Err(_elapsed) => return Err(ApiError::Timeout),
        };
        if fault == Fault::LoseResponse {
            tokio::time::sleep_until(sent_at + self.timeout).await;
            return Err(ApiError::Timeout);
        }
        answer
    }
}
