//! Checks of `retry_honouring_retry_after`: hints followed between calls, invalid hints replaced
//! by the backoff, dates measured from receipt, and the attempt limit and budget kept.

use std::cell::RefCell;
use std::time::{Duration, UNIX_EPOCH};

use exercise::{HttpError, retry_honouring_retry_after};
use tokio::time::Instant;

use super::support::{show, show_all};

const MS: Duration = Duration::from_millis(1);
const SECOND: Duration = Duration::from_secs(1);
const HOUR: Duration = Duration::from_secs(3_600);
const DAY: Duration = Duration::from_secs(86_400);

/// `Fri, 31 Dec 1999 23:57:59 GMT`: where the test server's wall clock starts.
const CLOCK_START: u64 = 946_684_679;

/// What one call of the test server does.
#[derive(Clone, Copy)]
enum Reply {
    Succeed,
    Fail(Option<&'static str>),
}

/// A server that replays a script (its last reply repeats), answers every call after a fixed
/// latency, stamps each failure with its own wall clock (CLOCK_START plus tokio time), and records
/// when each call started.
struct Server {
    script: Vec<Reply>,
    latency: Duration,
    created: Instant,
    calls: RefCell<Vec<Instant>>,
}

impl Server {
    fn new(script: Vec<Reply>, latency: Duration) -> Self {
        Self {
            script,
            latency,
            created: Instant::now(),
            calls: RefCell::new(Vec::new()),
        }
    }

    async fn call(&self) -> Result<u32, HttpError> {
        let number = {
            let mut calls = self.calls.borrow_mut();
            calls.push(Instant::now());
            calls.len()
        };
        let reply = self.script[(number - 1).min(self.script.len() - 1)];
        tokio::time::sleep(self.latency).await;
        match reply {
            Reply::Succeed => Ok(number as u32),
            Reply::Fail(retry_after) => Err(HttpError {
                status: 503,
                retry_after: retry_after.map(str::to_owned),
                received_at: UNIX_EPOCH
                    + Duration::from_secs(CLOCK_START)
                    + (Instant::now() - self.created),
            }),
        }
    }

    fn count(&self) -> u32 {
        self.calls.borrow().len() as u32
    }

    /// When each call started, as time since the server was created.
    fn starts(&self) -> Vec<Duration> {
        self.calls
            .borrow()
            .iter()
            .map(|call| *call - self.created)
            .collect()
    }

