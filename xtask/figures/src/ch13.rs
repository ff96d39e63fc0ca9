//! Chapter 13 — Retry budgets. One figure and two tables, all computed with the reference
//! solution's `RetryBudget` (and, for the outage table, its `retry_with_budget`).
//!
//! The figure is a deliberately simple, deterministic simulation: a client sends a steady 100
//! new requests per second; from second 10 to second 40 the service fails every call; a failed
//! call may be retried one second later. Three clients differ only in what limits their retries:
//! nothing, a per-request cap of 3 attempts, or the cap and an A6 budget of 10 tokens.

use std::future::{Future, ready};
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use ch13_retry_budgets_solution::{RetryBudget, retry_with_budget};

use crate::figure::{Figure, Lang};
use crate::plot::{Axis, Chart, Color, Column, Grid, Line, Marker, format_number, per_second};

/// New requests per second, every second.
pub const RATE: u32 = 100;
/// The service fails every call in the seconds `OUTAGE_START..OUTAGE_END`.
pub const OUTAGE_START: u32 = 10;
pub const OUTAGE_END: u32 = 40;
/// The seconds simulated.
pub const HORIZON: u32 = 60;
/// Attempts per request for the capped clients, as in the exercise.
pub const ATTEMPTS: u32 = 3;
/// A6's example settings.
pub const MAX_TOKENS: f64 = 10.0;
pub const TOKEN_RATIO: f64 = 0.1;

/// What limits a client's retries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Every failed call is retried, until it succeeds.
    Nothing,
    /// At most [`ATTEMPTS`] calls per request.
    Cap,
    /// At most [`ATTEMPTS`] calls per request, and only while the shared budget allows.
    CapAndBudget,
}

impl Limit {
    pub const ALL: [Limit; 3] = [Limit::Nothing, Limit::Cap, Limit::CapAndBudget];

    fn label(self, lang: Lang) -> &'static str {
        match self {
            Limit::Nothing => lang.pick(
                "no limit: retry every second until it works",
                "制限なし: 成功するまで毎秒リトライ",
            ),
            Limit::Cap => lang.pick(
                "per-request cap: 3 attempts",
                "リクエストごとの上限: 3 回の試行",
            ),
            Limit::CapAndBudget => lang.pick(
                "cap + A6 budget (10 tokens, ratio 0.1)",
                "上限 + A6 のリトライ予算（10 トークン、比率 0.1）",
            ),
        }
    }

    fn color(self) -> Color {
        match self {
            Limit::Nothing => Color::Vermillion,
            Limit::Cap => Color::Orange,
            Limit::CapAndBudget => Color::Blue,
        }
    }
}

fn budget() -> RetryBudget {
    RetryBudget::new(MAX_TOKENS, TOKEN_RATIO).expect("A6's example settings are valid")
}

/// Calls per second, for seconds `0..HORIZON`, of a client limited by `limit`.
///
/// Each second, the retries scheduled for it go out first, then the new requests. A failed call
/// is recorded in the budget (if any) and retried the next second if the limit allows.
pub fn calls_per_second(limit: Limit) -> Vec<u32> {
    let budget = budget();
    // For each retry due next second: the calls its request has made so far.
    let mut due: Vec<u32> = Vec::new();
    let mut calls = Vec::with_capacity(HORIZON as usize);
    for second in 0..HORIZON {
        let failing = (OUTAGE_START..OUTAGE_END).contains(&second);
        let this_second: Vec<u32> = std::mem::take(&mut due)
            .into_iter()
            .chain((0..RATE).map(|_| 0))
            .collect();
        calls.push(this_second.len() as u32);
        for made_before in this_second {
            let made = made_before + 1;
            if !failing {
                budget.on_success();
                continue;
            }
            budget.on_failure();
            let retry = match limit {
                Limit::Nothing => true,
                Limit::Cap => made < ATTEMPTS,
                Limit::CapAndBudget => made < ATTEMPTS && budget.can_retry(),
            };
            if retry {
                due.push(made);
            }
        }
    }
    calls
}

/// The calls sent while the service was down, seconds `OUTAGE_START..OUTAGE_END`.
fn outage_calls(calls: &[u32]) -> u32 {
    calls[OUTAGE_START as usize..OUTAGE_END as usize]
        .iter()
        .sum()
}

fn count(n: u32) -> String {
    format_number(f64::from(n), 0)
}

fn panel(lang: Lang, title: String, limits: &[Limit]) -> Chart {
    let mut chart = Chart::new(title)
        .x_axis(Axis::new("").range(0.0, f64::from(HORIZON)))
        .y_axis(Axis::new("").min(0.0))
        .marker(Marker::new(
            f64::from(OUTAGE_START),
            lang.pick("outage starts", "障害の開始"),
        ))
        .marker(Marker::new(
            f64::from(OUTAGE_END),
            lang.pick("service back", "サービス復旧"),
        ));
    for &limit in limits {
        chart = chart.line(Line::new(
            limit.label(lang),
            limit.color(),
            per_second(&calls_per_second(limit), |&calls| calls),
        ));
    }
    chart
}

