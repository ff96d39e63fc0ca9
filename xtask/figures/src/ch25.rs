//! Chapter 25 — Adaptive client-side throttling. One figure and one table from the given
//! overload lab, run with the reference solution's `AdaptiveThrottle`.

use ch25_adaptive_throttling_solution::lab::{Limit, OVERLOAD, SECONDS, Second, simulate};

use crate::figure::{Figure, Lang};
use crate::plot::{Axis, Chart, Color, Column, Grid, Line, Marker, format_number, per_second};

/// The seed of the figure's runs.
const SEED: u64 = 1;

fn label(limit: Limit, lang: Lang) -> &'static str {
    match limit {
        Limit::Nothing => lang.pick("no limit (3 attempts)", "制限なし（3 回の試行）"),
        Limit::RetryBudget => lang.pick("retry budget", "リトライ予算"),
        Limit::Throttle => lang.pick("adaptive throttle", "適応的スロットリング"),
        Limit::Both => lang.pick("budget + throttle", "予算 + スロットリング"),
    }
}

fn color(limit: Limit) -> Color {
    match limit {
        Limit::Nothing => Color::Vermillion,
        Limit::RetryBudget => Color::Orange,
        Limit::Throttle => Color::Blue,
        Limit::Both => Color::BluishGreen,
    }
}

pub fn figures(lang: Lang) -> Vec<Figure> {
    let runs: Vec<(Limit, Vec<Second>)> = Limit::ALL
        .iter()
        .map(|&limit| (limit, simulate(limit, SEED)))
        .collect();
    vec![overload(lang, &runs), table(&runs)]
}

fn panel(
    lang: Lang,
    title: &str,
    runs: &[(Limit, Vec<Second>)],
    value: fn(&Second) -> u32,
) -> Chart {
    let mut chart = Chart::new(title)
        .x_axis(Axis::new("").range(0.0, f64::from(SECONDS)))
        .y_axis(Axis::new("").min(0.0))
        .marker(Marker::new(
            f64::from(OVERLOAD.start),
            lang.pick("300 requests/s", "毎秒 300 リクエスト"),
        ))
        .marker(Marker::new(
            f64::from(OVERLOAD.end),
            lang.pick("100 requests/s", "毎秒 100 リクエスト"),
        ));
    for (limit, seconds) in runs {
        chart = chart.line(Line::new(
            label(*limit, lang),
            color(*limit),
            per_second(seconds, value),
        ));
    }
    chart
}

fn total(seconds: &[Second], range: std::ops::Range<u32>, value: fn(&Second) -> u32) -> u32 {
    seconds[range.start as usize..range.end as usize]
        .iter()
        .map(value)
        .sum()
}

/// `ch25-overload`: requests served and calls sent per second, for the four clients.
fn overload(lang: Lang, runs: &[(Limit, Vec<Second>)]) -> Figure {
    let served = |s: &Second| s.served;
    let sent = |s: &Second| s.sent;
    let column = Column::per_second(lang)
        .chart(panel(
            lang,
            lang.pick(
                "Requests served (the backend can serve 100/s)",
                "処理されたリクエスト（バックエンドが処理できるのは毎秒 100）",
            ),
            runs,
            served,
        ))
        .chart(panel(
            lang,
            lang.pick("Calls reaching the backend", "バックエンドに届く呼び出し"),
            runs,
            sent,
        ));
    let useful = |limit: Limit| {
        let (_, seconds) = runs
            .iter()
            .find(|(l, _)| *l == limit)
            .expect("every limit runs");
        format_number(
            f64::from(total(seconds, OVERLOAD, served)) / f64::from(OVERLOAD.len() as u32),
            0,
        )
    };
    let (nothing, budget, throttle, both) = (
        useful(Limit::Nothing),
        useful(Limit::RetryBudget),
        useful(Limit::Throttle),
        useful(Limit::Both),
    );
    let grid = Grid::new(lang.pick(
        "A minute of 3× overload, four clients",
        "3 倍の過負荷が 1 分間続く: 4 種類のクライアント",
    ))
    .subtitle(lang.pick(
        format!(
            "Refusing a request costs the backend a fifth of serving one. Requests served per \
             second during the overload: {nothing} with no limit, {budget} with the retry \
             budget, {throttle} with the adaptive throttle (K = 2, 2 min), {both} with both."
        ),
        format!(
            "リクエストを断るコストは、バックエンドにとって処理するコストの 5 分の 1 です。過負荷の間に\
             毎秒処理されたリクエストは、制限なしで {nothing}、リトライ予算で {budget}、適応的\
             スロットリング（K = 2、2 min）で {throttle}、両方で {both} でした。"
        ),
    ))
        .column(column)
        .panel_height(200.0);
    Figure::new("ch25-overload", grid.svg())
}

/// `ch25-overload-table`: the lab's totals, for the page to quote.
fn table(runs: &[(Limit, Vec<Second>)]) -> Figure {
    let served = |s: &Second| s.served;
    let sent = |s: &Second| s.sent;
    let after = OVERLOAD.end..SECONDS;
    let mut text = String::from(
        "| client | overload: calls | overload: served | after: calls | after: served |\n|---|---:|---:|---:|---:|\n",
    );
    for (limit, seconds) in runs {
        text.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            label(*limit, Lang::En),
            format_number(f64::from(total(seconds, OVERLOAD, sent)), 0),
            format_number(f64::from(total(seconds, OVERLOAD, served)), 0),
            format_number(f64::from(total(seconds, after.clone(), sent)), 0),
            format_number(f64::from(total(seconds, after.clone(), served)), 0),
        ));
    }
    Figure::markdown("ch25-overload-table", text)
}
