//! The half-open breaker: a limited number of probes, closing on their success, re-opening on a
//! failure, and ignoring answers that arrive from an earlier state.

use std::time::Duration;

use exercise::{State, Window};

use super::fixture::{NS, SEC, Seen, Started, breaker, call, config, describe, opened, run, state};
use super::support::show;

/// A breaker that opened at the current instant and lets `probes` probes through.
async fn opened_with(
    probes: u32,
    break_duration: Duration,
) -> std::sync::Arc<exercise::CircuitBreaker> {
    let mut config = config(50, 4, Window::Count(4));
    config.half_open_probes = probes;
    config.break_duration = break_duration;
    opened(config).await
}

#[tokio::test(start_paused = true)]
async fn exactly_n_probes_at_once() {
    // 300 probes among 400 callers: beyond the caps a breaker might hide (10, a u8's 255).
    for (probes, callers) in [(1u32, 25u32), (3, 25), (10, 25), (300, 400)] {
        let breaker = opened_with(probes, 30 * SEC).await;
        tokio::time::advance(30 * SEC).await;
        let started = Started::default();
        let mut tasks = Vec::new();
        for _ in 0..callers {
            let (breaker, started) = (breaker.clone(), started.clone());
            tasks.push(tokio::spawn(async move {
                let seen = call(&breaker, &started, true, SEC).await;
                (seen, tokio::time::Instant::now())
            }));
        }
        let launched = tokio::time::Instant::now();
        let mut refused = 0;
        for task in tasks {
            let (seen, at) = task.await.expect("a caller task panicked");
            if seen == Seen::Refused {
                refused += 1;
                assert_eq!(
                    at,
                    launched,
                    "a caller refused by the half-open breaker got its answer after {}; refusals \
                     are immediate",
                    show(at - launched)
                );
            }
        }
        assert_eq!(
            (started.get(), refused),
            (probes, callers - probes),
            "{callers} tasks called the half-open breaker at once (half_open_probes = {probes}, \
             each probe takes 1 s): {} reached the dependency and {refused} were refused; \
             exactly {probes} probes may go through, the others are refused",
            started.get()
        );
        let verdict = state(&breaker);
        assert_eq!(
            verdict,
            State::Closed,
            "all {probes} probes (half_open_probes = {probes}) succeeded, so the breaker should \
             be Closed; it is {verdict:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_answered_probe_frees_no_place() {
    // Probes are counted when they are let through, not while they are in flight: with
    // half_open_probes = 2, probe A answers after 1 s and probe B after 10 s. Once A has
    // succeeded, both places are taken and the breaker waits for B's verdict, so a third caller
    // is refused. A breaker that counts the probes in flight lets it through as a third probe.
    let breaker = opened_with(2, 30 * SEC).await;
    tokio::time::advance(30 * SEC).await;
    let started = Started::default();
    let slow = {
        let (breaker, started) = (breaker.clone(), started.clone());
        tokio::spawn(async move { call(&breaker, &started, true, 10 * SEC).await })
    };
    let quick = call(&breaker, &started, true, SEC).await;
    let third = call(&breaker, &started, true, Duration::ZERO).await;
    assert!(
        quick == Seen::Ran { ok: true } && third == Seen::Refused && started.get() == 2,
        "half_open_probes = 2: probes A (1 s) and B (10 s) were let through together; A \
         succeeded, B is still out. Both places of this half-open state are taken until B \
         answers, so a caller arriving now must be refused; probe A was {quick:?}, the third \
         caller {third:?}, and {} calls reached the dependency. Count a probe when it is let \
         through, not while it is in flight",
        started.get(),
    );
    let verdict = slow.await.expect("the caller of probe B panicked");
    assert_eq!(
        (verdict, state(&breaker)),
        (Seen::Ran { ok: true }, State::Closed),
        "probe B succeeded after 10 s, so both probes have succeeded and the breaker should close"
    );
}

#[tokio::test(start_paused = true)]
async fn closes_when_every_probe_succeeded() {
    let breaker = opened_with(3, 30 * SEC).await;
    tokio::time::advance(30 * SEC).await;
    let started = Started::default();
    let mut states = Vec::new();
    for _ in 0..3 {
        call(&breaker, &started, true, SEC).await;
        states.push(state(&breaker));
    }
    assert_eq!(
        states,
        vec![State::HalfOpen, State::HalfOpen, State::Closed],
        "with half_open_probes = 3, three probes succeeded one after the other; after each the \
         breaker should be HalfOpen, HalfOpen, Closed, and it was {states:?}"
    );
    let after = call(&breaker, &started, true, SEC).await;
    assert_eq!(
        after,
        Seen::Ran { ok: true },
        "the breaker closed, but the next call was {after:?}; a closed breaker lets calls through"
    );
}

#[tokio::test(start_paused = true)]
async fn closing_starts_a_fresh_window() {
    let config = config(50, 4, Window::Count(4));
    let breaker = opened(config).await;
    tokio::time::advance(config.break_duration).await;
    run(&breaker, "S").await;
    assert_eq!(
        state(&breaker),
        State::Closed,
        "one successful probe (of one) should close the breaker"
    );
    let seen = run(&breaker, "SFF").await;
    let now = state(&breaker);
    assert!(
        now == State::Closed && !seen.contains(&Seen::Refused),
        "with {}: four failures opened the breaker, a probe closed it, then S F F: the new window \
         holds 3 outcomes (fewer than 4), so the breaker should stay Closed; it is {now:?} \
         (calls: {seen:?}). A breaker that closes starts counting again from an empty window; \
         the failures from before the break are forgotten",
        describe(&config)
    );
    // Pass after pass on the same breaker: one more failure opens it (F of S F F F is 75 %), a
    // probe closes it again, and the third window starts empty too: S S S F is 25 %, so it stays
    // closed. A failure count kept beside the window and not reset on closing opens it.
    run(&breaker, "F").await;
    assert_eq!(
        state(&breaker),
        State::Open,
        "with {}: after S F F, one more failure makes the window S F F F (75 %, 4 outcomes), \
         which should open the breaker",
        describe(&config)
    );
    tokio::time::advance(config.break_duration).await;
    run(&breaker, "S").await;
    let seen = run(&breaker, "SSSF").await;
    let now = state(&breaker);
    assert!(
        now == State::Closed && !seen.contains(&Seen::Refused),
        "with {}: the breaker opened a second time, a probe closed it again, then S S S F: the \
         window holds only these (25 %), so the breaker should stay Closed; it is {now:?} \
         (calls: {seen:?}). Every closing starts from an empty window, with no failures counted \
         from an earlier one",
        describe(&config)
    );
}

#[tokio::test(start_paused = true)]
async fn a_failed_probe_opens_for_a_full_break() {
    let break_duration = 20 * SEC;
    let breaker = opened_with(3, break_duration).await;
    tokio::time::advance(break_duration).await;
    let started = Started::default();
    let first = call(&breaker, &started, true, SEC).await;
    let second = call(&breaker, &started, false, 5 * SEC).await;
    assert_eq!(
        (first, second),
        (Seen::Ran { ok: true }, Seen::Ran { ok: false }),
        "two probes should run"
    );
    let now = state(&breaker);
    assert_eq!(
        now,
        State::Open,
        "with half_open_probes = 3, the first probe succeeded and the second failed; the breaker \
         should open again at once, and it is {now:?}"
    );
    tokio::time::advance(break_duration - NS).await;
    let early = call(&breaker, &started, true, Duration::ZERO).await;
    assert_eq!(
        early,
        Seen::Refused,
        "a failed probe re-opened the breaker; 1 ns before a new full break of {} from that \
         failure, a call was let through ({early:?})",
        show(break_duration)
    );
    tokio::time::advance(NS).await;
    let due = call(&breaker, &started, true, Duration::ZERO).await;
    assert_eq!(
        due,
        Seen::Ran { ok: true },
        "a failed probe re-opened the breaker; exactly {} later a probe should go through, and \
         the call was {due:?}",
        show(break_duration)
    );
}

#[tokio::test(start_paused = true)]
async fn a_late_probe_answer_is_ignored() {
    // Probes A (10 s, succeeds) and B (1 s, fails) start together. B re-opens the breaker for
    // 5 s; at 6 s probe C succeeds; at 10 s A's success arrives from the earlier half-open
    // state and must not count: one success of two in the new half-open state.
    let breaker = opened_with(2, 5 * SEC).await;
    tokio::time::advance(5 * SEC).await;
    let started = Started::default();
    let slow_probe = {
        let (breaker, started) = (breaker.clone(), started.clone());
        tokio::spawn(async move { call(&breaker, &started, true, 10 * SEC).await })
    };
    let failing_probe = {
        let (breaker, started) = (breaker.clone(), started.clone());
        tokio::spawn(async move { call(&breaker, &started, false, SEC).await })
    };
    failing_probe.await.expect("probe task panicked");
    assert_eq!(
        state(&breaker),
        State::Open,
        "a failed probe should re-open the breaker"
    );
    tokio::time::advance(5 * SEC).await;
    let probe_c = call(&breaker, &started, true, Duration::ZERO).await;
    assert_eq!(
        probe_c,
        Seen::Ran { ok: true },
        "after the new break a probe should go through"
    );
    slow_probe.await.expect("probe task panicked");
    let now = state(&breaker);
    assert_eq!(
        now,
        State::HalfOpen,
        "half_open_probes = 2. Probe A (10 s) and probe B (1 s) started together; B failed and \
         re-opened the breaker; 5 s later probe C succeeded; then A's success arrived. A was let \
         through by the earlier half-open state, so its answer no longer counts: one success of \
         two, the breaker should still be HalfOpen; it is {now:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_late_answer_from_closed_is_ignored() {
    // A slow call L starts while the breaker is closed and fails 35 s later. Meanwhile the
    // breaker opens, its 30 s break ends and a 10 s probe is running: L's failure belongs to the
    // closed state of long ago and must not re-open the breaker; the probe then closes it.
    let config = config(50, 4, Window::Count(4));
    let breaker = breaker(config);
    let started = Started::default();
    let late = {
        let (breaker, started) = (breaker.clone(), started.clone());
        tokio::spawn(async move { call(&breaker, &started, false, 35 * SEC).await })
    };
    tokio::task::yield_now().await;
    run(&breaker, "FFFF").await;
    assert_eq!(
        state(&breaker),
        State::Open,
        "four failures should open the breaker"
    );
    tokio::time::advance(30 * SEC).await;
    let probe = {
        let (breaker, started) = (breaker.clone(), started.clone());
        tokio::spawn(async move { call(&breaker, &started, true, 10 * SEC).await })
    };
    late.await.expect("slow call panicked");
    let during = state(&breaker);
    assert_eq!(
        during,
        State::HalfOpen,
        "a call that started while the breaker was closed failed 35 s later, during the probe of \
         the next half-open state; its outcome belongs to the closed state it started in and \
         must be ignored, so the breaker should still be HalfOpen; it is {during:?}"
    );
    let probe = probe.await.expect("probe task panicked");
    let after = state(&breaker);
    assert!(
        probe == Seen::Ran { ok: true } && after == State::Closed,
        "the probe succeeded ({probe:?}), so the breaker should close; it is {after:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_dropped_probe_gives_its_place_back() {
    let breaker = opened_with(1, 30 * SEC).await;
    tokio::time::advance(30 * SEC).await;
    let started = Started::default();
    let abandoned = tokio::time::timeout(SEC, call(&breaker, &started, true, 10 * SEC)).await;
    assert!(
        abandoned.is_err(),
        "the 10 s probe should have been cut by the 1 s timeout"
    );
    let next = call(&breaker, &started, true, Duration::ZERO).await;
    assert_eq!(
        next,
        Seen::Ran { ok: true },
        "half_open_probes = 1: the only probe was dropped by its caller's timeout before it \
         finished; the next caller should be let through as the probe, but the call was {next:?}. \
         A dropped call must give its probe's place back, or the breaker stays half-open for ever"
    );
    assert_eq!(
        state(&breaker),
        State::Closed,
        "the probe succeeded: the breaker should close"
    );
}

#[tokio::test(start_paused = true)]
async fn a_dropped_call_records_nothing() {
    let config = config(100, 1, Window::Count(1));
    let breaker = breaker(config);
    let started = Started::default();
    let abandoned = tokio::time::timeout(SEC, call(&breaker, &started, false, 10 * SEC)).await;
    assert!(
        abandoned.is_err(),
        "the 10 s call should have been cut by the 1 s timeout"
    );
    let now = state(&breaker);
    assert_eq!(
        now,
        State::Closed,
        "with {}, one call was dropped by its caller's timeout before it finished; it has no \
         outcome, so the window is still empty and the breaker should be Closed; it is {now:?}",
        describe(&config)
    );

    // After one failure, a dropped call must add neither a success nor a failure: counted as
    // either, the window of 2 would hold 2 outcomes at 50 % and open.
    let config = super::fixture::config(50, 2, Window::Count(2));
    let breaker = super::fixture::breaker(config);
    run(&breaker, "F").await;
    let abandoned = tokio::time::timeout(SEC, call(&breaker, &started, true, 10 * SEC)).await;
    assert!(
        abandoned.is_err(),
        "the 10 s call should have been cut by the 1 s timeout"
    );
    let after_drop = state(&breaker);
    run(&breaker, "F").await;
    let after_failure = state(&breaker);
    assert_eq!(
        (after_drop, after_failure),
        (State::Closed, State::Open),
        "with {}: one failure, then a call dropped by its caller's timeout, then one more \
         failure. The dropped call has no outcome (neither a success nor a failure), so the \
         breaker should be Closed after it and Open after the second failure (2 of 2); it was \
         {after_drop:?}, then {after_failure:?}",
        describe(&config)
    );
}

#[tokio::test(start_paused = true)]
async fn a_stale_dropped_probe_gives_nothing_back() {
    // Probes P (60 s, its caller gives up after 10 s) and F (1 s, fails) start together. F
    // re-opens the breaker for 5 s; at 6 s the new half-open state lets Q1 and Q2 through (20 s
    // each). At 10 s P is dropped: its place belonged to the earlier half-open state, so the
    // new state still has both of its probes out and must refuse the next caller.
    let breaker = opened_with(2, 5 * SEC).await;
    tokio::time::advance(5 * SEC).await;
    let started = Started::default();
    let spawn_probe = |ok: bool, latency: Duration, patience: Duration| {
        let (breaker, started) = (breaker.clone(), started.clone());
        tokio::spawn(async move {
            tokio::time::timeout(patience, call(&breaker, &started, ok, latency)).await
        })
    };
    let abandoned = spawn_probe(true, 60 * SEC, 10 * SEC);
    let failing = spawn_probe(false, SEC, 60 * SEC);
    let failed = failing.await.expect("probe task panicked");
    assert_eq!(
        (failed, state(&breaker)),
        (Ok(Seen::Ran { ok: false }), State::Open),
        "a failed probe should run and re-open the breaker"
    );
    tokio::time::advance(5 * SEC).await;
    let fresh = [
        spawn_probe(true, 20 * SEC, 60 * SEC),
        spawn_probe(true, 20 * SEC, 60 * SEC),
    ];
    tokio::task::yield_now().await;
    assert_eq!(
        started.get(),
        4,
        "after the new break, the two probes of the new half-open state should have started"
    );
    let cut = abandoned.await.expect("probe task panicked");
    assert!(
        cut.is_err(),
        "the 60 s probe should have been cut after 10 s"
    );
    let next = call(&breaker, &started, true, Duration::ZERO).await;
    assert_eq!(
        next,
        Seen::Refused,
        "half_open_probes = 2. Probe P (60 s) and probe F (1 s) started together; F failed and \
         re-opened the breaker; after the break, probes Q1 and Q2 were let through; then P's \
         caller gave up and dropped it. P's place belonged to the earlier half-open state, so \
         dropping it gives nothing to the new one, whose two probes are still running: the next \
         caller should be refused, and it was {next:?}"
    );
    for probe in fresh {
        probe
            .await
            .expect("probe task panicked")
            .expect("a 20 s probe within 60 s");
    }
    assert_eq!(
        state(&breaker),
        State::Closed,
        "both probes of the new half-open state succeeded: the breaker should close"
    );
}

#[tokio::test(start_paused = true)]
async fn a_new_half_open_state_starts_from_zero() {
    // half_open_probes = 3. The first half-open state sees S S F and re-opens; the next one
    // must count its own probes from zero: after one success it is still half-open, and it
    // closes only after three.
    let break_duration = 20 * SEC;
    let breaker = opened_with(3, break_duration).await;
    tokio::time::advance(break_duration).await;
    run(&breaker, "SSF").await;
    assert_eq!(
        state(&breaker),
        State::Open,
        "a failed probe should re-open the breaker"
    );
    tokio::time::advance(break_duration).await;
    let mut states = Vec::new();
    for _ in 0..3 {
        run(&breaker, "S").await;
        states.push(state(&breaker));
    }
    assert_eq!(
        states,
        vec![State::HalfOpen, State::HalfOpen, State::Closed],
        "half_open_probes = 3. A half-open state saw two successful probes and then a failed one, \
         and re-opened; after the next break, three probes succeeded one after the other. The new \
         half-open state counts its own probes from zero, so the breaker should be HalfOpen, \
         HalfOpen, then Closed; it was {states:?}. Successes of an earlier half-open state do not \
         carry over"
    );
}
