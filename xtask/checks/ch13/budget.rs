//! Checks of `RetryBudget` alone, one thread: validation, and A6's arithmetic event by event.

use exercise::{BudgetError, RetryBudget};

use super::support::catch;

/// A count kept to three decimal places reads back as that number, up to the rounding of one
/// `f64` operation: far closer than this. A setting kept to four decimals (10.0004 instead of
/// 10.000) is a ten-thousandth away, and does not pass for it.
const EXACT: f64 = 0.000_001;

/// One event applied to a budget, for the messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Failure,
    Success,
}

/// A budget with valid settings, or a failure that names the call.
pub fn budget(max_tokens: f64, token_ratio: f64) -> RetryBudget {
    match catch(|| RetryBudget::new(max_tokens, token_ratio)) {
        Ok(Ok(budget)) => budget,
        Ok(Err(error)) => panic!(
            "RetryBudget::new({max_tokens}, {token_ratio}) returned Err({error:?}), but these \
             settings are valid"
        ),
        Err(message) => panic!("RetryBudget::new({max_tokens}, {token_ratio}) panicked: {message}"),
    }
}

/// Applies `event` to `budget`, turning a panic into a message.
pub fn apply(budget: &RetryBudget, event: Event) {
    let outcome = match event {
        Event::Failure => catch(|| budget.on_failure()),
        Event::Success => catch(|| budget.on_success()),
    };
    if let Err(message) = outcome {
        let call = match event {
            Event::Failure => "on_failure()",
            Event::Success => "on_success()",
        };
        panic!("{call} panicked: {message}");
    }
}

/// The budget's count, turning a panic into a message.
pub fn tokens(budget: &RetryBudget) -> f64 {
    catch(|| budget.tokens()).unwrap_or_else(|message| panic!("tokens() panicked: {message}"))
}

/// The budget's answer, turning a panic into a message.
pub fn can_retry(budget: &RetryBudget) -> bool {
    catch(|| budget.can_retry()).unwrap_or_else(|message| panic!("can_retry() panicked: {message}"))
}

fn same(got: f64, expected: f64) -> bool {
    (got - expected).abs() < EXACT
}

/// `n` events of one kind, written for a message: "3 failures".
fn count(n: usize, event: Event) -> String {
    let noun = match (event, n) {
        (Event::Failure, 1) => "failure",
        (Event::Failure, _) => "failures",
        (Event::Success, 1) => "success",
        (Event::Success, _) => "successes",
    };
    format!("{n} {noun}")
}

/// Runs `steps` (a number of events of one kind, then the count expected after each of them)
/// and fails at the first count that differs.
fn expect_counts(max_tokens: f64, token_ratio: f64, steps: &[(Event, &[f64])], rule: &str) {
    let budget = budget(max_tokens, token_ratio);
    let mut history: Vec<String> = Vec::new();
    for &(event, expected_counts) in steps {
        for (done, &expected) in expected_counts.iter().enumerate() {
            apply(&budget, event);
            let got = tokens(&budget);
            if !same(got, expected) {
                history.push(count(done + 1, event));
                panic!(
                    "{rule}: with RetryBudget::new({max_tokens}, {token_ratio}), after {} the \
                     count should be {expected:.3} tokens; yours is {got:.3}",
                    history.join(", then "),
                );
            }
        }
        history.push(count(expected_counts.len(), event));
    }
}

/// Whether `carried` is `value`, NaN included.
fn same_value(carried: f64, value: f64) -> bool {
    carried == value || (carried.is_nan() && value.is_nan())
}

