//! The AIMD rules, one request at a time: the window, the decrease, the bounds.

use super::fixture::{Settle, aimd, in_flight, limit, many, one};
use super::support::catch;

#[test]
fn starts_within_its_bounds() {
    let cases = [(10, 1, 100, 10), (0, 3, 50, 3), (80, 2, 40, 40)];
    for (initial, floor, ceiling, want) in cases {
        let limiter = aimd(initial, floor, ceiling, 0.5);
        let got = limit(&limiter);
        assert_eq!(
            got, want,
            "initial {initial}, floor {floor}, ceiling {ceiling}: the limit should start at \
             {want} (the initial limit brought within [floor, ceiling]); yours starts at {got}"
        );
        assert_eq!(
            in_flight(&limiter),
            0,
            "a new limiter has nothing in flight"
        );
    }
}

#[test]
fn admits_exactly_up_to_the_limit() {
    let limiter = aimd(5, 1, 100, 0.5);
    let mut permits = Vec::new();
    for n in 1..=5 {
        let permit = catch(|| limiter.try_acquire())
            .unwrap_or_else(|message| panic!("try_acquire() panicked: {message}"));
        assert!(
            permit.is_some(),
            "limit 5: request {n} should get a place ({} in flight); yours got none",
            n - 1
        );
        permits.push(permit);
    }
    assert_eq!(
        in_flight(&limiter),
        5,
        "5 permits out: in_flight() should be 5"
    );
    assert!(
        limiter.try_acquire().is_none(),
        "limit 5 with 5 in flight: a 6th request must be refused (None); yours got a place"
    );
    assert_eq!(
        limit(&limiter),
        5,
        "a refusal at the limit is not a drop: the limit should stay 5"
    );
}

#[test]
fn increases_exactly_at_the_window_boundary() {
    let limiter = aimd(4, 1, 100, 0.5);
    many(&limiter, Settle::Success, 3);
    let after_three = limit(&limiter);
    one(&limiter, Settle::Success);
    let after_four = limit(&limiter);
    assert_eq!(
        (after_three, after_four),
        (4, 5),
        "limit 4: a window is 4 successes, so the limit should still be 4 after 3 successes \
         and become 5 at the 4th; yours was {after_three} and {after_four}. The limit grows by \
         1 per window of `limit` successes, not per success (pitfall: increase per success)"
    );
    many(&limiter, Settle::Success, 4);
    let after_nine = limit(&limiter);
    one(&limiter, Settle::Success);
    let after_ten = limit(&limiter);
    assert_eq!(
        (after_nine, after_ten),
        (5, 6),
        "after growing to 5, the next window is 5 successes counted from 0: the limit should \
         be 5 after 4 more successes and 6 at the 5th; yours was {after_nine} and {after_ten}"
    );
    many(&limiter, Settle::Success, 6 + 7 + 8);
    let grown = limit(&limiter);
    assert_eq!(
        grown, 9,
        "from 6, windows of 6, 7 and 8 successes (21 in all) should bring the limit to 9; \
         yours is {grown}"
    );
}

#[test]
fn decrease_multiplies_and_rounds_down() {
    let cases = [(7, 0.5, 3), (10, 0.75, 7), (40, 0.9, 36), (3, 0.5, 1)];
    for (start, backoff, want) in cases {
        let limiter = aimd(start, 1, 100, backoff);
        one(&limiter, Settle::Dropped);
        let got = limit(&limiter);
        assert_eq!(
            got, want,
            "limit {start}, backoff {backoff}: a drop should make it floor({start} × {backoff}) \
             = {want}; yours made it {got}"
        );
    }
}

#[test]
fn a_decrease_starts_a_new_window() {
    let limiter = aimd(4, 1, 100, 0.5);
    many(&limiter, Settle::Success, 3);
    one(&limiter, Settle::Dropped);
    one(&limiter, Settle::Success);
    let got = limit(&limiter);
    assert_eq!(
        got, 2,
        "limit 4, 3 successes, then a drop (limit 2), then 1 success: a decrease starts the \
         count of successes again from 0, so 1 success is not yet a window of 2 and the limit \
         should stay 2; yours is {got}"
    );
    one(&limiter, Settle::Success);
    let got = limit(&limiter);
    assert_eq!(
        got, 3,
        "the 2nd success after the decrease completes a window of 2: the limit should be 3; \
         yours is {got}"
    );
}

#[test]
fn decreases_at_most_once_per_window() {
    let limiter = aimd(16, 1, 100, 0.5);
    let burst: Vec<_> = (0..10)
        .map(|_| limiter.try_acquire().expect("limit 16 admits 10"))
        .collect();
    let mut seen = Vec::new();
    for permit in burst {
        permit.dropped();
        seen.push(limit(&limiter));
    }
    assert!(
        seen.iter().all(|&l| l == 8),
        "limit 16: 10 requests start, then all 10 time out. They all started before the first \
         decrease, so only the first may decrease the limit: it should be 8 after each; yours \
         went {seen:?} (pitfall: a decrease on every drop of a burst)"
    );
    one(&limiter, Settle::Dropped);
    let got = limit(&limiter);
    assert_eq!(
        got, 4,
        "a request that started after the decrease to 8 and timed out is news: the limit \
         should halve again, to 4; yours is {got}"
    );
}

