//! Chapter 26 — Capstone: checkout under chaos. Every figure and table comes from the reference
//! solution's own simulation: the chapter's scenario under seeds `0..SEEDS`, run once with the
//! retry budgets and once without them.

use ch26_capstone_solution::report::{RunReport, ServiceReport};
use ch26_capstone_solution::services::Answer;
use ch26_capstone_solution::{Action, BudgetConfig, Scenario, Step, simulate};

use crate::figure::{Figure, Lang};
use crate::plot::{Axis, Chart, Color, Column, Grid, Histogram, Line, Marker, format_number};

/// The seeds of every figure: the same as the hidden checks'.
pub const SEEDS: u64 = 100;
/// The run the book reports in full and whose load it plots.
pub const FEATURED: u64 = 12;

const WITH: Color = Color::Blue;
const WITHOUT: Color = Color::Vermillion;

pub fn figures(lang: Lang) -> Vec<Figure> {
    let with: Vec<RunReport> = (0..SEEDS)
        .map(|seed| simulate(seed, &Scenario::default()))
        .collect();
    let without: Vec<RunReport> = (0..SEEDS)
        .map(|seed| simulate(seed, &without_budget()))
        .collect();
    vec![
        report(&with[FEATURED as usize]),
        load(lang, &with[FEATURED as usize], &without[FEATURED as usize]),
        attempts(lang, &with, &without),
        outcomes(lang, &with, &without),
        tables(&with, &without),
    ]
}

/// The chapter's scenario with clients that have no retry budget.
pub fn without_budget() -> Scenario {
    Scenario {
        budget: None,
        ..Scenario::default()
    }
}

fn count(n: usize) -> String {
    format_number(n as f64, 0)
}

/// `ch26-report`: the report of the featured run, as the example program prints it.
fn report(run: &RunReport) -> Figure {
    Figure::markdown("ch26-report", format!("```text\n{run}```\n"))
}

/// The calls `step`'s service has received by each moment: a step line, `(seconds, calls)`,
/// from 0 to `end` seconds.
fn cumulative(run: &RunReport, step: Step, end: f64) -> Vec<(f64, f64)> {
    let mut points = vec![(0.0, 0.0)];
    for (index, call) in run.service(step).calls.iter().enumerate() {
        let at = call.at as f64 / 1e3;
        points.push((at, index as f64));
        points.push((at, (index + 1) as f64));
    }
    let total = run.service(step).calls.len() as f64;
    points.push((end, total));
    points
}

/// `ch26-load`: the calls each service has received over the featured run, with and without
/// the retry budgets, with the chaos windows marked.
fn load(lang: Lang, with: &RunReport, without: &RunReport) -> Figure {
    let end = with.ended_at.max(without.ended_at).unwrap_or(with.calm_at);
    let end = (end / 1_000 + 1) as f64;
    let mut column = Column::new(
        "",
        lang.pick(
            "time since the first order (s)",
            "最初の注文からの時間（s）",
        ),
        lang.pick("calls received so far", "それまでに受けた呼び出し"),
    );
    let ends = lang.pick("ends", "終了");
    for step in Step::ALL {
        let chaos = with.chaos.service(step);
        let (calls_with, calls_without) =
            (with.service(step).total(), without.service(step).total());
        let bound = with
            .service(step)
            .load_bound(&with.budget.unwrap_or_default());
        let (calls_with, calls_without) =
            (count(calls_with as usize), count(calls_without as usize));
        let mut chart = Chart::new(lang.pick(
            format!("{step}: {calls_with} calls with the budgets (bound {bound}), {calls_without} without"),
            format!("{step}: リトライ予算ありで {calls_with} 回（上界 {bound}）、なしで {calls_without} 回"),
        ))
        .x_axis(Axis::new("").range(0.0, end))
        .y_axis(Axis::new("").min(0.0))
        .line(Line::new(
            lang.pick("with retry budgets", "リトライ予算あり"),
            WITH,
            cumulative(with, step, end),
        ))
        .line(
            Line::new(
                lang.pick("without a budget", "リトライ予算なし"),
                WITHOUT,
                cumulative(without, step, end),
            )
            .dashed(),
        );
        for storm in &chaos.storms {
            let after = storm.retry_after.as_secs();
            chart = chart
                .marker(Marker::new(
                    storm.window.start as f64 / 1e3,
                    lang.pick(
                        format!("503 storm, Retry-After {after} s"),
                        format!("503 の嵐、Retry-After {after} s"),
                    ),
                ))
                .marker(Marker::new(storm.window.end as f64 / 1e3, ends));
        }
        for spike in &chaos.spikes {
            let latency = spike.latency.as_millis();
            chart = chart
                .marker(Marker::new(
                    spike.window.start as f64 / 1e3,
                    lang.pick(
                        format!("spike, {latency} ms"),
                        format!("遅延の急増、{latency} ms"),
                    ),
                ))
                .marker(Marker::new(spike.window.end as f64 / 1e3, ends));
        }
        column = column.chart(chart);
    }
    let calm = with.calm_at / 1_000;
    let grid = Grid::new(lang.pick(
        format!(
            "The load on each service in the run of seed {FEATURED}, with and without retry \
             budgets"
        ),
        format!("シード {FEATURED} の実行での各サービスの負荷: リトライ予算ありとなし"),
    ))
    .subtitle(lang.pick(
        format!(
            "Calls received so far, first attempts and retries together, from the solution's \
             simulation of the chapter's scenario (30 orders in 40 s, chaos until {calm} s). \
             Same seed, same chaos: only the budgets differ. Markers show the service's 503 \
             storms and latency spikes."
        ),
        format!(
            "それまでに受けた呼び出しの数（最初の試行とリトライの合計）。模範解答で本章のシナリオ\
             （40 s に 30 件の注文、{calm} s までカオス）をシミュレーションしました。シードもカオスも\
             同じで、違うのはリトライ予算だけです。印はそのサービスの 503 の嵐と遅延の急増を示します。"
        ),
    ))
    .column(column)
    .panel_height(160.0);
    Figure::new("ch26-load", grid.svg())
}

