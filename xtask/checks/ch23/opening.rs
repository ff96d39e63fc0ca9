//! When a closed breaker opens: the minimum number of calls, the threshold, the sliding window.

use std::time::Duration;

use exercise::{State, Window};

use super::fixture::{NS, SEC, Seen, Started, breaker, call, config, describe, run, spaced, state};

/// Runs `script` on a fresh breaker and returns the state after each call.
async fn states_after(config: exercise::BreakerConfig, script: &str) -> Vec<State> {
    let breaker = breaker(config);
    let mut states = Vec::new();
    for step in script.chars() {
        run(&breaker, &step.to_string()).await;
        states.push(state(&breaker));
    }
    states
}

#[tokio::test(start_paused = true)]
async fn not_before_minimum_calls() {
    let cases = [
        config(50, 5, Window::Count(10)),
        config(100, 20, Window::Count(20)),
        config(1, 7, Window::Time(60 * SEC)),
        // Beyond the caps a breaker might hide (100 calls, a u8 counter's 255).
        config(50, 300, Window::Count(300)),
    ];
    for config in cases {
        let minimum = config.minimum_calls as usize;
        let script = "F".repeat(minimum);
        let states = states_after(config, &script).await;
        if let Some(early) = states[..minimum - 1]
            .iter()
            .position(|s| *s != State::Closed)
        {
            panic!(
                "with {}, the breaker was {:?} after only {} failure(s): every call failed, but \
                 no failure rate counts before the window holds {minimum} outcomes",
                describe(&config),
                states[early],
                early + 1
            );
        }
        assert_eq!(
            states[minimum - 1],
            State::Open,
            "with {}, {minimum} failures in a row left the breaker {:?}; at the minimum number \
             of calls the rate (100 %) counts, and it reaches the threshold",
            describe(&config),
            states[minimum - 1]
        );
    }
}

