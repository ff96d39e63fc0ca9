//! Permits on tokio's paused clock: `call`, timeouts, dropped futures, and tasks side by side.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use exercise::{LimitError, Service, ServiceError};

use super::fixture::{aimd, in_flight, limit};

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn call_sorts_the_outcomes() {
    let limiter = aimd(8, 1, 100, 0.5);
    let ok = limiter
        .call(100 * MS, || async { Ok::<_, ServiceError>(7) })
        .await;
    let failed = limiter
        .call(100 * MS, || async {
            Err::<u32, _>(ServiceError::Failed("404".into()))
        })
        .await;
    assert_eq!(ok, Ok(7), "a success returns the service's value");
    assert_eq!(
        failed,
        Err(LimitError::Service(ServiceError::Failed("404".into()))),
        "another error returns the service's own error"
    );
    let after = (limit(&limiter), in_flight(&limiter));
    assert_eq!(
        after,
        (8, 0),
        "a success and a 404 in a window of 8: the limit should still be 8, and both calls \
         should have given their place back; yours has a limit of {} with {} in flight (a place \
         must come back however the call ended, an error included: let the permit's Drop give \
         it back)",
        after.0,
        after.1
    );
    let refused = limiter
        .call(100 * MS, || async {
            Err::<u32, _>(ServiceError::Overloaded)
        })
        .await;
    assert_eq!(
        refused,
        Err(LimitError::Service(ServiceError::Overloaded)),
        "an overload refusal returns the service's own error"
    );
    assert_eq!(
        limit(&limiter),
        4,
        "an overload refusal is a drop: limit 8 should become 4"
    );
    let timed_out = limiter
        .call(100 * MS, || async {
            tokio::time::sleep(101 * MS).await;
            Ok::<_, ServiceError>(1)
        })
        .await;
    assert_eq!(
        timed_out,
        Err(LimitError::TimedOut),
        "an operation slower than the timeout ends in TimedOut"
    );
    assert_eq!(
        (limit(&limiter), in_flight(&limiter)),
        (2, 0),
        "a timeout is a drop: limit 4 should become 2, with nothing left in flight"
    );
    let mut failures = 0;
    for _ in 0..2 {
        failures += u32::from(
            limiter
                .call(100 * MS, || async {
                    Err::<u32, _>(ServiceError::Failed("bad id".into()))
                })
                .await
                .is_err(),
        );
    }
    assert_eq!(
        (failures, limit(&limiter)),
        (2, 2),
        "two 404s are no successes: a window of 2 needs 2 successes, so the limit should stay \
         2"
    );
}

#[tokio::test(start_paused = true)]
async fn rejects_without_calling_the_operation() {
    let limiter = aimd(2, 1, 100, 0.5);
    let held: Vec<_> = (0..2)
        .map(|_| limiter.try_acquire().expect("limit 2 admits 2"))
        .collect();
    let mut called = false;
    let reply = limiter
        .call(100 * MS, || {
            called = true;
            async { Ok::<_, ServiceError>(1) }
        })
        .await;
    assert_eq!(
        (reply, called),
        (Err(LimitError::Rejected), false),
        "limit 2 with 2 in flight: a call must return Rejected at once, without calling the \
         operation"
    );
    assert_eq!(
        (limit(&limiter), in_flight(&limiter)),
        (2, 2),
        "a rejection is no drop and takes no place: limit 2, 2 in flight"
    );
    drop(held);
}

#[tokio::test(start_paused = true)]
async fn a_dropped_future_gives_its_place_back() {
    let limiter = aimd(3, 1, 100, 0.5);
    many_successes(&limiter, 2).await;
    // The caller gives up after 50 ms, dropping `call`'s future while the operation runs.
    let abandoned = tokio::time::timeout(
        50 * MS,
        limiter.call(Duration::from_secs(10), || async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok::<_, ServiceError>(1)
        }),
    )
    .await;
    assert!(abandoned.is_err(), "the caller gave up on its call");
    let (now_limit, now_in_flight) = (limit(&limiter), in_flight(&limiter));
    assert_eq!(
        now_in_flight, 0,
        "a caller dropped its call's future after 50 ms: its place must come back at once (a \
         guard whose Drop releases it); yours still counts {now_in_flight} in flight (pitfall: \
         the place given back only when the call returns)"
    );
    assert_eq!(
        now_limit, 3,
        "a dropped future is neither a success nor a drop: the limit should stay 3"
    );
    many_successes(&limiter, 1).await;
    assert_eq!(
        limit(&limiter),
        4,
        "the dropped future did not reset the window: 2 successes before it and 1 after make \
         a window of 3, and the limit should be 4"
    );
}

