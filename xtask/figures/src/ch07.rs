//! Chapter 7 — Exponential backoff with a cap. One figure, computed with the reference
//! solution's own `Exponential`: the delay before each retry and the time slept in all, for
//! base 100 ms and factor 2, with a 30 s cap and without one.

use std::time::Duration;

use ch07_exponential_backoff_solution::Exponential;

use crate::figure::{Figure, Lang};
use crate::plot::{Axis, Chart, Color, Column, Grid, Line, Marker, format_number};

/// The first delay.
pub const BASE: Duration = Duration::from_millis(100);
/// What each delay is multiplied by.
pub const FACTOR: u32 = 2;
/// The cap of the capped schedule.
pub const CAP: Duration = Duration::from_secs(30);
/// The last retry on the x axis.
pub const LAST_RETRY: u32 = 16;
/// The top of the delay panel, in seconds.
const DELAY_TOP: f64 = 60.0;
/// The top of the slept-in-all panel, in minutes.
const SLEPT_TOP: f64 = 10.0;

const CAPPED: Color = Color::Blue;
const UNCAPPED: Color = Color::Vermillion;

/// The points of one line: `(retry, value)`.
type Points = Vec<(f64, f64)>;

pub fn figures(lang: Lang) -> Vec<Figure> {
    vec![growth(lang)]
}

/// The chapter's schedule, with `cap`.
fn schedule(cap: Duration) -> Exponential {
    Exponential::new(BASE, FACTOR, cap, LAST_RETRY + 1).expect("a valid schedule")
}

/// The delays before retries `0..=LAST_RETRY`, yielded by the solution's iterator.
pub fn delays(cap: Duration) -> Vec<Duration> {
    schedule(cap).collect()
}

/// The first retry whose delay is the cap.
pub fn first_capped_retry() -> u32 {
    let capped = schedule(CAP);
    (0..=LAST_RETRY)
        .find(|&retry| capped.delay(retry) == CAP)
        .unwrap_or(LAST_RETRY)
}

/// Running totals: how long a client has slept in all when it sends each retry.
fn slept_in_all(delays: &[Duration]) -> Vec<Duration> {
    delays
        .iter()
        .scan(Duration::ZERO, |total, delay| {
            *total += *delay;
            Some(*total)
        })
        .collect()
}

/// `(retry, value)` points, cut where the line leaves the panel through its top, with the
/// crossing itself as the last point (the plotting library does not clip).
fn clipped(values: impl IntoIterator<Item = f64>, top: f64) -> Points {
    let mut points: Points = Vec::new();
    for (retry, value) in values.into_iter().enumerate() {
        let x = retry as f64;
        if value <= top {
            points.push((x, value));
            continue;
        }
        if let Some(&(x0, y0)) = points.last() {
            points.push((x0 + (top - y0) / (value - y0) * (x - x0), top));
        }
        break;
    }
    points
}

fn panel(lang: Lang, title: String, top: f64, capped: Points, uncapped: Points) -> Chart {
    let reached = first_capped_retry();
    Chart::new(title)
        .x_axis(Axis::new("").range(0.0, f64::from(LAST_RETRY)))
        .y_axis(Axis::new("").range(0.0, top))
        .line(
            Line::new(
                lang.pick("no cap: 100 ms · 2^retry", "上限なし: 100 ms · 2^retry"),
                UNCAPPED,
                uncapped,
            )
            .dashed(),
        )
        .line(Line::new(
            lang.pick("capped at 30 s", "上限 30 s"),
            CAPPED,
            capped,
        ))
        .marker(Marker::new(
            f64::from(reached),
            lang.pick(
                format!("cap reached at retry {reached}"),
                format!("リトライ {reached} で上限に到達"),
            ),
        ))
}

fn seconds(duration: &Duration) -> f64 {
    duration.as_secs_f64()
}

fn minutes(duration: &Duration) -> f64 {
    duration.as_secs_f64() / 60.0
}

