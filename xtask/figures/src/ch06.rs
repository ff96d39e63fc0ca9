//! Chapter 6 — Fixed and linear backoff. One figure: the retries of 100 clients that failed at the
//! same moment, per 10 ms window, under a fixed, a linear and (as a preview of chapter 8) a
//! full-jitter policy. The histograms come from the reference solution's own `load_per_window`,
//! the policies from its `Fixed` and `Linear`, the jittered delays from chapter 8's `full_jitter`.
//!
//! The delays are the book's 3 s example shrunk to 100 ms, so that 10 ms windows stay visible.

use std::time::Duration;

use ch06_fixed_and_linear_solution::{Fixed, Linear, load_per_window};
use ch08_full_jitter_solution::full_jitter;
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::figure::{Figure, Lang};
use crate::plot::{Axis, Chart, Color, Column, Grid, Histogram, format_number};

/// Clients that failed together at t = 0.
pub const CLIENTS: usize = 100;
/// Retries per client.
pub const RETRIES: u32 = 5;
/// The fixed delay, the linear policy's initial delay and increment, and the jitter's base.
pub const STEP: Duration = Duration::from_millis(100);
/// The cap of the full-jitter preview.
pub const CAP: Duration = Duration::from_millis(1_000);
/// The width of one window of the histograms.
pub const WINDOW: Duration = Duration::from_millis(10);
/// The seed of the jittered delays.
pub const SEED: u64 = 6;

pub fn figures(lang: Lang) -> Vec<Figure> {
    vec![arrivals(lang)]
}

/// The fixed policy's delays: 100 ms before each of the five retries.
pub fn fixed_schedule() -> Vec<Duration> {
    Fixed::new(STEP, RETRIES).collect()
}

/// The linear policy's delays: 100, 200, 300, 400 and 500 ms.
pub fn linear_schedule() -> Vec<Duration> {
    Linear::new(STEP, STEP, RETRIES).collect()
}

/// Retries per window for `CLIENTS` clients in step on one schedule.
pub fn in_step(schedule: &[Duration]) -> Vec<usize> {
    load_per_window(schedule, CLIENTS, WINDOW)
}

/// Retries per window when every client draws its own full-jitter delays (chapter 8): each
/// client's histogram, from `load_per_window` with one client, added up window by window.
pub fn jittered(seed: u64) -> Vec<usize> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut total: Vec<usize> = Vec::new();
    for _ in 0..CLIENTS {
        let schedule: Vec<Duration> = (0..RETRIES)
            .map(|retry| full_jitter(retry, STEP, CAP, &mut rng))
            .collect();
        let load = load_per_window(&schedule, 1, WINDOW);
        if total.len() < load.len() {
            total.resize(load.len(), 0);
        }
        for (sum, count) in total.iter_mut().zip(load) {
            *sum += count;
        }
    }
    total
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

/// How many windows hold at least one retry.
fn busy_windows(load: &[usize]) -> usize {
    load.iter().filter(|&&count| count > 0).count()
}

fn panel(title: String, load: &[usize], x_max: f64, color: Color) -> Chart {
    let counts: Vec<u64> = load.iter().map(|&count| count as u64).collect();
    Chart::new(title)
        .x_axis(Axis::new("").range(0.0, x_max))
        .y_axis(Axis::new("").range(0.0, CLIENTS as f64))
        .histogram(Histogram::from_counts("", color, 0.0, ms(WINDOW), &counts))
}

