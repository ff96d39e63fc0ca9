//! Checks of `relay_pass` at the edges the chapter's scenario never reaches: a row's last
//! attempt, a `Retry-After` above `max_hint`, a pass whose rows end in every way at once, and
//! the backoff of rows that have failed many times.

use std::time::Duration;

use exercise::services::PublishAnswer;
use exercise::{Broker, Clock, Db, RelayConfig, RelayStats};

use super::doubles::{
    BrokerTrouble, MS, Row, SEC, UNAVAILABLE_LATENCY, broker, broker_chaos, outbox,
    rejecting_broker, row, set_attempts,
};
use super::support::{seeded, show};

/// A relay configuration with a short backoff, so a row falls due again quickly.
fn config(max_attempts: u32) -> RelayConfig {
    RelayConfig {
        base: 10 * MS,
        cap: 40 * MS,
        max_attempts,
        ..RelayConfig::default()
    }
}

async fn pass(db: &Db, broker: &Broker, clock: &Clock, cfg: &RelayConfig, seed: u64) -> RelayStats {
    let mut rng = seeded(seed);
    exercise::relay_pass(db, broker, clock, cfg, &mut rng)
        .await
        .unwrap_or_else(|error| panic!("relay_pass returned an error: {error}"))
}

#[tokio::test(start_paused = true)]
async fn dead_letters_at_max_attempts() {
    // Each regime: a broker that fails every publish (503, or a lost request the publish timeout
    // cuts), and a row that must be given up by the failure that brings its attempts to
    // max_attempts: not one publish sooner, not one later.
    let regimes = [
        (1, BrokerTrouble::Fails, "answers every publish with 503"),
        (2, BrokerTrouble::Fails, "answers every publish with 503"),
        (3, BrokerTrouble::Loses, "loses every publish (no answer)"),
        (5, BrokerTrouble::Fails, "answers every publish with 503"),
        // Beyond the caps a relay might hide (10 attempts); above the default of 20 too.
        (30, BrokerTrouble::Fails, "answers every publish with 503"),
    ];
    for (max_attempts, trouble, what) in regimes {
        let clock = Clock::start();
        let (db, ids) = outbox(&[clock.now()]);
        let id = ids[0];
        let broker = broker(broker_chaos(trouble), clock);
        let cfg = config(max_attempts);
        let mut history: Vec<Row> = Vec::new();
        for seed in 0..u64::from(max_attempts) + 3 {
            pass(&db, &broker, &clock, &cfg, seed).await;
            let now_row = row(&db, id);
            history.push(now_row.clone());
            if now_row.status != "pending" {
                break;
            }
            // The next pass comes when the row falls due (or 10 ms later, if it already is).
            let due = now_row.next_retry_at.unwrap_or(0).max(clock.now() + 10);
            tokio::time::sleep_until(clock.instant(due)).await;
        }
        let publishes = broker.publishes().len();
        let last = history.last().cloned().expect("at least one pass ran");
        let passes: Vec<String> = history.iter().map(Row::describe).collect();
        assert!(
            last.status == "failed"
                && last.attempts == max_attempts
                && publishes == max_attempts as usize,
            "with cfg.max_attempts = {max_attempts} and a broker that {what}, the failure that \
             brings a row's attempts to {max_attempts} must give it up (`db.mark_failed`: status \
             `failed`, attempts {max_attempts}), after exactly {max_attempts} publish(es), and \
             every failure before it must schedule the row again (`db.record_failure`). Yours \
             published it {publishes} time(s); after each pass the row was: [{}]. Compare \
             `row.attempts + 1`, the attempts this failure brings the row to, with \
             cfg.max_attempts, and call `mark_failed` when it reaches it",
            passes.join("; "),
        );
    }
    // The publish timeout is the config's, however long: a lost publish under a 2-hour timeout
    // is cut at 2 hours, not at a second or a minute of the relay's own.
    let clock = Clock::start();
    let (db, ids) = outbox(&[clock.now()]);
    let broker = broker(broker_chaos(BrokerTrouble::Loses), clock);
    let cfg = RelayConfig {
        publish_timeout: 7_200 * SEC,
        ..config(1)
    };
    let started = tokio::time::Instant::now();
    pass(&db, &broker, &clock, &cfg, 3).await;
    let took = started.elapsed();
    let after = row(&db, ids[0]);
    assert!(
        after.status == "failed" && took >= 7_200 * SEC && took <= 7_200 * SEC + MS,
        "with cfg.publish_timeout = 2 h, cfg.max_attempts = 1 and a broker that loses every \
         publish, the pass must wait for the publish exactly 2 h, then give the row up; yours \
         returned after {} and left the row with {}. Cut the publish at cfg.publish_timeout, \
         however long",
        show(took),
        after.describe(),
    );
}

