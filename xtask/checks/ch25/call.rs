//! `call`: rejected requests never reach the backend, and what the backend says is recorded.

use std::time::Duration;

use exercise::{Backend, BackendError, ThrottleError};

use super::fixture::{SEC, WINDOW, history, probability, same, throttle};
use super::support::seeded;

#[tokio::test(start_paused = true)]
async fn throttled_calls_never_reach_the_backend() {
    let throttle = throttle(2.0, WINDOW);
    let backend = Backend::healthy();
    backend.set_overloaded(true);
    let mut rng = seeded(3);
    let mut throttled = 0;
    // How often `call` called the operation: a rejected request must not even do that (an
    // operation may start its work when called, before its future is awaited).
    let mut operations = 0;
    for _ in 0..1_000 {
        let reply = throttle
            .call(&mut rng, || {
                operations += 1;
                backend.handle()
            })
            .await;
        if reply == Err(ThrottleError::Throttled) {
            throttled += 1;
        }
    }
    assert!(
        throttled > 900 && backend.received() + throttled == 1_000,
        "1,000 calls to a backend that refuses everything: most should be rejected locally, and \
         each one either reaches the backend or is rejected, never both. Yours rejected \
         {throttled} and the backend received {}",
        backend.received()
    );
    assert_eq!(
        operations,
        backend.received(),
        "of 1,000 calls, {throttled} were rejected locally and {} reached the backend, but the \
         operation was called {operations} times: a rejected call must return Throttled without \
         calling the operation at all (calling it and dropping its future is not enough: an \
         operation may start its work when called)",
        backend.received()
    );
}

#[tokio::test(start_paused = true)]
async fn only_overload_refusals_are_not_accepted() {
    // 10 successes and 10 ordinary failures (the backend accepted and processed them), then 30
    // refusals as overloaded: 50 requests, 20 accepts, whatever the throttle decided on the way.
    let throttle = throttle(2.0, WINDOW);
    let mut rng = seeded(11);
    for _ in 0..10 {
        let _ = throttle
            .call(&mut rng, || async { Ok::<u32, BackendError>(1) })
            .await;
    }
    for _ in 0..10 {
        let _ = throttle
            .call(&mut rng, || async {
                Err::<u32, _>(BackendError::Failed("404 Not Found".into()))
            })
            .await;
    }
    for _ in 0..30 {
        let _ = throttle
            .call(&mut rng, || async {
                Err::<u32, _>(BackendError::Overloaded)
            })
            .await;
    }
    let got = probability(&throttle);
    let want = 10.0 / 51.0;
    assert!(
        same(got, want),
        "10 successes, 10 failures such as a 404, and 30 refusals as overloaded: the backend \
         accepted 20 requests (a 404 is an answer, not a refusal), so the probability should be \
         (50 − 2 × 20) / 51 = {want}; yours is {got}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_caller_gets_the_backends_answer() {
    let throttle = throttle(2.0, WINDOW);
    let mut rng = seeded(5);
    let ok = throttle
        .call(&mut rng, || async { Ok::<&str, BackendError>("done") })
        .await;
    let failed = throttle
        .call(&mut rng, || async {
            Err::<&str, _>(BackendError::Failed("bad id".into()))
        })
        .await;
    let refused = throttle
        .call(&mut rng, || async {
            Err::<&str, _>(BackendError::Overloaded)
        })
        .await;
    assert_eq!(
        (ok, failed, refused),
        (
            Ok("done"),
            Err(ThrottleError::Backend(BackendError::Failed(
                "bad id".into()
            ))),
            Err(ThrottleError::Backend(BackendError::Overloaded))
        ),
        "a call that reaches the backend returns the backend's own answer"
    );
}

#[tokio::test(start_paused = true)]
async fn an_accept_is_dated_by_its_answer() {
    // Window 30 s. At 0 s a request goes out and the backend accepts it 10 s later; at 25 s
    // five requests are refused. At 30 s the request of 0 s has left the window but its accept,
    // dated 10 s, has not: 5 requests and 1 accept, (5 − 2) / 6 = 0.5. An accept dated when its
    // request was sent would have left too: 5/6.
    let throttle = throttle(2.0, 30 * SEC);
    let mut rng = seeded(5);
    let answer = throttle
        .call(&mut rng, || async {
            tokio::time::sleep(10 * SEC).await;
            Ok::<u32, BackendError>(1)
        })
        .await;
    assert_eq!(
        answer,
        Ok(1),
        "the first request should go out and be answered"
    );
    tokio::time::advance(15 * SEC).await;
    history(&throttle, 5, 0);
    tokio::time::advance(5 * SEC).await;
    let got = probability(&throttle);
    let want = 0.5;
    assert!(
        same(got, want),
        "window 30 s: a request sent at 0 s was accepted at 10 s, and 5 requests were refused at \
         25 s. At 30 s the first request has left the window, but its accept, dated 10 s when \
         the answer came, has not: 5 requests and 1 accept give (5 − 2 × 1) / 6 = {want}; yours \
         is {got}. An accept counts from the moment the backend answered, not from when its \
         request was sent"
    );
    // The accept leaves on its own, at 40 s exactly, while the requests of 25 s stay: 5 requests
    // and no accept, 5/6. A throttle that forgets an accept only together with an old request
    // (none is old between 30 s and 55 s) keeps it.
    tokio::time::advance(10 * SEC - Duration::from_nanos(1)).await;
    let before = probability(&throttle);
    tokio::time::advance(Duration::from_nanos(1)).await;
    let at = probability(&throttle);
    let (want_before, want_at) = (0.5, 5.0 / 6.0);
    assert!(
        same(before, want_before) && same(at, want_at),
        "window 30 s: the accept dated 10 s is younger than 30 s until 40 s, when it leaves the \
         window on its own, though no request leaves with it (the 5 requests of 25 s stay until \
         55 s): the probability should be {want_before} 1 ns before 40 s and 5/6 = {want_at} at \
         40 s; yours was {before} and {at}. Requests and accepts each leave the window at their \
         own age (section 25.5)"
    );
}