async fn many_successes(limiter: &exercise::AimdLimiter, count: u32) {
    for _ in 0..count {
        let reply = limiter
            .call(MS, || async { Ok::<_, ServiceError>(()) })
            .await;
        assert_eq!(reply, Ok(()), "a quick success should go through");
    }
}

#[tokio::test(start_paused = true)]
async fn released_exactly_once() {
    let limiter = aimd(10, 1, 100, 0.5);
    // One request stays in flight throughout, while three others end.
    let held = limiter.try_acquire().expect("limit 10 admits one");
    for settle in 0..3 {
        let permit = limiter.try_acquire().expect("a place beside the held one");
        match settle {
            0 => permit.success(),
            1 => permit.dropped(),
            _ => drop(permit),
        }
    }
    let got = in_flight(&limiter);
    assert_eq!(
        got, 1,
        "one permit held while three others end by success(), dropped() and a plain drop: \
         exactly 1 is in flight; yours counts {got} (a place given back twice, or not at all)"
    );
    let now = limit(&limiter);
    let more: Vec<_> = std::iter::from_fn(|| limiter.try_acquire())
        .take(now as usize + 5)
        .collect();
    assert_eq!(
        more.len() + 1,
        now as usize,
        "with 1 in flight, a limit of {now} admits exactly {} more; yours admitted {} (a place \
         given back twice makes room that is not there)",
        now - 1,
        more.len()
    );
    drop(held);
}

#[tokio::test(start_paused = true)]
async fn a_burst_of_timeouts_decreases_once() {
    let limiter = Rc::new(aimd(8, 1, 100, 0.5));
    let local = tokio::task::LocalSet::new();
    let outcomes = Rc::new(Cell::new(0));
    for _ in 0..8 {
        let limiter = Rc::clone(&limiter);
        let outcomes = Rc::clone(&outcomes);
        local.spawn_local(async move {
            let reply = limiter
                .call(100 * MS, || async {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    Ok::<_, ServiceError>(())
                })
                .await;
            if reply == Err(LimitError::TimedOut) {
                outcomes.set(outcomes.get() + 1);
            }
        });
    }
    local.await;
    let got = limit(&limiter);
    assert_eq!(
        (outcomes.get(), got),
        (8, 4),
        "8 concurrent calls under limit 8 all time out at the same instant: one decrease, to \
         4, answers all of them; yours timed out {} and left the limit at {got} (pitfall: a \
         decrease on every drop of a burst)",
        outcomes.get()
    );
}

#[tokio::test(start_paused = true)]
async fn concurrent_tasks_never_exceed_the_limit() {
    // Floor and ceiling 6: the limit never moves, so 6 is the bound at every instant.
    let limiter = Arc::new(aimd(6, 6, 6, 0.5));
    let service = Arc::new(Service::new(4, 10 * MS));
    let inside = Arc::new(AtomicU32::new(0));
    let most = Arc::new(AtomicU32::new(0));
    let over = Arc::new(AtomicU32::new(0));
    let mut tasks = Vec::new();
    for task in 0..40u32 {
        let (limiter, service) = (Arc::clone(&limiter), Arc::clone(&service));
        let (inside, most, over) = (Arc::clone(&inside), Arc::clone(&most), Arc::clone(&over));
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(MS * (task % 7)).await;
            for round in 0..30u32 {
                let reply = limiter
                    .call(35 * MS, || async {
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        if limiter.in_flight() > 6 {
                            over.fetch_add(1, Ordering::SeqCst);
                        }
                        if round % 11 == 5 {
                            service.refuse_next(1);
                        }
                        let reply = service.handle().await;
                        inside.fetch_sub(1, Ordering::SeqCst);
                        reply
                    })
                    .await;
                if reply == Err(LimitError::TimedOut) {
                    inside.fetch_sub(1, Ordering::SeqCst);
                }
                tokio::time::sleep(MS * (1 + (task + round) % 5)).await;
            }
        }));
    }
    for task in tasks {
        task.await.expect("a task of the check panicked");
    }
    let (most, over) = (most.load(Ordering::SeqCst), over.load(Ordering::SeqCst));
    assert!(
        most <= 6 && over == 0,
        "40 tasks calling through one limiter of fixed limit 6 (floor and ceiling 6): the \
         operations running at once must never outnumber it; yours reached {most} at once, and \
         in_flight() read more than 6 {over} time(s) (a place given back twice, or never \
         counted)"
    );
    assert_eq!(
        in_flight(&limiter),
        0,
        "every task has finished: nothing should be in flight"
    );
}
