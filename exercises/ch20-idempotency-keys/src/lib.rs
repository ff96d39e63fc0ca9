//! # Chapter 20 — Idempotency keys
//!
//! Book: `book/src/ch20-idempotency-keys.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch20`. Stuck? `cargo xtask hint ch20`.
//!
//! A retry after a timeout may repeat a charge that already happened. You make it safe from both
//! ends: the server remembers what it did for each idempotency key, and the client sends the same
//! key with every attempt of one charge.
//!
//! ## Your task
//!
//! 1. [`IdempotencyStore::handle`]: run `execute` at most once per key (book §20.4, its table).
//!    - A new key, or one whose first use is `ttl` or more ago: execute, save the outcome, `Ok`
//!      **or** `Err`, and return it.
//!    - A key first used with a different request (their [`fingerprint`]s differ), whatever
//!      the key's state: `Err(IdempotencyError::KeyReusedWithDifferentRequest)`.
//!    - The same request while the key's first request is still executing:
//!      `Err(IdempotencyError::InProgress)` at once. This store refuses a concurrent duplicate
//!      (HTTP 409); it does not wait, and two requests with one key never both execute.
//!    - The same request after the first one completed: the saved outcome, without executing.
//!    - A refusal changes nothing in the store. Requests with different keys never wait for
//!      each other: never hold the `std::sync::Mutex` across an `.await`.
//!    - Pruning expired entries is optional. If you prune, a request visits its own entry plus,
//!      now and then, a sweep paid for by the insertions since the last one (book §20.5): a scan
//!      of the whole map on every request is too slow for the checks' 12,000 keys.
//! 2. [`should_retry`]: a timeout, a 503 and a 409 are worth retrying with the same key; a saved
//!    payment error, a 422 and a 400 are not.
//! 3. [`charge_with_retries`]: **one** key for the charge, from `keys.next_key()`, sent with
//!    every attempt; at most `policy.attempts` calls; between two calls a tokio sleep of
//!    `policy.delay(retry, rng)`, `retry` being 0 for the sleep after the first failure; the
//!    first receipt, or the error that is not worth retrying, or, when the attempts run out,
//!    the last error, returned at once (no sleep after the last call).
//!
//! Given, ready-made: the key type, the key generator and [`fingerprint`] (`src/key.rs`); the
//! API types, [`PaymentApi`] and [`RetryPolicy`] (`src/api.rs`); a payment backend that counts
//! its charges, the server that puts your store in front of it, and a flaky network that can
//! lose a request or an answer (`src/stubs.rs`). `tests/visible.rs` shows them in use, and
//! `examples/predict.rs` runs the double-charge scenario of the book.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::Mutex;
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

/// What the store remembers about one key. A key with no entry, or with an expired one, has
/// never been seen.
#[allow(dead_code)] // Given: `handle` will use every part of it. Remove this line when it does.
#[derive(Debug)]
struct Entry<T, E> {
    /// The fingerprint of the first request that used the key.
    fingerprint: u64,
    /// When that first request arrived; the entry expires `ttl` later.
    created_at: Instant,
    state: State<T, E>,
}

#[allow(dead_code)] // Given, like `Entry`.
#[derive(Debug)]
enum State<T, E> {
    /// The first request is executing. A duplicate now is refused with `InProgress`.
    InProgress,
    /// The first request finished. Its outcome, success or error, is replayed to every duplicate.
    Completed(Result<T, E>),
}

/// A server-side idempotency store with Stripe's semantics, in memory.
///
/// [`IdempotencyStore::handle`] runs an operation at most once per key (within the TTL) and
/// answers every later request with that key from what it saved.
#[derive(Debug)]
pub struct IdempotencyStore<T, E> {
    ttl: Duration,
    entries: Mutex<HashMap<IdempotencyKey, Entry<T, E>>>,
}

impl<T: Clone, E: Clone> IdempotencyStore<T, E> {
    /// An empty store that remembers each key for `ttl` after its first use.
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Runs `execute` for the first request with `key`, saves its outcome (an `Err` as much as an
    /// `Ok`) and returns it; answers every later request with the same key and the same request
    /// from the saved outcome, without executing anything.
    ///
    /// Refuses, without executing or saving anything: `KeyReusedWithDifferentRequest` when
    /// `request`'s fingerprint differs from that of the key's first request; `InProgress` when
    /// the key's first request is still executing. A key expires `ttl` after its first use.
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
        // TODO: task 1, the table of book §20.4.
        let _ = (&self.ttl, &self.entries, key, fingerprint(request), execute);
        todo!("IdempotencyStore::handle(key = {key})")
    }
}

/// Whether a failed attempt is worth repeating with the same key.
pub fn should_retry(error: &ApiError) -> bool {
    // TODO: task 2.
    todo!("should_retry({error:?})")
}

/// Charges `request` once, however many attempts that takes.
///
/// One idempotency key per logical charge, the same for every attempt; at most
/// `policy.attempts` calls, and at least one (`attempts = 0` is read as 1: without a call there
/// is no error to return); `policy.delay(retry, rng)` between two of them; the first receipt or
/// the last error.
pub async fn charge_with_retries(
    api: &impl PaymentApi,
    request: &ChargeRequest,
    policy: &RetryPolicy,
    keys: &mut KeyGenerator,
    rng: &mut impl Rng,
) -> Result<Receipt, ApiError> {
    // TODO: task 3.
    let _ = (api, keys, rng);
    todo!(
        "charge_with_retries({request:?}, attempts = {})",
        policy.attempts
    )
}
