//! The SRE book's formula: max(0, (requests − K·accepts) / (requests + 1)).

use super::fixture::{WINDOW, expected, history, probability, same, throttle};
use super::support::seeded;

#[tokio::test(start_paused = true)]
async fn healthy_traffic_is_never_rejected() {
    let throttle = throttle(2.0, WINDOW);
    for seed in 0..20 {
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
    }
    let p = probability(&throttle);
    assert!(
        p == 0.0,
        "after 10,000 accepted requests the probability is {p}, not 0"
    );
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
        // More events than a window capped at 10,000 would keep: every one of them counts.
        (2.0, 12_000, 3_000),
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
        assert!(
            same(got, want),
            "with K = {k}: {requests} requests, {accepts} accepted; the probability should be \
             {want} and yours is {got}. K is the value the throttle was built with: a \
             larger K lets more requests through before the client starts rejecting"
        );
    }
}
