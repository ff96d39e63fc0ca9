//! Adaptive LIFO: the switch point, the order within LIFO, and the way back to FIFO.

use std::time::Duration;

use exercise::{AdmissionQueue, Order, Request};

use super::fixture::{NS, admit, config, due, len, ms, next, order, push, queue, request, served};

/// Requests 1..=n arriving 1 ms apart from 0, in a queue that turns LIFO after 100 ms.
fn filled(n: u64) -> AdmissionQueue {
    let mut queue = queue(config(1_000, ms(100), ms(500)));
    for id in 1..=n {
        admit(&mut queue, request(id, ms(id - 1)), ms(id - 1));
    }
    queue
}

/// What one `next` at `now` serves and the order it leaves, on a fresh queue of three.
fn first_pick(now: Duration) -> (Option<u64>, Order) {
    let mut queue = filled(3);
    let next = next(&mut queue, now);
    (served(&next), order(&queue))
}

#[test]
fn fifo_just_under_the_threshold() {
    let now = ms(100) - NS;
    let (got, mode) = first_pick(now);
    assert_eq!(
        (got, mode),
        (Some(1), Order::Fifo),
        "requests 1, 2, 3 arrived at 0, 1 and 2 ms; at {now:?} the oldest has waited 1 ns less \
         than lifo_after = 100 ms: no queue stands yet, so the queue stays FIFO and serves 1. \
         Yours served {got:?} and its order is {mode:?}"
    );
}

#[test]
fn fifo_exactly_at_the_threshold() {
    let (got, mode) = first_pick(ms(100));
    assert_eq!(
        (got, mode),
        (Some(1), Order::Fifo),
        "requests 1, 2, 3 arrived at 0, 1 and 2 ms; at 100 ms the oldest has waited exactly \
         lifo_after = 100 ms, not longer, so the queue stays FIFO and serves 1. Yours served \
         {got:?} and its order is {mode:?} (see pitfall \"switching at the threshold\")"
    );
}

#[test]
fn lifo_just_over_the_threshold() {
    let now = ms(100) + NS;
    let (got, mode) = first_pick(now);
    let advice = if mode == Order::Fifo {
        "yours did not switch: compare the oldest request's wait with lifo_after as durations, \
         to the nanosecond (no rounding to whole milliseconds)"
    } else {
        "yours switched but did not serve the newest: in LIFO order take the request that \
         arrived last (see pitfall \"LIFO that pops the wrong end\")"
    };
    assert_eq!(
        (got, mode),
        (Some(3), Order::Lifo),
        "requests 1, 2, 3 arrived at 0, 1 and 2 ms; at {now:?} the oldest has waited 1 ns longer \
         than lifo_after = 100 ms: a queue stands, so the queue turns LIFO and serves the newest, \
         3. Yours served {got:?} and its order is {mode:?}: {advice}"
    );
}

#[test]
fn the_switch_looks_at_the_oldest_request() {
    // Only the oldest has waited long; the newest arrived just now.
    let mut queue = queue(config(1_000, ms(100), ms(500)));
    admit(&mut queue, request(1, ms(0)), ms(0));
    admit(&mut queue, request(2, ms(150)), ms(150));
    let next = next(&mut queue, ms(150));
    let (got, mode) = (served(&next), order(&queue));
    let advice = if got == Some(2) {
        "it served the newest but then reports FIFO while request 1 still waits: back to FIFO \
         only when the queue is empty (see pitfall \"Switching back too early\")"
    } else {
        "judge the switch on the oldest waiting request, the one that arrived first"
    };
    assert_eq!(
        (got, mode),
        (Some(2), Order::Lifo),
        "request 1 arrived at 0 and request 2 at 150 ms; at 150 ms the oldest has waited \
         150 ms, longer than lifo_after = 100 ms, so the queue turns LIFO and serves 2. Yours \
         served {got:?} with order {mode:?}: {advice}"
    );
}

