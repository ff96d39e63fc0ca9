//! Checks of the client: `charge_with_retries` (and `should_retry` through it), alone against a
//! recording stub, and end to end against the given server with your store behind a flaky network.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use exercise::stubs::{Fault, FlakyNetwork, PaymentBackend, PaymentServer};
use exercise::{
    ApiError, ChargeRequest, IdempotencyKey, KeyGenerator, PaymentApi, PaymentError, Receipt,
    RetryPolicy, charge_with_retries,
};
use tokio::time::Instant;

use super::support::{seeded, show, show_all};

const MS: Duration = Duration::from_millis(1);
const TIMEOUT: Duration = Duration::from_millis(200);

fn request() -> ChargeRequest {
    ChargeRequest::new("ada", 1_000)
}

fn receipt(charge_id: u32) -> Receipt {
    Receipt {
        charge_id,
        customer: "ada".to_owned(),
        amount_cents: 1_000,
    }
}

/// A result for a message: `Ok(charge 2)`, `Err(Timeout)`.
fn show_result(result: &Result<Receipt, ApiError>) -> String {
    match result {
        Ok(receipt) => format!("Ok(charge {})", receipt.charge_id),
        Err(error) => format!("Err({error:?})"),
    }
}

/// Lets every server task still running finish, so the backend's count is final.
async fn settle() {
    tokio::time::sleep(Duration::from_secs(10)).await;
}

/// Keys for a message: `[idem_1a2b…, idem_1a2b…]`.
fn show_keys(keys: &[IdempotencyKey]) -> String {
    let shown: Vec<String> = keys
        .iter()
        .take(8)
        .map(|key| {
            let text = key.as_str();
            match text.char_indices().nth(12) {
                Some((cut, _)) => format!("{}…", &text[..cut]),
                None => text.to_owned(),
            }
        })
        .collect();
    let more = if keys.len() > 8 {
        format!(", … ({} in all)", keys.len())
    } else {
        String::new()
    };
    format!("[{}{more}]", shown.join(", "))
}

/// A payment API that answers from a script (then with receipt 1) and records every call.
struct Recorder {
    script: RefCell<VecDeque<Result<Receipt, ApiError>>>,
    keys: RefCell<Vec<IdempotencyKey>>,
}

impl Recorder {
    fn new(script: impl IntoIterator<Item = Result<Receipt, ApiError>>) -> Self {
        Self {
            script: RefCell::new(script.into_iter().collect()),
            keys: RefCell::new(Vec::new()),
        }
    }

    fn always(error: ApiError) -> Self {
        Self::new(std::iter::repeat_n(Err(error), 1_000))
    }

    fn keys(&self) -> Vec<IdempotencyKey> {
        self.keys.borrow().clone()
    }
}

impl PaymentApi for Recorder {
    async fn charge(
        &self,
        key: &IdempotencyKey,
        _request: &ChargeRequest,
    ) -> Result<Receipt, ApiError> {
        self.keys.borrow_mut().push(key.clone());
        self.script
            .borrow_mut()
            .pop_front()
            .unwrap_or(Ok(receipt(1)))
    }
}

/// Wraps an API and notes when each call started and what it returned.
struct Timed<'a, A> {
    inner: &'a A,
    origin: Instant,
    calls: RefCell<Vec<(Duration, Result<Receipt, ApiError>)>>,
}

impl<'a, A: PaymentApi> Timed<'a, A> {
    fn new(inner: &'a A) -> Self {
        Self {
            inner,
            origin: Instant::now(),
            calls: RefCell::new(Vec::new()),
        }
    }

    fn starts(&self) -> Vec<Duration> {
        self.calls.borrow().iter().map(|(at, _)| *at).collect()
    }

    fn answers(&self) -> String {
        let answers: Vec<String> = self
            .calls
            .borrow()
            .iter()
            .take(8)
            .map(|(_, answer)| show_result(answer))
            .collect();
        format!("[{}]", answers.join(", "))
    }
}

impl<A: PaymentApi> PaymentApi for Timed<'_, A> {
    async fn charge(
        &self,
        key: &IdempotencyKey,
        request: &ChargeRequest,
    ) -> Result<Receipt, ApiError> {
        let at = self.origin.elapsed();
        let answer = self.inner.charge(key, request).await;
        self.calls.borrow_mut().push((at, answer.clone()));
        answer
    }
}