/// `ch07-growth`: the delay before each retry and the time slept in all, capped and uncapped.
fn growth(lang: Lang) -> Figure {
    let (capped, uncapped) = (delays(CAP), delays(Duration::MAX));
    let (capped_total, uncapped_total) = (slept_in_all(&capped), slept_in_all(&uncapped));
    let last = LAST_RETRY as usize;
    let x_label = lang.pick(
        "retry number (0 = the first retry)",
        "リトライの番号（0 = 最初のリトライ）",
    );

    let (capped_s, uncapped_h) = (
        format_number(seconds(&capped[last]), 0),
        format_number(seconds(&uncapped[last]) / 3_600.0, 1),
    );
    let delay_title = lang.pick(
        format!("before retry {LAST_RETRY}: {capped_s} s capped, {uncapped_h} h without a cap"),
        format!("リトライ {LAST_RETRY} の前: 上限あり {capped_s} s、なし {uncapped_h} h"),
    );
    let delay = Column::new(
        lang.pick("The delay before each retry", "各リトライの前の待ち時間"),
        x_label,
        lang.pick("delay (s)", "待ち時間（s）"),
    )
    .chart(panel(
        lang,
        delay_title,
        DELAY_TOP,
        capped
            .iter()
            .enumerate()
            .map(|(i, d)| (i as f64, seconds(d)))
            .collect(),
        clipped(uncapped.iter().map(seconds), DELAY_TOP),
    ));

    let (capped_min, uncapped_h) = (
        format_number(minutes(&capped_total[last]), 1),
        format_number(minutes(&uncapped_total[last]) / 60.0, 1),
    );
    let slept_title = lang.pick(
        format!("by retry {LAST_RETRY}: {capped_min} min capped, {uncapped_h} h without a cap"),
        format!("リトライ {LAST_RETRY} まで: 上限あり {capped_min} min、なし {uncapped_h} h"),
    );
    let slept = Column::new(
        lang.pick(
            "Slept in all since the first failure",
            "最初の失敗からのスリープの合計",
        ),
        x_label,
        lang.pick("slept (min)", "スリープの合計（min）"),
    )
    .chart(panel(
        lang,
        slept_title,
        SLEPT_TOP,
        capped_total
            .iter()
            .enumerate()
            .map(|(i, d)| (i as f64, minutes(d)))
            .collect(),
        clipped(uncapped_total.iter().map(minutes), SLEPT_TOP),
    ));

    let base = BASE.as_millis();
    let leaves = uncapped.iter().filter(|d| seconds(d) <= DELAY_TOP).count() - 1;
    let reached = first_capped_retry();
    let grid = Grid::new(lang.pick(
        "Exponential backoff, with and without a cap",
        "指数バックオフ: 上限ありと上限なし",
    ))
    .subtitle(lang.pick(
        format!(
            "Base {base} ms, factor {FACTOR}: the delays double from retry to retry. Without a \
             cap they leave the left chart after retry {leaves} and never stop growing; with a \
             30 s cap they stop growing at retry {reached}, and from then on the total grows by \
             only 30 s per retry. Computed with the solution's Exponential."
        ),
        format!(
            "基準 {base} ms、倍率 {FACTOR}: 待ち時間はリトライごとに倍になります。上限がなければ\
             リトライ {leaves} の後に左の図からはみ出し、いつまでも伸び続けます。上限 30 s が\
             あればリトライ {reached} で伸びが止まり、それ以降の合計はリトライ 1 回につき 30 s \
             ずつしか増えません。模範解答の Exponential で計算しました。"
        ),
    ))
    .column(delay)
    .column(slept)
    .panel_height(250.0);
    Figure::new("ch07-growth", grid.svg())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_are_the_books_table() {
        let capped: Vec<u128> = delays(CAP).iter().map(Duration::as_millis).collect();
        assert_eq!(
            capped[..11],
            [
                100, 200, 400, 800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000, 30_000
            ]
        );
        assert_eq!(first_capped_retry(), 9);
    }

    #[test]
    fn clipping_ends_on_the_top_edge() {
        let points = clipped([10.0, 20.0, 40.0, 80.0], 60.0);
        assert_eq!(points, [(0.0, 10.0), (1.0, 20.0), (2.0, 40.0), (2.5, 60.0)]);
    }
}
