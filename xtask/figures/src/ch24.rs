//! Chapter 24 — Hedged requests. One figure and one table from the given tail-latency lab, run
//! with the reference solution's `hedged`.

use std::time::Duration;

use ch24_hedged_requests_solution::lab::{Summary, simulate};

use crate::figure::Figure;
use crate::plot::{Axis, Chart, Color, Column, Grid, Line, Marker};

/// Calls per seed and the seeds: 5,000 calls per setting.
const CALLS: u32 = 1_000;
const SEEDS: std::ops::Range<u64> = 0..5;
/// The hedging delays of the sweep, in milliseconds.
const DELAYS: [u64; 13] = [5, 10, 15, 20, 25, 30, 40, 50, 60, 80, 100, 150, 200];

pub fn figures() -> Vec<Figure> {
    let unhedged = simulate(None, CALLS, SEEDS);
    let sweep: Vec<(u64, Summary)> = DELAYS
        .iter()
        .map(|&ms| (ms, simulate(Some(Duration::from_millis(ms)), CALLS, SEEDS)))
        .collect();
    vec![tail(&unhedged, &sweep), table(&unhedged, &sweep)]
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
fn tail(unhedged: &Summary, sweep: &[(u64, Summary)]) -> Figure {
    let p95 = millis(unhedged.p95);
    let x = || Axis::new("").range(0.0, 200.0);
    let latency = Chart::new("How long a call takes (ms): p50, p99 and p99.9")
        .x_axis(x())
        .y_axis(Axis::new("").min(0.0))
        .marker(Marker::new(p95, "p95 without hedging"))
        .line(Line::new(
            "p99.9 with one hedge",
            Color::Vermillion,
            series(sweep, |s| millis(s.p999)),
        ))
        .line(Line::new(
            "p99 with one hedge",
            Color::Orange,
            series(sweep, |s| millis(s.p99)),
        ))
        .line(Line::new(
            "p50 with one hedge",
            Color::Blue,
            series(sweep, |s| millis(s.p50)),
        ))
        .line(
            Line::new(
                "p99 without hedging",
                Color::Orange,
                flat(sweep, millis(unhedged.p99)),
            )
            .dashed(),
        );
    let load = Chart::new("Extra requests sent by the hedges (% of calls)")
        .x_axis(x())
        .y_axis(Axis::new("").min(0.0))
        .marker(Marker::new(p95, "p95 without hedging"))
        .line(Line::new(
            "extra requests",
            Color::BluishGreen,
            series(sweep, |s| s.extra_load * 100.0),
        ));
    let column = Column::new("", "hedging delay (ms)", "")
        .chart(latency)
        .chart(load);
    let at_p95 = sweep
        .iter()
        .min_by_key(|(ms, _)| (*ms as f64 - p95).abs() as u64)
        .map(|(_, s)| *s)
        .expect("the sweep has settings");
    let grid = Grid::new(format!(
        "One hedge, {} calls per setting, against a backend with a long tail",
        CALLS as u64 * (SEEDS.end - SEEDS.start)
    ))
    .subtitle(format!(
        "Without hedging: p50 {} ms, p99 {} ms, p99.9 {} ms (off the chart; {:.2} % of the calls \
         met a hiccup). Hedging at about the 95th percentile ({} ms) gives p99.9 {} ms for \
         {:.1} % more requests.",
        unhedged.p50.as_millis(),
        unhedged.p99.as_millis(),
        unhedged.p999.as_millis(),
        unhedged.slow_share * 100.0,
        unhedged.p95.as_millis(),
        at_p95.p999.as_millis(),
        at_p95.extra_load * 100.0,
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
