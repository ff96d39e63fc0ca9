// The worked example of book §5.6 and §5.7: the whole kit (per-attempt timeout, one immediate
// retry, capped exponential backoff with full jitter, a classifier, a logging hook) run on
// tokio's paused clock against a fake service. Each scenario renders its timeline as a Markdown
// table.
//
// This file is included twice: by `main.rs` beside it, the program you run against your
// exercise, and by the solution's test `timeline`, which pins the tables the book shows with an
// insta snapshot. Both name the graded crate `workbook`.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tokio::time::Instant;

use workbook::stubs::ServiceError;
use workbook::{Retry, RetryEvent};

const MS: Duration = Duration::from_millis(1);

// ANCHOR: policy
/// The delays of one run: one immediate retry, then full jitter over a capped exponential
/// (base 100 ms, cap 1 s), in whole milliseconds, drawn with the generator it is given.
/// Five retries in all: six attempts at most.
fn kit_policy(rng: StdRng) -> impl Iterator<Item = Duration> {
    let (base_ms, cap_ms) = (100u64, 1_000u64);
    let backoff = (0u32..).scan(rng, move |rng, n| {
        let ceiling_ms = base_ms.saturating_mul(2u64.saturating_pow(n)).min(cap_ms);
        Some(Duration::from_millis(rng.random_range(0..=ceiling_ms)))
    });
    std::iter::once(Duration::ZERO).chain(backoff).take(5)
}
// ANCHOR_END: policy

// ANCHOR: hook
/// The log line an operator reads: which operation, which attempt out of how many, how long the
/// wait is, and the error that caused it.
fn log_line(operation: &str, max_attempts: u32, event: &RetryEvent<'_, ServiceError>) -> String {
    format!(
        "retrying op={operation} attempt={}/{max_attempts} delay={}ms error=\"{}\"",
        event.attempt,
        event.delay.as_millis(),
        event.error,
    )
}
// ANCHOR_END: hook

/// What the fake service does on one call.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Answers `Ok` at once.
    Answer,
    /// Fails at once with this error.
    Fail(ServiceError),
    /// Hangs far longer than any per-attempt timeout.
    Hang,
}

/// A fake remote service that follows a script and records when each call started and how it
/// ended, on tokio's clock.
struct Fake {
    script: RefCell<VecDeque<Step>>,
    started: Instant,
    calls: RefCell<Vec<(Duration, String)>>,
}

impl Fake {
    fn new(script: impl IntoIterator<Item = Step>) -> Self {
        Self {
            script: RefCell::new(script.into_iter().collect()),
            started: Instant::now(),
            calls: RefCell::new(Vec::new()),
        }
    }

    fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// One call, cut by a per-attempt timeout of `limit`: a timeout becomes `ServiceError::Timeout`.
    async fn call(&self, limit: Duration) -> Result<&'static str, ServiceError> {
        let step = self.script.borrow_mut().pop_front().unwrap_or(Step::Answer);
        let index = {
            let mut calls = self.calls.borrow_mut();
            calls.push((self.elapsed(), "cut off by the budget".to_owned()));
            calls.len() - 1
        };
        let answer = async {
            match step {
                Step::Answer => Ok("reserved"),
                Step::Fail(error) => Err(error),
                Step::Hang => std::future::pending().await,
            }
        };
        let outcome = tokio::time::timeout(limit, answer)
            .await
            .unwrap_or(Err(ServiceError::Timeout));
        let shown = match &outcome {
            Ok(value) => format!("Ok({value:?})"),
            Err(error) => format!("Err: {error}"),
        };
        self.calls.borrow_mut()[index].1 = shown;
        outcome
    }

    /// The timeline as a Markdown table: one row per attempt, with the hook's log line, if any.
    fn table(&self, log: &[String], end: &str) -> String {
        let mut table = String::from(
            "| attempt | starts at | outcome | the hook logs, before the sleep |\n\
             |---:|---:|---|---|\n",
        );
        for (index, (at, outcome)) in self.calls.borrow().iter().enumerate() {
            let line = log
                .get(index)
                .map_or("—".to_owned(), |line| format!("`{line}`"));
            let _ = writeln!(
                table,
                "| {} | {} ms | {outcome} | {line} |",
                index + 1,
                at.as_millis()
            );
        }
        let _ = writeln!(table, "| | {} ms | {end} | |", self.elapsed().as_millis());
        table
    }
}

const PER_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(1);
const OPERATION: &str = "reserve-stock";

/// The four scenarios of book §5.7, each as a titled Markdown table.
pub async fn timelines() -> String {
    use ServiceError::Status;
    let outage = vec![Step::Hang, Step::Fail(Status(503)), Step::Fail(Status(503))];
    let recovers = [outage, vec![Step::Fail(Status(429)), Step::Answer]].concat();
    let scenarios = [
        ("A blip, then a short outage", recovers, None),
        (
            "A permanent error ends the loop at once",
            vec![Step::Fail(Status(503)), Step::Fail(Status(404))],
            None,
        ),
        (
            "The policy runs out",
            vec![Step::Fail(Status(503)); 10],
            None,
        ),
        (
            "An overall budget of 2.5 s cancels the loop",
            vec![Step::Hang; 3],
            Some(2_500 * MS),
        ),
    ];

    let log = RefCell::new(Vec::new());
    // ANCHOR: kit
    // One seeded root generator; each run draws a fresh seed for its own policy, so two runs
    // (or two clients) never share a sequence of "random" delays.
    let seeds = RefCell::new(StdRng::seed_from_u64(2015));
    let retry = Retry::new(|| kit_policy(StdRng::seed_from_u64(seeds.borrow_mut().random())))
        .when(ServiceError::is_transient)
        .notify(|event| log.borrow_mut().push(log_line(OPERATION, 6, event)));
    // ANCHOR_END: kit

    let mut page = String::new();
    for (title, script, budget) in scenarios {
        log.borrow_mut().clear();
        let fake = Fake::new(script);
        let attempt = || fake.call(PER_ATTEMPT_TIMEOUT);
        let end = match budget {
            None => format!("{:?}", retry.run(attempt).await),
            // ANCHOR: cancel
            // Cancelling is dropping the future: an overall budget drops the loop wherever it is.
            Some(budget) => match tokio::time::timeout(budget, retry.run(attempt)).await {
                Ok(result) => format!("{result:?}"),
                Err(_) => format!("cancelled: the {} ms budget ran out", budget.as_millis()),
            },
            // ANCHOR_END: cancel
        };
        let table = fake.table(&log.borrow(), &format!("returns {end}"));
        let _ = write!(page, "**{title}**\n\n{table}\n");
    }
    page
}

/// The careless policy of book §5.4's prediction, three zero delays, against a service that
/// answers 503 to every call, as a Markdown table.
pub async fn careless() -> String {
    let log = RefCell::new(Vec::new());
    let retry = Retry::new(|| [Duration::ZERO; 3])
        .notify(|event| log.borrow_mut().push(log_line(OPERATION, 4, event)));
    let fake = Fake::new(vec![Step::Fail(ServiceError::Status(503)); 10]);
    let end = format!("{:?}", retry.run(|| fake.call(PER_ATTEMPT_TIMEOUT)).await);
    fake.table(&log.borrow(), &format!("returns {end}"))
}
