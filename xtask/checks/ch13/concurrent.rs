//! Checks of one budget shared by many threads and tasks: no update may be lost, and no thread
//! may ever read a count outside `[0, max_tokens]`.
//!
//! How likely a racy budget is to slip through, measured on the 2-core machine these checks
//! were written on while it ran other builds (load average about 9): a load-then-store budget
//! failed `no_lost_updates` in 40 runs of 40; an add-then-clamp budget (a second write to clamp)
//! failed `bounds_hold_at_the_edges` in 40 of 40; a subtract-then-repair budget (fetch_sub, then
//! a store of 0 when it wrapped) failed it in 39 of 40 (with two readings per event instead of
//! one it had been 19 of 20). The races stop after 300 ms, so a heavily loaded machine gives
//! them fewer chances; an idle one more.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use exercise::{RetryBudget, retry_with_budget};

use super::budget::{Event, apply, budget as new_budget, tokens};

const THREADS: usize = 8;
const PER_THREAD: usize = 10_000;
/// Every this many updates, a racing thread notes whether another thread has run since its
/// last note: evidence that the threads really ran at the same time.
const NOTE_EVERY: usize = 32;
/// The notes of "another thread ran meanwhile" each kind of race must collect before the check
/// believes the code. A lost update needs two threads inside one update at the same moment; on a
/// busy machine the threads may take turns on one core instead, and then nothing can be lost.
/// So the check races until the threads have truly overlapped often enough, or until
/// [`RACE_AT_MOST`] has passed. Racing threads of a racy budget lose thousands of updates long
/// before they collect this much evidence.
const ENOUGH_OVERLAP: u64 = 600;
const RACE_AT_MOST: Duration = Duration::from_millis(300);
/// No thread has made a note yet.
const NOBODY: usize = usize::MAX;

