//! Checks of `retry_with_backoff`: call counts, results, and the sleeps between calls.

use std::cell::RefCell;
use std::time::Duration;

use exercise::{full_jitter, retry_with_backoff};
use tokio::time::Instant;

use super::jitter::ceiling;
use super::support::{gaps, seeded, show, show_all};

const MS: Duration = Duration::from_millis(1);

/// A service that fails its first `failures` calls with the call's number, then answers with it,
/// and remembers when (on tokio's clock) each call came.
struct Recorder {
    failures: u32,
    calls: RefCell<Vec<Instant>>,
}

impl Recorder {
    fn failing_first(failures: u32) -> Self {
        Self {
            failures,
            calls: RefCell::new(Vec::new()),
        }
    }

    fn always_failing() -> Self {
        Self::failing_first(u32::MAX)
    }

    async fn call(&self) -> Result<u32, u32> {
        let mut calls = self.calls.borrow_mut();
        calls.push(Instant::now());
        let number = calls.len() as u32;
        if number > self.failures {
            Ok(number)
        } else {
            Err(number)
        }
    }

    fn count(&self) -> u32 {
        self.calls.borrow().len() as u32
    }

    fn instants(&self) -> Vec<Instant> {
        self.calls.borrow().clone()
    }
}

/// The outcome of one run: the result, the service's record, and when the loop returned.
struct Run {
    result: Result<u32, u32>,
    service: Recorder,
    started: Instant,
    returned: Instant,
}

async fn run(service: Recorder, attempts: u32, base: Duration, cap: Duration, seed: u64) -> Run {
    let mut rng = seeded(seed);
    let started = Instant::now();
    let result = retry_with_backoff(|| service.call(), attempts, base, cap, &mut rng).await;
    Run {
        result,
        service,
        started,
        returned: Instant::now(),
    }
}

