//! Given: the book's worked examples, one test per technique, on [`crate::poll`], a neighbour of
//! the code your suite tests. Run them with
//! `cargo test -p ch14_testing_retry_code --features worked-examples worked`.
//! They test `wait_until_ready`, not `retry_with_backoff`: they kill none of the mutants.

use std::future::ready;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::task::yield_now;
use tokio::time::Instant;

use crate::poll::{
    HealthCheck, MockHealthCheck, NotReady, PollPolicy, poll_pause, wait_until_ready,
};

const MS: Duration = Duration::from_millis(1);

// ANCHOR: fake
/// A hand-written fake: ready from poll number `ready_at` on (never, if `None`), and records on
/// tokio's clock when each poll came, counted from `start`.
struct FakeCheck {
    start: Instant,
    ready_at: Option<u32>,
    polls: Arc<Mutex<Vec<Duration>>>,
}

impl HealthCheck for FakeCheck {
    fn is_ready(&self, _service: &str) -> impl Future<Output = bool> + Send {
        let mut polls = self.polls.lock().unwrap();
        polls.push(self.start.elapsed());
        let poll = polls.len() as u32;
        ready(self.ready_at.is_some_and(|at| poll >= at))
    }
}

fn fake(ready_at: Option<u32>) -> (FakeCheck, Arc<Mutex<Vec<Duration>>>) {
    let polls: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let check = FakeCheck {
        start: Instant::now(),
        ready_at,
        polls: Arc::clone(&polls),
    };
    (check, polls)
}
// ANCHOR_END: fake

// ANCHOR: virtual_time
#[tokio::test(start_paused = true)]
async fn polls_come_exactly_one_pause_apart_and_stop_at_the_limit() {
    let policy = PollPolicy {
        interval: 100 * MS,
        limit: Duration::from_secs(1),
    };
    let (check, polls) = fake(None);
    let began = Instant::now();
    let task = tokio::spawn(async move {
        wait_until_ready(&check, "inventory", &policy, &mut StdRng::seed_from_u64(3)).await
    });

    // The task polls once, then sleeps. The test task is still running, so the clock has not
    // moved, and no pause is shorter than 50 ms: 49 ms later there is still one poll.
    yield_now().await;
    tokio::time::advance(49 * MS).await;
    assert_eq!(
        polls.lock().unwrap().len(),
        1,
        "polled again before any pause could end"
    );

    // Now let it run to the end: the runtime auto-advances the clock from timer to timer.
    let result = task.await.unwrap();
    let polls = polls.lock().unwrap().clone();

    // The same seed replays the same pauses: the polls start exactly where they add up to.
    let mut replay = StdRng::seed_from_u64(3);
    let mut expected = vec![Duration::ZERO];
    loop {
        let next = *expected.last().unwrap() + poll_pause(policy.interval, &mut replay);
        if next > policy.limit {
            break;
        }
        expected.push(next);
    }
    assert_eq!(polls, expected);
    assert_eq!(
        result,
        Err(NotReady {
            polls: polls.len() as u32
        })
    );
    // It gave up without sleeping past its last poll.
    let ended = began.elapsed();
    assert_eq!(ended, *polls.last().unwrap());
}
// ANCHOR_END: virtual_time

// ANCHOR: seeds
#[test]
fn pauses_spread_from_half_to_the_whole_interval() {
    let interval = 200 * MS;
    let mut pauses: Vec<Duration> = (0..200)
        .map(|seed| {
            let mut rng = StdRng::seed_from_u64(seed);
            poll_pause(interval, &mut rng)
        })
        .collect();
    pauses.sort();
    let (shortest, longest) = (pauses[0], pauses[pauses.len() - 1]);
    assert!(
        shortest >= interval / 2 && longest <= interval,
        "{shortest:?}..{longest:?}"
    );
    // 200 uniform draws from [100 ms, 200 ms] all above 110 ms: probability 0.9^200, about
    // 7 in ten billion; with fixed seeds, never. The same for the top of the range.
    assert!(shortest < 110 * MS, "shortest {shortest:?}");
    assert!(longest > 190 * MS, "longest {longest:?}");
}
// ANCHOR_END: seeds

// ANCHOR: mock
#[tokio::test(start_paused = true)]
async fn asks_about_the_named_service_until_it_is_ready() {
    let mut check = MockHealthCheck::new();
    let mut script = mockall::Sequence::new();
    for answer in [false, false, true] {
        check
            .expect_is_ready()
            .withf(|service| service == "inventory")
            .times(1)
            .in_sequence(&mut script)
            .returning(move |_service| Box::pin(ready(answer)));
    }
    let policy = PollPolicy {
        interval: 100 * MS,
        limit: Duration::from_secs(1),
    };
    let polls = wait_until_ready(&check, "inventory", &policy, &mut StdRng::seed_from_u64(1)).await;
    assert_eq!(polls, Ok(3));
}
// ANCHOR_END: mock

// ANCHOR: property
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(14),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// For any interval, zero and sub-millisecond ones included, and any seed: a pause is whole
    /// milliseconds, never above the interval, and never below half of it (in whole ms).
    #[test]
    fn a_pause_lies_between_half_and_the_whole_interval(
        nanos in prop_oneof![any::<u64>(), Just(0), 0..3_000_000u64],
        seed in any::<u64>(),
    ) {
        let interval = Duration::from_nanos(nanos);
        let mut rng = StdRng::seed_from_u64(seed);
        let pause = poll_pause(interval, &mut rng);
        let whole_ms = Duration::from_millis(interval.as_millis() as u64);
        prop_assert!(pause <= whole_ms, "{pause:?} above {whole_ms:?}");
        prop_assert!(pause * 2 >= whole_ms, "{pause:?} below half of {whole_ms:?}");
        prop_assert_eq!(pause.subsec_nanos() % 1_000_000, 0);
    }
}
// ANCHOR_END: property

// ANCHOR: snapshot
#[tokio::test(start_paused = true)]
async fn a_poll_timeline() {
    let policy = PollPolicy {
        interval: 300 * MS,
        limit: Duration::from_secs(1),
    };
    let mut page = String::new();
    for (title, ready_at) in [("Ready at the fourth poll", Some(4)), ("Never ready", None)] {
        let (check, polls) = fake(ready_at);
        let mut rng = StdRng::seed_from_u64(5);
        let result = wait_until_ready(&check, "search", &policy, &mut rng).await;
        page.push_str(&format!("{title}:\n"));
        for (number, at) in polls.lock().unwrap().iter().enumerate() {
            page.push_str(&format!("{:>6} ms  poll {}\n", at.as_millis(), number + 1));
        }
        page.push_str(&format!("          returns {result:?}\n\n"));
    }
    // One file for the exercise and the solution alike: no crate name in the snapshot's name.
    insta::with_settings!({ prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!("poll_timeline", page);
    });
}
// ANCHOR_END: snapshot
