//! The gradient limit: the formula at equal, moderate and large RTTs, the minimum, the bounds.

use std::time::Duration;

use exercise::GradientConfig;

use super::fixture::{gradient, same, sample};
use super::support::catch;

fn config(initial: f64, tolerance: f64, smoothing: f64, headroom: f64) -> GradientConfig {
    GradientConfig {
        initial,
        floor: 1.0,
        ceiling: 1_000.0,
        tolerance,
        smoothing,
        headroom,
    }
}

#[test]
fn equal_rtts_grow_by_the_smoothed_headroom() {
    let mut limit = gradient(config(20.0, 1.0, 0.25, 4.0));
    let first = sample(&mut limit, 10.0);
    let second = sample(&mut limit, 10.0);
    assert!(
        same(first, 21.0) && same(second, 22.0),
        "limit 20, tolerance 1, smoothing 0.25, headroom 4, two samples of 10 ms: min_rtt is \
         10 ms, the gradient 1, the target limit + 4, and the limit moves a quarter of the way: \
         21, then 22; yours gave {first} and {second}"
    );
}

#[test]
fn follows_the_formula_between_the_clamps() {
    let mut limit = gradient(config(40.0, 1.2, 0.5, 2.0));
    sample(&mut limit, 10.0);
    // After 10 ms: gradient 1 (1.2 clamped), target 42, limit 41.
    let got = sample(&mut limit, 16.0);
    // 1.2 × 10 / 16 = 0.75; target = 41 × 0.75 + 2 = 32.75; limit = 0.5 × 41 + 0.5 × 32.75.
    let want = 36.875;
    // What the plausible wrong readings give, to name the one the learner made.
    let advice = if same(got, 42.0) {
        "your gradient stayed at 1 although the sample is slower than the tolerance allows: a \
         gradient of rtt / min_rtt is upside down"
    } else if same(got, 40.375) {
        "your first sample grew the limit by more than the headroom: the tolerance goes inside \
         the clamp, so the gradient never exceeds 1"
    } else if got < want {
        "your limit shrank too much: the tolerance multiplies min_rtt / rtt (it lets slowness \
         through), it does not divide it"
    } else {
        "work the formula through with these numbers, term by term"
    };
    assert!(
        same(got, want),
        "limit 40, tolerance 1.2, smoothing 0.5, headroom 2, a first sample of 10 ms (gradient \
         1, limit 41), then a sample of 16 ms: gradient = 1.2 × 10 / 16 = 0.75, target = 41 × \
         0.75 + 2 = 32.75, limit = 0.5 × 41 + 0.5 × 32.75 = {want}; yours gave {got} \
         ({advice})"
    );
}

#[test]
fn large_rtts_clamp_the_gradient_at_a_half() {
    let mut limit = gradient(config(100.0, 1.0, 1.0, 0.0));
    sample(&mut limit, 5.0);
    let got = sample(&mut limit, 500.0);
    assert!(
        same(got, 50.0),
        "limit 100, smoothing 1, headroom 0, min_rtt 5 ms, then a sample of 500 ms: 5 / 500 is \
         0.01, clamped to 0.5, so the limit should halve to 50; yours gave {got}"
    );
}

#[test]
fn fast_samples_clamp_the_gradient_at_one() {
    let mut limit = gradient(config(30.0, 2.0, 1.0, 3.0));
    sample(&mut limit, 10.0);
    let got = sample(&mut limit, 15.0);
    assert!(
        same(got, 36.0),
        "limit 33 after a first sample, tolerance 2, smoothing 1, headroom 3, min_rtt 10 ms, \
         then a sample of 15 ms: 2 × 10 / 15 is 1.33, clamped to 1, so the target and the \
         limit are 33 + 3 = 36; yours gave {got}"
    );
}

#[test]
fn min_rtt_is_the_smallest_sample_this_one_included() {
    let mut limit = gradient(config(50.0, 1.0, 1.0, 0.0));
    let none = catch(|| limit.min_rtt()).unwrap_or_else(|m| panic!("min_rtt() panicked: {m}"));
    assert_eq!(none, None, "no sample yet: min_rtt() is None");
    let first = sample(&mut limit, 20.0);
    assert!(
        same(first, 50.0),
        "the first sample is its own min_rtt: gradient 1, headroom 0, the limit stays 50; \
         yours gave {first}"
    );
    let faster = sample(&mut limit, 10.0);
    assert!(
        same(faster, 50.0),
        "a sample of 10 ms after 20 ms is the new min_rtt, this sample included: gradient 1, \
         the limit stays 50; yours gave {faster}"
    );
    let slower = sample(&mut limit, 40.0);
    assert!(
        same(slower, 25.0),
        "then 40 ms against the min_rtt of 10 ms: gradient 0.25 clamped to 0.5, limit 25; \
         yours gave {slower}"
    );
    assert_eq!(limit.min_rtt(), Some(Duration::from_millis(10)));
}