/// Runs `update` [`PER_THREAD`] times on each of [`THREADS`] threads that start together;
/// returns how often a thread found that another one had run since its previous note.
fn race(budget: &RetryBudget, update: impl Fn(&RetryBudget) + Sync) -> u64 {
    let start = Barrier::new(THREADS);
    let last_to_note = AtomicUsize::new(NOBODY);
    let overlap = AtomicU64::new(0);
    let outcome = thread::scope(|scope| {
        let threads: Vec<_> = (0..THREADS)
            .map(|me| {
                let (start, last_to_note, overlap, update) =
                    (&start, &last_to_note, &overlap, &update);
                scope.spawn(move || {
                    start.wait();
                    let mut seen_others = 0;
                    for _ in 0..PER_THREAD / NOTE_EVERY {
                        for _ in 0..NOTE_EVERY {
                            update(budget);
                        }
                        let previous = last_to_note.swap(me, Ordering::Relaxed);
                        if previous != me && previous != NOBODY {
                            seen_others += 1;
                        }
                    }
                    overlap.fetch_add(seen_others, Ordering::Relaxed);
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join())
            .collect::<Result<Vec<()>, _>>()
    });
    if let Err(payload) = outcome {
        panic!(
            "a thread using the shared budget panicked: {}",
            super::support::panic_text(payload.as_ref())
        );
    }
    overlap.into_inner()
}

/// A budget of `max_tokens` holding `held` whole tokens, reached with failures.
fn holding(max_tokens: f64, token_ratio: f64, held: usize) -> RetryBudget {
    let budget = new_budget(max_tokens, token_ratio);
    apply(&budget, Event::Failure);
    for _ in 1..(max_tokens as usize - held) {
        budget.on_failure();
    }
    budget
}

/// Fails, with a message about the single-thread rules, unless `budget` holds `expected` tokens
/// before a race: a race means nothing on a budget that is already wrong on one thread.
fn before_the_race(budget: &RetryBudget, setup: &str, expected: f64) {
    let held = tokens(budget);
    assert!(
        (held - expected).abs() < 0.000_5,
        "before any race, on one thread: {setup} should hold {expected:.3} tokens; yours holds \
         {held:.3}. The race needs the single-thread rules first (a failure takes one token and \
         stops at 0, a success adds token_ratio and stops at max_tokens): see the budget.* \
         checks",
    );
}

/// The total of [`PER_THREAD`] rounded down to whole notes, as the threads really run it.
const UPDATES_PER_THREAD: usize = PER_THREAD / NOTE_EVERY * NOTE_EVERY;

/// Successes only, from an empty budget: 8 × 10,000 × 0.01 = 800 tokens at most, below the
/// maximum of 1,000, so clamping cannot hide a lost update. Returns the race's overlap.
fn race_successes(race_number: usize) -> u64 {
    let budget = holding(1_000.0, 0.01, 0);
    apply(&budget, Event::Success);
    before_the_race(
        &budget,
        "RetryBudget::new(1000, 0.01) after 1,000 failures and one success",
        0.01,
    );
    let overlap = race(&budget, RetryBudget::on_success);
    let got = tokens(&budget);
    let expected = (1 + THREADS * UPDATES_PER_THREAD) as f64 * 0.01;
    let why = if got < expected {
        format!(
            "so about {:.0} update(s) were lost. A load, a computation and a store are three \
             steps, and two threads can interleave them: use compare_exchange (or fetch_update) \
             on an atomic, or hold a Mutex for the whole read-modify-write",
            (expected - got) / 0.01,
        )
    } else {
        "more than all the successes add together: no lost update does that. A success adds \
         exactly token_ratio, whichever thread records it (see budget.success_adds_token_ratio)"
            .to_owned()
    };
    assert!(
        (got - expected).abs() < 0.000_5,
        "8 threads each called on_success() {} times on one RetryBudget::new(1000, 0.01) \
         holding 0.010 tokens: the count should rise to exactly {expected:.3}; yours reached \
         {got:.3} (race {race_number}), {why}",
        UPDATES_PER_THREAD,
    );
    overlap
}

/// A failure then a success, from the middle: each thread moves the count by at most one
/// token, so it never reaches 0 or 1,000 and should end where it started.
fn race_pairs(race_number: usize) -> u64 {
    let budget = holding(1_000.0, 1.0, 500);
    before_the_race(
        &budget,
        "RetryBudget::new(1000, 1) after 500 failures",
        500.0,
    );
    let overlap = race(&budget, |budget| {
        budget.on_failure();
        budget.on_success();
    });
    let got = tokens(&budget);
    assert!(
        (got - 500.0).abs() < 0.000_5,
        "8 threads each called on_failure() then on_success() {} times on one \
         RetryBudget::new(1000, 1) holding 500 tokens: every token taken is given back, so the \
         count should end at 500.000; yours ended at {got:.3} (race {race_number}), so updates \
         were lost (a lost failure leaves the count higher, a lost success lower). Each change \
         must be one atomic step: compare_exchange (or fetch_update) on an atomic, or a Mutex \
         held across the read and the write",
        UPDATES_PER_THREAD,
    );
    overlap
}

#[test]
fn no_lost_updates() {
    let started = Instant::now();
    let (mut successes, mut pairs) = (0, 0);
    let mut race_number = 0;
    while successes < ENOUGH_OVERLAP || pairs < ENOUGH_OVERLAP {
        if race_number >= 2 && started.elapsed() > RACE_AT_MOST {
            break;
        }
        race_number += 1;
        if successes <= pairs {
            successes += race_successes(race_number);
        } else {
            pairs += race_pairs(race_number);
        }
    }
}

/// A service in a full outage that yields to the scheduler on every call, so that the tasks
/// sharing it interleave.
#[derive(Default)]
struct SharedOutage {
    calls: AtomicU64,
}

impl SharedOutage {
    async fn call(&self) -> Result<(), u64> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        tokio::task::yield_now().await;
        Err(call)
    }
}

#[tokio::test]
async fn tasks_share_one_budget() {
    const TASKS: usize = 8;
    const REQUESTS_PER_TASK: usize = 125;
    let budget = Arc::new(new_budget(10.0, 0.1));
    let service = Arc::new(SharedOutage::default());
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (budget, service) = (Arc::clone(&budget), Arc::clone(&service));
            tokio::spawn(async move {
                let mut succeeded = 0;
                for _ in 0..REQUESTS_PER_TASK {
                    if retry_with_budget(|| service.call(), 3, &budget)
                        .await
                        .is_ok()
                    {
                        succeeded += 1;
                    }
                }
                succeeded
            })
        })
        .collect();
    for task in tasks {
        match task.await {
            Ok(0) => {}
            Ok(n) => panic!("a task saw {n} successes from a service that fails every call"),
            Err(error) => panic!("a task sharing the budget failed: {error}"),
        }
    }
    let calls = service.calls.load(Ordering::Relaxed);
    let left = tokens(&budget);
    assert!(
        (1_000..=1_004).contains(&calls) && left.abs() < 0.000_5,
        "8 tasks sharing one Arc<RetryBudget> (10 tokens, ratio 0.1) sent 125 requests each, \
         attempts = 3, to a service in a full outage. Every retry needs more than 5 tokens after \
         its own failure, so at most 4 retries can pass however the tasks interleave: between \
         1,000 and 1,004 calls, and an empty budget at the end. Yours made {calls} calls and left \
         {left:.3} tokens",
    );
}

