//! Your test suite for `src/retry.rs`. It starts empty, and an empty suite scores zero.
//!
//! TODO: write `#[tokio::test(start_paused = true)]` tests (and `#[test]`s, and proptest
//! properties) that pass on the shipped code and fail when it has a bug. A good order:
//!
//! TODO (section 14.5): count calls. Success at once, recovery after transient failures, a
//!     permanent error, running out of attempts; check which error comes back. Use
//!     `crate::retry::MockPaymentService` with `.times(n)` and `.withf(…)` to test `pay`.
//! TODO (section 14.3): measure virtual time with `tokio::time::Instant`: when does each call
//!     start, how long does the whole run take, does each gap equal the delay the hook announced?
//! TODO (section 14.4): seed the generator; check that delays vary with the seed and spread over
//!     [0, ceiling].
//! TODO (section 14.6): proptest properties of `backoff_ceiling` and `full_jitter` for any policy
//!     and any retry number up to `u32::MAX`.
//! TODO (section 14.7): render a run as a timeline and pin it with `insta::assert_snapshot!`.
//!     The first run writes `src/snapshots/….snap.new`; read it, and rename it to `.snap` once it
//!     is right.
//!
//! Run your tests with `cargo test -p ch14_testing_retry_code`, then grade them with
//! `cargo xtask check ch14`.