#[tokio::test(start_paused = true)]
async fn retry_after_capped_at_max_hint() {
    // The broker's hint is followed up to max_hint (5 s here): below it, at it, above it; and a
    // hint of 2 h under a max_hint of a day, followed as sent (no cap but max_hint).
    let cases = [
        (2 * SEC, 5 * SEC),
        (5 * SEC, 5 * SEC),
        (9 * SEC, 5 * SEC),
        (7_200 * SEC, 86_400 * SEC),
        // A max_hint of 0 caps every hint at 0: the row is due again at once, not uncapped.
        (2 * SEC, Duration::ZERO),
    ];
    for (hint, max_hint) in cases {
        let expected = hint.min(max_hint);
        let clock = Clock::start();
        // Three due rows, published one after the other: the third goes out 10 ms into the
        // pass, so its wait, counted from its own failure, ends later than one counted from
        // the start of the pass.
        let (db, ids) = outbox(&[clock.now(), clock.now(), clock.now()]);
        let broker = broker(broker_chaos(BrokerTrouble::Storm(hint)), clock);
        let cfg = RelayConfig {
            max_hint,
            ..RelayConfig::default()
        };
        let pass_start = clock.now();
        pass(&db, &broker, &clock, &cfg, 7).await;
        for id in ids {
            let publish = broker
                .publishes()
                .into_iter()
                .find(|publish| publish.event_id == id)
                .unwrap_or_else(|| {
                    panic!("relay_pass never published due row {id}; it must publish every due row")
                });
            assert!(
                matches!(publish.answer, PublishAnswer::Unavailable { .. }),
                "the broker is in a storm; this check expects it to answer 503"
            );
            let after = row(&db, id);
            // The wait counts from the failed publish: it started at `publish.at` and was
            // answered 5 ms later; either moment is a fair `now`, the start of the pass is not.
            let earliest = publish.at + exercise::millis(expected);
            let latest = earliest + exercise::millis(UNAVAILABLE_LATENCY);
            let within = after
                .next_retry_at
                .is_some_and(|next| (earliest..=latest).contains(&next));
            let from_pass_start = after.next_retry_at
                == Some(pass_start + exercise::millis(expected))
                && publish.at > pass_start;
            assert!(
                after.status == "pending" && within,
                "the broker answered row {id}'s publish (sent {} ms into the pass) with 503 and \
                 Retry-After {}, and cfg.max_hint is {}: the row must stay pending with \
                 next_retry_at = now + min(hint, max_hint) = now + {}, between {earliest} ms and \
                 {latest} ms; yours left it with {}. {}",
                publish.at - pass_start,
                show(hint),
                show(max_hint),
                show(expected),
                after.describe(),
                if from_pass_start {
                    "Yours counts from the start of the pass: `now` is `clock.now()` read when \
                     this row's answer came, after its publish (section 26.5)"
                } else {
                    "Follow the hint, capped: `hint.min(cfg.max_hint)`, from `clock.now()` read \
                     when the answer came"
                },
            );
        }
    }
}

/// What one row of the mixed pass should end as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Sent,
    Scheduled,
    GivenUp,
}