/// One regime of [`bounds_hold_at_the_edges`]: a budget, the cycle of events each thread
/// repeats, and where the count sits while they race.
struct Edge {
    max_tokens: f64,
    token_ratio: f64,
    /// Whole tokens to take before the race (10 empties a budget of 10).
    drained: usize,
    cycle: &'static [Event],
    place: &'static str,
}

/// Plays `edge.cycle` three times on one thread, with no race at all. Returns the first reading
/// outside `[0, max_tokens]` and the event just before it: then the clamp itself is missing.
fn edge_alone(edge: &Edge) -> Option<(f64, Event)> {
    let budget = new_budget(edge.max_tokens, edge.token_ratio);
    for _ in 0..edge.drained {
        apply(&budget, Event::Failure);
    }
    for _ in 0..3 {
        for &event in edge.cycle {
            apply(&budget, event);
            let count = tokens(&budget);
            if !(0.0..=edge.max_tokens).contains(&count) {
                return Some((count, event));
            }
        }
    }
    None
}

/// Races [`THREADS`] threads that each repeat `edge.cycle`, reading the count after every event.
/// Returns the race's overlap, or the first reading outside `[0, max_tokens]`.
fn race_edge(edge: &Edge) -> Result<u64, f64> {
    let budget = new_budget(edge.max_tokens, edge.token_ratio);
    for _ in 0..edge.drained {
        apply(&budget, Event::Failure);
    }
    let outside = std::sync::Mutex::new(None);
    let max = edge.max_tokens;
    let overlap = race(&budget, |budget| {
        for &event in edge.cycle {
            match event {
                Event::Failure => budget.on_failure(),
                Event::Success => budget.on_success(),
            }
            // Two readings per event: a count that is wrong only for an instant, between the
            // two writes of a racy update, is caught only by a reading that falls inside it.
            for _ in 0..2 {
                let count = budget.tokens();
                if !(0.0..=max).contains(&count) {
                    outside
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(count);
                }
            }
            let _ = budget.can_retry();
        }
    });
    match outside.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(count) => Err(count),
        None => Ok(overlap),
    }
}

#[test]
fn bounds_hold_at_the_edges() {
    use Event::{Failure, Success};
    let edges = [
        Edge {
            max_tokens: 10.0,
            token_ratio: 0.3,
            drained: 10,
            cycle: &[Failure, Success],
            place: "near empty (failures keep meeting the floor of 0)",
        },
        Edge {
            max_tokens: 10.0,
            token_ratio: 0.7,
            drained: 0,
            cycle: &[Success, Success, Failure],
            place: "at the ceiling (successes keep meeting max_tokens)",
        },
        Edge {
            max_tokens: 1.0,
            token_ratio: 0.7,
            drained: 0,
            cycle: &[Failure, Success, Success],
            place: "at both edges at once (a budget of one token)",
        },
    ];
    for edge in &edges {
        if let Some((count, event)) = edge_alone(edge) {
            let rule = match event {
                Event::Success => {
                    "a success stops at max_tokens (pitfall \"No ceiling on successes\": add the \
                     ratio, then take the minimum with the maximum)"
                }
                Event::Failure => {
                    "a failure stops at 0 (pitfall \"No floor on failures\": an unsigned count \
                     that goes below zero wraps around to about four million tokens)"
                }
            };
            panic!(
                "on one thread, with no race at all, RetryBudget::new({}, {}) {} read tokens() = \
                 {count} right after {}: {rule}",
                edge.max_tokens,
                edge.token_ratio,
                edge.place,
                match event {
                    Event::Success => "on_success()",
                    Event::Failure => "on_failure()",
                },
            );
        }
    }
    race_regimes(&edges, |edge, race_number| {
        race_edge(edge).map_err(|count| {
            format!(
                "the count must stay within [0, max_tokens] at every moment, also while other \
                 threads update it: 8 threads racing on one RetryBudget::new({}, {}) {} read \
                 tokens() = {count} (race {race_number}). An update done in two steps (add, then \
                 clamp to the maximum; subtract, then fix a count that went below zero) shows \
                 its halfway value to the other threads, and loses their updates in between: \
                 compute the clamped value first and write it in one atomic step \
                 (compare_exchange in a loop, fetch_update, or a Mutex around the whole update)",
                edge.max_tokens, edge.token_ratio, edge.place,
            )
        })
    });
}

