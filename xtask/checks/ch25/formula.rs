//! The SRE book's formula: max(0, (requests − K·accepts) / (requests + 1)).

use super::fixture::{WINDOW, expected, history, probability, same, throttle};
use super::support::seeded;

#[tokio::test(start_paused = true)]
async fn healthy_traffic_is_never_rejected() {
    // 10,000 draws at probability 0, a fresh throttle per seed so that no window grows past 500
    // events. A throttle that rejects on a draw below 0.01 whatever the probability passes with
    // probability 0.99^10000, about 2e-44.
    for seed in 0..20 {
        let throttle = throttle(2.0, WINDOW);
        let mut rng = seeded(seed);
        for n in 0..500 {
            let admitted = throttle.admit(&mut rng);
            assert!(
                admitted,
                "every request so far was accepted by the backend (requests = accepts), so the \
                 rejection probability is 0 and no request may be rejected; request {n} of seed \
                 {seed} was rejected (the probability was {})",
                probability(&throttle)
            );
            throttle.on_response(true);
        }
        let p = probability(&throttle);
        assert!(
            p == 0.0,
            "after 500 accepted requests (seed {seed}) the probability is {p}, not 0"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn probability_follows_the_formula() {
    // (K, requests, accepts)
    let cases = [
        (2.0, 0, 0),
        (2.0, 1, 0),
        (2.0, 10, 0),
        (2.0, 100, 40),
        (2.0, 100, 49),
        (2.0, 100, 50),
        (2.0, 100, 70),
        (1.0, 100, 90),
        (1.5, 100, 60),
        (3.0, 100, 30),
        // K × accepts is not a whole number here: 91.5 and 8.75 must not be rounded.
        (1.5, 100, 61),
        (1.25, 40, 7),
    ];
    for (k, requests, accepts) in cases {
        let throttle = throttle(k, WINDOW);
        history(&throttle, requests, accepts);
        let got = probability(&throttle);
        let want = expected(requests, accepts, k);
        assert!(
            same(got, want),
            "with K = {k}, after {requests} requests of which the backend accepted {accepts}, \
             the rejection probability is max(0, ({requests} − {k} × {accepts}) / ({requests} + \
             1)) = {want}; yours is {got}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn local_rejections_count_as_requests() {
    // The backend accepts nothing. Every request the application attempts counts, also those
    // the throttle rejects, so after n attempts the probability is n / (n + 1).
    let throttle = throttle(2.0, WINDOW);
    let mut rng = seeded(25);
    let mut rejected = 0;
    for _ in 0..50 {
        if throttle.admit(&mut rng) {
            throttle.on_response(false);
        } else {
            rejected += 1;
        }
    }
    let got = probability(&throttle);
    let want = 50.0 / 51.0;
    assert!(
        same(got, want),
        "the backend refused everything; the application attempted 50 requests and your \
         throttle rejected {rejected} of them itself. Every attempt counts in `requests`, \
         rejected locally or not, so the probability should be 50/51 = {want}; yours is \
         {got}"
    );
}

#[tokio::test(start_paused = true)]
async fn k_is_the_throttles_own() {
    let (requests, accepts) = (300, 120);
    for k in [1.1, 2.0, 2.5, 4.0] {
        let throttle = throttle(k, WINDOW);
        history(&throttle, requests, accepts);
        let got = probability(&throttle);
        let want = expected(requests, accepts, k);
        let as_if_two = k != 2.0 && same(got, expected(requests, accepts, 2.0));
        assert!(
            same(got, want),
            "with K = {k}: {requests} requests, {accepts} accepted; the probability should be \
             {want} and yours is {got}{}",
            if as_if_two {
                ", the value for K = 2. K is the value the throttle was built with, not the \
                 SRE book's default: a larger K lets more requests through before the client \
                 starts rejecting"
            } else {
                ""
            }
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_busy_window_keeps_every_event() {
    // More events than a window capped at 10,000 would keep: every one of them counts. Building
    // this history takes 12,000 decisions on a window that grows to 15,000 events, which is
    // fast only for a throttle whose work per decision is what left the window (section 25.5).
    let (k, requests, accepts) = (2.0, 12_000, 3_000);
    let throttle = throttle(k, WINDOW);
    history(&throttle, requests, accepts);
    let got = probability(&throttle);
    let want = expected(requests, accepts, k);
    assert!(
        same(got, want),
        "with K = {k}, after {requests} requests of which the backend accepted {accepts}, all \
         within the window, the rejection probability is max(0, ({requests} − {k} × {accepts}) \
         / ({requests} + 1)) = {want}; yours is {got}{}",
        if got < want {
            ": lower, as if some of the requests had been forgotten. Every event younger than \
             the window counts, however many there are; a cap on the number of events kept \
             forgets requests that are still in the window"
        } else {
            ""
        }
    );
}