#[tokio::test(start_paused = true)]
async fn opens_exactly_at_threshold() {
    // (threshold, successes, failures, should open): failures last, so the rate reaches the
    // threshold on the final call. Some of these are exact only in integers: 0.7 × 10 and
    // 0.28 × 25 are not whole numbers in floating point, nor is 29 / 100 × 100.
    let cases = [
        (50, 5, 5, true),
        (50, 6, 4, false),
        (30, 7, 3, true),
        (70, 3, 7, true),
        (70, 4, 6, false),
        (28, 18, 7, true),
        (7, 93, 7, true),
        (7, 94, 6, false),
        (100, 0, 10, true),
        (100, 1, 9, false),
        (10, 9, 1, true),
        (33, 2, 1, true),
        (34, 2, 1, false),
        // A rate computed as a fraction and scaled back, (failures / calls) × 100, falls just
        // short at these: 0.29 × 100 is 28.999999999999996 in floating point.
        (29, 71, 29, true),
        (57, 43, 57, true),
        (58, 42, 58, true),
    ];
    for (percent, successes, failures, should_open) in cases {
        let script = "S".repeat(successes) + &"F".repeat(failures);
        let script = script.as_str();
        let window = script.len() as u32;
        let config = config(percent, window, Window::Count(window));
        let states = states_after(config, script).await;
        let last = *states.last().expect("a script has steps");
        let expected = if should_open {
            State::Open
        } else {
            State::Closed
        };
        assert_eq!(
            last,
            expected,
            "with {}, {successes} successes then {failures} failures ({failures} of {window}, {:.1} %) left the breaker \
             {last:?}; it opens when the failure rate reaches the threshold (equal or greater), \
             computed exactly: {failures} × 100 against {percent} × {window}",
            describe(&config),
            failures as f64 * 100.0 / f64::from(window),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn window_holds_only_the_last_n_calls() {
    // The early failure has slid out when the last two arrive: 2 of the last 4 = 50 %.
    // Counting every call since the start gives 3 of 9 = 33 %.
    let config = config(50, 4, Window::Count(4));
    let script = "FSSSSSSFF";
    let states = states_after(config, script).await;
    assert_eq!(
        states.last().copied(),
        Some(State::Open),
        "with {}, the calls {} end with 2 failures in the last 4 calls (50 %), so the breaker \
         should open; it is {:?}. The rate counts the last 4 outcomes only, not every call since \
         the start (3 of 9)",
        describe(&config),
        spaced(script),
        states.last()
    );
    // The first failure has slid out already: never open before the last two failures.
    if let Some(early) = states[..states.len() - 1]
        .iter()
        .position(|s| *s == State::Open)
    {
        panic!(
            "with {}, the breaker opened after call {} of {}, when the last 4 calls held at most \
             1 failure",
            describe(&config),
            early + 1,
            spaced(script)
        );
    }
}

#[tokio::test(start_paused = true)]
async fn count_window_larger_than_minimum() {
    // A window of 8 calls that counts from 4: after S S S S F F F F the rate is 4 of 8 (50 %)
    // only at the eighth call. A window cut to the minimum (the last 4 calls) reaches 50 % at
    // the sixth, S S F F.
    let config = config(50, 4, Window::Count(8));
    let script = "SSSSFFFF";
    let states = states_after(config, script).await;
    let mut expected = vec![State::Closed; 7];
    expected.push(State::Open);
    assert_eq!(
        states,
        expected,
        "with {}, after each call of {} the breaker should be Closed seven times, then Open: \
         the window holds up to 8 outcomes, and the rate reaches 50 % only with the eighth (4 \
         of 8). Your states were {states:?}. The window's size is n of Window::Count(n); \
         minimum_calls only says when a rate starts to count",
        describe(&config),
        spaced(script)
    );
    // A large window holds all its n outcomes: 900 successes, then failures. The last 1,200
    // calls are half failures only at the 600th failure; a window cut to 1,000 (or 100)
    // outcomes reaches 50 % at the 500th (or 50th).
    let config = super::fixture::config(50, 4, Window::Count(1_200));
    let script = "S".repeat(900) + &"F".repeat(600);
    let states = states_after(config, &script).await;
    let first_open = states
        .iter()
        .position(|s| *s == State::Open)
        .map(|at| at + 1);
    assert_eq!(
        first_open,
        Some(1_500),
        "with {}, 900 successes then 600 failures: the last 1,200 calls reach 50 % failures \
         only at the 600th failure (call 1,500), so the breaker must first be Open after call \
         1,500; yours first was after call {first_open:?}. The window holds all n \
         outcomes of Window::Count(n), however large n is",
        describe(&config),
    );
}

#[tokio::test(start_paused = true)]
async fn window_slides_one_call_at_a_time() {
    // After the sixth call the last five are S S F F F: 60 %. A window that is emptied when it
    // fills holds only the sixth call and never reaches its minimum.
    let config = config(60, 5, Window::Count(5));
    let script = "SSSFFF";
    let states = states_after(config, script).await;
    assert_eq!(
        states,
        vec![
            State::Closed,
            State::Closed,
            State::Closed,
            State::Closed,
            State::Closed,
            State::Open
        ],
        "with {}, after each call of {} the breaker should be Closed five times, then Open \
         (the last five calls S S F F F are 60 % failures); your states were {states:?}. The \
         window drops its oldest outcome when a new one arrives; it is never emptied at once",
        describe(&config),
        spaced(script)
    );
}

/// A time window of `span` with a minimum of 3 calls: a failure at 0 s, a failure at 1 s, then,
/// `later` after that second failure, a success and a failure. Returns the config and the state.
async fn failures_then_success_and_failure(
    span: Duration,
    later: Duration,
) -> (exercise::BreakerConfig, State) {
    let config = config(50, 3, Window::Time(span));
    let breaker = breaker(config);
    run(&breaker, "F").await;
    tokio::time::advance(SEC).await;
    run(&breaker, "F").await;
    tokio::time::advance(later).await;
    run(&breaker, "SF").await;
    (config, state(&breaker))
}

#[tokio::test(start_paused = true)]
async fn time_window_forgets_at_exact_age() {
    // The second failure is exactly 10 s old: it has left the window.
    let (config, now) = failures_then_success_and_failure(10 * SEC, 10 * SEC).await;
    assert_eq!(
        now,
        State::Closed,
        "with {}: a failure at 0 s, a failure at 1 s, then at 11 s a success and a failure. The \
         failure of 1 s is exactly 10 s old at 11 s, so it has left the window, which holds 2 \
         outcomes (fewer than the minimum of 3); the breaker should stay Closed, it is {now:?}",
        describe(&config)
    );
    // The same with a window of 2 days: the failure leaves it at 2 days exactly.
    let (config, now) = failures_then_success_and_failure(2 * DAY, 2 * DAY).await;
    assert_eq!(
        now,
        State::Closed,
        "with {}: a failure at 0 s, a failure at 1 s, then 2 days after that a success and a \
         failure. The failure of 1 s is exactly 2 days old, so it has left the window, which \
         holds 2 outcomes (fewer than the minimum of 3); the breaker should stay Closed, it is \
         {now:?}",
        describe(&config)
    );
    // Many outcomes leave at once, and the rate that follows counts only the new ones: a window
    // that forgets one old outcome per new one, or a running failure count that the forgetting
    // does not lower, still counts the old failures once the minimum is met again.
    let config = super::fixture::config(60, 4, Window::Time(10 * SEC));
    let breaker = breaker(config);
    let old = run(&breaker, "SSSSFFF").await;
    tokio::time::advance(10 * SEC).await;
    let mut states = Vec::new();
    for step in ["F", "F", "S", "S"] {
        run(&breaker, step).await;
        states.push(state(&breaker));
    }
    assert!(
        !old.contains(&Seen::Refused) && states == [State::Closed; 4],
        "with {}: S S S S F F F at 0 s (3 of 7, 43 %), then at 10 s exactly F, F, S, S. Every \
         outcome of 0 s is exactly 10 s old at 10 s and has left the window, which holds only \
         the new calls: F F S S is 50 %, below 60 %, so the breaker should stay Closed after each \
         of them; it was {states:?}. Forget every outcome of the span's age, and count the \
         failures of the outcomes that are still in the window",
        describe(&config)
    );
}

const DAY: Duration = Duration::from_secs(86_400);

#[tokio::test(start_paused = true)]
async fn time_window_keeps_younger_outcomes() {
    // One nanosecond short of 10 s: the failure of 1 s still counts.
    let (config, now) = failures_then_success_and_failure(10 * SEC, 10 * SEC - NS).await;
    assert_eq!(
        now,
        State::Open,
        "with {}: a failure at 0 s, a failure at 1 s, then a success and a failure 1 ns before \
         11 s. The failure of 1 s is still younger than 10 s, so the window holds F S F (67 %, 3 \
         outcomes): the breaker should be Open, it is {now:?}. Outcomes leave a time window \
         when they are exactly its span old, not earlier",
        describe(&config)
    );
    // A long window keeps its span, not a minute's or an hour's: 1 ns short of 2 days, the
    // failure of 1 s still counts.
    let (config, now) = failures_then_success_and_failure(2 * DAY, 2 * DAY - NS).await;
    assert_eq!(
        now,
        State::Open,
        "with {}: a failure at 0 s, a failure at 1 s, then a success and a failure 1 ns short of \
         2 days later. The failure of 1 s is still younger than the window's 2 days, so the \
         window holds F S F (67 %, 3 outcomes): the breaker should be Open, it is {now:?}. A \
         time window keeps its whole span, however long",
        describe(&config)
    );
    // A busy window keeps every outcome of its span: 600 successes and then failures, all
    // within one instant. 50 % is reached at the 600th failure; a window that keeps at most
    // 1,000 outcomes reaches it at the 500th.
    let config = super::fixture::config(50, 4, Window::Time(10 * SEC));
    let breaker = breaker(config);
    run(&breaker, &"S".repeat(600)).await;
    let mut first_open = None;
    for failure in 1..=600 {
        run(&breaker, "F").await;
        if state(&breaker) == State::Open {
            first_open = Some(failure);
            break;
        }
    }
    assert_eq!(
        first_open,
        Some(600),
        "with {}: 600 successes, then failures, all at the same instant. Every outcome is \
         younger than 10 s, so the rate reaches 50 % only at the 600th failure; yours opened \
         at failure {first_open:?}. A time window holds every outcome of its span, however many",
        describe(&config)
    );
}

/// A 10 s time window with a minimum of 2 calls: a call that fails after 8 s, then an instant
/// failure `later` after that first answer. Returns the config and the state.
async fn slow_failure_then_failure(later: Duration) -> (exercise::BreakerConfig, State) {
    let config = config(50, 2, Window::Time(10 * SEC));
    let breaker = breaker(config);
    call(&breaker, &Started::default(), false, 8 * SEC).await;
    tokio::time::advance(later).await;
    run(&breaker, "F").await;
    (config, state(&breaker))
}

#[tokio::test(start_paused = true)]
async fn time_window_ages_from_the_answer() {
    // The first call starts at 0 s and fails at 8 s: its outcome is recorded at 8 s, and is 10 s
    // old at 18 s. Aged from its start, it would have left at 10 s.
    let (config, just_inside) = slow_failure_then_failure(10 * SEC - NS).await;
    assert_eq!(
        just_inside,
        State::Open,
        "with {}: a call started at 0 s and failed at 8 s, then a second call failed 1 ns before \
         18 s. An outcome joins the window when its call finishes, so the first failure, \
         recorded at 8 s, is still younger than 10 s: the window holds F F (2 outcomes, 100 %) \
         and the breaker should be Open; it is {just_inside:?}. Stamp an outcome with the \
         instant it is recorded, not the instant its call started",
        describe(&config)
    );
    let (config, at_span) = slow_failure_then_failure(10 * SEC).await;
    assert_eq!(
        at_span,
        State::Closed,
        "with {}: a call started at 0 s and failed at 8 s, then a second call failed at 18 s \
         exactly. The first failure, recorded at 8 s, is exactly 10 s old and has left the \
         window, which holds 1 outcome (fewer than the minimum of 2): the breaker should stay \
         Closed; it is {at_span:?}",
        describe(&config)
    );
}

#[tokio::test(start_paused = true)]
async fn an_empty_window_never_opens() {
    // A window that keeps nothing has no failure rate, even with no minimum: 0 failures × 100
    // against 50 × 0 calls must not read as "reached".
    for window in [Window::Count(0), Window::Time(Duration::ZERO)] {
        let config = config(50, 0, window);
        let script = "FFFFFF";
        let states = states_after(config, script).await;
        if let Some(opened) = states.iter().position(|s| *s != State::Closed) {
            panic!(
                "with {}, the window keeps no outcome, so it never has a failure rate and the \
                 breaker never opens; yours was {:?} after call {} of {}. Zero outcomes are no \
                 rate at all, not a rate that reaches every threshold",
                describe(&config),
                states[opened],
                opened + 1,
                spaced(script)
            );
        }
    }
    // With no minimum, one outcome is enough for a rate.
    let config = config(50, 0, Window::Count(5));
    let script = "SF";
    let states = states_after(config, script).await;
    assert_eq!(
        states,
        [State::Closed, State::Open],
        "with {}, the calls {} should leave the breaker closed after the success (0 of 1 \
         failed) and open it at the failure (1 of 2, 50 %); it went {states:?}",
        describe(&config),
        spaced(script)
    );
}
