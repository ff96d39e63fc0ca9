//! The two bounds: the queue's length, checked on arrival, and each request's wait.

use std::time::Duration;

use exercise::ShedReason;

use super::fixture::{NS, admit, config, len, ms, next, push, queue, request, served, shed};

#[test]
fn the_length_bound_is_exact() {
    let mut queue = queue(config(3, ms(100), ms(500)));
    for id in 1..=3 {
        admit(&mut queue, request(id, ms(id)), ms(id));
    }
    let refused = push(&mut queue, request(4, ms(4)), ms(4));
    let refused = refused.map_err(|answer| (answer.id, answer.reason));
    assert_eq!(
        refused,
        Err((4, ShedReason::QueueFull)),
        "max_len = 3: the first three requests join the queue; the fourth arrives at a queue \
         that already holds 3 and must be answered at once, QueueFull, with its own id. Yours \
         answered {refused:?} (see pitfall \"off by one at the length bound\")"
    );
    let held = len(&queue);
    assert_eq!(
        held, 3,
        "a refused request does not join the queue; yours holds {held} requests after 3 \
         accepted and 1 refused"
    );
    let _ = next(&mut queue, ms(5));
    let again = push(&mut queue, request(5, ms(6)), ms(6));
    assert!(
        again.is_ok(),
        "after one request was taken for service the queue holds 2 of 3: request 5 must join \
         it; yours answered {again:?}"
    );
}

#[test]
fn a_queue_of_length_zero_refuses_everything() {
    let mut queue = queue(config(0, ms(100), ms(500)));
    let refused = push(&mut queue, request(1, ms(0)), ms(0)).map_err(|a| a.reason);
    assert_eq!(
        refused,
        Err(ShedReason::QueueFull),
        "max_len = 0 holds nothing: every request is answered QueueFull; yours answered \
         {refused:?}"
    );
    let next = next(&mut queue, ms(1));
    assert_eq!(
        (served(&next), next.shed.len()),
        (None, 0),
        "nothing was queued, so next has nothing to serve or shed"
    );
}

/// One request that arrived at 10 ms, in a queue bounded at `max_wait` = 500 ms with a switch
/// far away; what `next` does with it at `now`.
fn waited_until(now: Duration) -> (Option<u64>, Vec<(u64, ShedReason)>) {
    let mut queue = queue(config(1_000, Duration::from_secs(60), ms(500)));
    admit(&mut queue, request(1, ms(10)), ms(10));
    let next = next(&mut queue, now);
    (served(&next), shed(&next))
}

#[test]
fn a_request_that_waited_exactly_max_wait_is_served() {
    let now = ms(510);
    let got = waited_until(now);
    assert_eq!(
        got,
        (Some(1), vec![]),
        "request 1 arrived at 10 ms; at {now:?} it has waited exactly max_wait = 500 ms, not \
         longer: it must be served. Yours served and shed {got:?} (see pitfall \"off by one at \
         the delay bound\")"
    );
}

#[test]
fn a_request_that_waited_longer_than_max_wait_is_shed() {
    let now = ms(510) + NS;
    let got = waited_until(now);
    assert_eq!(
        got,
        (None, vec![(1, ShedReason::WaitedTooLong)]),
        "request 1 arrived at 10 ms; at {now:?} it has waited 1 ns longer than max_wait = \
         500 ms: it must not be served but answered WaitedTooLong. Yours served and shed \
         {got:?} (compare the wait with max_wait as durations, to the nanosecond, at every \
         next, whatever the order; see pitfall \"a queue bounded by length only\")"
    );
}

#[test]
fn a_short_queue_is_still_bounded_by_delay() {
    // Two requests in a queue of 1,000: far from full, but both have waited 2 s.
    let mut queue = queue(config(1_000, Duration::from_secs(60), ms(500)));
    admit(&mut queue, request(1, ms(0)), ms(0));
    admit(&mut queue, request(2, ms(1_000)), ms(1_000));
    admit(&mut queue, request(3, ms(1_900)), ms(1_900));
    let next = next(&mut queue, ms(2_000));
    assert_eq!(
        (served(&next), shed(&next)),
        (
            Some(3),
            vec![
                (1, ShedReason::WaitedTooLong),
                (2, ShedReason::WaitedTooLong)
            ]
        ),
        "a queue of 3 in room for 1,000: at 2 s, request 1 has waited 2 s and request 2 1 s, \
         both over max_wait = 500 ms, so both are answered WaitedTooLong and 3 (waited 100 ms) \
         is served. Yours served {:?} and shed {:?}",
        served(&next),
        shed(&next)
    );
}
