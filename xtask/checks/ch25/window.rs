//! The sliding window: outcomes leave it at exactly its age, and traffic returns after recovery.

use std::time::Duration;

use exercise::{Backend, ThrottleError};

use super::fixture::{SEC, WINDOW, history, probability, same, throttle};
use super::support::seeded;

#[tokio::test(start_paused = true)]
async fn forgets_exactly_at_the_window() {
    // A window of an odd number of nanoseconds tells an exact comparison from one in whole
    // seconds or milliseconds; one of 2 days, a window capped at 120 one-second buckets or at an
    // hour.
    for window in [
        WINDOW,
        30 * SEC,
        Duration::new(7, 123_456_789),
        2 * 86_400 * SEC,
    ] {
        let throttle = throttle(2.0, window);
        history(&throttle, 10, 0);
        tokio::time::advance(window - Duration::from_nanos(1)).await;
        let before = probability(&throttle);
        tokio::time::advance(Duration::from_nanos(1)).await;
        let after = probability(&throttle);
        assert!(
            same(before, 10.0 / 11.0) && after == 0.0,
            "window {window:?}: 10 requests, none accepted. 1 ns before they are {window:?} old \
             the probability should still be 10/11, and at exactly that age they leave the \
             window and it should be 0; yours was {before}, then {after}. Compare the \
             ages exactly, to the nanosecond, not in whole seconds or milliseconds"
        );
    }
    // A window of zero keeps nothing: an event leaves it at age 0, so the probability stays 0
    // (a zero read as "the default window" would remember the refusals).
    let throttle = throttle(2.0, Duration::ZERO);
    history(&throttle, 10, 0);
    let now = probability(&throttle);
    assert!(
        now == 0.0,
        "window 0: 10 requests, none accepted, all at this instant. An event leaves the window \
         at exactly the window's age, here 0, so none of them counts and the probability must \
         be 0; yours is {now}. A window of zero is a window of zero, not the default"
    );
}

#[tokio::test(start_paused = true)]
async fn the_window_slides() {
    // 20 requests all accepted at 0 s, then 20 requests of which 5 are accepted at 60 s: at
    // 60 s, 40 requests and 25 accepts (probability 0). At 120 s the first 20 and their accepts
    // have left: 20 requests, 5 accepts, (20 - 2·5)/21 = 10/21. A window that is emptied every
    // 120 s says 0, and so does one that forgets from the newest end (it keeps all 25 accepts).
    let throttle = throttle(2.0, 120 * SEC);
    history(&throttle, 20, 20);
    tokio::time::advance(60 * SEC).await;
    history(&throttle, 20, 5);
    let at_60 = probability(&throttle);
    tokio::time::advance(60 * SEC).await;
    let at_120 = probability(&throttle);
    assert!(
        at_60 == 0.0 && same(at_120, 10.0 / 21.0),
        "20 requests all accepted at 0 s, then 20 requests with 5 accepted at 60 s: the \
         probability should be 0 at 60 s and (20 - 2·5)/21 = 10/21 at 120 s, when the first 20 \
         requests and their 20 accepts have left the window; yours was {at_60} and {at_120}. \
         The window slides with time, oldest events leaving first; it is never emptied at once"
    );
}

#[tokio::test(start_paused = true)]
async fn traffic_returns_after_recovery() {
    let throttle = throttle(2.0, WINDOW);
    let backend = Backend::healthy();
    let mut rng = seeded(7);
    backend.set_overloaded(true);
    for _ in 0..600 {
        let _ = throttle.call(&mut rng, || backend.handle()).await;
        tokio::time::advance(SEC / 10).await;
    }
    let during = probability(&throttle);
    assert!(
        during > 0.9,
        "a minute of traffic that the backend refused entirely should push the probability \
         above 0.9; yours is {during}"
    );
    backend.set_overloaded(false);
    tokio::time::advance(WINDOW).await;
    let after = probability(&throttle);
    let mut throttled = 0;
    for _ in 0..100 {
        if throttle.call(&mut rng, || backend.handle()).await == Err(ThrottleError::Throttled) {
            throttled += 1;
        }
    }
    assert!(
        after == 0.0 && throttled == 0,
        "the overload ended and two minutes passed: everything from the overload has left the \
         window, so the probability should be 0 and every request should go out; yours is \
         {after} and {throttled} of 100 requests were rejected"
    );
}

#[tokio::test(start_paused = true)]
async fn admit_forgets_old_events_too() {
    // 10 refused requests, then a whole window of silence: the next requests are decided on an
    // empty window, whether or not anyone asked for the probability in between. Each of them is
    // accepted, so the probability stays 0 and none may be rejected.
    let throttle = throttle(2.0, 30 * SEC);
    history(&throttle, 10, 0);
    tokio::time::advance(30 * SEC).await;
    let mut rng = seeded(41);
    let mut rejected = 0;
    for _ in 0..20 {
        if !throttle.admit(&mut rng) {
            rejected += 1;
        }
        throttle.on_response(true);
    }
    assert_eq!(
        rejected, 0,
        "window 30 s: 10 requests were refused, then 30 s passed, then 20 requests were \
         attempted and each one accepted. The refusals had left the window, so every one of the \
         20 had probability 0; yours rejected {rejected} of them. admit decides on the window \
         as it is now, forgetting old events just as rejection_probability does"
    );
}
