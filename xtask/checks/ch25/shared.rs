//! One throttle shared by many threads.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use exercise::BackendError;
use tokio::time::Instant;

use super::fixture::{WINDOW, history, probability, same, throttle};
use super::support::seeded;

#[test]
fn threads_share_one_throttle() {
    // Eight threads attempt 1,000 requests each, and record an accept for every fourth one
    // (whether the throttle let it out or not: the counts are what is checked). Every attempt
    // and every accept counts, so the window must hold exactly 8,000 requests and 2,000
    // accepts: (8000 − 2 × 2000) / 8001.
    let throttle = Arc::new(throttle(2.0, WINDOW));
    std::thread::scope(|scope| {
        for thread in 0..8u64 {
            let throttle = Arc::clone(&throttle);
            scope.spawn(move || {
                let mut rng = seeded(thread);
                for n in 0..1_000 {
                    let admitted = throttle.admit(&mut rng);
                    if n % 4 == 0 {
                        throttle.on_response(true);
                    } else if admitted {
                        throttle.on_response(false);
                    }
                }
            });
        }
    });
    let got = probability(&throttle);
    let want = 4_000.0 / 8_001.0;
    assert!(
        same(got, want),
        "8 threads attempted 1,000 requests each through one throttle and recorded an accept \
         for every fourth: 8,000 requests and 2,000 accepts give (8000 − 2 × 2000) / 8001 = \
         {want:.9}; yours is {got:.9}. No request and no accept may be lost under contention"
    );
}

#[test]
fn calls_in_flight_do_not_hold_the_throttle() {
    // Two tasks of one client call through one healthy throttle (100 requests, all accepted)
    // at once, each request taking 100 ms.
    // Neither may hold the throttle while its request is out: both go out at 0 ms and both
    // answers are in at 100 ms. A call that keeps the throttle's lock across its request blocks
    // the other task (and on a single-threaded runtime, the whole thread: a deadlock), so the
    // calls run on a thread of their own, and this check waits for them for 1 s of real time,
    // about a hundred thousand times what they need on tokio's paused clock.
    let (done, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread runtime always builds");
        let result = runtime.block_on(async {
            let throttle = throttle(2.0, WINDOW);
            history(&throttle, 100, 100);
            let start = Instant::now();
            let sent = Mutex::new(Vec::new());
            let sent_at = &sent;
            let request = move || async move {
                sent_at.lock().expect("lock").push(start.elapsed());
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok::<u32, BackendError>(1)
            };
            let (mut first, mut second) = (seeded(1), seeded(2));
            let (a, b) = tokio::join!(
                throttle.call(&mut first, request),
                throttle.call(&mut second, request)
            );
            let took = start.elapsed();
            let sent = sent.lock().expect("lock").clone();
            (a.is_ok() && b.is_ok(), sent, took, probability(&throttle))
        });
        let _ = done.send(result);
    });
    let Ok((both_ok, sent, took, probability)) = outcome.recv_timeout(Duration::from_secs(1))
    else {
        panic!(
            "two tasks called through one throttle at once, each request taking 100 ms on \
             tokio's clock, and the calls had not finished after 1 s of real time: the first \
             call seems to hold the throttle (its lock) while its request is in flight, so the \
             second blocks the thread waiting for it. Lock to decide and to record, never \
             across the request"
        );
    };
    let want = vec![Duration::ZERO; 2];
    assert!(
        both_ok && sent == want && took == Duration::from_millis(100) && probability == 0.0,
        "after 100 accepted requests, two tasks called through the throttle at once, each \
         request taking 100 ms: both requests should go out at 0 ms, side by side, and both \
         calls return Ok at 100 ms with a probability of 0 afterwards. Yours sent them at \
         {sent:?}, took {took:?}, returned both Ok: {both_ok}, and left a probability of \
         {probability}. A call must not hold the throttle while its request is out"
    );
}