/// A payment API whose every call takes `latency` on tokio's clock before `inner` answers, as
/// an attempt that ends in a timeout does. It records when each call started and ended.
struct Slow<'a, A> {
    inner: &'a A,
    latency: Duration,
    origin: Instant,
    calls: RefCell<Vec<(Duration, Duration)>>,
}

impl<'a, A: PaymentApi> Slow<'a, A> {
    fn new(inner: &'a A, latency: Duration) -> Self {
        Self {
            inner,
            latency,
            origin: Instant::now(),
            calls: RefCell::new(Vec::new()),
        }
    }

    /// The pause between the end of each call and the start of the next.
    fn pauses(&self) -> Vec<Duration> {
        let calls = self.calls.borrow();
        calls.windows(2).map(|pair| pair[1].0 - pair[0].1).collect()
    }
}

impl<A: PaymentApi> PaymentApi for Slow<'_, A> {
    async fn charge(
        &self,
        key: &IdempotencyKey,
        request: &ChargeRequest,
    ) -> Result<Receipt, ApiError> {
        let started = self.origin.elapsed();
        tokio::time::sleep(self.latency).await;
        let answer = self.inner.charge(key, request).await;
        self.calls
            .borrow_mut()
            .push((started, self.origin.elapsed()));
        answer
    }
}

async fn charge(
    api: &impl PaymentApi,
    policy: &RetryPolicy,
    seed: u64,
) -> Result<Receipt, ApiError> {
    let (mut keys, mut rng) = (KeyGenerator::seeded(seed), seeded(seed));
    charge_with_retries(api, &request(), policy, &mut keys, &mut rng).await
}

fn policy(attempts: u32) -> RetryPolicy {
    RetryPolicy {
        attempts,
        base: 100 * MS,
        cap: 2_000 * MS,
    }
}

