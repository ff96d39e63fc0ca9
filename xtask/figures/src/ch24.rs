//! Chapter 24 — Hedged requests. One figure and one table from the given tail-latency lab, run
//! with the reference solution's `hedged`.

use std::time::Duration;

use ch24_hedged_requests_solution::lab::{Summary, simulate};

use crate::figure::{Figure, Lang};
use crate::plot::{Axis, Chart, Color, Column, Grid, Line, Marker};

/// Calls per seed and the seeds: 5,000 calls per setting.
const CALLS: u32 = 1_000;
const SEEDS: std::ops::Range<u64> = 0..5;
/// The hedging delays of the sweep, in milliseconds.
const DELAYS: [u64; 13] = [5, 10, 15, 20, 25, 30, 40, 50, 60, 80, 100, 150, 200];

pub fn figures(lang: Lang) -> Vec<Figure> {
    let unhedged = simulate(None, CALLS, SEEDS);
    let sweep: Vec<(u64, Summary)> = DELAYS
        .iter()
        .map(|&ms| (ms, simulate(Some(Duration::from_millis(ms)), CALLS, SEEDS)))
        .collect();
    vec![tail(lang, &unhedged, &sweep), table(&unhedged, &sweep)]
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn series(sweep: &[(u64, Summary)], value: fn(&Summary) -> f64) -> Vec<(f64, f64)> {
    sweep.iter().map(|(ms, s)| (*ms as f64, value(s))).collect()
}

fn flat(sweep: &[(u64, Summary)], y: f64) -> Vec<(f64, f64)> {
    vec![(sweep[0].0 as f64, y), (sweep[sweep.len() - 1].0 as f64, y)]
}

/// `ch24-tail`: latency percentiles and extra load against the hedging delay.
fn tail(lang: Lang, unhedged: &Summary, sweep: &[(u64, Summary)]) -> Figure {
    let p95 = millis(unhedged.p95);
    let x = || Axis::new("").range(0.0, 200.0);
    let p95_marker = || Marker::new(p95, lang.pick("p95 without hedging", "ヘッジなしの p95"));
    let with_hedge = |percentile: &str| {
        lang.pick(
            format!("{percentile} with one hedge"),
            format!("ヘッジ 1 回ありの {percentile}"),
        )
    };
    let latency = Chart::new(lang.pick(
        "How long a call takes (ms): p50, p99 and p99.9",
        "1 回の呼び出しにかかる時間（ms）: p50、p99、p99.9",
    ))
    .x_axis(x())
    .y_axis(Axis::new("").min(0.0))
    .marker(p95_marker())
    .line(Line::new(
        with_hedge("p99.9"),
        Color::Vermillion,
        series(sweep, |s| millis(s.p999)),
    ))
    .line(Line::new(
        with_hedge("p99"),
        Color::Orange,
        series(sweep, |s| millis(s.p99)),
    ))
    .line(Line::new(
        with_hedge("p50"),
        Color::Blue,
        series(sweep, |s| millis(s.p50)),
    ))
    .line(
        Line::new(
            lang.pick("p99 without hedging", "ヘッジなしの p99"),
            Color::Orange,
            flat(sweep, millis(unhedged.p99)),
        )
        .dashed(),
    );
    let load = Chart::new(lang.pick(
        "Extra requests sent by the hedges (% of calls)",
        "ヘッジが送った追加のリクエスト（呼び出しに対する %）",
    ))
    .x_axis(x())
    .y_axis(Axis::new("").min(0.0))
    .marker(p95_marker())
    .line(Line::new(
        lang.pick("extra requests", "追加のリクエスト"),
        Color::BluishGreen,
        series(sweep, |s| s.extra_load * 100.0),
    ));
    let column = Column::new(
        "",
        lang.pick("hedging delay (ms)", "ヘッジするまでの遅延（ms）"),
        "",
    )
    .chart(latency)
    .chart(load);
    let at_p95 = sweep
        .iter()
        .min_by_key(|(ms, _)| (*ms as f64 - p95).abs() as u64)
        .map(|(_, s)| *s)
        .expect("the sweep has settings");
    let calls = CALLS as u64 * (SEEDS.end - SEEDS.start);
    let (p50, p99, p999) = (
        unhedged.p50.as_millis(),
        unhedged.p99.as_millis(),
        unhedged.p999.as_millis(),
    );
    let slow = unhedged.slow_share * 100.0;
    let p95 = unhedged.p95.as_millis();
    let (hedged_p999, extra) = (at_p95.p999.as_millis(), at_p95.extra_load * 100.0);
    let grid = Grid::new(lang.pick(
        format!("One hedge, {calls} calls per setting, against a backend with a long tail"),
        format!("テールの長いバックエンドにヘッジ 1 回、設定ごとに {calls} 回の呼び出し"),
    ))
    .subtitle(lang.pick(
        format!(
            "Without hedging: p50 {p50} ms, p99 {p99} ms, p99.9 {p999} ms (off the chart; \
             {slow:.2} % of the calls met a hiccup). Hedging at about the 95th percentile ({p95} \
             ms) gives p99.9 {hedged_p999} ms for {extra:.1} % more requests."
        ),
        format!(
            "ヘッジなし: p50 {p50} ms、p99 {p99} ms、p99.9 {p999} ms（図の外。呼び出しの \
             {slow:.2} % が一時的な停滞に当たりました）。95 パーセンタイル付近（{p95} ms）で\
             ヘッジすると、リクエストが {extra:.1} % 増える代わりに p99.9 は {hedged_p999} ms \
             になります。"
        ),
    ))
    .column(column)
    .panel_height(220.0);
    Figure::new("ch24-tail", grid.svg())
}

/// `ch24-tail-table`: the sweep's numbers, for the page to quote.
fn table(unhedged: &Summary, sweep: &[(u64, Summary)]) -> Figure {
    let mut text = String::from(
        "| hedging delay | p50 | p95 | p99 | p99.9 | extra requests | calls of 300 ms or more |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    let row = |label: String, s: &Summary| {
        format!(
            "| {label} | {} ms | {} ms | {} ms | {} ms | {:.1} % | {:.2} % |\n",
            s.p50.as_millis(),
            s.p95.as_millis(),
            s.p99.as_millis(),
            s.p999.as_millis(),
            s.extra_load * 100.0,
            s.slow_share * 100.0
        )
    };
    text.push_str(&row("no hedge".to_owned(), unhedged));
    for (ms, summary) in sweep {
        text.push_str(&row(format!("{ms} ms"), summary));
    }
    Figure::markdown("ch24-tail-table", text)
}
