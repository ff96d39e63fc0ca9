//! Checks of `amplification`: the product of the attempts per layer, its edge cases, and
//! saturation at `u64::MAX`.

use std::fmt;

use exercise::amplification;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

use super::support::catch;

/// The exact answer, computed in u128 with overflow noticed: the product, or `u64::MAX` when it
/// does not fit in a u64; 0 as soon as any layer has 0 attempts.
fn expected(attempts: &[u32]) -> u64 {
    if attempts.contains(&0) {
        return 0;
    }
    let mut product: u128 = 1;
    for &a in attempts {
        product = product.saturating_mul(u128::from(a));
        if product > u128::from(u64::MAX) {
            return u64::MAX;
        }
    }
    product as u64
}

/// The learner's answer, with a panic turned into a readable failure.
fn call(attempts: &[u32]) -> Result<u64, String> {
    catch(|| amplification(attempts)).map_err(|message| {
        format!(
            "amplification(&{}) panicked: {message}",
            show_layers(attempts)
        )
    })
}

/// A slice for a message, shortened when long: `[4, 4, 4]`, `[2; 64]`.
fn show_layers(attempts: &[u32]) -> String {
    match attempts {
        [first, rest @ ..] if rest.len() >= 6 && rest.iter().all(|a| a == first) => {
            format!("[{first}; {}]", attempts.len())
        }
        _ => format!("{attempts:?}"),
    }
}

/// A count for a message, with `u64::MAX` named.
fn show_count(count: u64) -> String {
    if count == u64::MAX {
        "u64::MAX".to_owned()
    } else {
        count.to_string()
    }
}

/// Asserts every `(attempts, why)` case against the exact answer.
fn assert_cases(cases: &[(&[u32], &str)]) {
    for (attempts, why) in cases {
        let want = expected(attempts);
        let got = call(attempts).unwrap_or_else(|message| panic!("{message}; {why}"));
        assert!(
            got == want,
            "amplification(&{}) should be {} ({why}); yours returned {}",
            show_layers(attempts),
            show_count(want),
            show_count(got),
        );
    }
}

#[test]
fn classic_examples() {
    assert_cases(&[
        (
            &[4, 4, 4],
            "SRE book, ch. 22: three layers that each try 4 times (3 retries) send 4 · 4 · 4 \
             calls to the database",
        ),
        (
            &[3, 3, 3, 3, 3],
            "Builders' Library: five layers that each try 3 times send 3^5 calls to the bottom",
        ),
        (&[4], "one layer of 4 attempts: 4 calls"),
        (&[3, 3], "two layers of 3 attempts: 3 · 3 calls"),
        (
            &[5, 3, 2],
            "the attempts of different layers multiply: 5 · 3 · 2",
        ),
        (
            &[4, 1, 1],
            "retry in one place: only the top layer tries more than once",
        ),
        (
            &[1, 1, 1, 1],
            "no layer retries: one call reaches the bottom",
        ),
    ]);
    // Retry in one place, however deep the stack: a long list is not a large product. 199
    // layers that call once under a top layer of 4 attempts send 4 calls, not u64::MAX.
    let mut deep = vec![1; 199];
    deep.push(4);
    assert_cases(&[
        (
            &[1; 200],
            "200 layers that each call once: one call reaches the bottom, however deep",
        ),
        (
            &deep,
            "199 layers that call once and one of 4 attempts: 4 calls reach the bottom, however \
             deep the stack",
        ),
    ]);
}

#[test]
fn saturates_at_u64_max() {
    assert_cases(&[
        (
            &[u32::MAX; 5],
            "(2^32 - 1)^5 does not fit in a u64: the count must saturate at u64::MAX, not panic \
             or wrap",
        ),
        (&[2; 64], "2^64 is one more than u64::MAX: saturate"),
        (&[1_000; 7], "10^21 does not fit in a u64: saturate"),
        (
            &[u32::MAX, u32::MAX, 2],
            "the product passes u64::MAX at the last layer: saturate",
        ),
        (&[2; 63], "2^63 fits in a u64: no saturation yet"),
        (
            &[2; 128],
            "2^128 overflows even a u128: saturate at every step, not once at the end",
        ),
        (
            &[2; 200],
            "200 layers of 2: saturate, however long the stack",
        ),
        (
            &[u32::MAX, u32::MAX],
            "(2^32 - 1)^2 = 18446744065119617025 fits in a u64 exactly: saturate only when the \
             product does not fit, and compute it in integers",
        ),
        (
            &[65_536, 65_536, 65_536],
            "2^48 is beyond u32::MAX but fits in a u64: count in u64, not u32",
        ),
    ]);
}

#[test]
fn empty_and_zero_layers() {
    assert_cases(&[
        (
            &[],
            "no layers: the request itself is the one call that arrives",
        ),
        (&[0], "a layer with 0 attempts never calls the layer below"),
        (
            &[4, 0, 4],
            "a layer with 0 attempts stops everything below it: nothing reaches the bottom",
        ),
        (
            &[u32::MAX, u32::MAX, u32::MAX, 0],
            "even below a saturated product, a layer with 0 attempts lets nothing through",
        ),
    ]);
}

/// A list of layers as proptest reports it.
#[derive(Clone)]
struct Layers(Vec<u32>);

impl fmt::Debug for Layers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

fn attempts() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => 1u32..=5,
        2 => 0u32..=1_000,
        2 => 1u32..=u32::MAX,
        1 => Just(u32::MAX),
    ]
}

#[test]
fn matches_exact_product() {
    let config = Config {
        failure_persistence: None,
        cases: 256,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let strategy = prop::collection::vec(attempts(), 0..=8).prop_map(Layers);
    let outcome = runner.run(&strategy, |Layers(layers)| {
        let want = expected(&layers);
        let got = call(&layers).map_err(TestCaseError::fail)?;
        if got == want {
            Ok(())
        } else {
            Err(TestCaseError::fail(format!(
                "amplification(&{layers:?}) returned {}; the exact product is {}",
                show_count(got),
                show_count(want)
            )))
        }
    });
    match outcome {
        Ok(()) => {}
        Err(TestError::Fail(reason, value)) => panic!(
            "the count must be the exact product of the attempts, saturated at u64::MAX, for \
             every list of layers. The smallest failing case proptest found: {value:?}. {reason}"
        ),
        Err(TestError::Abort(reason)) => panic!("the property test stopped: {reason}"),
    }
}