#[tokio::test(start_paused = true)]
async fn attempts_on_permanent_failure() {
    for attempts in [1, 2, 3, 5, 8] {
        let run = run(Recorder::always_failing(), attempts, MS, 10 * MS, 1).await;
        assert_eq!(
            run.service.count(),
            attempts,
            "with attempts = {attempts} and a service that always fails, the operation must be \
             called exactly {attempts} time(s); yours called it {} time(s)",
            run.service.count(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn success_after_two_failures() {
    for attempts in [3, 5] {
        let run = run(Recorder::failing_first(2), attempts, 50 * MS, 500 * MS, 3).await;
        assert!(
            run.result == Ok(3) && run.service.count() == 3,
            "a service that fails twice and then succeeds, retried with attempts = {attempts}, \
             should give Ok(3) after exactly 3 calls; yours gave {:?} after {} call(s)",
            run.result,
            run.service.count(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn returns_last_error() {
    let run = run(Recorder::always_failing(), 4, MS, 10 * MS, 4).await;
    assert_eq!(
        run.result,
        Err(4),
        "after 4 failed calls the loop must return the error of the last call, Err(4); yours \
         returned {:?}",
        run.result,
    );
}

#[tokio::test(start_paused = true)]
async fn no_sleep_after_last_failure() {
    for seed in 0..50 {
        let run = run(Recorder::always_failing(), 3, 100 * MS, 1_000 * MS, seed).await;
        let last_call = run
            .service
            .instants()
            .last()
            .copied()
            .unwrap_or(run.started);
        let trailing = run.returned - last_call;
        assert!(
            trailing.is_zero(),
            "after the last of 3 attempts failed, your loop waited another {} before returning \
             the error (seed {seed}); once no attempt is left there is nothing to wait for",
            show(trailing),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn single_attempt_never_sleeps() {
    let cases = [(
        Recorder::always_failing(),
        1,
        "attempts = 1 and a failing service",
    )];
    let succeeding = [(
        Recorder::failing_first(0),
        5,
        "a service that succeeds at once",
    )];
    for (service, attempts, case) in cases.into_iter().chain(succeeding) {
        let run = run(service, attempts, 100 * MS, 1_000 * MS, 5).await;
        let waited = run.returned - run.started;
        assert!(
            run.service.count() == 1 && waited.is_zero(),
            "with {case}, the loop must make one call and return at once; yours made {} call(s) \
             and took {} of (virtual) time",
            run.service.count(),
            show(waited),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn delays_follow_full_jitter() {
    let (attempts, base, cap) = (6, 10 * MS, 1_000 * MS);
    let mut delays_by_retry: Vec<Vec<Duration>> = vec![Vec::new(); attempts as usize - 1];
    for seed in 0..300 {
        let run = run(Recorder::always_failing(), attempts, base, cap, seed).await;
        let instants = run.service.instants();
        let before_first = instants.first().map(|first| *first - run.started);
        assert_eq!(
            before_first,
            Some(Duration::ZERO),
            "the first call must happen at once, without a sleep before it; yours came after {}",
            before_first.map_or("no call at all".to_owned(), show),
        );
        for (retry, delay) in gaps(&instants).into_iter().enumerate() {
            let limit = ceiling(retry as u32, base, cap);
            assert!(
                delay <= limit,
                "the sleep before retry {} should be at most min(cap, base·2^{retry}) = {} \
                 (base = 10 ms, cap = 1 s; the sleep after the first failure uses attempt = 0); \
                 yours slept {} (seed {seed}, sleeps {})",
                retry + 1,
                show(limit),
                show(delay),
                show_all(&gaps(&instants), 6),
            );
            delays_by_retry[retry].push(delay);
        }
    }
    for (retry, delays) in delays_by_retry.iter().enumerate() {
        let limit = ceiling(retry as u32, base, cap);
        let low = delays.iter().copied().min().unwrap_or_default();
        let high = delays.iter().copied().max().unwrap_or_default();
        let advice = if high < limit * 4 / 5 && high <= limit / 2 {
            "your sleeps never come near the ceiling: the sleep before retry r uses attempt = r, \
             counted from 0, with the base and cap you were given"
        } else if low > limit / 5 {
            "no short sleep ever came: a full-jitter sleep is drawn from zero up, not around or \
             above a fixed part"
        } else {
            "each sleep is one full_jitter(r, base, cap, rng) draw, used as it is"
        };
        assert!(
            low <= limit / 5 && high >= limit * 4 / 5,
            "over 300 seeded runs the sleep before retry {} should range across [0, {}]; yours \
             ranged only from {} to {}: {advice}",
            retry + 1,
            show(limit),
            show(low),
            show(high),
        );
    }
}

/// The Pearson correlation of two equally long samples.
fn correlation(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let (mean_x, mean_y) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let mut covariance = 0.0;
    let (mut spread_x, mut spread_y) = (0.0, 0.0);
    for (x, y) in xs.iter().zip(ys) {
        covariance += (x - mean_x) * (y - mean_y);
        spread_x += (x - mean_x).powi(2);
        spread_y += (y - mean_y).powi(2);
    }
    if spread_x == 0.0 || spread_y == 0.0 {
        return 1.0;
    }
    covariance / (spread_x * spread_y).sqrt()
}

#[tokio::test(start_paused = true)]
async fn delays_independent() {
    let (attempts, base, cap) = (4, 10 * MS, 1_000 * MS);
    let mut fractions: Vec<Vec<f64>> = vec![Vec::new(); attempts as usize - 1];
    for seed in 0..400 {
        let run = run(Recorder::always_failing(), attempts, base, cap, seed).await;
        for (retry, delay) in gaps(&run.service.instants()).into_iter().enumerate() {
            let limit = ceiling(retry as u32, base, cap).as_secs_f64();
            fractions[retry].push(delay.as_secs_f64() / limit);
        }
    }
    // For independent sleeps |r| over 400 runs reaches 0.4 with probability about 1.6·10^-16 a
    // pair, 3·10^-16 for the two (an importance-sampled estimate for these millisecond-rounded
    // fractions); 0.3 was reached with probability 1.1·10^-9 a pair, 2.2·10^-9 for the check.
    // One random factor reused for every sleep gives r = 0.996 or more.
    for retry in 1..fractions.len() {
        let r = correlation(&fractions[retry - 1], &fractions[retry]);
        assert!(
            r.abs() < 0.4,
            "each sleep must be a fresh random draw; across 400 seeded runs, the sleeps before \
             retry {} and retry {} (each as a fraction of its ceiling) had a correlation of \
             {r:.2}, so one random value is being reused",
            retry,
            retry + 1,
        );
    }
}

#[tokio::test(start_paused = true)]
async fn many_attempts_no_overflow() {
    let run = run(Recorder::always_failing(), 200, MS, 50 * MS, 6).await;
    let longest = gaps(&run.service.instants())
        .into_iter()
        .max()
        .unwrap_or_default();
    assert!(
        run.result == Err(200) && longest <= 50 * MS,
        "with attempts = 200 (base = 1 ms, cap = 50 ms) the loop must make 200 calls, sleep at \
         most 50 ms each time and return Err(200); yours returned {:?} after {} call(s), longest \
         sleep {}",
        run.result,
        run.service.count(),
        show(longest),
    );
}

#[tokio::test(start_paused = true)]
async fn sleeps_asynchronously() {
    let wall = std::time::Instant::now();
    let virtual_start = Instant::now();
    for seed in 0..5 {
        run(Recorder::always_failing(), 4, 100 * MS, 200 * MS, seed).await;
    }
    let (blocked, advanced) = (wall.elapsed(), virtual_start.elapsed());
    assert!(
        blocked < 150 * MS,
        "five retry runs blocked the thread for {} of real time while tokio's paused clock moved \
         {}: the sleep must be `tokio::time::sleep(..).await`, never `std::thread::sleep`, \
         which blocks the whole executor",
        show(blocked),
        show(advanced),
    );
}

#[tokio::test(start_paused = true)]
async fn exact_sleeps_replayed() {
    // A clone of the generator replays the sleeps exactly: the sleep before retry r is
    // full_jitter(r, …), drawn from the same generator in order. The ceilings differ at every
    // retry (10, 20, 40, … ms, then the cap 80 ms + 1 ns), so a sleep drawn for the wrong retry
    // shows, and so does any extra draw.
    let (attempts, base, cap) = (7, 10 * MS, Duration::from_nanos(80_000_001));
    for seed in 0..40 {
        replay_sleeps(seed, attempts, base, cap).await;
    }
    // The loop caps no sleep of its own: with a base of a day and a cap of 1,000 days the
    // ceilings run 1, 2, 4, … 512 days, then the cap, and each sleep is the whole draw (a loop
    // that cuts its sleeps to a minute, an hour, a day or a year sleeps less). Paused clock: the
    // years pass in microseconds.
    let day = Duration::from_secs(86_400);
    for seed in 0..5 {
        replay_sleeps(seed, 12, day, 1_000 * day).await;
    }
}

/// Runs the loop against a service that always fails and compares its sleeps with
/// `full_jitter(r, …)` replayed from a copy of the seeded generator.
async fn replay_sleeps(seed: u64, attempts: u32, base: Duration, cap: Duration) {
    let mut replay = seeded(seed);
    let expected: Vec<Duration> = (0..attempts - 1)
        .map(|retry| full_jitter(retry, base, cap, &mut replay))
        .collect();
    let run = run(Recorder::always_failing(), attempts, base, cap, seed).await;
    let slept = gaps(&run.service.instants());
    // tokio's timer ticks in whole milliseconds, so a sleep ends up to 1 ms late.
    let matches = slept.len() == expected.len()
        && slept
            .iter()
            .zip(&expected)
            .all(|(slept, expected)| (*expected..=*expected + MS).contains(slept));
    assert!(
        matches,
        "with a generator seeded with {seed}, attempts = {attempts}, base = {}, cap = {cap:?}, \
         the sleep before retry r must be full_jitter(r, base, cap, rng) from that generator, \
         r = 0, 1, 2, … in order (your own full_jitter, replayed with a copy of the \
         generator, draws {}; tokio's timer may add up to 1 ms to each); your loop slept {}",
        show(base),
        show_all(&expected, 12),
        show_all(&slept, 12),
    );
}

#[tokio::test(start_paused = true)]
async fn zero_attempts_calls_once() {
    let run = run(Recorder::always_failing(), 0, 10 * MS, 100 * MS, 2).await;
    assert!(
        run.result == Err(1) && run.service.count() == 1 && run.returned == run.started,
        "attempts = 0 is treated as 1: without a call there is no error to return. With a \
         service that always fails, the loop should call once and return Err(1) at once; yours \
         returned {:?} after {} call(s) and {}",
        run.result,
        run.service.count(),
        show(run.returned - run.started),
    );
}

#[tokio::test(start_paused = true)]
async fn huge_attempts() {
    // attempts = u32::MAX is "retry until it works"; counting towards it must not overflow, and
    // the sleeps stay under the cap. The service recovers on call 1,200: a loop that stops after
    // 100 or 1,000 calls "to be safe" gives up on it, and so does one that compares its counts as
    // u16 (2^16 + 3 attempts read as 3).
    for attempts in [u32::MAX, u32::MAX - 1, (1 << 16) + 3] {
        let run = run(Recorder::failing_first(1_199), attempts, MS, 20 * MS, 8).await;
        let longest = gaps(&run.service.instants())
            .into_iter()
            .max()
            .unwrap_or_default();
        assert!(
            run.result == Ok(1_200) && longest <= 20 * MS,
            "with attempts = {attempts} and a service that fails 1,199 times, the loop should \
             keep retrying, each sleep at most the cap of 20 ms, and return Ok(1200); yours \
             returned {:?} after {} call(s), longest sleep {}",
            run.result,
            run.service.count(),
            show(longest),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn one_draw_per_sleep() {
    // The loop draws from the caller's generator once per sleep and at no other time: after it
    // returns, the generator is exactly where the sleeps' full_jitter calls left it. A delay drawn
    // before the loop knows whether another call follows leaves one draw too many, unseen in the
    // sleeps, and the caller's next delays shift.
    use rand::Rng as _;
    for (failures, attempts, sleeps) in [(u32::MAX, 3, 2), (2, 5, 2), (u32::MAX, 1, 0), (0, 4, 0)] {
        for seed in 0..5 {
            let (base, cap) = (10 * MS, 100 * MS);
            let mut rng = seeded(seed);
            let mut replay = seeded(seed);
            for retry in 0..sleeps {
                full_jitter(retry, base, cap, &mut replay);
            }
            let service = Recorder::failing_first(failures);
            let result = retry_with_backoff(|| service.call(), attempts, base, cap, &mut rng).await;
            let left_at = rng.next_u64();
            if left_at == replay.next_u64() {
                continue;
            }
            // How many full_jitter draws (of retry 0, 1, …) leave a fresh generator where the
            // learner's loop left it, if any count up to five does.
            let drawn = (0..=5u32).find(|draws| {
                let mut fresh = seeded(seed);
                for retry in 0..*draws {
                    full_jitter(retry, base, cap, &mut fresh);
                }
                fresh.next_u64() == left_at
            });
            let advice = match drawn {
                Some(drawn) if drawn > sleeps + 1 => format!(
                    "yours left it where {drawn} draws do: more than one draw per sleep. See \
                     \"One delay drawn to log and another to sleep\" (§8.10): one draw, used \
                     for both"
                ),
                Some(drawn) if drawn > sleeps => format!(
                    "yours left it where {drawn} draws do: a delay drawn for a call that never \
                     came. Decide whether another call follows before drawing its delay"
                ),
                Some(drawn) => format!(
                    "yours left it where {drawn} draw(s) do: a sleep without a fresh draw from \
                     the generator you were given. Each sleep is one full_jitter(r, …) call with \
                     that rng"
                ),
                None => "yours left it where no count of full_jitter calls does: the loop draws \
                         from the generator some other way (a draw of its own, a second draw to \
                         log, a generator of its own). One full_jitter call per sleep, nothing else"
                    .to_owned(),
            };
            panic!(
                "a service that {} and attempts = {attempts} make {sleeps} sleep(s), so the loop \
                 should draw from the generator exactly {sleeps} time(s), one full_jitter per \
                 sleep; after your loop returned {result:?}, {advice}",
                if failures == u32::MAX {
                    "always fails".to_string()
                } else {
                    format!("fails {failures} time(s) and then succeeds")
                },
            );
        }
    }
}

/// A service whose every call takes `took` of (virtual) time and then fails with the call's
/// number, like a call that runs into its timeout; it remembers when each call started and ended.
struct SlowService {
    took: Duration,
    calls: RefCell<Vec<(Instant, Instant)>>,
}

impl SlowService {
    async fn call(&self) -> Result<u32, u32> {
        let started = Instant::now();
        tokio::time::sleep(self.took).await;
        let mut calls = self.calls.borrow_mut();
        calls.push((started, Instant::now()));
        Err(calls.len() as u32)
    }
}

#[tokio::test(start_paused = true)]
async fn sleep_follows_the_failure() {
    // The sleep lies between two calls: it starts when a call has failed, however long that call
    // took. Each call here takes 250 ms, longer than any ceiling (10 ms to 100 ms), so a loop that
    // measures its delay from the start of the failed call (a `sleep_until(call_start + delay)`)
    // or subtracts the call's duration does not wait at all, exactly when the dependency is slow.
    let (attempts, base, cap, took) = (5, 10 * MS, 100 * MS, 250 * MS);
    for seed in 0..20 {
        let mut replay = seeded(seed);
        let expected: Vec<Duration> = (0..attempts - 1)
            .map(|retry| full_jitter(retry, base, cap, &mut replay))
            .collect();
        let service = SlowService {
            took,
            calls: RefCell::new(Vec::new()),
        };
        let mut rng = seeded(seed);
        let result = retry_with_backoff(|| service.call(), attempts, base, cap, &mut rng).await;
        let calls = service.calls.borrow().clone();
        let waits: Vec<Duration> = calls.windows(2).map(|pair| pair[1].0 - pair[0].1).collect();
        // tokio's timer ticks in whole milliseconds, so a sleep ends up to 1 ms late.
        let matches = waits.len() == expected.len()
            && waits
                .iter()
                .zip(&expected)
                .all(|(waited, expected)| (*expected..=*expected + MS).contains(waited));
        assert!(
            matches,
            "with calls that each take 250 ms and then fail (attempts = 5, base = 10 ms, \
             cap = 100 ms, generator seeded with {seed}), the loop must sleep the whole \
             full_jitter(r, …) draw after each failure, counted from the moment the call failed: \
             {} (your own full_jitter replayed with a copy of the generator; tokio's timer may add \
             up to 1 ms). Between the end of one call and the start of the next, yours waited {} \
             and returned {result:?}",
            show_all(&expected, 8),
            show_all(&waits, 8),
        );
    }
}