#[tokio::test(start_paused = true)]
async fn timeout_never_charges_twice() {
    let scripts: [&[Fault]; 4] = [
        &[Fault::LoseResponse],
        &[Fault::LoseResponse, Fault::LoseResponse],
        &[Fault::LoseRequest, Fault::LoseResponse],
        &[Fault::LoseResponse, Fault::Unavailable, Fault::LoseResponse],
    ];
    for faults in scripts {
        for seed in 0..3 {
            let server = Arc::new(PaymentServer::new(PaymentBackend::new(20 * MS)));
            let network = FlakyNetwork::new(Arc::clone(&server), TIMEOUT, faults.iter().copied());
            let result = charge(&network, &policy(5), seed).await;
            settle().await;
            let charges = server.backend().charges().len();
            let keys = network.keys();
            let one_key = keys.windows(2).all(|pair| pair[0] == pair[1]);
            let advice = if charges <= 1 {
                "The card was not charged twice; but a timeout and a 503 are worth retrying \
                 with the same key, within the 5 attempts, until the saved receipt of charge 1 \
                 comes back (section 20.7)"
            } else if one_key {
                "Your client did send one key; so your store must answer the retry with the \
                 saved receipt of charge 1 instead of executing again (section 20.4; pitfall \
                 \"Look up, execute, then insert\" if the retry came while the first ran)"
            } else {
                "Every attempt of one charge must carry the same key, so the server can answer \
                 the retry with the saved receipt of charge 1 instead of charging again \
                 (pitfall \"A new key for every attempt\")"
            };
            assert!(
                charges == 1 && result == Ok(receipt(1)),
                "the network lost the answer of an attempt after the server had charged the card \
                 (faults {faults:?}, then delivery; seed {seed}). Your client made {} call(s) \
                 with keys {} and returned {}; the backend charged the card {charges} time(s). \
                 {advice}",
                keys.len(),
                show_keys(&keys),
                show_result(&result),
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn same_key_every_attempt() {
    let always_timing_out = Recorder::always(ApiError::Timeout);
    let result = charge(&always_timing_out, &policy(4), 1).await;
    let keys = always_timing_out.keys();
    assert!(
        keys.len() == 4 && result == Err(ApiError::Timeout),
        "with attempts = 4 and a server that always times out, the client must make exactly 4 \
         calls and return Err(Timeout); yours made {} call(s) and returned {}",
        keys.len(),
        show_result(&result),
    );
    assert!(
        keys.windows(2).all(|pair| pair[0] == pair[1]),
        "every attempt of one charge must carry the same idempotency key, minted once before the \
         first attempt; your 4 attempts carried {}",
        show_keys(&keys),
    );

    let recovering = Recorder::new([
        Err(ApiError::Timeout),
        Err(ApiError::Unavailable),
        Err(ApiError::InProgress),
        Ok(receipt(1)),
    ]);
    let result = charge(&recovering, &policy(5), 2).await;
    let keys = recovering.keys();
    assert!(
        result == Ok(receipt(1)) && keys.len() == 4 && keys.windows(2).all(|p| p[0] == p[1]),
        "a charge that meets a timeout, a 503 and a 409 before its receipt must make 4 calls, all \
         with one key, and return the receipt; yours made {} call(s) with keys {} and returned \
         {}",
        keys.len(),
        show_keys(&keys),
        show_result(&result),
    );
}

#[tokio::test(start_paused = true)]
async fn fresh_key_per_operation() {
    let server = Arc::new(PaymentServer::new(PaymentBackend::new(20 * MS)));
    let network = FlakyNetwork::new(Arc::clone(&server), TIMEOUT, []);
    let (mut keys, mut rng) = (KeyGenerator::seeded(3), seeded(3));
    let policy = policy(3);
    // Ada buys the same thing twice: two logical charges with equal requests.
    let first = charge_with_retries(&network, &request(), &policy, &mut keys, &mut rng).await;
    let second = charge_with_retries(&network, &request(), &policy, &mut keys, &mut rng).await;
    settle().await;
    let sent = network.keys();
    assert!(
        sent.len() == 2 && sent[0] != sent[1],
        "two purchases are two logical charges: each needs a key of its own (`keys.next_key()` \
         once per call of charge_with_retries); your two charges sent keys {}",
        show_keys(&sent),
    );
    let charges = server.backend().charges();
    assert!(
        first == Ok(receipt(1)) && second == Ok(receipt(2)) && charges.len() == 2,
        "two purchases of 1000 cents must charge the card twice, receipts 1 and 2; yours \
         returned {} and {}, and the backend charged {} time(s)",
        show_result(&first),
        show_result(&second),
        charges.len(),
    );
}

#[tokio::test(start_paused = true)]
async fn in_progress_backs_off() {
    // A correct client fails this only if all 8 calls reach the server before attempt 1's
    // charge ends at 250 ms, i.e. if its first 7 waits (drawn under 100, 200, 400, 800, 1600,
    // 2000, 2000 ms) sum to at most 50 ms: probability at most 50^7 / (7! · 100·200·400·800·
    // 1600·2000·2000 ms^7), about 4 in 10^12 per seed, 8 in 10^11 over these 20 seeds.
    for seed in 0..20 {
        // Each charge takes 250 ms, but the client stops waiting after 200 ms.
        let server = Arc::new(PaymentServer::new(PaymentBackend::new(250 * MS)));
        let network = FlakyNetwork::new(Arc::clone(&server), TIMEOUT, []);
        let timed = Timed::new(&network);
        let result = charge(&timed, &policy(8), seed).await;
        settle().await;
        let charges = server.backend().charges();
        assert!(
            result == Ok(receipt(1)) && charges.len() == 1,
            "each charge takes 250 ms but the client times out after 200 ms, so the server is \
             still executing attempt 1 when the retry comes and answers it with 409 InProgress. \
             The client must back off (sleep policy.delay(retry, rng)) and retry with the same \
             key until the saved receipt of charge 1 comes back (attempts = 8, base = 100 ms; \
             seed {seed}). Yours returned {} after calls at {} answered {}; the backend \
             charged {} time(s)",
            show_result(&result),
            show_all(&timed.starts(), 8),
            timed.answers(),
            charges.len(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn final_answers_not_retried() {
    let saved = "a payment error is saved under the key: every retry with it gets the same \
                 answer back";
    let finals = [
        (ApiError::Payment(PaymentError::Declined), saved),
        (ApiError::Payment(PaymentError::Internal), saved),
        (
            ApiError::KeyReused,
            "a 422 means the key was sent with a different request: a bug to fix, not a failure \
             to retry",
        ),
        (
            ApiError::Invalid("the amount must be positive".to_owned()),
            "a 400 needs a corrected request; the same one fails the same way",
        ),
    ];
    for (error, why) in finals {
        let api = Recorder::new([Err(error.clone())]);
        let started = Instant::now();
        let result = charge(&api, &policy(5), 4).await;
        let calls = api.keys().len();
        assert!(
            calls == 1 && result == Err(error.clone()) && started.elapsed().is_zero(),
            "Err({error:?}) is the server's answer, not a failure to get one: {why}. Return it at \
             once; after a first Err({error:?}), yours made {calls} call(s) in {} and returned {}",
            show(started.elapsed()),
            show_result(&result),
        );
    }
    for error in [
        ApiError::Timeout,
        ApiError::Unavailable,
        ApiError::InProgress,
    ] {
        let api = Recorder::new([Err(error.clone())]);
        let result = charge(&api, &policy(5), 5).await;
        let calls = api.keys().len();
        assert!(
            calls == 2 && result == Ok(receipt(1)),
            "Err({error:?}) says the charge may not have run, or is still running: retry it with \
             the same key. After one Err({error:?}) and then a receipt, yours made {calls} \
             call(s) and returned {}",
            show_result(&result),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn sleeps_follow_the_policy() {
    // Four failures in a row, each a different retryable answer, with attempts = 4: the client
    // sleeps policy.delay(0), delay(1), delay(2) (drawn in that order from its generator), never
    // after the last call, and returns the last error, not the first.
    for seed in [6u64, 7, 8] {
        let script = Recorder::new([
            Err(ApiError::Timeout),
            Err(ApiError::InProgress),
            Err(ApiError::Timeout),
            Err(ApiError::Unavailable),
        ]);
        let timed = Timed::new(&script);
        let policy = policy(4);
        let started = Instant::now();
        let result = charge(&timed, &policy, seed).await;
        let total = started.elapsed();
        let mut rng = seeded(seed);
        let expected: Vec<Duration> = (0..3).map(|retry| policy.delay(retry, &mut rng)).collect();
        let starts = timed.starts();
        let gaps: Vec<Duration> = starts.windows(2).map(|pair| pair[1] - pair[0]).collect();
        let shifted: Vec<Duration> = {
            let mut rng = seeded(seed);
            (1..4).map(|retry| policy.delay(retry, &mut rng)).collect()
        };
        // tokio's timer wakes a sleep at the next whole millisecond: a gap may exceed its
        // delay by less than 1 ms, never fall short of it.
        let matches = |gaps: &[Duration], delays: &[Duration]| {
            gaps.len() == delays.len()
                && gaps
                    .iter()
                    .zip(delays)
                    .all(|(gap, delay)| gap >= delay && *gap < *delay + MS)
        };
        assert!(
            matches(&gaps, &expected),
            "with attempts = 4, base 100 ms and cap 2 s (seed {seed}), the sleeps between the 4 \
             calls must be policy.delay(0, rng), delay(1, rng), delay(2, rng), drawn in that \
             order from the generator you were given: {} (each rounded up to tokio's next \
             millisecond); yours were {}{}",
            show_all(&expected, 4),
            show_all(&gaps, 4),
            if matches(&gaps, &shifted) {
                ". Yours are delay(1), delay(2), delay(3): the retry number starts at 0 for the \
                 sleep after the first failure"
            } else {
                ""
            },
        );
        let last_call = starts.last().copied().unwrap_or_default();
        assert!(
            total == last_call,
            "the 4th call was the last allowed, so the client returns as soon as it fails, with no \
             sleep after it: the last call started at {}, and yours returned at {}",
            show(last_call),
            show(total),
        );
        assert!(
            result == Err(ApiError::Unavailable),
            "after 4 failed calls (Timeout, InProgress, Timeout, Unavailable), the client returns \
             the last error, Err(Unavailable); yours returned {}",
            show_result(&result),
        );
    }
    // attempts = 1 is the edge of "at most policy.attempts calls": one call, no sleep, no retry,
    // even though the error is worth retrying. attempts = 0 is read as 1, as the stub says:
    // without a call there is no error to return.
    for attempts in [1, 0] {
        let script = Recorder::always(ApiError::Timeout);
        let started = Instant::now();
        let result = charge(&script, &policy(attempts), 9).await;
        let calls = script.keys().len();
        assert!(
            calls == 1 && result == Err(ApiError::Timeout) && started.elapsed().is_zero(),
            "with attempts = {attempts} the client makes exactly one call (0 is read as 1): a \
             timeout is worth retrying, but no attempt is left, so it returns Err(Timeout) at \
             once; yours made {calls} call(s) in {} and returned {}",
            show(started.elapsed()),
            show_result(&result),
        );
    }
    // A long policy, free under the paused clock: 300 attempts, a base of a minute and a cap of
    // 20 minutes. The loop keeps no cap of its own: 300 calls, not 10 or 100, and every sleep
    // as long as policy.delay says, not cut to 10 s or a minute.
    let long = RetryPolicy {
        attempts: 300,
        base: Duration::from_secs(60),
        cap: Duration::from_secs(1_200),
    };
    let script = Recorder::always(ApiError::Timeout);
    let timed = Timed::new(&script);
    let result = charge(&timed, &long, 10).await;
    let mut rng = seeded(10);
    let expected: Vec<Duration> = (0..299).map(|retry| long.delay(retry, &mut rng)).collect();
    let starts = timed.starts();
    let gaps: Vec<Duration> = starts.windows(2).map(|pair| pair[1] - pair[0]).collect();
    let wrong = gaps
        .iter()
        .zip(&expected)
        .position(|(gap, delay)| gap < delay || *gap >= *delay + MS);
    assert!(
        starts.len() == 300 && wrong.is_none() && result == Err(ApiError::Timeout),
        "with attempts = 300, base 1 min and cap 20 min, a charge that always times out makes \
         300 calls, sleeping policy.delay(0, rng) to delay(298, rng) in full between them, and \
         returns Err(Timeout); yours made {} call(s){} and returned {}. The policy is the \
         loop's only limit",
        starts.len(),
        match wrong {
            Some(retry) => format!(
                ", and slept {} where delay({retry}, rng) is {}",
                show(gaps[retry]),
                show(expected[retry])
            ),
            None => String::new(),
        },
        show_result(&result),
    );
    // attempts is a u32: 2^16 + 3 attempts are not 3 (a count compared as u16 would be).
    let script = Recorder::new(std::iter::repeat_n(Err(ApiError::Timeout), 5));
    let result = charge(&script, &policy(65_539), 11).await;
    let calls = script.keys().len();
    assert!(
        calls == 6 && result == Ok(receipt(1)),
        "with attempts = 65,539, a charge that times out 5 times and then succeeds makes 6 \
         calls and returns the receipt; yours made {calls} call(s) and returned {}",
        show_result(&result),
    );
}

#[tokio::test(start_paused = true)]
async fn sleeps_after_each_answer() {
    // §20.7: the client sleeps policy.delay(retry, rng) *between* two calls, from the moment an
    // attempt's answer arrives. Here every attempt costs 500 ms before it fails (a timeout), more
    // than any of the three ceilings (100, 200, 400 ms). A sleep counted from the start of the
    // attempt (sleep_until(start + delay)) has then already passed, and the retry goes out the
    // moment the timeout fires: the slow attempts eat the whole backoff. The pauses are measured
    // on the paused clock, so a correct client matches them exactly (up to tokio's rounding to
    // the next millisecond).
    for seed in [16u64, 17, 18] {
        let script = Recorder::new([
            Err(ApiError::Timeout),
            Err(ApiError::Timeout),
            Err(ApiError::Timeout),
            Ok(receipt(1)),
        ]);
        let slow = Slow::new(&script, 500 * MS);
        let policy = policy(4);
        let result = charge(&slow, &policy, seed).await;
        let mut rng = seeded(seed);
        let expected: Vec<Duration> = (0..3).map(|retry| policy.delay(retry, &mut rng)).collect();
        let pauses = slow.pauses();
        let matches = pauses.len() == expected.len()
            && pauses
                .iter()
                .zip(&expected)
                .all(|(pause, delay)| pause >= delay && *pause < *delay + MS);
        // The advice fits only the shape it explains: three pauses, all cut to nothing.
        let eaten = pauses.len() == expected.len() && pauses.iter().all(|pause| *pause < MS);
        assert!(
            matches && result == Ok(receipt(1)),
            "every attempt took 500 ms and ended in a timeout, three times, then the 4th call \
             succeeded (attempts = 4, base 100 ms, cap 2 s, seed {seed}). Between the end of one \
             call and the start of the next the client should pause policy.delay(0), delay(1), \
             delay(2): {}; yours paused {} and returned {}{}",
            show_all(&expected, 4),
            show_all(&pauses, 4),
            show_result(&result),
            if eaten {
                ". The backoff starts when the answer arrives: a sleep counted from the start \
                 of the attempt is already over after a slow attempt"
            } else {
                ""
            },
        );
    }
}