#[test]
fn stays_within_floor_and_ceiling() {
    let mut limit = gradient(GradientConfig {
        initial: 10.0,
        floor: 4.0,
        ceiling: 12.0,
        tolerance: 1.0,
        smoothing: 1.0,
        headroom: 1.0,
    });
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(sample(&mut limit, 10.0));
    }
    assert!(
        seen.iter().all(|&l| l <= 12.0) && same(seen[4], 12.0),
        "ceiling 12: equal samples grow the limit by 1 each, up to 12 and no further; yours \
         went {seen:?}"
    );
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(sample(&mut limit, 1_000.0));
    }
    assert!(
        seen.iter().all(|&l| l >= 4.0) && same(seen[4], 4.0),
        "floor 4: samples 100 times slower halve the limit (plus 1) each time, down to 4 and \
         no further; yours went {seen:?}"
    );
    let clamped = gradient(GradientConfig {
        initial: 50.0,
        floor: 4.0,
        ceiling: 12.0,
        tolerance: 1.0,
        smoothing: 1.0,
        headroom: 1.0,
    });
    let start = clamped.limit();
    assert!(
        same(start, 12.0),
        "initial 50 with ceiling 12: the limit starts at 12; yours starts at {start}"
    );
}

#[test]
fn a_zero_sample_is_ignored() {
    let mut limit = gradient(config(20.0, 1.0, 0.5, 2.0));
    sample(&mut limit, 10.0);
    let before = limit.limit();
    let got = catch(|| limit.on_sample(Duration::ZERO))
        .unwrap_or_else(|m| panic!("on_sample(0) panicked: {m}"));
    assert!(
        same(got, before) && limit.min_rtt() == Some(Duration::from_millis(10)),
        "a sample of zero is ignored: the limit stays {before} and min_rtt 10 ms; yours gave \
         {got} and {:?} (a zero min_rtt would pin the gradient at 0.5 for ever)",
        limit.min_rtt()
    );
    let after = sample(&mut limit, 10.0);
    assert!(
        after.is_finite() && same(after, before + 1.0),
        "after the ignored zero, a sample of 10 ms should grow the limit by 1, to {}; yours \
         gave {after}",
        before + 1.0
    );
}

#[test]
fn the_clamp_applies_to_the_smoothed_limit() {
    let mut limit = gradient(GradientConfig {
        ceiling: 21.5,
        ..config(20.0, 1.0, 0.25, 4.0)
    });
    let first = sample(&mut limit, 10.0);
    let second = sample(&mut limit, 10.0);
    assert!(
        same(first, 21.0) && same(second, 21.5),
        "limit 20, ceiling 21.5, tolerance 1, smoothing 0.25, headroom 4, two samples of 10 ms: \
         the target is 24 (not clamped: the formula clamps the new limit, not the target), the \
         limit 0.75 × 20 + 0.25 × 24 = 21, then 22 clamped to 21.5; yours gave {first} and \
         {second}"
    );
}

#[test]
fn sub_millisecond_rtts_keep_their_precision() {
    let mut limit = gradient(config(40.0, 1.2, 0.5, 2.0));
    let rtt = |micros: u64| Duration::from_micros(micros);
    catch(|| limit.on_sample(rtt(100)))
        .unwrap_or_else(|message| panic!("on_sample(100µs) panicked: {message}"));
    let got = catch(|| limit.on_sample(rtt(160)))
        .unwrap_or_else(|message| panic!("on_sample(160µs) panicked: {message}"));
    let want = 36.875;
    let mut coarse = gradient(config(40.0, 1.2, 0.5, 2.0));
    sample(&mut coarse, 10.0);
    let at_ms = sample(&mut coarse, 16.0);
    let advice = if same(at_ms, want) {
        "at 10 ms and 16 ms yours gives the right limit, so it loses the precision: compare \
         the RTTs to the nanosecond (`as_secs_f64`), not in whole milliseconds"
    } else {
        "yours is wrong at 10 ms and 16 ms too: the formula itself needs fixing first (see \
         the check of the formula between the clamps)"
    };
    assert!(
        same(got, want),
        "limit 40, tolerance 1.2, smoothing 0.5, headroom 2, samples of 100 µs then 160 µs: \
         the same ratios as 10 ms and 16 ms, so gradient 0.75 and a limit of {want}; yours gave \
         {got} ({advice})"
    );
}
