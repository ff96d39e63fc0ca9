//! Checks of `IdempotencyStore::handle`: replay, saved errors, parameter mismatch, concurrent
//! duplicates, independent keys, and expiry.

use std::cell::Cell;
use std::time::Duration;

use exercise::{DEFAULT_TTL, IdempotencyError, IdempotencyKey, IdempotencyStore};
use tokio::time::{Instant, sleep};

use super::support::show;

const MS: Duration = Duration::from_millis(1);
const SECOND: Duration = Duration::from_secs(1);

type Store = IdempotencyStore<u32, String>;
type Answer = Result<Result<u32, String>, IdempotencyError>;

/// A request as the checks send it: who pays, how much.
type Request = (&'static str, u64);

const ADA_10: Request = ("ada", 1_000);
const ADA_20: Request = ("ada", 2_000);

fn key(text: &str) -> IdempotencyKey {
    IdempotencyKey::parse(text).expect("a valid key")
}

/// An operation behind the store: counts how often it runs, takes `latency`, and returns the
/// outcome each call asks for.
struct Operation {
    latency: Duration,
    runs: Cell<u32>,
}

impl Operation {
    fn taking(latency: Duration) -> Self {
        Self {
            latency,
            runs: Cell::new(0),
        }
    }

    async fn run(&self, outcome: Result<u32, String>) -> Result<u32, String> {
        self.runs.set(self.runs.get() + 1);
        sleep(self.latency).await;
        outcome
    }

    fn runs(&self) -> u32 {
        self.runs.get()
    }
}

/// One request through the store: `key`, `request`, and what the operation would return if run.
async fn send(
    store: &Store,
    op: &Operation,
    key: &IdempotencyKey,
    request: Request,
    outcome: Result<u32, String>,
) -> Answer {
    store.handle(key, &request, || op.run(outcome)).await
}

/// The key's first request (`ADA_10`, answered `Ok(7)` after the operation's latency) and, 10 ms
/// into it, `second` with the same key (answered `Ok(8)` if it runs). Each answer comes with the
/// moment it arrived.
async fn overlapping(
    store: &Store,
    op: &Operation,
    k: &IdempotencyKey,
    second: Request,
) -> ((Answer, Duration), (Answer, Duration)) {
    let start = Instant::now();
    let first = async {
        let answer = send(store, op, k, ADA_10, Ok(7)).await;
        (answer, start.elapsed())
    };
    let later = async {
        sleep(10 * MS).await;
        let answer = send(store, op, k, second, Ok(8)).await;
        (answer, start.elapsed())
    };
    tokio::join!(first, later)
}

#[tokio::test(start_paused = true)]
async fn first_response_replayed() {
    let (store, op, k) = (
        Store::new(DEFAULT_TTL),
        Operation::taking(20 * MS),
        key("k-replay"),
    );
    let first = send(&store, &op, &k, ADA_10, Ok(7)).await;
    assert!(
        first == Ok(Ok(7)),
        "the first request with a new key must run the operation and return its outcome, \
         Ok(Ok(7)); yours returned {first:?} (the operation ran {} time(s))",
        op.runs(),
    );
    for retry in 1..=3 {
        let answer = send(&store, &op, &k, ADA_10, Ok(7 + retry)).await;
        assert!(
            answer == Ok(Ok(7)) && op.runs() == 1,
            "retry {retry} carried the same key and the same request as the first, which \
             returned Ok(7): it must get the saved Ok(Ok(7)) without running the operation \
             again; yours returned {answer:?}, and the operation has run {} time(s) in all",
            op.runs(),
        );
    }
    // A store remembers every key for its whole TTL, however many others arrive meanwhile: no
    // capacity of its own (1,000 or 10,000 keys) evicts the first one, and no clearing
    // "to bound memory" forgets it.
    let others = Operation::taking(Duration::ZERO);
    for n in 0..12_000 {
        let _ = send(
            &store,
            &others,
            &key(&format!("k-other-{n}")),
            ADA_10,
            Ok(n),
        )
        .await;
    }
    let answer = send(&store, &op, &k, ADA_10, Ok(99)).await;
    assert!(
        answer == Ok(Ok(7)) && op.runs() == 1 && others.runs() == 12_000,
        "after 12,000 requests with other keys, a retry of the first request (its key still \
         well within the 24 h TTL) must get the saved Ok(Ok(7)) without running the \
         operation; yours returned {answer:?}, the first operation having run {} time(s) and \
         the 12,000 others {} time(s). A key is remembered for its whole TTL, whatever the \
         number of keys",
        op.runs(),
        others.runs(),
    );
}

#[tokio::test(start_paused = true)]
async fn errors_saved_and_replayed() {
    for error in ["500 internal error", "402 card declined"] {
        let store = Store::new(DEFAULT_TTL);
        let (op, k) = (Operation::taking(20 * MS), key("k-error"));
        let first = send(&store, &op, &k, ADA_10, Err(error.to_owned())).await;
        assert!(
            first == Ok(Err(error.to_owned())),
            "the first request's operation failed with Err({error:?}): the store must return \
             that outcome as Ok(Err({error:?})); yours returned {first:?}",
        );
        let retry = send(&store, &op, &k, ADA_10, Ok(8)).await;
        assert!(
            retry == first && op.runs() == 1,
            "the first execution with this key failed with Err({error:?}). Errors are saved \
             like successes: a retry with the same key must get Ok(Err({error:?})) back \
             without executing again (the execution began, so it may have had effects); \
             yours returned {retry:?}, and the operation ran {} time(s)",
            op.runs(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn mismatched_parameters_rejected() {
    let (store, op, k) = (
        Store::new(DEFAULT_TTL),
        Operation::taking(20 * MS),
        key("k-mismatch"),
    );
    let _ = send(&store, &op, &k, ADA_10, Ok(7)).await;
    let reused = send(&store, &op, &k, ADA_20, Ok(8)).await;
    assert!(
        reused == Err(IdempotencyError::KeyReusedWithDifferentRequest) && op.runs() == 1,
        "the key was first used to charge ada 1000 cents; the same key with a request for 2000 \
         cents must be refused with Err(KeyReusedWithDifferentRequest) without running \
         anything (compare the requests' fingerprints); yours returned {reused:?}, and the \
         operation ran {} time(s)",
        op.runs(),
    );
    let again = send(&store, &op, &k, ADA_10, Ok(9)).await;
    assert!(
        again == Ok(Ok(7)) && op.runs() == 1,
        "a refusal must leave the key as it was: after the 2000-cent request was refused, the \
         original 1000-cent request with the same key must still get its saved Ok(Ok(7)); \
         yours returned {again:?}, and the operation ran {} time(s)",
        op.runs(),
    );
    let still = send(&store, &op, &k, ADA_20, Ok(10)).await;
    assert!(
        still == Err(IdempotencyError::KeyReusedWithDifferentRequest),
        "the 2000-cent request with the key of the 1000-cent charge must be refused every time; \
         the second time, yours returned {still:?}",
    );
}

#[tokio::test(start_paused = true)]
async fn concurrent_duplicate_refused() {
    let (store, op, k) = (
        Store::new(DEFAULT_TTL),
        Operation::taking(100 * MS),
        key("k-race"),
    );
    let ((first, first_at), (duplicate, duplicate_at)) = overlapping(&store, &op, &k, ADA_10).await;
    assert!(
        op.runs() == 1,
        "a request with the same key arrived 10 ms into the first one's 100 ms execution; the \
         operation must run once, yet yours ran it {} times (answers: {first:?} at {}, \
         {duplicate:?} at {}){}",
        op.runs(),
        show(first_at),
        show(duplicate_at),
        if op.runs() > 1 {
            ". Mark the key in progress before executing, in the same critical section as the \
             lookup (pitfall \"Look up, execute, then insert\")"
        } else {
            ". The first request with a new key must execute"
        },
    );
    assert!(
        first == Ok(Ok(7)) && first_at == 100 * MS,
        "the first request should return Ok(Ok(7)) when its execution ends, at 100 ms; yours \
         returned {first:?} at {}",
        show(first_at),
    );
    assert!(
        duplicate == Err(IdempotencyError::InProgress) && duplicate_at == 10 * MS,
        "this store refuses a duplicate that arrives while the first request executes, at once, \
         with Err(InProgress) (HTTP 409); it does not make it wait. The duplicate came at 10 ms; \
         yours answered {duplicate:?} at {}",
        show(duplicate_at),
    );
    let later = send(&store, &op, &k, ADA_10, Ok(9)).await;
    assert!(
        later == Ok(Ok(7)) && op.runs() == 1,
        "the 409 refusal must not be saved: once the first request completed, a retry with the \
         key must get its saved Ok(Ok(7)); yours returned {later:?} (the operation ran {} \
         time(s))",
        op.runs(),
    );
}

#[tokio::test(start_paused = true)]
async fn keys_are_independent() {
    let store = Store::new(DEFAULT_TTL);
    let op = Operation::taking(100 * MS);
    let (k1, k2) = (key("k-first-purchase"), key("k-second-purchase"));
    let start = Instant::now();
    let first = async {
        let answer = send(&store, &op, &k1, ADA_10, Ok(7)).await;
        (answer, start.elapsed())
    };
    let second = async {
        sleep(10 * MS).await;
        let answer = send(&store, &op, &k2, ADA_10, Ok(8)).await;
        (answer, start.elapsed())
    };
    let ((first, first_at), (second, second_at)) = tokio::join!(first, second);
    assert!(
        first == Ok(Ok(7)) && second == Ok(Ok(8)) && op.runs() == 2,
        "two purchases with equal requests but different keys are two operations: both must run \
         (keys identify operations, not request contents); yours answered {first:?} and \
         {second:?}, running the operation {} time(s)",
        op.runs(),
    );
    assert!(
        first_at == 100 * MS && second_at == 110 * MS,
        "requests with different keys must not wait for each other: the first (100 ms of work, \
         from 0 ms) should end at 100 ms and the second (from 10 ms) at 110 ms; yours ended at \
         {} and {}. Hold the lock only to look up and to save, never across \
         `execute().await`",
        show(first_at),
        show(second_at),
    );
}

#[tokio::test(start_paused = true)]
async fn ttl_expiry() {
    let (store, op, k) = (
        Store::new(DEFAULT_TTL),
        Operation::taking(Duration::ZERO),
        key("k-ttl"),
    );
    let _ = send(&store, &op, &k, ADA_10, Ok(1)).await;
    sleep(DEFAULT_TTL - SECOND).await;
    let before = send(&store, &op, &k, ADA_10, Ok(2)).await;
    assert!(
        before == Ok(Ok(1)) && op.runs() == 1,
        "with a TTL of 24 h, a retry 1 s before the key expires (23 h 59 min 59 s after its \
         first use) must still get the saved Ok(Ok(1)); yours returned {before:?}, and the \
         operation ran {} time(s)",
        op.runs(),
    );
    sleep(2 * SECOND).await;
    let after = send(&store, &op, &k, ADA_10, Ok(3)).await;
    assert!(
        after == Ok(Ok(3)) && op.runs() == 2,
        "24 h 1 s after its first use the key has expired: the store must treat it as new, run \
         the operation (which now returns Ok(3)) and return Ok(Ok(3)); yours returned \
         {after:?}, and the operation ran {} time(s) in all",
        op.runs(),
    );
    let replay = send(&store, &op, &k, ADA_10, Ok(4)).await;
    assert!(
        replay == Ok(Ok(3)) && op.runs() == 2,
        "after the expired key ran again, its new outcome must be saved: the next retry must \
         get Ok(Ok(3)); yours returned {replay:?} (the operation ran {} time(s) in all)",
        op.runs(),
    );

    let ttl = 10 * 60 * SECOND;
    let (store, op) = (Store::new(ttl), Operation::taking(Duration::ZERO));
    let _ = send(&store, &op, &k, ADA_10, Ok(1)).await;
    sleep(ttl + SECOND).await;
    let reused = send(&store, &op, &k, ADA_20, Ok(2)).await;
    assert!(
        reused == Ok(Ok(2)) && op.runs() == 2,
        "with a TTL of 10 min, a key is forgotten entirely once it expires: 10 min 1 s later, a \
         different request with the same key is a new request and must run, returning \
         Ok(Ok(2)); yours returned {reused:?} (the operation ran {} time(s) in all)",
        op.runs(),
    );

    // The TTL is the store's only limit: a key is remembered for 60 days under a TTL of 60 days
    // (past a day, and past u32::MAX milliseconds), and not at all under a TTL of zero (every
    // entry is at least 0 old, so none is live: zero is not "forever").
    for (ttl, what) in [(60 * 24 * 3_600 * SECOND, "60 days"), (Duration::ZERO, "0")] {
        let (store, op) = (Store::new(ttl), Operation::taking(Duration::ZERO));
        let _ = send(&store, &op, &k, ADA_10, Ok(1)).await;
        if !ttl.is_zero() {
            sleep(ttl / 2).await;
            let halfway = send(&store, &op, &k, ADA_10, Ok(2)).await;
            assert!(
                halfway == Ok(Ok(1)) && op.runs() == 1,
                "with a TTL of {what}, a retry {} after the key's first use must get the saved \
                 Ok(Ok(1)); yours returned {halfway:?} (the operation ran {} time(s)). The TTL \
                 is the store's only limit: no cap of its own (a day, say), and no conversion \
                 that overflows (60 days is more than u32::MAX milliseconds); compare the age \
                 with the TTL as Durations",
                show(ttl / 2),
                op.runs(),
            );
        }
        let live = ttl.saturating_sub(SECOND);
        sleep(live - ttl / 2).await;
        let before = send(&store, &op, &k, ADA_10, Ok(2)).await;
        let expected = if ttl.is_zero() { Ok(Ok(2)) } else { Ok(Ok(1)) };
        assert!(
            before == expected,
            "with a TTL of {what}, a retry {} after the key's first use must get {expected:?} \
             (an entry is live while now − first use < ttl, and the TTL is the only limit); \
             yours returned {before:?} (the operation ran {} time(s))",
            show(live),
            op.runs(),
        );
        sleep(2 * SECOND).await;
        let runs = op.runs();
        let after = send(&store, &op, &k, ADA_10, Ok(3)).await;
        assert!(
            after == Ok(Ok(3)) && op.runs() == runs + 1,
            "with a TTL of {what}, a retry {} after the key's first use comes after the key \
             expired: the operation must run again and return Ok(Ok(3)); yours returned \
             {after:?}",
            show(live + 2 * SECOND),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn in_progress_and_different_request() {
    // Two rules at once: the key is in progress, and the request is a different one. The
    // mismatch is the answer (422): the client has a bug to fix, and retrying it later would
    // never help. The first request still completes and keeps its outcome.
    let (store, op, k) = (
        Store::new(DEFAULT_TTL),
        Operation::taking(100 * MS),
        key("k-race-mismatch"),
    );
    let ((first, first_at), (other, other_at)) = overlapping(&store, &op, &k, ADA_20).await;
    assert!(
        other == Err(IdempotencyError::KeyReusedWithDifferentRequest) && other_at == 10 * MS,
        "a request for 2000 cents arrived 10 ms into the 100 ms execution of the key's first \
         request, for 1000 cents. The key is in progress and the request differs: the store must \
         answer Err(KeyReusedWithDifferentRequest) at once (a different request is refused \
         whatever the key's state, section 20.4); yours answered {other:?} at {}",
        show(other_at),
    );
    assert!(
        first == Ok(Ok(7)) && first_at == 100 * MS && op.runs() == 1,
        "the refusal must leave the first request alone: it should finish at 100 ms with \
         Ok(Ok(7)), the operation having run once; yours returned {first:?} at {}, with {} \
         run(s)",
        show(first_at),
        op.runs(),
    );
    let later = send(&store, &op, &k, ADA_10, Ok(9)).await;
    assert!(
        later == Ok(Ok(7)) && op.runs() == 1,
        "after both, a retry of the 1000-cent request must get its saved Ok(Ok(7)); yours \
         returned {later:?}",
    );
}

#[tokio::test(start_paused = true)]
async fn ttl_boundary() {
    // The TTL runs from the first use of the key, not from the end of its execution, and an
    // entry is live while now − first use < ttl: at exactly ttl it is gone.
    let ttl = 60 * SECOND;
    let (store, op, k) = (
        Store::new(ttl),
        Operation::taking(10 * SECOND),
        key("k-ttl-edge"),
    );
    let _ = send(&store, &op, &k, ADA_10, Ok(1)).await;
    // 10 s have passed (the execution). Move to 1 ms before the key's end, then exactly to it.
    tokio::time::advance(ttl - 10 * SECOND - MS).await;
    let before = send(&store, &op, &k, ADA_10, Ok(2)).await;
    assert!(
        before == Ok(Ok(1)) && op.runs() == 1,
        "with a TTL of 60 s, 59.999 s after the key's first use a retry must still get the saved \
         Ok(Ok(1)); yours returned {before:?} (the operation ran {} time(s))",
        op.runs(),
    );
    tokio::time::advance(MS).await;
    let at = send(&store, &op, &k, ADA_10, Ok(3)).await;
    assert!(
        at == Ok(Ok(3)) && op.runs() == 2,
        "with a TTL of 60 s, exactly 60 s after the key's first use (its first request took \
         10 s to execute) the key has expired: a key is remembered while now − first use < \
         ttl, counted from when the first request arrived, not from when it completed. The \
         store must run the operation again and return Ok(Ok(3)); yours returned {at:?} (the \
         operation ran {} time(s) in all)",
        op.runs(),
    );
}

#[tokio::test(start_paused = true)]
async fn refusals_keep_the_first_use() {
    // Refusals never change the state, and the TTL runs from the key's first use: refusals that
    // come later (a mismatch at 40 s, a duplicate during a second execution) must not move the
    // moment the key expires.
    let ttl = 60 * SECOND;
    let (store, op, k) = (
        Store::new(ttl),
        Operation::taking(10 * SECOND),
        key("k-refused-late"),
    );
    let _ = send(&store, &op, &k, ADA_10, Ok(1)).await;
    tokio::time::advance(30 * SECOND).await;
    let mismatch = send(&store, &op, &k, ADA_20, Ok(2)).await;
    assert!(
        mismatch == Err(IdempotencyError::KeyReusedWithDifferentRequest) && op.runs() == 1,
        "40 s after the key's first use (TTL 60 s), a 2000-cent request with the key of a \
         1000-cent charge must be refused with Err(KeyReusedWithDifferentRequest); yours \
         returned {mismatch:?} (the operation ran {} time(s))",
        op.runs(),
    );
    // Exactly 60 s after the first use the key is new again, whatever the refusal at 40 s
    // did; a duplicate 5 s into this second execution is refused with a 409.
    tokio::time::advance(20 * SECOND).await;
    let second_use = Instant::now();
    let (fresh, duplicate) = tokio::join!(send(&store, &op, &k, ADA_20, Ok(3)), async {
        sleep(5 * SECOND).await;
        send(&store, &op, &k, ADA_20, Ok(4)).await
    });
    assert!(
        fresh == Ok(Ok(3)) && op.runs() == 2,
        "the key was first used at 0 s with a TTL of 60 s, and a different request with it was \
         refused at 40 s. A refusal changes nothing in the store, so at exactly 60 s the key \
         has expired and the 2000-cent request executes as new, Ok(Ok(3)); yours returned \
         {fresh:?} (the operation ran {} time(s) in all). Either the refusal restarted the key's \
         TTL, or the key is still live at exactly its TTL (an entry is live while now − first \
         use < ttl)",
        op.runs(),
    );
    assert!(
        duplicate == Err(IdempotencyError::InProgress),
        "a duplicate 5 s into an execution must be refused with Err(InProgress); yours returned \
         {duplicate:?}",
    );
    // The key's new first use was at 60 s: at exactly 120 s it has expired again, whatever the
    // 409 at 65 s did.
    tokio::time::advance(ttl - second_use.elapsed()).await;
    let third = send(&store, &op, &k, ADA_10, Ok(5)).await;
    assert!(
        third == Ok(Ok(5)) && op.runs() == 3,
        "the key's new first use was at 60 s (TTL 60 s) and a duplicate was refused with \
         InProgress at 65 s; at exactly 120 s the key has expired and a request with it executes \
         as new, Ok(Ok(5)); yours returned {third:?} (the operation ran {} time(s) in all)",
        op.runs(),
    );
}

#[tokio::test(start_paused = true)]
async fn dropped_execution_keeps_the_key() {
    // The server stops in the middle of an execution: the future returned by `handle` is
    // dropped. The key must stay in progress (a retry might otherwise charge twice), until it
    // expires; then it is new again.
    let ttl = 60 * SECOND;
    let (store, op, k) = (
        Store::new(ttl),
        Operation::taking(10 * SECOND),
        key("k-dropped"),
    );
    let cut = tokio::time::timeout(10 * MS, send(&store, &op, &k, ADA_10, Ok(1))).await;
    assert!(
        cut.is_err() && op.runs() == 1,
        "the first request's execution (10 s) should still be running when it is dropped at \
         10 ms; yours finished with {cut:?} after {} run(s)",
        op.runs(),
    );
    let retry = send(&store, &op, &k, ADA_10, Ok(2)).await;
    assert!(
        retry == Err(IdempotencyError::InProgress) && op.runs() == 1,
        "the execution of the key's first request was dropped midway (the server stopped), so \
         nobody knows whether the charge happened: a retry must get Err(InProgress) and run \
         nothing, until the key expires (section 20.6). Yours returned {retry:?}, and the \
         operation has run {} time(s)",
        op.runs(),
    );
    tokio::time::advance(ttl).await;
    let later = send(&store, &op, &k, ADA_10, Ok(3)).await;
    assert!(
        later == Ok(Ok(3)) && op.runs() == 2,
        "a key stuck in progress expires like any other: {} after its first use, the retry must \
         run the operation and return Ok(Ok(3)); yours returned {later:?} (the operation ran \
         {} time(s) in all)",
        show(ttl + 10 * MS),
        op.runs(),
    );

    // Under the default TTL of 24 h, the key stays in progress for all of it: no timeout of
    // the store's own (a minute, an hour) hands the stuck key to a retry that might charge
    // twice.
    let (store, op, k) = (
        Store::new(DEFAULT_TTL),
        Operation::taking(48 * 3_600 * SECOND),
        key("k-dropped-long"),
    );
    let _ = tokio::time::timeout(10 * MS, send(&store, &op, &k, ADA_10, Ok(1))).await;
    let start = Instant::now() - 10 * MS;
    for at in [61 * SECOND, 3_601 * SECOND, DEFAULT_TTL - SECOND] {
        tokio::time::advance(at - start.elapsed()).await;
        let retry = send(&store, &op, &k, ADA_10, Ok(2)).await;
        assert!(
            retry == Err(IdempotencyError::InProgress) && op.runs() == 1,
            "the execution of the key's first request was dropped midway; {} after the key's \
             first use (TTL 24 h) a retry must still get Err(InProgress) and run nothing: the \
             key stays in progress until it expires. Yours returned {retry:?}, and the \
             operation has run {} time(s)",
            show(at),
            op.runs(),
        );
    }
}

#[test]
fn duplicates_from_many_threads() {
    // Eight threads, each with a runtime of its own, send the same request with one key at the
    // same moment (a barrier releases them together), 150 times with a fresh key each round.
    // Exactly one of the eight may execute per key. A store that looks the key up under the
    // lock and reserves it under a second one lets two threads through that gap. How likely it
    // is caught depends on the gap: with a few microseconds of work in it (a log line, a yield)
    // this check catches it in every run measured (20 of 20); with nothing in it, the gap is a
    // few nanoseconds and it slips through (0 of 20). The single-threaded checks cannot see it
    // at all.
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::{Arc, Barrier};

    const THREADS: usize = 8;
    const ROUNDS: u32 = 150;
    let store = Arc::new(Store::new(DEFAULT_TTL));
    let executions: Arc<Vec<AtomicU32>> =
        Arc::new((0..ROUNDS).map(|_| AtomicU32::new(0)).collect());
    let barrier = Arc::new(Barrier::new(THREADS));
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let (store, executions, barrier) = (
                Arc::clone(&store),
                Arc::clone(&executions),
                Arc::clone(&barrier),
            );
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .build()
                    .expect("a runtime for the thread");
                for round in 0..ROUNDS {
                    let k = key(&format!("k-thread-{round}"));
                    barrier.wait();
                    let counter = &executions[round as usize];
                    let _ = runtime.block_on(store.handle(&k, &ADA_10, || async {
                        counter.fetch_add(1, Ordering::SeqCst);
                        std::thread::yield_now();
                        Ok::<u32, String>(round)
                    }));
                }
            })
        })
        .collect();
    let mut panics = Vec::new();
    for worker in workers {
        if let Err(payload) = worker.join() {
            panics.push(super::support::panic_text(payload.as_ref()));
        }
    }
    assert!(
        panics.is_empty(),
        "handle panicked on a thread: {}",
        panics.join("; ")
    );
    let doubled: Vec<(u32, u32)> = executions
        .iter()
        .enumerate()
        .map(|(round, count)| (round as u32, count.load(Ordering::SeqCst)))
        .filter(|&(_, count)| count != 1)
        .collect();
    assert!(
        doubled.is_empty(),
        "{THREADS} threads sent the same request with one key at the same moment, {ROUNDS} \
         times with a fresh key each time; exactly one execution per key is allowed, but {} \
         key(s) executed another number of times, e.g. round {} executed {} time(s). The lookup \
         and the reservation must be one critical section: look the key up and insert the \
         in-progress entry under the same lock guard",
        doubled.len(),
        doubled[0].0,
        doubled[0].1,
    );
}

#[tokio::test(start_paused = true)]
async fn late_outcome_of_an_expired_key_is_dropped() {
    // TTL 10 s. Request A takes 15 s; at 12 s the key has expired, so request B (same key, same
    // request) is new and reserves it, taking 5 s. When A finishes at 15 s, the key belongs to
    // B: A's outcome must not be saved over B's reservation.
    let ttl = 10 * SECOND;
    let store = Store::new(ttl);
    let (first, second) = (
        Operation::taking(15 * SECOND),
        Operation::taking(5 * SECOND),
    );
    let k = key("k-late");
    let a = send(&store, &first, &k, ADA_10, Ok(1));
    let rest = async {
        sleep(12 * SECOND).await;
        let b = send(&store, &second, &k, ADA_10, Ok(2));
        let probes = async {
            sleep(4 * SECOND).await;
            let during = send(&store, &second, &k, ADA_10, Ok(3)).await;
            sleep(2 * SECOND).await;
            let after = send(&store, &second, &k, ADA_10, Ok(4)).await;
            (during, after)
        };
        tokio::join!(b, probes)
    };
    let (_, (_, (during, after))) = tokio::join!(a, rest);
    assert!(
        during == Err(IdempotencyError::InProgress) && after == Ok(Ok(2)),
        "with a TTL of 10 s: request A takes 15 s; at 12 s the key has expired and request B \
         reserves it again (B takes 5 s). At 16 s, after A finished, a duplicate must still be \
         refused as in progress (B is running; A's late outcome belongs to the key's earlier \
         life and must not be saved over B's reservation), and at 18 s a duplicate must get \
         B's saved Ok(Ok(2)). Yours answered {during:?} at 16 s and {after:?} at 18 s"
    );
}
