//! Chapter 20 — Idempotency keys: the reference solution.
//!
//! The server side is [`IdempotencyStore`]: the first outcome of every key is saved, errors
//! included, and replayed to every retry that carries the key; a key reused for a different
//! request, or repeated while its first request is still executing, is refused; keys expire
//! after a TTL. The client side is [`charge_with_retries`]: one key per logical charge, minted
//! before the first attempt and sent unchanged with every retry.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rand::Rng;
use tokio::time::Instant;

pub mod api;
pub mod key;
pub mod stubs;

pub use api::{
    ApiError, ChargeRequest, IdempotencyError, PaymentApi, PaymentError, Receipt, RetryPolicy,
};
pub use key::{IdempotencyKey, KeyGenerator, fingerprint};

/// How long a store remembers a key, counted from the first request that used it: 24 hours,
/// the age after which Stripe may prune a key.
pub const DEFAULT_TTL: Duration = Duration::from_secs(24 * 60 * 60);

// ANCHOR: entry
/// What the store remembers about one key. A key with no entry, or with an expired one, has
/// never been seen.
#[derive(Debug)]
struct Entry<T, E> {
    /// The fingerprint of the first request that used the key.
    fingerprint: u64,
    /// When that first request arrived; the entry expires `ttl` later.
    created_at: Instant,
    state: State<T, E>,
}

#[derive(Debug)]
enum State<T, E> {
    /// The first request is executing. A duplicate now is refused with `InProgress`.
    InProgress,
    /// The first request finished. Its outcome, success or error, is replayed to every duplicate.
    Completed(Result<T, E>),
}
// ANCHOR_END: entry

/// A server-side idempotency store with Stripe's semantics, in memory.
///
/// [`IdempotencyStore::handle`] runs an operation at most once per key (within the TTL) and
/// answers every later request with that key from what it saved.
#[derive(Debug)]
pub struct IdempotencyStore<T, E> {
    ttl: Duration,
    entries: Mutex<HashMap<IdempotencyKey, Entry<T, E>>>,
}

/// What the store decided about a request, before anything runs.
enum Admission<T, E> {
    /// The key is new (or expired) and now reserved, at this instant: execute the request.
    Execute { reserved_at: Instant },
    /// The key's first request completed: answer with its saved outcome.
    Replay(Result<T, E>),
}

impl<T: Clone, E: Clone> IdempotencyStore<T, E> {
    /// An empty store that remembers each key for `ttl` after its first use.
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    // ANCHOR: handle
    /// Runs `execute` for the first request with `key`, saves its outcome (an `Err` as much as an
    /// `Ok`) and returns it; answers every later request with the same key and the same request
    /// from the saved outcome, without executing anything.
    ///
    /// Refuses, without executing or saving anything:
    /// - [`IdempotencyError::KeyReusedWithDifferentRequest`] when `request`'s fingerprint differs
    ///   from that of the key's first request;
    /// - [`IdempotencyError::InProgress`] when the key's first request is still executing: a
    ///   concurrent duplicate is turned away at once (HTTP 409), it does not wait.
    ///
    /// A key expires `ttl` after its first use; after that it is new again. If this future is
    /// dropped while `execute` runs, the key stays in progress until it expires: the store
    /// prefers a stuck key to a second execution whose first may have happened.
    pub async fn handle<R, F, Fut>(
        &self,
        key: &IdempotencyKey,
        request: &R,
        execute: F,
    ) -> Result<Result<T, E>, IdempotencyError>
    where
        R: Hash + ?Sized,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        match self.admit(key, fingerprint(request))? {
            Admission::Replay(saved) => Ok(saved),
            Admission::Execute { reserved_at } => {
                // The lock is not held here: other keys, and refusals of this one, go on.
                let outcome = execute().await;
                self.complete(key, reserved_at, outcome.clone());
                Ok(outcome)
            }
        }
    }
    // ANCHOR_END: handle

    // ANCHOR: admit
    /// Looks `key` up and, if it is new or expired, reserves it (absent → in progress).
    fn admit(
        &self,
        key: &IdempotencyKey,
        fingerprint: u64,
    ) -> Result<Admission<T, E>, IdempotencyError> {
        let now = Instant::now();
        let mut entries = self.lock();
        if let Some(entry) = entries.get(key).filter(|entry| self.is_live(entry, now)) {
            if entry.fingerprint != fingerprint {
                return Err(IdempotencyError::KeyReusedWithDifferentRequest);
            }
            return match &entry.state {
                State::InProgress => Err(IdempotencyError::InProgress),
                State::Completed(saved) => Ok(Admission::Replay(saved.clone())),
            };
        }
        let reserved = Entry {
            fingerprint,
            created_at: now,
            state: State::InProgress,
        };
        entries.insert(key.clone(), reserved);
        Ok(Admission::Execute { reserved_at: now })
    }

    /// Saves the outcome of the key's first request (in progress → completed), if the key is
    /// still the one this request reserved: after it expired, a later request may have reserved
    /// it anew, and this late outcome belongs to the key's earlier life.
    fn complete(&self, key: &IdempotencyKey, reserved_at: Instant, outcome: Result<T, E>) {
        let mut entries = self.lock();
        if let Some(entry) = entries
            .get_mut(key)
            .filter(|entry| entry.created_at == reserved_at)
        {
            entry.state = State::Completed(outcome);
        }
    }

    /// Whether `entry` is still remembered at `now`: younger than the TTL.
    fn is_live(&self, entry: &Entry<T, E>, now: Instant) -> bool {
        now.duration_since(entry.created_at) < self.ttl
    }
    // ANCHOR_END: admit

    /// The map of entries. The lock is only ever held for a lookup or an update, never across
    /// an `.await`.
    fn lock(&self) -> MutexGuard<'_, HashMap<IdempotencyKey, Entry<T, E>>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

// ANCHOR: should_retry
/// Whether a failed attempt is worth repeating with the same key.
///
/// Yes when the request may not have run, or may still be running: a timeout, a 503 that turned
/// the request away, a 409 while the first attempt executes. No when the server gave its answer
/// for this key: a payment error is saved under the key and every retry would get it again, and
/// a 422 or a 400 needs a corrected request, not a repeated one.
pub fn should_retry(error: &ApiError) -> bool {
    match error {
        ApiError::Timeout | ApiError::Unavailable | ApiError::InProgress => true,
        ApiError::KeyReused | ApiError::Invalid(_) | ApiError::Payment(_) => false,
    }
}
// ANCHOR_END: should_retry

// ANCHOR: charge_with_retries
/// Charges `request` once, however many attempts that takes.
///
/// Mints one idempotency key for this logical charge before the first attempt and sends that
/// same key with every attempt. Makes at most `policy.attempts` calls (at least one), sleeps
/// `policy.delay(retry, rng)` between two of them, retries only what [`should_retry`] allows,
/// and returns the first receipt or the last error.
pub async fn charge_with_retries(
    api: &impl PaymentApi,
    request: &ChargeRequest,
    policy: &RetryPolicy,
    keys: &mut KeyGenerator,
    rng: &mut impl Rng,
) -> Result<Receipt, ApiError> {
    // One logical operation, one key: minted here, outside the loop.
    let key = keys.next_key();
    let mut retry = 0;
    loop {
        let error = match api.charge(&key, request).await {
            Ok(receipt) => return Ok(receipt),
            Err(error) => error,
        };
        let calls_made = retry + 1;
        if !should_retry(&error) || calls_made >= policy.attempts {
            return Err(error);
        }
        tokio::time::sleep(policy.delay(retry, rng)).await;
        retry += 1;
    }
}
// ANCHOR_END: charge_with_retries