/// `ch13-offered-load`: calls per second during a 30-second outage, for the three limits.
fn offered_load(lang: Lang) -> Figure {
    let nothing = calls_per_second(Limit::Nothing);
    let cap = calls_per_second(Limit::Cap);
    let budgeted = calls_per_second(Limit::CapAndBudget);
    let peak = |calls: &[u32]| calls.iter().copied().max().unwrap_or(0);
    let steady = |calls: &[u32]| calls[OUTAGE_END as usize - 1];
    let peak = count(peak(&nothing));
    let (cap_steady, budget_steady) = (count(steady(&cap)), count(steady(&budgeted)));
    let column = Column::new(
        "",
        lang.pick("seconds", "秒"),
        lang.pick(
            "calls reaching the service per second",
            "毎秒サービスに届く呼び出し",
        ),
    )
    .chart(panel(
        lang,
        lang.pick(
            format!(
                "All three: without a limit the load grows every second, to {peak} calls at once"
            ),
            format!("3 つすべて: 制限がなければ負荷は毎秒増え、同時に {peak} 回の呼び出しに達する"),
        ),
        &Limit::ALL,
    ))
    .chart(panel(
        lang,
        lang.pick(
            format!(
                "The two limits, zoomed in: {cap_steady} calls/s with the cap alone, \
                 {budget_steady} with the budget"
            ),
            format!(
                "2 つの制限を拡大: 上限だけなら {cap_steady} 回/s、リトライ予算ありなら \
                 {budget_steady} 回/s"
            ),
        ),
        &[Limit::Cap, Limit::CapAndBudget],
    ));
    let requests = count(RATE * (OUTAGE_END - OUTAGE_START));
    let (nothing_calls, cap_calls, budget_calls) = (
        count(outage_calls(&nothing)),
        count(outage_calls(&cap)),
        count(outage_calls(&budgeted)),
    );
    let grid = Grid::new(lang.pick(
        format!(
            "{RATE} requests per second, and the service fails every call from second \
             {OUTAGE_START} to {OUTAGE_END}"
        ),
        format!(
            "毎秒 {RATE} リクエスト、{OUTAGE_START}〜{OUTAGE_END} 秒目はサービスがすべての呼び出しに\
             失敗"
        ),
    ))
    .subtitle(lang.pick(
        format!(
            "A failed call may be retried one second later. For the {requests} requests of the \
             outage, the service received {nothing_calls} calls with no limit, {cap_calls} with \
             the per-request cap, and {budget_calls} with the cap and the solution's \
             RetryBudget::new(10, 0.1). Each panel has its own y scale."
        ),
        format!(
            "失敗した呼び出しは 1 秒後にリトライできます。障害中の {requests} リクエストに対して、\
             サービスが受けた呼び出しは、制限なしで {nothing_calls} 回、リクエストごとの上限で \
             {cap_calls} 回、上限と模範解答の RetryBudget::new(10, 0.1) で {budget_calls} 回\
             でした。縦軸の目盛りはパネルごとに違います。"
        ),
    ))
    .column(column)
    .panel_height(220.0);
    Figure::new("ch13-offered-load", grid.svg())
}

/// What happens to the budget in one row of the walkthrough.
#[derive(Clone, Copy)]
enum Outcome {
    Failure,
    Success,
}

/// `ch13-a6-walkthrough`: A6's arithmetic event by event, read off the solution's budget.
fn walkthrough() -> Figure {
    use Outcome::{Failure, Success};
    // (what happens, how many times, what the row shows)
    let steps = [
        (Failure, 1, "a failure costs one token"),
        (Failure, 3, "still above the threshold of 5"),
        (Failure, 1, "**exactly 5 is not above 5: retries stop**"),
        (Success, 1, "one success lifts the count over the threshold"),
        (Failure, 1, "one failure undoes ten successes"),
        (Success, 9, "back to exactly 5: still refused"),
        (Success, 1, "above 5 again: retries allowed"),
        (Success, 60, "never above max_tokens"),
        (Failure, 12, "never below zero"),
        (Success, 51, "51 successes to reopen an empty budget"),
    ];
    let budget = budget();
    let mut text = String::from(
        "| step | events | tokens after | `can_retry()` | what it shows |\n\
         |---:|---|---:|:---:|---|\n",
    );
    text.push_str(&format!(
        "| 0 | `RetryBudget::new(10.0, 0.1)` | {:.1} | {} | a new budget starts full |\n",
        budget.tokens(),
        yes_no(budget.can_retry()),
    ));
    for (number, (outcome, times, note)) in (1..).zip(steps) {
        for _ in 0..times {
            match outcome {
                Failure => budget.on_failure(),
                Success => budget.on_success(),
            }
        }
        let events = match (outcome, times) {
            (Failure, 1) => "failure".to_owned(),
            (Failure, n) => format!("{n} failures"),
            (Success, 1) => "success".to_owned(),
            (Success, n) => format!("{n} successes"),
        };
        text.push_str(&format!(
            "| {number} | {events} | {:.1} | {} | {note} |\n",
            budget.tokens(),
            yes_no(budget.can_retry()),
        ));
    }
    Figure::markdown("ch13-a6-walkthrough", text)
}

