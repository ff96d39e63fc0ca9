//! Chapter 28 — Adaptive concurrency limits. One figure and one table from the given lab, run
//! with the reference solution's `AimdLimiter` and `GradientLimit`.

use ch28_concurrency_limits_solution::lab::{DEGRADED, Gate, SECONDS, Second, simulate};

use crate::figure::{Figure, Lang};
use crate::plot::{Axis, Chart, Color, Column, Grid, Line, Marker, format_number};

/// The seed of the figure's runs (the prediction program's too).
const SEED: u64 = 1;

fn label(gate: Gate, lang: Lang) -> String {
    match gate {
        Gate::Static(limit) => lang.pick(
            format!("static limit {limit}"),
            format!("固定の上限 {limit}"),
        ),
        Gate::Aimd(_) => "AIMD".to_owned(),
        Gate::Gradient(_) => lang.pick("gradient", "勾配リミット").to_owned(),
    }
}

fn color(index: usize) -> Color {
    [
        Color::Vermillion,
        Color::Orange,
        Color::Blue,
        Color::BluishGreen,
    ][index]
}

pub fn figures(lang: Lang) -> Vec<Figure> {
    let runs: Vec<(Gate, Vec<Second>)> = Gate::all()
        .into_iter()
        .map(|gate| (gate, simulate(gate, SEED)))
        .collect();
    vec![lab(lang, &runs), table(&runs)]
}

fn panel(
    lang: Lang,
    title: &str,
    runs: &[(Gate, Vec<Second>)],
    value: fn(&Second) -> Option<f64>,
) -> Chart {
    let mut chart = Chart::new(title)
        .x_axis(Axis::new("").range(0.0, f64::from(SECONDS)))
        .y_axis(Axis::new("").min(0.0))
        .marker(Marker::new(
            f64::from(DEGRADED.start),
            lang.pick("half the workers", "ワーカーが半分に"),
        ))
        .marker(Marker::new(
            f64::from(DEGRADED.end),
            lang.pick("all back", "全ワーカーが復帰"),
        ));
    for (index, (gate, seconds)) in runs.iter().enumerate() {
        let points = (0..)
            .zip(seconds)
            .filter_map(|(t, second)| value(second).map(|v| (f64::from(t) + 0.5, v)))
            .collect();
        chart = chart.line(Line::new(label(*gate, lang), color(index), points));
    }
    chart
}

/// The mean of `value` over the seconds of `range`.
fn mean(seconds: &[Second], range: std::ops::Range<u32>, value: fn(&Second) -> f64) -> f64 {
    let part = &seconds[range.start as usize..range.end as usize];
    part.iter().map(value).sum::<f64>() / part.len() as f64
}

/// The largest p99 of the seconds of `range`.
fn worst_p99(seconds: &[Second], range: std::ops::Range<u32>) -> f64 {
    seconds[range.start as usize..range.end as usize]
        .iter()
        .filter_map(|s| s.p99_ms)
        .fold(0.0, f64::max)
}

fn good(second: &Second) -> f64 {
    f64::from(second.good)
}

/// `ch28-lab`: goodput, p99 latency and the limit per second, for the four gates.
fn lab(lang: Lang, runs: &[(Gate, Vec<Second>)]) -> Figure {
    let column = Column::new("", lang.pick("seconds", "秒"), "")
        .chart(panel(
            lang,
            lang.pick(
                "Goodput: answers within the client's 250 ms, per second",
                "グッドプット: クライアントの 250 ms 以内に返せた応答（毎秒）",
            ),
            runs,
            |s| Some(good(s)),
        ))
        .chart(panel(
            lang,
            lang.pick(
                "p99 latency of the answers, ms",
                "応答の p99 レイテンシ（ms）",
            ),
            runs,
            |s| s.p99_ms,
        ))
        .chart(panel(
            lang,
            lang.pick("The limit", "同時実行数の上限"),
            runs,
            |s| Some(s.limit),
        ));
    let degraded = |index: usize| format_number(mean(&runs[index].1, DEGRADED, good), 0);
    let (large, small, aimd, gradient) = (degraded(0), degraded(1), degraded(2), degraded(3));
    let grid = Grid::new(lang.pick(
        "Capacity halves from second 20 to 40: four concurrency limits",
        "20 秒目から 40 秒目まで処理能力が半分に: 4 つの同時実行数の上限",
    ))
    .subtitle(lang.pick(
        format!(
            "20 workers (about 2,000 requests/s, 1,000 while degraded), 1,500 requests/s offered. \
             Goodput per second while degraded: {large} with a static limit of 500, {small} with \
             12, {aimd} with AIMD, {gradient} with the gradient."
        ),
        format!(
            "ワーカー 20 個（毎秒約 2,000 リクエスト、劣化中は 1,000）に、毎秒 1,500 リクエストが\
             届きます。劣化中の毎秒のグッドプットは、固定の上限 500 で {large}、12 で {small}、\
             AIMD で {aimd}、勾配リミットで {gradient} でした。"
        ),
    ))
    .column(column)
    .panel_height(180.0);
    Figure::new("ch28-lab", grid.svg())
}

/// `ch28-lab-table`: the lab's numbers, for the page to quote.
fn table(runs: &[(Gate, Vec<Second>)]) -> Figure {
    let healthy = 0..DEGRADED.start;
    let after = DEGRADED.end..SECONDS;
    let mut text = String::from(
        "| gate | healthy: goodput/s | healthy: worst p99 | degraded: goodput/s | degraded: worst p99 | degraded: limit at the end | after: goodput/s |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for (gate, seconds) in runs {
        text.push_str(&format!(
            "| {} | {} | {} ms | {} | {} ms | {} | {} |\n",
            label(*gate, Lang::En),
            format_number(mean(seconds, healthy.clone(), good), 0),
            format_number(worst_p99(seconds, healthy.clone()), 0),
            format_number(mean(seconds, DEGRADED, good), 0),
            format_number(worst_p99(seconds, DEGRADED), 0),
            format_number(seconds[DEGRADED.end as usize - 1].limit, 0),
            format_number(mean(seconds, after.clone(), good), 0),
        ));
    }
    Figure::markdown("ch28-lab-table", text)
}