#[test]
fn never_below_the_floor() {
    let limiter = aimd(4, 3, 100, 0.5);
    one(&limiter, Settle::Dropped);
    one(&limiter, Settle::Dropped);
    let got = limit(&limiter);
    assert_eq!(
        got, 3,
        "floor 3, limit 4: drops should bring it to max(3, 2) = 3 and keep it there; yours is \
         {got}"
    );
    let limiter = aimd(1, 1, 100, 0.5);
    many(&limiter, Settle::Dropped, 3);
    let got = limit(&limiter);
    assert_eq!(
        got, 1,
        "floor 1, limit 1: floor(1 × 0.5) is 0, but the limit never goes below the floor of 1 \
         (a limit of 0 admits nothing, ever again); yours is {got}"
    );
    assert!(
        limiter.try_acquire().is_some(),
        "limit 1 with nothing in flight must admit a request"
    );
}

#[test]
fn never_above_the_ceiling() {
    let limiter = aimd(3, 1, 5, 0.5);
    let mut seen = Vec::new();
    for _ in 0..40 {
        one(&limiter, Settle::Success);
        seen.push(limit(&limiter));
    }
    let top = seen.iter().max().copied().unwrap_or(0);
    assert_eq!(
        top, 5,
        "ceiling 5: 40 successes from limit 3 should take the limit to 5 and never above; \
         yours reached {top}"
    );
    one(&limiter, Settle::Dropped);
    let got = limit(&limiter);
    assert_eq!(
        got, 2,
        "at the ceiling of 5, a drop should make the limit floor(5 × 0.5) = 2; yours made it \
         {got}"
    );
}

#[test]
fn a_permit_dropped_unsettled_changes_only_the_count() {
    let limiter = aimd(4, 1, 100, 0.5);
    many(&limiter, Settle::Success, 3);
    let permit = limiter.try_acquire().expect("limit 4 admits one");
    drop(permit);
    assert_eq!(
        (limit(&limiter), in_flight(&limiter)),
        (4, 0),
        "a permit dropped without success() or dropped() gives its place back and changes \
         nothing else: limit 4, nothing in flight"
    );
    one(&limiter, Settle::Success);
    let got = limit(&limiter);
    assert_eq!(
        got, 5,
        "3 successes, an unsettled permit, then a 4th success: the unsettled permit is no \
         success, no drop, and does not reset the window, so the 4th success should make the \
         limit 5; yours is {got}"
    );
}

#[test]
fn successes_count_whenever_their_request_started() {
    let limiter = aimd(8, 1, 100, 0.5);
    let old: Vec<_> = (0..4)
        .map(|_| limiter.try_acquire().expect("limit 8 admits 4"))
        .collect();
    one(&limiter, Settle::Dropped);
    let after_drop = limit(&limiter);
    assert_eq!(
        after_drop, 4,
        "limit 8, one drop, backoff 0.5: the limit should be 4"
    );
    for permit in old {
        permit.success();
    }
    let got = limit(&limiter);
    assert_eq!(
        got, 5,
        "limit 8: 4 requests start, then another one times out (limit 4). The 4 older requests \
         then succeed: every success counts towards the window, whenever its request started, \
         and the window is the limit as it is now, 4; so the 4th makes it 5. Yours is {got} \
         (only drops of older requests are ignored, not their successes)"
    );
}

#[test]
fn an_old_drop_changes_nothing() {
    let limiter = aimd(8, 1, 100, 0.5);
    let old = limiter.try_acquire().expect("limit 8 admits 1");
    one(&limiter, Settle::Dropped);
    many(&limiter, Settle::Success, 3);
    old.dropped();
    let got = limit(&limiter);
    assert_eq!(
        got, 4,
        "limit 8: request A starts, another times out (limit 4), 3 succeed, then A times out. \
         A started before the decrease: it must not decrease the limit again, so it stays 4; \
         yours is {got} (pitfall: a decrease on every drop of a burst)"
    );
    one(&limiter, Settle::Success);
    let got = limit(&limiter);
    assert_eq!(
        got, 5,
        "after that, one more success is the 4th of the window at a limit of 4: the limit \
         should be 5; yours is {got}. A drop from a request older than the last decrease \
         changes nothing: not the limit, and not the count of successes either"
    );
}

#[test]
fn a_request_started_before_an_increase_still_decreases() {
    let limiter = aimd(4, 1, 100, 0.5);
    let old = limiter.try_acquire().expect("limit 4 admits 1");
    many(&limiter, Settle::Success, 4);
    let grown = limit(&limiter);
    assert_eq!(grown, 5, "limit 4, 4 successes: the limit should be 5");
    old.dropped();
    let got = limit(&limiter);
    assert_eq!(
        got, 2,
        "limit 4: request A starts, 4 others succeed (limit 5), then A times out. No decrease \
         happened since A started, so its drop is news: floor(5 × 0.5) = 2. Yours is {got}: \
         only a decrease makes older requests' drops stale, not an increase"
    );
}

#[test]
fn a_drop_at_the_floor_is_still_the_windows_decrease() {
    let limiter = aimd(2, 2, 100, 0.5);
    let first = limiter.try_acquire().expect("limit 2 admits 2");
    let second = limiter.try_acquire().expect("limit 2 admits 2");
    first.dropped();
    one(&limiter, Settle::Success);
    second.dropped();
    one(&limiter, Settle::Success);
    let got = limit(&limiter);
    assert_eq!(
        got, 3,
        "floor 2, limit 2: requests A and B start, A times out (the limit cannot fall below 2, \
         but that drop is the window's decrease all the same), one request succeeds, B times out \
         (it started before that decrease: it changes nothing), another succeeds. That is the \
         2nd success of the window at a limit of 2, so the limit should be 3; yours is {got} (a \
         drop at the floor still starts a new window, for successes and for older drops)"
    );
}