fn yes_no(answer: bool) -> &'static str {
    if answer { "yes" } else { "no" }
}

/// Drives a future whose every await is immediately ready, without a runtime.
fn run_ready<T>(future: impl Future<Output = T>) -> T {
    let mut context = Context::from_waker(Waker::noop());
    match pin!(future).as_mut().poll(&mut context) {
        Poll::Ready(value) => value,
        Poll::Pending => unreachable!("every call in these tables answers at once"),
    }
}

/// What one request of the outage table did: the tokens left after each of its calls.
pub fn outage_requests(requests: usize) -> Vec<Vec<f64>> {
    let budget = budget();
    (0..requests)
        .map(|_| {
            let mut before_each_call = Vec::new();
            let op = || {
                before_each_call.push(budget.tokens());
                ready(Err::<(), ()>(()))
            };
            let _ = run_ready(retry_with_budget(op, ATTEMPTS, &budget));
            // The count after a call is the count before the next one; after the last, now.
            let mut after_each_call = before_each_call.split_off(1);
            after_each_call.push(budget.tokens());
            after_each_call
        })
        .collect()
}

/// `ch13-outage-requests`: the first requests of a full outage through the solution's
/// `retry_with_budget`, and the totals for 1,000 requests.
fn outage_table() -> Figure {
    const SHOWN: usize = 4;
    const REQUESTS: usize = 1_000;
    let all = outage_requests(REQUESTS);
    let mut text = String::from(
        "| request | calls | tokens after each call | why it stopped |\n|---:|---:|---|---|\n",
    );
    for (number, calls) in (1..).zip(all.iter().take(SHOWN)) {
        let after: Vec<String> = calls.iter().map(|t| format!("{t:.0}")).collect();
        let last = calls.last().copied().unwrap_or(0.0);
        let why = if calls.len() as u32 == ATTEMPTS {
            "3 attempts used (the cap)".to_owned()
        } else {
            format!("{last:.0} tokens is not above 5: retry refused")
        };
        text.push_str(&format!(
            "| {number} | {} | {} | {why} |\n",
            calls.len(),
            after.join(" → "),
        ));
    }
    let total: usize = all.iter().map(Vec::len).sum();
    text.push_str(&format!(
        "| 5 to {} | 1 each | 2 → 1 → 0 → 0 → … | refused; the count falls to 0 and stays there |\n\
         | **all {}** | **{}** | | {} retries in all; the cap alone would allow {} |\n",
        format_number(REQUESTS as f64, 0),
        format_number(REQUESTS as f64, 0),
        format_number(total as f64, 0),
        total - REQUESTS,
        format_number((REQUESTS * (ATTEMPTS as usize - 1)) as f64, 0),
    ));
    Figure::markdown("ch13-outage-requests", text)
}

pub fn figures(lang: Lang) -> Vec<Figure> {
    vec![offered_load(lang), walkthrough(), outage_table()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers the page quotes.
    #[test]
    fn the_books_numbers() {
        let nothing = calls_per_second(Limit::Nothing);
        let cap = calls_per_second(Limit::Cap);
        let budgeted = calls_per_second(Limit::CapAndBudget);
        assert_eq!(&nothing[9..13], [100, 100, 200, 300]);
        assert_eq!((nothing[39], nothing[40], nothing[41]), (3_000, 3_100, 100));
        assert_eq!(&cap[9..13], [100, 100, 200, 300]);
        assert_eq!((cap[39], cap[40], cap[41]), (300, 300, 100));
        assert_eq!(&budgeted[9..13], [100, 100, 104, 100]);
        assert_eq!((budgeted[39], budgeted[40], budgeted[41]), (100, 100, 100));
        assert_eq!(
            (
                outage_calls(&nothing),
                outage_calls(&cap),
                outage_calls(&budgeted)
            ),
            (46_500, 8_700, 3_004)
        );
    }

    #[test]
    fn the_outage_table_matches_the_checks() {
        let requests = outage_requests(1_000);
        assert_eq!(requests[0], [9.0, 8.0, 7.0]);
        assert_eq!(requests[1], [6.0, 5.0]);
        assert_eq!(requests[2], [4.0]);
        assert_eq!(requests.iter().map(Vec::len).sum::<usize>(), 1_003);
    }
}