#[test]
fn lifo_serves_newest_first_and_newcomers_before_the_rest() {
    let mut queue = filled(5);
    let mut picks = Vec::new();
    // 101 ms: the oldest waited 101 ms. Serve three, then two newcomers arrive.
    for _ in 0..3 {
        picks.push(served(&next(&mut queue, ms(101))));
    }
    admit(&mut queue, request(6, ms(102)), ms(102));
    admit(&mut queue, request(7, ms(103)), ms(103));
    for _ in 0..4 {
        picks.push(served(&next(&mut queue, ms(104))));
    }
    let want = [
        Some(5),
        Some(4),
        Some(3),
        Some(7),
        Some(6),
        Some(2),
        Some(1),
    ];
    assert_eq!(
        picks, want,
        "requests 1..=5 arrived 1 ms apart from 0; at 101 ms the queue is LIFO and serves the \
         newest first: 5, 4, 3; then 6 and 7 arrive and, still LIFO, are served before the \
         older ones: 7, 6, 2, 1. Yours served {picks:?} (see pitfall \"LIFO that pops the wrong \
         end\")"
    );
}

#[test]
fn stays_lifo_until_the_queue_drains() {
    // The queue turns LIFO at 101 ms; later the delay bound drops its old request, so that only
    // fresh requests are left, none of which has waited past the threshold.
    let mut queue = queue(config(1_000, ms(100), ms(200)));
    admit(&mut queue, request(1, ms(0)), ms(0));
    admit(&mut queue, request(2, ms(0)), ms(0));
    let first = next(&mut queue, ms(101));
    assert_eq!(
        served(&first),
        Some(2),
        "LIFO at 101 ms must serve 2, the newest"
    );
    for id in 3..=5 {
        admit(&mut queue, request(id, ms(250)), ms(250));
    }
    // At 250 ms request 1 has waited 250 ms > max_wait: dropped. 3, 4, 5 waited 0 ms.
    let picks: Vec<Option<u64>> = (0..3).map(|_| served(&next(&mut queue, ms(250)))).collect();
    assert_eq!(
        picks,
        [Some(5), Some(4), Some(3)],
        "the queue turned LIFO at 101 ms; at 250 ms its old request is dropped and 3, 4, 5 \
         (arrived at 250 ms) are left. It goes back to FIFO only when it drains, so it still \
         serves newest first: 5, 4, 3. Yours served {picks:?} (see pitfall \"switching back \
         too early\")"
    );
}

#[test]
fn back_to_fifo_once_drained() {
    let mut queue = filled(2);
    let picks: Vec<Option<u64>> = (0..2).map(|_| served(&next(&mut queue, ms(150)))).collect();
    assert_eq!(picks, [Some(2), Some(1)], "LIFO at 150 ms serves 2 then 1");
    let mode = order(&queue);
    assert_eq!(
        mode,
        Order::Fifo,
        "the queue served its last request: it has drained, so it must serve in FIFO order \
         again at once; yours reports {mode:?} (see pitfall \"LIFO for ever\")"
    );
    for id in 3..=5 {
        admit(&mut queue, request(id, ms(200) + ms(id)), ms(200) + ms(id));
    }
    let picks: Vec<Option<u64>> = (0..3).map(|_| served(&next(&mut queue, ms(210)))).collect();
    assert_eq!(
        picks,
        [Some(3), Some(4), Some(5)],
        "after draining, 3, 4, 5 arrive at 203-205 ms; at 210 ms none has waited 100 ms, so \
         they are served oldest first. Yours served {picks:?}"
    );
}

#[test]
fn the_switch_is_judged_before_the_drops() {
    // Request 1 waited 300 ms: over max_wait = 200 ms, so it is dropped, but its wait is the
    // evidence that a queue stands.
    let mut queue = queue(config(1_000, ms(100), ms(200)));
    admit(&mut queue, request(1, ms(0)), ms(0));
    for id in 2..=4 {
        admit(&mut queue, request(id, ms(295) + ms(id)), ms(295) + ms(id));
    }
    let next = next(&mut queue, ms(300));
    assert_eq!(
        (served(&next), order(&queue)),
        (Some(4), Order::Lifo),
        "at 300 ms request 1 has waited 300 ms and 2, 3, 4 arrived at 297-299 ms; the oldest \
         waited longer than lifo_after = 100 ms, so the queue turns LIFO, judged before request \
         1 is dropped for waiting over max_wait = 200 ms; it serves 4, the newest. Yours served \
         {:?} with order {:?}",
        served(&next),
        order(&queue)
    );
}