/// How many operations (an order's execute or compensate at one service) took `n` calls, for
/// `n` from 1 to 7 (the last counts 7 or more), over every run.
fn calls_per_operation(runs: &[RunReport]) -> [u64; 7] {
    let mut counts = [0u64; 7];
    for run in runs {
        for service in &run.services {
            for calls in service.calls_per_operation().values() {
                counts[(*calls as usize).clamp(1, 7) - 1] += 1;
            }
        }
    }
    counts
}

/// `ch26-attempts`: how many calls each operation took, over every run, with and without the
/// retry budgets. One call is the common case and is counted in the panel titles; the bars
/// show the operations that were retried.
fn attempts(lang: Lang, with: &[RunReport], without: &[RunReport]) -> Figure {
    let panel = |runs: &[RunReport], color: Color| {
        let counts = calls_per_operation(runs);
        let total: u64 = counts.iter().sum();
        let retried: u64 = counts[1..].iter().sum();
        let max = counts[1..].iter().copied().max().unwrap_or(0);
        let (total, once, retried) = (
            count(total as usize),
            count(counts[0] as usize),
            count(retried as usize),
        );
        Chart::new(lang.pick(
            format!("{total} operations: {once} in one call, {retried} retried"),
            format!("{total} 件の操作: 1 回の呼び出しで {once} 件、リトライ {retried} 件"),
        ))
        .x_axis(Axis::new("").range(1.5, 7.5))
        .y_axis(Axis::new("").range(0.0, (max as f64 * 1.15).max(1.0)))
        .histogram(Histogram::from_counts("", color, 1.5, 1.0, &counts[1..]))
    };
    let x_label = lang.pick(
        "calls the operation took (7 = 7 or more)",
        "操作にかかった呼び出し回数（7 = 7 回以上）",
    );
    let operations = lang.pick("operations", "操作の数");
    let grid = Grid::new(lang.pick(
        format!("Calls per operation over {SEEDS} seeded runs: with and without retry budgets"),
        format!("シード付きの {SEEDS} 回の実行での操作ごとの呼び出し回数: リトライ予算ありとなし"),
    ))
    .subtitle(lang.pick(
        "An operation is one order's execute or compensate at one service. A step makes at most \
         4 calls, a compensation at most 6. Without budgets, more operations are retried, and \
         more of them to the limit. From the solution's simulation, seeds 0 to 99.",
        "操作とは、1 つのサービスでの 1 件の注文の execute または compensate です。ステップは最大 \
         4 回、補償は最大 6 回呼び出します。リトライ予算がなければ、リトライされる操作が増え、\
         上限まで使い切る操作も増えます。模範解答のシミュレーション、シード 0〜99 の結果です。",
    ))
    .column(
        Column::new(
            lang.pick("with retry budgets", "リトライ予算あり"),
            x_label,
            operations,
        )
        .chart(panel(with, WITH)),
    )
    .column(
        Column::new(
            lang.pick("without a budget", "リトライ予算なし"),
            x_label,
            operations,
        )
        .chart(panel(without, WITHOUT)),
    )
    .panel_height(230.0);
    Figure::new("ch26-attempts", grid.svg())
}