/// Races the regimes in turn, one race at a time, until each has collected [`ENOUGH_OVERLAP`]
/// notes of threads that really ran side by side, or [`RACE_AT_MOST`] has passed once each has
/// raced. `race_one` gets the regime and the race's number, and returns the race's overlap or
/// the message of a wrong reading, which fails the check.
fn race_regimes<T>(regimes: &[T], race_one: impl Fn(&T, usize) -> Result<u64, String>) {
    let started = Instant::now();
    let mut overlap = vec![0; regimes.len()];
    let mut races = 0;
    while overlap.iter().any(|&seen| seen < ENOUGH_OVERLAP) {
        if races >= regimes.len() && started.elapsed() > RACE_AT_MOST {
            break;
        }
        let index = races % regimes.len();
        races += 1;
        match race_one(&regimes[index], races) {
            Ok(seen) => overlap[index] += seen,
            Err(message) => panic!("{message}"),
        }
    }
}

/// One regime of [`answers_hold_while_others_update`]: a budget whose count the racing updates
/// cannot move (successes at the ceiling, or failures at the floor), so every reading has one
/// right answer.
struct Steady {
    drained: usize,
    event: Event,
    tokens: f64,
    can_retry: bool,
    place: &'static str,
}

/// Races [`THREADS`] threads that repeat `steady.event` on one `RetryBudget::new(10, 0.5)` and
/// read it after every event. Returns the race's overlap, or the first wrong reading.
fn race_steady(steady: &Steady) -> Result<u64, (f64, bool)> {
    let budget = new_budget(10.0, 0.5);
    for _ in 0..steady.drained {
        apply(&budget, Event::Failure);
    }
    let wrong = std::sync::Mutex::new(None);
    let overlap = race(&budget, |budget| {
        match steady.event {
            Event::Failure => budget.on_failure(),
            Event::Success => budget.on_success(),
        }
        let (count, answer) = (budget.tokens(), budget.can_retry());
        if count != steady.tokens || answer != steady.can_retry {
            wrong
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert((count, answer));
        }
    });
    match wrong.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(reading) => Err(reading),
        None => Ok(overlap),
    }
}

#[test]
fn answers_hold_while_others_update() {
    let regimes = [
        Steady {
            drained: 0,
            event: Event::Success,
            tokens: 10.0,
            can_retry: true,
            place: "full, while every thread records successes (the count stays at 10)",
        },
        Steady {
            drained: 10,
            event: Event::Failure,
            tokens: 0.0,
            can_retry: false,
            place: "empty, while every thread records failures (the count stays at 0)",
        },
    ];
    for steady in &regimes {
        let budget = new_budget(10.0, 0.5);
        for _ in 0..steady.drained {
            apply(&budget, Event::Failure);
        }
        apply(&budget, steady.event);
        let (count, answer) = (tokens(&budget), budget.can_retry());
        assert!(
            (count - steady.tokens).abs() < 0.000_5 && answer == steady.can_retry,
            "on one thread, with no race at all, RetryBudget::new(10, 0.5) {} read tokens() = \
             {count:.3} and can_retry() = {answer} after one more {}; expected {} and {}. The \
             single-thread rules come first: see the budget.* checks",
            steady.place,
            match steady.event {
                Event::Success => "on_success()",
                Event::Failure => "on_failure()",
            },
            steady.tokens,
            steady.can_retry,
        );
    }
    race_regimes(&regimes, |steady, race_number| {
        race_steady(steady).map_err(|(count, answer)| {
            let why = if count == steady.tokens {
                "The count was right and the answer was not: the answers must follow the count \
                 also while another thread updates it. Wait for a lock rather than guess when it \
                 is busy (try_lock), or read the atomic count"
            } else if (0.0..=10.0).contains(&count) {
                "A reading that the events cannot produce: an update must change the count in \
                 one atomic step, and a reading must see the count either before or after it"
            } else {
                "A count outside [0, 10] for an instant is the halfway value of an update done \
                 in two steps (add, then clamp; subtract, then repair a wrapped count): compute \
                 the clamped value first and write it in one atomic step (compare_exchange in a \
                 loop, fetch_update, or a Mutex around the whole update)"
            };
            format!(
                "8 threads racing on one RetryBudget::new(10, 0.5) {}: every reading should be \
                 tokens() = {} and can_retry() = {}, whatever the other threads are doing; one \
                 thread read tokens() = {count} and can_retry() = {answer} (race {race_number}). \
                 {why}",
                steady.place, steady.tokens, steady.can_retry,
            )
        })
    });
}