    /// The sleeps between calls: the gap from each call's answer to the next call's start.
    fn waits(&self) -> Vec<Duration> {
        self.starts()
            .windows(2)
            .map(|pair| pair[1].saturating_sub(pair[0] + self.latency))
            .collect()
    }
}

/// One run: the result, the server's record, and when the loop returned (since the start).
struct Run {
    result: Result<u32, HttpError>,
    server: Server,
    returned: Duration,
}

impl Run {
    fn result(&self) -> String {
        match &self.result {
            Ok(value) => format!("Ok({value})"),
            Err(error) => format!("Err({error})"),
        }
    }
}

/// The backoff the checks pass: 100 ms, 200 ms, 300 ms, … for retry 0, 1, 2, …
fn linear_backoff(retry: u32) -> Duration {
    100 * MS * (retry + 1)
}

async fn run(
    script: Vec<Reply>,
    latency: Duration,
    max_attempts: u32,
    max_hint: Duration,
    budget: Duration,
) -> Run {
    let server = Server::new(script, latency);
    let started = Instant::now();
    let result = retry_honouring_retry_after(
        || server.call(),
        max_attempts,
        linear_backoff,
        max_hint,
        budget,
    )
    .await;
    Run {
        result,
        server,
        returned: started.elapsed(),
    }
}

#[tokio::test(start_paused = true)]
async fn follows_hints() {
    let script = vec![
        Reply::Fail(Some("2")),
        Reply::Fail(Some("Fri, 31 Dec 1999 23:58:06 GMT")),
        Reply::Fail(Some("Sat, 01 Jan 2000 00:00:00 GMT")),
        Reply::Succeed,
    ];
    let run = run(script, Duration::ZERO, 10, 30 * SECOND, HOUR).await;
    let waits = run.server.waits();
    let expected = [2 * SECOND, 5 * SECOND, 30 * SECOND];
    assert!(
        run.result.as_ref().ok() == Some(&4) && waits == expected,
        "a server answers `Retry-After: 2`, then a date 5 s after that response arrives, then a \
         date 1 min 54 s away, then Ok; with max_hint = 30 s and backoff 100 ms, 200 ms, 300 ms, \
         the loop should wait {} and return Ok(4); yours waited {} and returned {}",
        show_all(&expected, 5),
        show_all(&waits, 5),
        run.result(),
    );
    // Long hints within a long budget are followed as asked: the loop caps nothing of its own
    // (no sleep cut to an hour, no budget cut to a day or kept in u32 milliseconds). Paused
    // clock: the days pass in microseconds.
    let script = vec![
        Reply::Fail(Some("10800")),
        Reply::Fail(Some("259200")),
        Reply::Succeed,
    ];
    let (max_hint, budget) = (30 * DAY, 100 * DAY);
    let run = self::run(script, Duration::ZERO, 10, max_hint, budget).await;
    let waits = run.server.waits();
    let expected = [3 * HOUR, 3 * DAY];
    assert!(
        run.result.as_ref().ok() == Some(&3) && waits == expected,
        "a server answers `Retry-After: 10800` (3 h), then `Retry-After: 259200` (3 days), then \
         Ok; with max_hint = 30 days and a budget of 100 days both hints fit, so the loop should \
         wait {} and return Ok(3); yours waited {} and returned {}",
        show_all(&expected, 5),
        show_all(&waits, 5),
        run.result(),
    );
}

#[tokio::test(start_paused = true)]
async fn invalid_hint_uses_backoff() {
    let script = vec![
        Reply::Fail(Some("soon")),
        Reply::Fail(Some("-1")),
        Reply::Fail(Some("1.5")),
        Reply::Fail(Some("")),
        Reply::Fail(None),
        Reply::Succeed,
    ];
    let run = run(script, Duration::ZERO, 10, 30 * SECOND, HOUR).await;
    let waits = run.server.waits();
    let expected: Vec<Duration> = (0..5).map(linear_backoff).collect();
    assert!(
        run.result.as_ref().ok() == Some(&6) && waits == expected,
        "after failures carrying the invalid values \"soon\", \"-1\", \"1.5\" and \"\" and then \
         none at all, the loop should wait its own backoff each time, {}, and return Ok(6); yours \
         waited {} and returned {}{}",
        show_all(&expected, 6),
        show_all(&waits, 6),
        run.result(),
        if waits.iter().any(Duration::is_zero) {
            ". An unreadable hint is no hint: never retry at once because of it"
        } else {
            ""
        },
    );
    // Hints and fallbacks mixed: the backoff's retry number counts every failure before it,
    // hinted ones included (retry 0 after the first failure), not only the backoff's own sleeps.
    let script = vec![
        Reply::Fail(Some("1")),
        Reply::Fail(Some("2")),
        Reply::Fail(None),
        Reply::Fail(Some("soon")),
        Reply::Succeed,
    ];
    let run = self::run(script, Duration::ZERO, 10, 30 * SECOND, HOUR).await;
    let waits = run.server.waits();
    let expected = [SECOND, 2 * SECOND, linear_backoff(2), linear_backoff(3)];
    assert!(
        run.result.as_ref().ok() == Some(&5) && waits == expected,
        "after failures carrying `Retry-After: 1`, `Retry-After: 2`, no header and \"soon\", the \
         loop should wait 1 s and 2 s as asked, then backoff(2) and backoff(3), {}: the third \
         failure is retry 2 whatever the waits before it were (backoff is 100 ms, 200 ms, \
         300 ms, … for retry 0, 1, 2, …); yours waited {} and returned {}",
        show_all(&expected, 6),
        show_all(&waits, 6),
        run.result(),
    );
}

#[tokio::test(start_paused = true)]
async fn date_hint_uses_received_at() {
    // Each call takes 3 s; the first response arrives at 23:58:02 and names 23:58:09.
    let script = vec![
        Reply::Fail(Some("Fri, 31 Dec 1999 23:58:09 GMT")),
        Reply::Succeed,
    ];
    let run = run(script, 3 * SECOND, 5, 30 * SECOND, HOUR).await;
    let starts = run.server.starts();
    let second_call = starts.get(1).copied();
    assert!(
        second_call == Some(10 * SECOND),
        "the first response arrives 3 s after the call (at 23:58:02 on the server's clock, its \
         received_at) and says `Retry-After: Fri, 31 Dec 1999 23:58:09 GMT`: the loop should wait \
         7 s from that response and call again 10 s after the start; your second call came {}{}",
        second_call.map_or("never".to_owned(), |at| format!("after {}", show(at))),
        // Measured from today's clock, a date in 1999 is long past: no wait at all.
        if second_call == Some(3 * SECOND) {
            ". Without a wait, the date was taken as past: measure it from the error's \
             received_at, not from SystemTime::now()"
        } else {
            ". The wait is the date minus the error's received_at"
        },
    );
}

#[tokio::test(start_paused = true)]
async fn hint_keeps_attempt_limit() {
    // Hints on every failure; the 61st call would succeed, to end a loop that ignores the limit.
    let mut script = vec![Reply::Fail(Some("1")); 60];
    script.push(Reply::Succeed);
    // 0 is read as 1, as the stub says: without a call there is no error to return.
    for max_attempts in [0, 1, 2, 4] {
        let calls = max_attempts.max(1);
        let run = run(script.clone(), 10 * MS, max_attempts, 30 * SECOND, HOUR).await;
        let last_start = run.server.starts().last().copied().unwrap_or_default();
        let trailing = run.returned.saturating_sub(last_start + 10 * MS);
        assert!(
            run.server.count() == calls && run.result.is_err(),
            "every response carries `Retry-After: 1`; with max_attempts = {max_attempts} the loop \
             must make exactly {calls} call(s) (0 is read as 1) and then return the last error; \
             yours made {} call(s) and returned {}. A hint says when to try again, not that \
             another attempt is allowed",
            run.server.count(),
            run.result(),
        );
        let last = run.result.as_ref().err().map(|error| error.received_at);
        // Each error is stamped when its call answers: the last one 10 ms after the last start.
        let expected_last =
            Some(UNIX_EPOCH + Duration::from_secs(CLOCK_START) + last_start + 10 * MS);
        assert!(
            last == expected_last,
            "with max_attempts = {max_attempts} the loop must return the error of the last call \
             (received {}), not an earlier one; yours returned the error received {}",
            expected_last.map_or("never".to_owned(), |at| format!("{at:?}")),
            last.map_or("never".to_owned(), |at| format!("{at:?}")),
        );
        assert!(
            trailing.is_zero(),
            "with max_attempts = {max_attempts}, after the last call failed (with `Retry-After: \
             1`) your loop waited another {} before returning the error; once no attempt is left, \
             return at once: check the attempt limit before sleeping",
            show(trailing),
        );
    }
    // Below the limit the loop goes on: 299 failures, each with `Retry-After: 0`, then Ok. With
    // max_attempts = 300 the 300th call succeeds (a loop that stops after 100 calls of its own
    // changes the count too).
    // And 2^16 + 3 attempts are 65,539, not the 3 that a count compared as u16 sees.
    let mut script = vec![Reply::Fail(Some("0")); 299];
    script.push(Reply::Succeed);
    for max_attempts in [300, (1 << 16) + 3] {
        let run = self::run(script.clone(), 10 * MS, max_attempts, 30 * SECOND, HOUR).await;
        assert!(
            run.result.as_ref().ok() == Some(&300) && run.server.count() == 300,
            "299 responses carry `Retry-After: 0` and the 300th call succeeds; with \
             max_attempts = {max_attempts} and an hour of budget the loop should make 300 calls \
             and return Ok(300); yours made {} call(s) and returned {}. The limit is \
             max_attempts, not a number of the loop's own",
            run.server.count(),
            run.result(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn stops_within_budget() {
    // Each call takes 1 s and asks for 3 s: calls at 0, 4 and 8 s; after the third answer (at
    // 9 s) only 1 s is left, less than the 3 s asked for, so the loop gives up at 9 s.
    let script = vec![Reply::Fail(Some("3"))];
    let run = run(script, SECOND, 10, 30 * SECOND, 10 * SECOND).await;
    let starts = run.server.starts();
    let expected = [Duration::ZERO, 4 * SECOND, 8 * SECOND];
    assert!(
        starts == expected && run.returned == 9 * SECOND && run.result.is_err(),
        "with a 10 s budget, calls that take 1 s and `Retry-After: 3` on every failure, the loop \
         should call at {} and give up when the third answer arrives at 9 s (3 s asked, 1 s left); \
         yours called at {} and returned {} after {}. The time left is the budget minus \
         everything spent since the start, calls included",
        show_all(&expected, 6),
        show_all(&starts, 6),
        run.result(),
        show(run.returned),
    );
    // The first call's second counts too: with a 7.5 s budget, after the second answer (at 5 s)
    // 2.5 s are left, less than the 3 s asked for. A budget started at the first failure would
    // still see 3.5 s, sleep, and start a third call at 8 s, past the deadline.
    let script = vec![Reply::Fail(Some("3"))];
    let budget = 7_500 * MS;
    let run = self::run(script, SECOND, 10, 30 * SECOND, budget).await;
    let starts = run.server.starts();
    let expected = [Duration::ZERO, 4 * SECOND];
    assert!(
        starts == expected && run.returned == 5 * SECOND && run.result.is_err(),
        "with a 7.5 s budget, calls that take 1 s and `Retry-After: 3` on every failure, the loop \
         should call at {} and give up when the second answer arrives at 5 s (3 s asked, 2.5 s \
         left); yours called at {} and returned {} after {}. The budget starts with the call of \
         retry_honouring_retry_after, not with the first failure: the first call's time is \
         spent too",
        show_all(&expected, 6),
        show_all(&starts, 6),
        run.result(),
        show(run.returned),
    );
}

#[test]
fn call_longer_than_budget() {
    // The first call alone takes 3 s of a 2 s budget: when it fails, nothing is left, and the
    // loop returns that error at once. `budget - elapsed` on Durations panics here instead. The
    // race runs on a paused runtime of its own, in a thread of its own, so a panic becomes a
    // message.
    let outcome = std::thread::spawn(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread runtime with a paused clock");
        runtime.block_on(async {
            let script = vec![Reply::Fail(Some("1")), Reply::Succeed];
            let run = run(script, 3 * SECOND, 5, 30 * SECOND, 2 * SECOND).await;
            (run.server.count(), run.returned, run.result())
        })
    })
    .join();
    let (count, returned, result) = match outcome {
        Ok(seen) => seen,
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| {
                    payload
                        .downcast_ref::<&str>()
                        .map(|text| (*text).to_owned())
                })
                .unwrap_or_default();
            panic!(
                "with a 2 s budget and a first call that takes 3 s and fails, your loop panicked: \
                 {message}. The time left is then zero, not negative: subtract with \
                 saturating_sub, and give up with the error in hand"
            );
        }
    };
    assert!(
        count == 1 && returned == 3 * SECOND && result.starts_with("Err"),
        "with a 2 s budget and a first call that takes 3 s and fails (`Retry-After: 1`), no time \
         is left: the loop should return that error when it arrives, after 1 call and 3 s; yours \
         made {count} call(s) and returned {result} after {}",
        show(returned),
    );
}

#[tokio::test(start_paused = true)]
async fn gives_up_at_once() {
    let script = vec![Reply::Fail(Some("120")), Reply::Succeed];
    let run = run(script, 10 * MS, 5, 30 * SECOND, 60 * SECOND).await;
    assert!(
        run.server.count() == 1 && run.returned == 10 * MS && run.result.is_err(),
        "the first response says `Retry-After: 120` and the budget is 60 s: the server will not \
         answer before the deadline, so the loop should return that error at once, after 1 call \
         and 10 ms; yours made {} call(s) and returned {} after {}",
        run.server.count(),
        run.result(),
        show(run.returned),
    );
    // A budget of zero leaves no time for any wait, not even a `Retry-After: 0`: zero is a
    // budget like any other, not "no budget".
    for header in [None, Some("0")] {
        let script = vec![Reply::Fail(header), Reply::Succeed];
        let run = self::run(script, Duration::ZERO, 5, 30 * SECOND, Duration::ZERO).await;
        let failure = header.map_or("no Retry-After".to_owned(), |value| {
            format!("Retry-After: {value}")
        });
        assert!(
            run.server.count() == 1 && run.returned.is_zero() && run.result.is_err(),
            "with a budget of zero, the first call fails ({}): no wait can end before a budget \
             that is already spent, so the loop should return that error at once, after 1 call; \
             yours made {} call(s) and returned {} after {}",
            failure,
            run.server.count(),
            run.result(),
            show(run.returned),
        );
    }
}
