//! Given: idempotency keys, a seeded key generator, and request fingerprints.

use std::collections::hash_map::DefaultHasher;
use std::fmt;
use std::hash::{Hash, Hasher};

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// A key that names one logical operation, chosen by the client and sent with every attempt of
/// that operation (in HTTP, in the `Idempotency-Key` header).
///
/// A valid key has 1 to [`IdempotencyKey::MAX_LEN`] characters, all printable ASCII without
/// spaces: the format is fixed and checked before the key is used, as the IETF draft advises.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// The longest key accepted: 255 characters, Stripe's limit.
    pub const MAX_LEN: usize = 255;

    /// Checks `text` against the key format.
    pub fn parse(text: impl Into<String>) -> Result<Self, InvalidKey> {
        let text = text.into();
        if text.is_empty() {
            return Err(InvalidKey::Empty);
        }
        if text.len() > Self::MAX_LEN {
            return Err(InvalidKey::TooLong(text.len()));
        }
        if !text.bytes().all(|byte| byte.is_ascii_graphic()) {
            return Err(InvalidKey::BadCharacter);
        }
        Ok(Self(text))
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a text is not a valid [`IdempotencyKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidKey {
    Empty,
    /// Longer than [`IdempotencyKey::MAX_LEN`]; the length it had.
    TooLong(usize),
    /// A space, a control character or a non-ASCII character.
    BadCharacter,
}

impl fmt::Display for InvalidKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("an idempotency key must not be empty"),
            Self::TooLong(len) => write!(
                f,
                "an idempotency key has at most {} characters, not {len}",
                IdempotencyKey::MAX_LEN
            ),
            Self::BadCharacter => {
                f.write_str("an idempotency key is printable ASCII without spaces")
            }
        }
    }
}

impl std::error::Error for InvalidKey {}

/// Mints fresh keys: `idem_` followed by 32 hex digits, 128 random bits.
///
/// Seeded, so tests are reproducible. In production, seed it from the operating system (or use
/// a version 4 UUID): keys must be unguessable and must never repeat across clients.
#[derive(Debug)]
pub struct KeyGenerator {
    rng: StdRng,
}

impl KeyGenerator {
    /// A generator whose keys depend only on `seed`.
    pub fn seeded(seed: u64) -> Self {
        Self {
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// A new key, different from every key this generator minted before (with overwhelming
    /// probability: two equal 128-bit draws).
    pub fn next_key(&mut self) -> IdempotencyKey {
        let bits: u128 = self.rng.random();
        IdempotencyKey(format!("idem_{bits:032x}"))
    }
}

/// A fingerprint of a request: a 64-bit hash of all its fields.
///
/// Two requests with equal fields have equal fingerprints. The store keeps the fingerprint of the
/// first request that used a key, so it can tell a genuine retry from a key reused for a different
/// request without keeping the whole request.
pub fn fingerprint<R: Hash + ?Sized>(request: &R) -> u64 {
    let mut hasher = DefaultHasher::new();
    request.hash(&mut hasher);
    hasher.finish()
}