#[test]
fn rejects_invalid_settings() {
    // Just outside each end of [0.001, 1000], in both directions of rounding to thousandths.
    let bad_max = [
        0.0,
        -0.0,
        -10.0,
        f64::MIN_POSITIVE,
        0.000_4,
        0.000_9,
        1_000.000_4,
        1_000.5,
        1e9,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    for max_tokens in bad_max {
        let outcome = catch(|| RetryBudget::new(max_tokens, 0.1).map(|_| ()));
        let carried = match outcome {
            Ok(Err(BudgetError::MaxTokens(value))) => Some(value),
            _ => None,
        };
        assert!(
            carried.is_some_and(|value| same_value(value, max_tokens)),
            "RetryBudget::new({max_tokens}, 0.1) must return Err(BudgetError::MaxTokens({max_tokens})): \
             max_tokens must be a finite number from 0.001 to 1000, checked before any rounding, \
             and the error carries the value refused; yours {}",
            describe(outcome),
        );
    }
    let bad_ratio = [
        0.0,
        -0.0,
        -0.1,
        f64::MIN_POSITIVE,
        0.000_1,
        0.000_4,
        0.000_9,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    for token_ratio in bad_ratio {
        let outcome = catch(|| RetryBudget::new(10.0, token_ratio).map(|_| ()));
        let carried = match outcome {
            Ok(Err(BudgetError::TokenRatio(value))) => Some(value),
            _ => None,
        };
        assert!(
            carried.is_some_and(|value| same_value(value, token_ratio)),
            "RetryBudget::new(10, {token_ratio}) must return Err(BudgetError::TokenRatio({token_ratio})): \
             token_ratio must be a finite number of at least 0.001, checked before any rounding, \
             and the error carries the value refused; yours {}",
            describe(outcome),
        );
    }
    // Both ends of each range are valid, and token_ratio has no upper limit.
    let valid = [
        (10.0, 0.1),
        (0.001, 0.001),
        (1_000.0, 0.001),
        (999.999_6, 0.1),
        (1.0, 1.0),
        (3.0, 5.0),
        (10.0, 1_500.0),
        (10.0, 1e7),
    ];
    for (max_tokens, token_ratio) in valid {
        let outcome = catch(|| RetryBudget::new(max_tokens, token_ratio).map(|_| ()));
        assert!(
            matches!(outcome, Ok(Ok(()))),
            "RetryBudget::new({max_tokens}, {token_ratio}) has valid settings (max_tokens in \
             [0.001, 1000], token_ratio at least 0.001 with no upper limit) and must return Ok; \
             yours {}",
            describe(outcome),
        );
    }
}

fn describe(outcome: Result<Result<(), BudgetError>, String>) -> String {
    match outcome {
        Ok(Ok(())) => "returned Ok".to_owned(),
        Ok(Err(error)) => format!("returned Err({error:?})"),
        Err(message) => format!("panicked: {message}"),
    }
}

#[test]
fn starts_full() {
    let settings = [
        (10.0, 0.1),
        (3.0, 0.5),
        (2.01, 0.1),
        (1_000.0, 0.001),
        (0.001, 0.001),
        (10.0, 1e7),
    ];
    for (max_tokens, token_ratio) in settings {
        let budget = budget(max_tokens, token_ratio);
        let (got, allowed) = (tokens(&budget), can_retry(&budget));
        assert!(
            same(got, max_tokens) && allowed,
            "a new budget starts full: RetryBudget::new({max_tokens}, {token_ratio}) should hold \
             {max_tokens:.3} tokens and allow retries; yours holds {got:.3} and can_retry() is \
             {allowed}",
        );
    }
}

#[test]
fn failure_costs_one_token() {
    use Event::{Failure, Success};
    expect_counts(
        10.0,
        0.1,
        &[(Failure, &[9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0])],
        "each failure takes exactly one token",
    );
    expect_counts(
        4.5,
        0.25,
        &[(Failure, &[3.5, 2.5, 1.5, 0.5])],
        "each failure takes exactly one token, whatever the ratio",
    );
    // Less than one token left: the failure still counts, and empties the budget.
    expect_counts(
        4.5,
        0.25,
        &[
            (Failure, &[3.5, 2.5, 1.5, 0.5, 0.0]),
            (Success, &[0.25]),
            (Failure, &[0.0]),
        ],
        "a failure with less than one token left takes what is left: the count falls to 0, \
         never below",
    );
}

#[test]
fn success_adds_token_ratio() {
    use Event::{Failure, Success};
    expect_counts(
        10.0,
        0.1,
        &[
            (Failure, &[9.0, 8.0, 7.0, 6.0]),
            (
                Success,
                &[6.1, 6.2, 6.3, 6.4, 6.5, 6.6, 6.7, 6.8, 6.9, 7.0, 7.1],
            ),
        ],
        "each success adds token_ratio",
    );
    expect_counts(
        20.0,
        0.57,
        &[
            (Failure, &[19.0, 18.0, 17.0]),
            (Success, &[17.57, 18.14, 18.71, 19.28, 19.85]),
        ],
        "each success adds token_ratio, to three decimal places",
    );
}

#[test]
fn stays_within_bounds() {
    use Event::{Failure, Success};
    let full: &[f64] = &[10.0; 25];
    expect_counts(
        10.0,
        0.1,
        &[(Success, full)],
        "the count never rises above max_tokens (successes on a full budget change nothing)",
    );
    expect_counts(
        10.0,
        0.1,
        &[
            (
                Failure,
                &[
                    9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                ],
            ),
            (Success, &[0.1, 0.2, 0.3]),
        ],
        "the count never falls below zero (failures on an empty budget change nothing)",
    );
    expect_counts(
        3.0,
        2.5,
        &[
            (Failure, &[2.0, 1.0]),
            (Success, &[3.0, 3.0]),
            (Failure, &[2.0, 1.0, 0.0, 0.0]),
            (Success, &[2.5, 3.0]),
        ],
        "the count stays within [0, max_tokens]",
    );
    // A ratio far larger than the budget (valid: token_ratio has no upper limit) refills it in
    // one success, without overflowing anything.
    expect_counts(
        1_000.0,
        1e7,
        &[(Failure, &[999.0, 998.0]), (Success, &[1_000.0, 1_000.0])],
        "the count never rises above max_tokens, however large token_ratio is",
    );
}

/// Drives `budget` through `steps` and checks `can_retry()` after each group of events.
fn expect_answers(max_tokens: f64, token_ratio: f64, steps: &[(Event, usize, f64, bool)]) {
    let budget = budget(max_tokens, token_ratio);
    let mut history: Vec<String> = Vec::new();
    for &(event, times, expected_count, expected) in steps {
        for _ in 0..times {
            apply(&budget, event);
        }
        history.push(count(times, event));
        let (got, answer) = (tokens(&budget), can_retry(&budget));
        let relation = if expected { "above" } else { "not above" };
        assert!(
            answer == expected,
            "retries are allowed only while the count is strictly above max_tokens / 2 = {}: \
             with RetryBudget::new({max_tokens}, {token_ratio}), after {} the count is \
             {expected_count:.3} ({relation} {}), so can_retry() should be {expected}; yours \
             said {answer} (your count: {got:.3})",
            max_tokens / 2.0,
            history.join(", then "),
            max_tokens / 2.0,
        );
    }
}

#[test]
fn threshold_strictly_above_half() {
    use Event::{Failure, Success};
    expect_answers(
        10.0,
        0.1,
        &[
            (Failure, 4, 6.0, true),
            (Failure, 1, 5.0, false),
            (Success, 1, 5.1, true),
            (Failure, 1, 4.1, false),
            (Success, 9, 5.0, false),
            (Success, 1, 5.1, true),
        ],
    );
    // An odd maximum: the threshold is 1.5 tokens, not 1 and not 2.
    expect_answers(
        3.0,
        0.5,
        &[
            (Failure, 1, 2.0, true),
            (Failure, 1, 1.0, false),
            (Success, 1, 1.5, false),
            (Success, 1, 2.0, true),
        ],
    );
    // An odd number of thousandths: the threshold is 5.0005, so 5.001 is above it and 5.000 is
    // not.
    expect_answers(
        10.001,
        0.001,
        &[
            (Failure, 5, 5.001, true),
            (Failure, 1, 4.001, false),
            (Success, 999, 5.000, false),
            (Success, 1, 5.001, true),
        ],
    );
    // The smallest budget: one thousandth, whose half is 0.0005.
    expect_answers(
        0.001,
        0.001,
        &[
            (Success, 1, 0.001, true),
            (Failure, 1, 0.0, false),
            (Success, 1, 0.001, true),
        ],
    );
    // The largest: 1,000 tokens, threshold 500.
    expect_answers(
        1_000.0,
        0.001,
        &[
            (Failure, 499, 501.0, true),
            (Failure, 1, 500.0, false),
            (Success, 1, 500.001, true),
        ],
    );
}

#[test]
fn keeps_three_decimals() {
    use Event::{Failure, Success};
    // (max_tokens, token_ratio, failures, then successes, the count kept, retries allowed)
    let cases = [
        (10.000_4, 0.1, 5, 0, 5.0, false),
        (10.000_6, 0.1, 5, 0, 5.001, true),
        (10.0, 0.100_4, 5, 1, 5.1, true),
        (10.0, 0.100_4, 6, 10, 5.0, false),
        (2.000_4, 0.001, 0, 0, 2.0, true),
        (2.0, 0.001_6, 1, 1, 1.002, true),
        // The threshold is half of the kept maximum: 2.002 / 2 = 1.001 exactly, so 1.001 tokens
        // refuse, although 1.001 is above half of the setting as given (1.0008).
        (2.001_6, 0.999, 2, 1, 1.001, false),
        (10.001_6, 0.999, 6, 1, 5.001, false),
    ];
    for (max_tokens, token_ratio, failures, successes, expected, allowed) in cases {
        let budget = budget(max_tokens, token_ratio);
        for _ in 0..failures {
            apply(&budget, Failure);
        }
        for _ in 0..successes {
            apply(&budget, Success);
        }
        let (got, answer) = (tokens(&budget), can_retry(&budget));
        let why = if same(got, expected) {
            "The count is right and the answer is not: the threshold is half of the maximum as \
             kept, in thousandths, and a retry needs a count strictly above it"
        } else if (got - expected).abs() < 0.001_5 {
            "Round each setting to thousandths once, when the budget is built (rounded, not \
             truncated and not rounded up)"
        } else {
            "That is further off than any rounding of the settings: the count's own rules come \
             first (see budget.failure_costs_one_token and budget.success_adds_token_ratio)"
        };
        assert!(
            same(got, expected) && answer == allowed,
            "settings are kept to three decimal places (A6's precision): \
             RetryBudget::new({max_tokens}, {token_ratio}) counts with max_tokens = {:.3} and \
             token_ratio = {:.3}, so after {failures} failure(s) and then {successes} \
             success(es) tokens() should be {expected:.3} and can_retry() {allowed}; yours \
             returned {got} and {answer}. {why}",
            (max_tokens * 1_000.0_f64).round() / 1_000.0,
            (token_ratio * 1_000.0_f64).round() / 1_000.0,
        );
    }
    // The count reads back as the three-decimal number itself, the f64 nearest to it, as
    // `thousandths / 1000.0` gives it: 0.009, not 0.009000000000000001 (what `9.0 * 0.001` is).
    let budget = budget(3.0, 0.001);
    for _ in 0..3 {
        apply(&budget, Failure);
    }
    for thousandths in 1..=3_000_u32 {
        apply(&budget, Success);
        let (got, expected) = (tokens(&budget), f64::from(thousandths) / 1_000.0);
        assert!(
            got.to_bits() == expected.to_bits(),
            "tokens() reports the count with three decimal places: after 3 failures and \
             {thousandths} success(es) of 0.001 on RetryBudget::new(3.0, 0.001) it should read \
             {expected} exactly (the f64 nearest to {thousandths} thousandths), and yours read \
             {got:?}. A count in thousandths times 0.001 is one rounding step off for many \
             counts; divide by 1000 instead",
        );
    }
}

#[test]
fn counts_in_thousandths() {
    use Event::{Failure, Success};
    // Sums that land exactly on the threshold of 5, but drift above it in binary floating point:
    // 4.0 + five 0.2s is 5.000000000000001, and 2.0 + twenty 0.15s is 5.000000000000001.
    for (token_ratio, failures, successes) in [(0.2, 6, 5), (0.15, 8, 20), (0.2, 10, 25)] {
        let budget = budget(10.0, token_ratio);
        for _ in 0..failures {
            apply(&budget, Failure);
        }
        for _ in 0..successes {
            apply(&budget, Success);
        }
        let (got, answer) = (tokens(&budget), can_retry(&budget));
        let why = if got == 5.0 {
            "Your count is exactly 5, so the comparison lets it through: a retry needs a count \
             strictly above max_tokens / 2 (pitfall \"`>=` instead of `>` at the threshold\")"
                .to_owned()
        } else if (got - 5.0).abs() < 0.000_5 {
            format!(
                "Adding {token_ratio} again and again in f64 drifts above 5 (pitfall \"An `f64` \
                 count\"): count in whole thousandths, as A6 does, or round to three decimals \
                 after every update"
            )
        } else {
            "Your count is not 5 at all: the count's own rules come first (see \
             budget.failure_costs_one_token and budget.success_adds_token_ratio)"
                .to_owned()
        };
        assert!(
            !answer,
            "with RetryBudget::new(10, {token_ratio}), {failures} failures and then \
             {successes} successes leave exactly 5.000 tokens, not above the threshold of 5, so \
             can_retry() must be false; yours said true (your count: {got:?}). {why}",
        );
    }
}