/// `ch26-outcomes`: how the orders of each run ended, seed by seed, with the budgets; and the
/// completed orders without them, for comparison.
fn outcomes(lang: Lang, with: &[RunReport], without: &[RunReport]) -> Figure {
    let series = |runs: &[RunReport], pick: fn(&RunReport) -> usize| {
        runs.iter()
            .map(|run| (run.seed as f64, pick(run) as f64))
            .collect::<Vec<_>>()
    };
    let completed = |run: &RunReport| run.outcome_counts().completed;
    let compensated = |run: &RunReport| run.outcome_counts().compensated;
    let needs_human = |run: &RunReport| run.outcome_counts().needs_human;
    let chart = Chart::new(lang.pick(
        format!("How the orders of each run ended, over {SEEDS} seeded runs"),
        format!("各実行の注文の結末: シード付きの {SEEDS} 回の実行"),
    ))
    .subtitle(lang.pick(
        "Each point is one run of 30 planned orders (a few roll back before they commit). \
         Solid: with retry budgets, the chapter's configuration. Dashed: completed orders of the \
         same runs without budgets. No order in any run is left unsettled.",
        "各点は、30 件の注文を予定した 1 回の実行です（コミット前に取り消されるものもあります）。\
         実線: 本章の構成どおりリトライ予算あり。破線: 同じ実行をリトライ予算なしで行ったときの\
         完了した注文。どの実行でも未決着の注文は残りません。",
    ))
    .x_axis(Axis::new(lang.pick("seed", "シード")).range(0.0, (SEEDS - 1) as f64))
    .y_axis(Axis::new(lang.pick("orders in the run", "実行内の注文数")).range(0.0, 30.0))
    .line(Line::new(
        lang.pick("completed", "完了"),
        WITH,
        series(with, completed),
    ))
    .line(Line::new(
        lang.pick("compensated", "補償済み"),
        Color::Orange,
        series(with, compensated),
    ))
    .line(Line::new(
        lang.pick("needs human", "人手が必要"),
        Color::ReddishPurple,
        series(with, needs_human),
    ))
    .line(
        Line::new(
            lang.pick("completed, no budget", "完了（リトライ予算なし）"),
            WITHOUT,
            series(without, completed),
        )
        .dashed(),
    )
    .height(440.0);
    Figure::new("ch26-outcomes", chart.svg())
}

/// `ch26-tables`: the totals behind the figures: outcomes, invariants and load.
fn tables(with: &[RunReport], without: &[RunReport]) -> Figure {
    let mut text = String::new();
    text.push_str(&format!(
        "| over {SEEDS} runs | orders | completed | compensated | needs human | unsettled | runs \
         breaking an invariant | latest settle |\n|---|---:|---:|---:|---:|---:|---:|---:|\n"
    ));
    for (name, runs) in [("with retry budgets", with), ("without a budget", without)] {
        let orders: usize = runs.iter().map(|run| run.orders.len()).sum();
        let sum = |pick: fn(&RunReport) -> usize| runs.iter().map(pick).sum::<usize>();
        let broken = runs
            .iter()
            .filter(|run| breaks_an_invariant(run) || over_budget(run))
            .count();
        let latest = runs
            .iter()
            .filter_map(|run| run.ended_at)
            .max()
            .unwrap_or(0);
        text.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {broken} | {:.1} s |\n",
            count(orders),
            count(sum(|run| run.outcome_counts().completed)),
            count(sum(|run| run.outcome_counts().compensated)),
            count(sum(|run| run.outcome_counts().needs_human)),
            count(sum(
                |run| run.outcome_counts().unsettled + run.outcome_counts().failed
            )),
            latest as f64 / 1e3,
        ));
    }
    text.push('\n');
    text.push_str(
        "| service | budgets | calls | first attempts | retries | 503s answered | runs over the \
         budget's bound |\n|---|---|---:|---:|---:|---:|---:|\n",
    );
    let budget = BudgetConfig::default();
    for step in Step::ALL {
        for (name, runs) in [("used", with), ("not used", without)] {
            let services = runs.iter().map(|run| run.service(step));
            let calls: u64 = services.clone().map(|s| s.total()).sum();
            let first: u64 = services.clone().map(|s| s.first_attempts()).sum();
            let unavailable: usize = services
                .clone()
                .map(|s| {
                    s.calls
                        .iter()
                        .filter(|call| matches!(call.answer, Answer::Unavailable { .. }))
                        .count()
                })
                .sum();
            let over = services.filter(|s| over_bound(s, &budget)).count();
            text.push_str(&format!(
                "| {step} | {name} | {} | {} | {} | {} | {over} |\n",
                count(calls as usize),
                count(first as usize),
                count((calls - first) as usize),
                count(unavailable),
            ));
        }
    }
    Figure::markdown("ch26-tables", text)
}

/// Whether `service` received more calls of some action than the chapter's budget allows.
fn over_bound(service: &ServiceReport, budget: &BudgetConfig) -> bool {
    [Action::Execute, Action::Compensate]
        .into_iter()
        .any(|action| {
            service.total_of(action) > budget.load_bound(service.first_attempts_of(action))
        })
}

/// Whether some service of `run` went over the chapter's budget bound, budgets or not.
fn over_budget(run: &RunReport) -> bool {
    let budget = BudgetConfig::default();
    run.services
        .iter()
        .any(|service| over_bound(service, &budget))
}

fn breaks_an_invariant(run: &RunReport) -> bool {
    run.invariants()
        .iter()
        .any(|invariant| invariant.broken.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_featured_run_holds_every_invariant() {
        let run = simulate(FEATURED, &Scenario::default());
        assert!(!breaks_an_invariant(&run), "{run}");
    }

    #[test]
    fn operations_are_counted_once_each() {
        let runs = vec![simulate(FEATURED, &Scenario::default())];
        let counts = calls_per_operation(&runs);
        let operations: usize = runs[0]
            .services
            .iter()
            .map(|service| service.calls_per_operation().len())
            .sum();
        assert_eq!(counts.iter().sum::<u64>(), operations as u64);
    }
}
