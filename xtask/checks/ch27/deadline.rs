//! The deadline rule: work whose caller has given up is never started, and is answered.

use exercise::ShedReason;

use super::fixture::{NS, admit, due, ms, next, queue, request, roomy, served, shed};

#[test]
fn served_one_nanosecond_before_its_deadline() {
    let mut queue = queue(roomy());
    let deadline = ms(40);
    admit(&mut queue, due(7, ms(10), deadline), ms(10));
    let now = deadline - NS;
    let next = next(&mut queue, now);
    assert_eq!(
        (served(&next), shed(&next)),
        (Some(7), vec![]),
        "request 7's deadline is {deadline:?}; at {now:?}, 1 ns before it, its caller still \
         waits, so the server must serve it. Yours served {:?} and shed {:?} (see pitfall \
         \"a safety margin taken from the caller\")",
        served(&next),
        shed(&next)
    );
}

#[test]
fn dropped_exactly_at_its_deadline() {
    let mut queue = queue(roomy());
    let deadline = ms(40);
    admit(&mut queue, due(7, ms(10), deadline), ms(10));
    let next = next(&mut queue, deadline);
    assert_eq!(
        (served(&next), shed(&next)),
        (None, vec![(7, ShedReason::DeadlinePassed)]),
        "request 7's deadline is {deadline:?}, and the server is free exactly then: the caller \
         gives up at its deadline, so work started at that instant is wasted. The request must \
         not be served but answered DeadlinePassed. Yours served {:?} and shed {:?} (see pitfall \
         \"off by one at the deadline\")",
        served(&next),
        shed(&next)
    );
}

#[test]
fn every_expired_request_is_dropped_wherever_it_waits() {
    // FIFO order: 1 is served; 2 and 4 have expired behind it, 3 and 5 have not.
    let mut queue = queue(roomy());
    admit(&mut queue, due(1, ms(0), ms(90)), ms(0));
    admit(&mut queue, due(2, ms(1), ms(30)), ms(1));
    admit(&mut queue, due(3, ms(2), ms(90)), ms(2));
    admit(&mut queue, due(4, ms(3), ms(50)), ms(3));
    admit(&mut queue, due(5, ms(4), ms(90)), ms(4));
    let next = next(&mut queue, ms(50));
    assert_eq!(
        (served(&next), shed(&next)),
        (
            Some(1),
            vec![
                (2, ShedReason::DeadlinePassed),
                (4, ShedReason::DeadlinePassed)
            ]
        ),
        "at 50 ms the queue holds 1 (deadline 90 ms), 2 (30 ms), 3 (90 ms), 4 (50 ms), 5 \
         (90 ms), oldest first, all waiting under 100 ms: 1 is served, and 2 and 4, whose \
         deadlines have come, must be answered DeadlinePassed in this same call, wherever they \
         wait. Yours served {:?} and shed {:?} (see pitfall \"only the head is checked\")",
        served(&next),
        shed(&next)
    );
    let rest: Vec<Option<u64>> = (0..3).map(|_| served(&next_at(&mut queue))).collect();
    assert_eq!(
        rest,
        [Some(3), Some(5), None],
        "after that call only 3 and 5 should be left, served in that order; yours then served \
         {rest:?}"
    );
}

fn next_at(queue: &mut exercise::AdmissionQueue) -> exercise::Next {
    next(queue, ms(51))
}

#[test]
fn the_deadline_wins_over_the_delay_bound() {
    // Waited 600 ms (over max_wait = 500 ms) and its deadline has come: the caller has given up.
    let mut queue = queue(roomy());
    admit(&mut queue, due(3, ms(0), ms(600)), ms(0));
    admit(&mut queue, request(4, ms(0)), ms(0));
    let next = next(&mut queue, ms(600));
    let answers = shed(&next);
    assert!(
        answers.contains(&(3, ShedReason::DeadlinePassed)),
        "request 3 waited 600 ms (over max_wait = 500 ms) and its deadline, 600 ms, has come: \
         its caller has given up, which says more than the delay bound, so it is answered \
         DeadlinePassed. Yours shed {answers:?}"
    );
    assert!(
        answers.contains(&(4, ShedReason::WaitedTooLong)),
        "request 4 waited 600 ms, over max_wait = 500 ms, with its deadline an hour away: it \
         must be answered WaitedTooLong. Yours shed {answers:?}"
    );
}

#[test]
fn the_deadline_is_the_requests_own() {
    // Deadlines unrelated to when the requests were sent or arrived: only `deadline` counts.
    let mut queue = queue(roomy());
    for (id, deadline) in [(1, 25), (2, 5), (3, 26), (4, 24)] {
        admit(&mut queue, due(id, ms(0), ms(deadline)), ms(0));
    }
    let next = next(&mut queue, ms(25));
    assert_eq!(
        (served(&next), shed(&next)),
        (
            Some(3),
            vec![
                (1, ShedReason::DeadlinePassed),
                (2, ShedReason::DeadlinePassed),
                (4, ShedReason::DeadlinePassed)
            ]
        ),
        "four requests arrived at 0 with deadlines 25, 5, 26 and 24 ms; at 25 ms only the one \
         due at 26 ms may be served, and the other three answered DeadlinePassed. Yours served \
         {:?} and shed {:?}: compare `now` with each request's own `deadline` field",
        served(&next),
        shed(&next)
    );
}