/// A pass over twelve due rows, each of which the broker acknowledges or fails (by the given
/// chaos's hash, which does not depend on time or on the order of publishes), and the first
/// failing one on its last attempt. Returns the database, the broker, the rows with the fate
/// each must meet, and the pass's stats.
async fn mixed_pass() -> (Db, Broker, Vec<(i64, Fate)>, RelayStats) {
    const ROWS: usize = 12;
    let max_attempts = 4;
    let clock = Clock::start();
    // Created before the pass, oldest first: all due, taken in this order.
    let created: Vec<i64> = (0..ROWS as i64).map(|index| index - ROWS as i64).collect();
    let (db, ids) = outbox(&created);
    // The first seed of the given chaos whose first publishes mix as the check needs: an
    // acknowledged row before the row on its last attempt, and both kinds after it.
    let (seed, acked) = (0..1_000u64)
        .find_map(|seed| {
            let chaos = broker_chaos(BrokerTrouble::Mixed(seed));
            let acked: Vec<bool> = ids
                .iter()
                .map(|&id| {
                    !matches!(
                        chaos.fate(0, id, 1),
                        exercise::chaos::PublishFate::Unavailable { .. }
                    )
                })
                .collect();
            let first_failure = acked.iter().position(|ok| !ok)?;
            let rest = &acked[first_failure + 1..];
            let mixed = first_failure > 0 && rest.iter().any(|ok| *ok) && rest.iter().any(|ok| !ok);
            mixed.then_some((seed, acked))
        })
        .expect("the given chaos mixes acknowledgements and failures for some seed");
    let broker = broker(broker_chaos(BrokerTrouble::Mixed(seed)), clock);
    let first_failure = acked.iter().position(|ok| !ok).unwrap_or_default();
    set_attempts(&db, ids[first_failure], max_attempts - 1);
    let fates = ids
        .iter()
        .zip(&acked)
        .enumerate()
        .map(|(index, (id, ok))| {
            let fate = match (ok, index == first_failure) {
                (true, _) => Fate::Sent,
                (false, true) => Fate::GivenUp,
                (false, false) => Fate::Scheduled,
            };
            (*id, fate)
        })
        .collect();
    let cfg = RelayConfig {
        batch: 20,
        max_attempts,
        ..RelayConfig::default()
    };
    let stats = pass(&db, &broker, &clock, &cfg, 11).await;
    (db, broker, fates, stats)
}