/// `ch06-arrivals`: the three policies' retries per 10 ms window, on one scale.
fn arrivals(lang: Lang) -> Figure {
    let fixed = in_step(&fixed_schedule());
    let linear = in_step(&linear_schedule());
    let jitter = jittered(SEED);
    let windows = fixed.len().max(linear.len()).max(jitter.len());
    let x_max = (ms(WINDOW) * windows as f64 / 500.0).ceil() * 500.0;
    let busiest = |load: &[usize]| load.iter().copied().max().unwrap_or(0);
    let count = |n: usize| format_number(n as f64, 0);

    let (fixed_spikes, fixed_height) = (busy_windows(&fixed), count(busiest(&fixed)));
    let (linear_spikes, linear_height) = (busy_windows(&linear), count(busiest(&linear)));
    let jitter_height = count(busiest(&jitter));
    let column = Column::new(
        "",
        lang.pick(
            "time since the common failure (ms)",
            "一斉に失敗してからの時間（ms）",
        ),
        lang.pick(
            "retries arriving per 10 ms window",
            "10 ms の時間窓ごとに届くリトライ",
        ),
    )
    .chart(panel(
        lang.pick(
            format!("Fixed, 100 ms each time: {fixed_spikes} spikes of {fixed_height} retries"),
            format!("固定、毎回 100 ms: {fixed_height} 件のリトライの山が {fixed_spikes} つ"),
        ),
        &fixed,
        x_max,
        Color::Vermillion,
    ))
    .chart(panel(
        lang.pick(
            format!(
                "Linear, 100 ms + 100 ms each time: still {linear_spikes} spikes of \
                 {linear_height}, further apart"
            ),
            format!(
                "線形、100 ms に毎回 100 ms を足す: やはり {linear_height} 件の山が \
                 {linear_spikes} つ、間隔が広がるだけ"
            ),
        ),
        &linear,
        x_max,
        Color::Orange,
    ))
    .chart(panel(
        lang.pick(
            format!(
                "Preview of chapter 8, full jitter (base 100 ms, cap 1 s): busiest window holds \
                 {jitter_height}"
            ),
            format!(
                "第 8 章の先取り、フルジッター（基準 100 ms、上限 1 s）: 最も混む時間窓でも \
                 {jitter_height} 件"
            ),
        ),
        &jitter,
        x_max,
        Color::Blue,
    ));
    let (clients, window) = (count(CLIENTS), ms(WINDOW));
    let grid = Grid::new(lang.pick(
        format!(
            "{clients} clients fail at the same moment and retry {RETRIES} times: what the \
             server sees"
        ),
        format!(
            "{clients} クライアントが同時に失敗して {RETRIES} 回リトライする: サーバーから見えるもの"
        ),
    ))
    .subtitle(lang.pick(
        format!(
            "Every call fails at once, so each retry arrives at the sum of the delays before it. \
             Histograms from the solution's load_per_window in {window} ms windows, all on the \
             same scale; the jittered delays come from chapter 8's full_jitter, StdRng seed \
             {SEED}."
        ),
        format!(
            "すべての呼び出しが同時に失敗するので、各リトライはそれまでの待ち時間の合計の時点で届きます。\
             模範解答の load_per_window で {window} ms の時間窓ごとに数えたヒストグラムで、\
             縦軸はすべて同じ目盛りです。ジッター付きの待ち時間は第 8 章の full_jitter（StdRng \
             シード {SEED}）で引いています。"
        ),
    ))
    .column(column)
    .panel_height(150.0);
    Figure::new("ch06-arrivals", grid.svg())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The windows that hold retries, and how many each holds.
    fn spikes(load: &[usize]) -> Vec<(usize, usize)> {
        load.iter()
            .enumerate()
            .filter(|&(_, &count)| count > 0)
            .map(|(window, &count)| (window, count))
            .collect()
    }

    #[test]
    fn fixed_and_linear_land_where_the_book_says() {
        assert_eq!(
            spikes(&in_step(&fixed_schedule())),
            [(10, 100), (20, 100), (30, 100), (40, 100), (50, 100)]
        );
        assert_eq!(
            spikes(&in_step(&linear_schedule())),
            [(10, 100), (30, 100), (60, 100), (100, 100), (150, 100)]
        );
    }

    #[test]
    fn jitter_spreads_the_same_retries() {
        let load = jittered(SEED);
        assert_eq!(load.iter().sum::<usize>(), CLIENTS * RETRIES as usize);
        assert!(load.iter().all(|&count| count < CLIENTS / 5));
        assert!(load.len() <= 251);
    }
}