#[test]
fn the_wait_counts_from_arrival_at_the_queue() {
    // Sent 10 s before they arrived (a slow network, a skewed clock): only the queue's own
    // arrival instant says how long they waited here.
    let mut queue = queue(config(1_000, ms(100), ms(500)));
    let sent_early = |id: u64, arrives: Duration| Request {
        sent_at: arrives.saturating_sub(Duration::from_secs(10)),
        ..request(id, arrives)
    };
    let mut pushed = 0;
    for id in 1..=3 {
        let at = Duration::from_secs(10) + ms(id);
        if push(&mut queue, sent_early(id, at), at).is_ok() {
            pushed += 1;
        }
    }
    assert_eq!(pushed, 3, "three requests must fit in a queue of 1,000");
    let next = next(&mut queue, Duration::from_secs(10) + ms(50));
    assert_eq!(
        (served(&next), next.shed.len(), order(&queue), len(&queue)),
        (Some(1), 0, Order::Fifo, 2),
        "three requests sent 10 s before they reached the queue at 10.001-10.003 s; at 10.05 s \
         they have waited under 50 ms in the queue, so nothing is shed and the order stays FIFO: \
         serve 1. Yours served {:?}, shed {} and reports {:?}: measure the wait from when the \
         queue received the request (the `now` of push), not from `sent_at` (see pitfall \"the \
         wrong timestamp\")",
        served(&next),
        next.shed.len(),
        order(&queue)
    );
}

#[test]
fn back_to_fifo_when_the_drops_empty_the_queue() {
    // Three requests due at 120 ms, alone in a queue that turned LIFO at 150 ms: the drops
    // empty it and nothing is served, and that is a drain too.
    let mut queue = queue(config(1_000, ms(100), ms(500)));
    for id in 1..=3 {
        admit(&mut queue, due(id, ms(id - 1), ms(120)), ms(id - 1));
    }
    let step = next(&mut queue, ms(150));
    let (picked, shed, mode) = (served(&step), step.shed.len(), order(&queue));
    assert_eq!(
        (picked, shed, mode),
        (None, 3, Order::Fifo),
        "requests 1-3 arrived at 0-2 ms, all due at 120 ms; at 150 ms the oldest waited 150 ms, \
         so the queue turns LIFO, then the drops answer all three and leave it empty: that is a \
         drain, so the order must be FIFO again although nothing was served. Yours served \
         {picked:?}, shed {shed} and reports {mode:?} (see pitfall \"LIFO for ever\": back to \
         FIFO the moment the queue is empty, whether a pick or the drops emptied it)"
    );
    for id in 4..=5 {
        admit(&mut queue, request(id, ms(160) + ms(id)), ms(160) + ms(id));
    }
    let picked = served(&next(&mut queue, ms(170)));
    assert_eq!(
        picked,
        Some(4),
        "after the drops emptied the queue, 4 and 5 arrive at 164 and 165 ms; at 170 ms no \
         queue stands, so the oldest, 4, is served. Yours served {picked:?}"
    );
}

#[test]
fn newest_and_oldest_mean_the_order_of_arrival() {
    // Request 1 was sent last and request 3 first (their clients' clocks disagree, or the
    // network reordered them), and 3 is due first: the queue orders them by when it received
    // them, neither by `sent_at` nor by deadline.
    let reordered = |id: u64, arrives: Duration| Request {
        sent_at: ms(50) - ms(10 * id),
        deadline: ms(10_000) - ms(id),
        ..request(id, arrives)
    };
    let pushed = |queue: &mut AdmissionQueue| {
        for id in 1..=3 {
            admit(queue, reordered(id, ms(id)), ms(id));
        }
    };
    let mut fifo = queue(config(1_000, ms(100), ms(500)));
    pushed(&mut fifo);
    let picked = served(&next(&mut fifo, ms(10)));
    assert_eq!(
        picked,
        Some(1),
        "requests 1, 2, 3 reached the queue at 1, 2, 3 ms, but were sent at 40, 30, 20 ms and \
         are due at 9.999, 9.998, 9.997 s; at 10 ms the queue is FIFO and serves the first to \
         arrive, 1. Yours served {picked:?}: oldest means first pushed, not earliest `sent_at` \
         nor earliest deadline (see pitfall \"the wrong timestamp\")"
    );
    let mut lifo = queue(config(1_000, ms(100), ms(500)));
    pushed(&mut lifo);
    let picked = served(&next(&mut lifo, ms(150)));
    assert_eq!(
        picked,
        Some(3),
        "the same requests at 150 ms: the oldest waited 149 ms, so the queue is LIFO and serves \
         the last to arrive, 3. Yours served {picked:?}: newest means last pushed, not latest \
         `sent_at` (see pitfall \"the wrong timestamp\")"
    );
}