#[tokio::test(start_paused = true)]
async fn every_fetched_row_handled() {
    let (db, broker, fates, _) = mixed_pass().await;
    let publishes = broker.publishes();
    let wrong: Vec<String> = fates
        .iter()
        .filter_map(|(id, fate)| {
            let published = publishes.iter().filter(|p| p.event_id == *id).count();
            let after = row(&db, *id);
            let (status, what) = match fate {
                Fate::Sent => ("sent", "acknowledged"),
                Fate::Scheduled => ("pending", "failed"),
                Fate::GivenUp => ("failed", "failed on its last attempt"),
            };
            (published != 1 || after.status != status).then(|| {
                format!(
                    "row {id} ({what}) was published {published} time(s) and ended with {}, \
                     not `{status}`",
                    after.describe()
                )
            })
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "one pass over {} due rows (batch 20) must publish each of them once and write each \
         one's outcome: `mark_sent` for an acknowledged row, `record_failure` for a failed one, \
         `mark_failed` for the one whose failure used its last attempt; and go on to the next \
         row after each, whatever the last one did. Yours: {}",
        fates.len(),
        wrong.join("; "),
    );

    // A pass takes every due row up to cfg.batch, however large: 120 due rows and a batch of
    // 150, past the 100 a relay might cap its batch at. The broker fails every publish, so each
    // row must be published once and scheduled again.
    let clock = Clock::start();
    let created: Vec<i64> = (0..120).map(|index| index - 120).collect();
    let (db, ids) = outbox(&created);
    let broker = super::doubles::broker(broker_chaos(BrokerTrouble::Fails), clock);
    let cfg = RelayConfig {
        batch: 150,
        ..RelayConfig::default()
    };
    let stats = pass(&db, &broker, &clock, &cfg, 13).await;
    let publishes = broker.publishes();
    let untouched = ids
        .iter()
        .filter(|id| {
            row(&db, **id).status != "pending" || !publishes.iter().any(|p| p.event_id == **id)
        })
        .count();
    assert!(
        stats.fetched == 120 && publishes.len() == 120 && untouched == 0,
        "120 rows are due and cfg.batch is 150: one pass must take all 120 (at most cfg.batch, \
         and no cap of its own), publish each once and schedule each again after the broker's \
         503. Yours fetched {}, made {} publish(es), and left {untouched} row(s) unpublished or \
         not pending",
        stats.fetched,
        publishes.len(),
    );
}

#[tokio::test(start_paused = true)]
async fn stats_match_the_pass() {
    let (_, _, fates, stats) = mixed_pass().await;
    let count = |wanted: Fate| fates.iter().filter(|(_, fate)| *fate == wanted).count();
    let expected = RelayStats {
        fetched: fates.len(),
        published: count(Fate::Sent),
        failed: count(Fate::Scheduled),
        given_up: count(Fate::GivenUp),
    };
    assert!(
        stats == expected,
        "in a pass over {} due rows, the broker acknowledged {}, failed {} that were scheduled \
         again, and failed one on its last attempt, which was given up: RelayStats must say \
         {expected:?}, one count per row by what became of it (`published` marked sent, \
         `failed` scheduled again, `given_up` marked failed, never two of them for one row). \
         Yours returned {stats:?}",
        expected.fetched,
        expected.published,
        expected.failed,
    );
}

#[tokio::test(start_paused = true)]
async fn poison_message_given_up_at_once() {
    // §26.5 and chapter 17: a broker that refuses an event for good (422, a permanent error) will
    // refuse it at every attempt, so the row becomes a dead letter at its first refusal, however
    // many attempts are left; the rows beside it go on as usual.
    let clock = Clock::start();
    let (db, ids) = outbox(&[clock.now(), clock.now(), clock.now()]);
    let poison = ids[1];
    let broker = rejecting_broker(vec![poison], clock);
    let cfg = config(20);
    let stats = pass(&db, &broker, &clock, &cfg, 5).await;
    // A second pass once anything the first scheduled is due: the dead letter stays untouched.
    tokio::time::sleep(Duration::from_secs(10)).await;
    pass(&db, &broker, &clock, &cfg, 6).await;
    let after = row(&db, poison);
    let refusals = broker
        .publishes()
        .iter()
        .filter(|publish| publish.event_id == poison)
        .count();
    let others: Vec<String> = [ids[0], ids[2]]
        .iter()
        .map(|id| row(&db, *id))
        .filter(|other| other.status != "sent")
        .map(|other| other.describe())
        .collect();
    assert!(
        after.status == "failed" && after.attempts == 1 && refusals == 1 && others.is_empty(),
        "the broker refuses row {poison}'s event for good (422, ErrorKind::Permanent) and \
         acknowledges the other two: with cfg.max_attempts = 20, the first refusal must give the \
         row up at once (`db.mark_failed`: status `failed`, attempts 1), and no later pass may \
         publish it again, while the other rows are sent. Yours published it {refusals} time(s) \
         over two passes and left it with {}; rows not sent beside it: {others:?}. A permanent \
         error is chapter 17's poison message: waiting cannot fix it",
        after.describe(),
    );
    assert!(
        stats.given_up == 1 && stats.published == 2 && stats.failed == 0,
        "in that first pass one row was given up and two were sent: RelayStats must say \
         published 2, failed 0, given_up 1; yours returned {stats:?}",
    );
}

#[tokio::test(start_paused = true)]
async fn backoff_is_full_jitter() {
    // Rows that failed 0, 1, 3 and 4 times before: with base 250 ms and cap 3 s, the wait after
    // this failure is drawn from [0, min(cap, base · 2^attempts)] = [0, 250 ms], [0, 500 ms],
    // [0, 2 s] and, capped, [0, 3 s] (base · 2^4 is 4 s).
    let cfg = RelayConfig {
        base: 250 * MS,
        cap: 3 * SEC,
        ..RelayConfig::default()
    };
    let attempts = [0u32, 1, 3, 4];
    let ceilings = [250 * MS, 500 * MS, 2 * SEC, 3 * SEC];
    const SEEDS: u64 = 64;
    let mut shortest = [Duration::MAX; 4];
    let mut longest = [Duration::ZERO; 4];
    // One outbox for every seed: each pass starts from the same four due rows.
    let (db, ids) = outbox(&[-4, -3, -2, -1]);
    for seed in 0..SEEDS {
        let clock = Clock::start();
        for (id, failed_before) in ids.iter().zip(attempts) {
            set_attempts(&db, *id, failed_before);
        }
        let broker = broker(broker_chaos(BrokerTrouble::Fails), clock);
        pass(&db, &broker, &clock, &cfg, seed).await;
        let publishes = broker.publishes();
        for (index, id) in ids.iter().enumerate() {
            let after = row(&db, *id);
            let published_at = publishes.iter().find(|p| p.event_id == *id).map(|p| p.at);
            let (Some(at), Some(next)) = (published_at, after.next_retry_at) else {
                panic!(
                    "row {id} had failed {} time(s) and was due; after a pass in which the \
                     broker answered every publish with 503 (no Retry-After) it must have been \
                     published once and left pending with a next_retry_at. Yours: published \
                     {} time(s), ended with {} (seed {seed})",
                    attempts[index],
                    publishes.iter().filter(|p| p.event_id == *id).count(),
                    after.describe(),
                );
            };
            // From the start of the publish: its 503 came 5 ms later, and either is a fair
            // `now`.
            let wait = Duration::from_millis((next - at).max(0).unsigned_abs());
            shortest[index] = shortest[index].min(wait);
            longest[index] = longest[index].max(wait);
            assert!(
                after.status == "pending"
                    && after.attempts == attempts[index] + 1
                    && wait <= ceilings[index] + UNAVAILABLE_LATENCY,
                "row {id} had failed {} time(s) before this 503 (no Retry-After): it must stay \
                 pending with attempts {} and next_retry_at = now + a full-jitter draw from \
                 [0, min(cap, base · 2^{})] = [0, {}] (base 250 ms, cap 3 s). Yours left it with \
                 {}, {} after the publish began (seed {seed}). Draw the wait with \
                 full_jitter(row.attempts, cfg.base, cfg.cap, rng): the attempts before this \
                 failure are the exponent",
                attempts[index],
                attempts[index] + 1,
                attempts[index],
                show(ceilings[index]),
                after.describe(),
                show(wait),
            );
        }
    }
    // A row that failed 20 times, under base 1 ms and a cap of a day: its ceiling is 2^20 ms
    // (17.5 minutes), not one clamped to a smaller exponent. 64 draws all below half of it:
    // probability 2^-64.
    let many = RelayConfig {
        base: MS,
        cap: 86_400 * SEC,
        max_attempts: 30,
        ..RelayConfig::default()
    };
    let ceiling = MS * (1 << 20);
    let (old_db, old_ids) = outbox(&[-1]);
    let mut longest_old = Duration::ZERO;
    for seed in 0..SEEDS {
        let clock = Clock::start();
        set_attempts(&old_db, old_ids[0], 20);
        let broker = broker(broker_chaos(BrokerTrouble::Fails), clock);
        pass(&old_db, &broker, &clock, &many, seed).await;
        let at = broker.publishes().first().map_or(0, |p| p.at);
        let after = row(&old_db, old_ids[0]);
        let wait = Duration::from_millis(
            (after.next_retry_at.unwrap_or(at) - at)
                .max(0)
                .unsigned_abs(),
        );
        assert!(
            after.status == "pending" && wait <= ceiling + UNAVAILABLE_LATENCY,
            "a row that had failed 20 times met another 503 (base 1 ms, cap 1 day, \
             max_attempts 30): it must stay pending with next_retry_at = now + a full-jitter \
             draw from [0, min(cap, base · 2^20)] = [0, {}]. Yours left it with {}, {} after \
             the publish began (seed {seed})",
            show(ceiling),
            after.describe(),
            show(wait),
        );
        longest_old = longest_old.max(wait);
    }
    assert!(
        longest_old >= ceiling / 2,
        "over {SEEDS} seeded passes, the waits of a row that had failed 20 times (base 1 ms, \
         cap 1 day) were at most {}: full-jitter draws from [0, 2^20 ms = {}] reach above half \
         of it. Use the row's attempts as the exponent, however many: full_jitter(row.attempts, \
         cfg.base, cfg.cap, rng)",
        show(longest_old),
        show(ceiling),
    );
    // 64 uniform draws from [0, c] all land above c / 2, or all below it, with probability
    // 2^-64 each: 2^-61 for the eight tests here, so a full-jitter relay never fails by chance.
    for (index, ceiling) in ceilings.iter().enumerate() {
        let half = *ceiling / 2;
        assert!(
            shortest[index] <= half + UNAVAILABLE_LATENCY && longest[index] >= half,
            "over {SEEDS} seeded passes, the waits of a row that had failed {} time(s) ranged \
             from {} to {}: full-jitter draws from [0, {}] fall on both sides of {} (a fixed \
             wait, or a ceiling that does not double with the row's attempts, does not). Draw \
             each wait with full_jitter from the `rng` you are given",
            attempts[index],
            show(shortest[index]),
            show(longest[index]),
            show(*ceiling),
            show(half),
        );
    }
}
