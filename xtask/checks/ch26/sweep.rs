//! The runs every invariant is checked on: the chapter's scenario under seeds `0..SEEDS`, each
//! simulated at most once per process and shared by the checks, with helpers to describe what
//! happened.
//!
//! A check walks the seeds in order and stops at the first run that breaks its rule, so a
//! failing check costs only the runs up to that seed. A helper thread simulates from the last
//! seed down meanwhile, so a check that walks all of them (it passes) takes half the time.

use std::sync::{Once, OnceLock};

use exercise::report::RunReport;
use exercise::services::{Answer, CallRecord};
use exercise::{Action, OrderId, Scenario, Step, simulate};

/// How many seeds every invariant is held to.
pub const SEEDS: u64 = 100;

static RUNS: OnceLock<Vec<OnceLock<RunReport>>> = OnceLock::new();
static HELPER: Once = Once::new();

/// The run of `seed`, simulated on first use.
pub fn run(seed: u64) -> &'static RunReport {
    let runs = RUNS.get_or_init(|| (0..SEEDS).map(|_| OnceLock::new()).collect());
    runs[seed as usize].get_or_init(|| simulate(seed, &Scenario::default()))
}

/// The runs of seeds `0..SEEDS`, in order, simulated as they are needed. Fails the check at the
/// first run in which the graded code panicked: no invariant can be judged on a run that
/// crashed.
pub fn runs() -> impl Iterator<Item = &'static RunReport> {
    HELPER.call_once(|| {
        std::thread::spawn(|| {
            for seed in (0..SEEDS).rev() {
                run(seed);
            }
        });
    });
    (0..SEEDS).map(|seed| {
        let report = run(seed);
        if let Some(panic) = report.panics.first() {
            panic!(
                "with seed {seed}, your code panicked: {panic}; every invariant needs runs that \
                 finish, so none can be checked yet"
            );
        }
        report
    })
}

/// The first run that breaks a rule: its seed and an example of what broke it.
pub fn first_violation(find: impl Fn(&RunReport) -> Option<String>) -> Option<(u64, String)> {
    runs().find_map(|report| find(report).map(|example| (report.seed, example)))
}

/// Fails with a message about the first run that broke `rule`, if one did.
pub fn fail_if_any(rule: &str, fix: &str, violation: Option<(u64, String)>) {
    let Some((seed, example)) = violation else {
        return;
    };
    let held = match seed {
        0 => String::new(),
        1 => " (seed 0 held it)".to_owned(),
        _ => format!(" (seeds 0 to {} held it)", seed - 1),
    };
    panic!(
        "{rule}: broken in the run of seed {seed}{held}: {example}. {fix}. (See the whole run \
         with `cargo run -p ch26_capstone --example report -- {seed}`: {}.)",
        run(seed).summary()
    )
}

/// Seconds, for messages: `12.345 s`.
pub fn at(millis: i64) -> String {
    format!("{:.3} s", millis as f64 / 1_000.0)
}

/// One call in a few words: `#2 at 12.345 s (key k-…): 503, Retry-After 2 s`.
pub fn describe(call: &CallRecord) -> String {
    let answer = match call.answer {
        Answer::Done => match call.latency {
            Some(latency) if latency.as_millis() >= 1_000 => {
                format!("done, answered after {} ms", latency.as_millis())
            }
            _ => "done".to_owned(),
        },
        Answer::Replayed => "replayed (same key)".to_owned(),
        Answer::Refused => "refused for good".to_owned(),
        Answer::Unavailable { retry_after } => {
            format!("503, Retry-After {} s", retry_after.as_secs())
        }
        Answer::Failed => "500".to_owned(),
        Answer::Hung => "never answered".to_owned(),
    };
    format!(
        "#{} at {} (key {}): {answer}",
        call.attempt,
        at(call.at),
        call.key
    )
}

/// The calls `order`'s `action` made to `step`'s service, described, at most `limit`.
pub fn history(report: &RunReport, step: Step, order: OrderId, action: Action) -> String {
    let calls: Vec<&CallRecord> = report
        .service(step)
        .calls
        .iter()
        .filter(|call| call.order == order && call.action == action)
        .collect();
    let mut parts: Vec<String> = calls.iter().take(6).map(|call| describe(call)).collect();
    if calls.len() > 6 {
        parts.push(format!("… ({} calls in all)", calls.len()));
    }
    if parts.is_empty() {
        return format!("no {action} call to {step}");
    }
    format!("{step} {action} calls: {}", parts.join("; "))
}
