//! Chapter 9 — Equal and decorrelated jitter. Two figures that put the three jittered policies
//! side by side, every delay drawn by the reference solutions: `full_jitter` from chapter 8,
//! `EqualJitter` and `DecorrelatedJitter` from chapter 9.
//!
//! The parameters are chapter 8's (base 50 ms, cap 500 ms), so the ceilings before retries 0 to 4
//! are 50, 100, 200, 400 and 500 ms. Every client draws its delays in order from one generator
//! shared by all clients of a policy, seeded with [`SEED`]: the same procedure as the exercise's
//! `examples/predict.rs`, so the numbers in the figures and in the book's table agree with it.

use std::time::Duration;

use ch08_full_jitter_solution::full_jitter;
use ch09_equal_and_decorrelated_solution::{DecorrelatedJitter, EqualJitter, backoff_ceiling};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::figure::{Figure, Lang};
use crate::plot::{Axis, Chart, Color, Column, Grid, Histogram, Line, Marker, format_number};

/// The base delay.
pub const BASE: Duration = Duration::from_millis(50);
/// The cap: no delay is ever longer.
pub const CAP: Duration = Duration::from_millis(500);
/// Clients per policy.
pub const CLIENTS: usize = 10_000;
/// Retries per client (numbered 0 to 9), as in the exercise's `examples/predict.rs`.
pub const RETRIES: u32 = 10;
/// The retries shown in the distributions figure (0 to 4).
pub const SHOWN: u32 = 5;
/// Clients drawn as lines in the sample-paths figure.
pub const PATHS: usize = 4;
/// The seed of every random draw in this chapter's figures.
pub const SEED: u64 = 2015;

/// The width of a histogram bin.
const BIN: Duration = Duration::from_millis(10);

/// The three jittered policies, in the order the book discusses them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Full,
    Equal,
    Decorrelated,
}

impl Policy {
    pub const ALL: [Policy; 3] = [Policy::Full, Policy::Equal, Policy::Decorrelated];

    fn color(self) -> Color {
        match self {
            Policy::Full => Color::Blue,
            Policy::Equal => Color::Orange,
            Policy::Decorrelated => Color::BluishGreen,
        }
    }

    fn heading(self, lang: Lang) -> &'static str {
        match self {
            Policy::Full => lang.pick("Full: [0, t]", "フル: [0, t]"),
            Policy::Equal => lang.pick("Equal: [t/2, t]", "イコール: [t/2, t]"),
            Policy::Decorrelated => lang.pick(
                "Decorrelated: [base, 3·prev]",
                "デコリレーテッド: [base, 3·prev]",
            ),
        }
    }

    /// The delays of `clients` clients before retries `0..retries`: `delays[client][retry]`.
    /// One generator serves every client in turn, as in the exercise's `examples/predict.rs`.
    pub fn delays(self, clients: usize, retries: u32) -> Vec<Vec<Duration>> {
        let mut rng = StdRng::seed_from_u64(SEED);
        (0..clients)
            .map(|_| match self {
                Policy::Full => (0..retries)
                    .map(|retry| full_jitter(retry, BASE, CAP, &mut rng))
                    .collect(),
                Policy::Equal => EqualJitter::new(BASE, CAP, retries, &mut rng).collect(),
                Policy::Decorrelated => {
                    DecorrelatedJitter::new(BASE, CAP, retries, &mut rng).collect()
                }
            })
            .collect()
    }
}

/// The delays before one retry, across all clients.
pub fn column(delays: &[Vec<Duration>], retry: u32) -> Vec<Duration> {
    delays.iter().map(|client| client[retry as usize]).collect()
}

/// The mean of some delays.
pub fn mean(delays: &[Duration]) -> Duration {
    let total: u128 = delays.iter().map(Duration::as_nanos).sum();
    let nanos = total / delays.len().max(1) as u128;
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

/// The share of delays exactly at the cap.
pub fn share_at_cap(delays: &[Duration]) -> f64 {
    let at_cap = delays.iter().filter(|delay| **delay == CAP).count();
    at_cap as f64 / delays.len().max(1) as f64
}

/// Counts per bin `(k·BIN, (k+1)·BIN]` over `[0, CAP]`; a delay of exactly zero joins the first
/// bin. Closed on the right, so a delay equal to the cap sits in the last bin.
fn histogram_counts(delays: &[Duration]) -> Vec<u64> {
    let bin = BIN.as_nanos();
    let bins = CAP.as_nanos().div_ceil(bin) as usize;
    let mut counts = vec![0; bins];
    for delay in delays {
        let index = delay.as_nanos().div_ceil(bin).saturating_sub(1) as usize;
        counts[index.min(bins - 1)] += 1;
    }
    counts
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

fn show_ms(duration: Duration) -> String {
    format!("{} ms", format_number(ms(duration), 0))
}

pub fn figures(lang: Lang) -> Vec<Figure> {
    vec![delay_distributions(lang), sample_paths(lang)]
}

/// `ch09-delay-distributions`: where 10,000 clients' delays fall before each retry, for the
/// three policies.
fn delay_distributions(lang: Lang) -> Figure {
    let x_label = lang.pick("delay (ms), 10 ms bins", "待ち時間（ms）、10 ms の階級");
    let clients = format_number(CLIENTS as f64, 0);
    let (base, cap) = (ms(BASE), ms(CAP));
    let mut grid = Grid::new(lang.pick(
        format!("Delay before each retry: {clients} clients per policy"),
        format!("各リトライの前の待ち時間: ポリシーごとに {clients} クライアント"),
    ))
    .subtitle(lang.pick(
        format!(
            "base {base} ms, cap {cap} ms, so t = min(cap, base·2^retry) is 50, 100, 200, 400, \
             500 ms for retries 0 to 4 (marked t; decorrelated jitter has no t, only the cap). \
             Panel titles give the mean delay, and for decorrelated jitter the share of clients \
             sitting exactly at the cap. Drawn by the solutions, StdRng seed {SEED}. Each panel \
             has its own y scale."
        ),
        format!(
            "基準 {base} ms、上限 {cap} ms なので、t = min(cap, base·2^retry) はリトライ 0〜4 で \
             50、100、200、400、500 ms です（t の印。デコリレーテッドジッターに t はなく、上限だけ\
             です）。パネルの見出しは平均の待ち時間と、デコリレーテッドジッターではちょうど上限に\
             いるクライアントの割合です。模範解答で引きました（StdRng シード {SEED}）。縦軸の目盛り\
             はパネルごとに違います。"
        ),
    ))
    .panel_height(118.0);
    for policy in Policy::ALL {
        let delays = policy.delays(CLIENTS, RETRIES);
        let mut col = Column::new(
            policy.heading(lang),
            x_label,
            if policy == Policy::Full {
                lang.pick("clients", "クライアント数")
            } else {
                ""
            },
        );
        for retry in 0..SHOWN {
            let before = column(&delays, retry);
            let average = show_ms(mean(&before));
            let title = if policy == Policy::Decorrelated && retry >= 1 {
                let at_cap = format_number(100.0 * share_at_cap(&before), 0);
                lang.pick(
                    format!("retry {retry} · {average} · {at_cap} % at cap"),
                    format!("リトライ {retry} · {average} · 上限 {at_cap} %"),
                )
            } else {
                lang.pick(
                    format!("retry {retry} · mean {average}"),
                    format!("リトライ {retry} · 平均 {average}"),
                )
            };
            // Full and equal jitter draw below t; decorrelated jitter knows only the cap.
            let marker = match policy {
                Policy::Decorrelated => Marker::new(ms(CAP), lang.pick("cap", "上限")),
                _ => Marker::new(ms(backoff_ceiling(retry, BASE, CAP)), "t"),
            };
            col = col.chart(
                Chart::new(title)
                    .x_axis(Axis::new("").range(0.0, ms(CAP)))
                    .y_axis(Axis::new("").min(0.0))
                    .histogram(Histogram::from_counts(
                        "",
                        policy.color(),
                        0.0,
                        ms(BIN),
                        &histogram_counts(&before),
                    ))
                    .marker(marker),
            );
        }
        grid = grid.column(col);
    }
    Figure::new("ch09-delay-distributions", grid.svg())
}

/// `ch09-sample-paths`: a few clients' delays retry after retry, with the mean of all clients.
fn sample_paths(lang: Lang) -> Figure {
    let clients = format_number(CLIENTS as f64, 0);
    let (base, cap) = (ms(BASE), ms(CAP));
    let mut grid = Grid::new(lang.pick(
        format!("{PATHS} clients' delays, retry after retry, and the mean of {clients}"),
        format!("{PATHS} クライアントのリトライごとの待ち時間と、{clients} クライアントの平均"),
    ))
    .subtitle(lang.pick(
        format!(
            "Same policies and settings (base {base} ms, cap {cap} ms), {RETRIES} retries. Thin \
             lines: the first {PATHS} clients of each policy. Dashed: the mean delay of all \
             {clients} clients before that retry. Equal jitter follows the doubling ceiling \
             closely; decorrelated jitter wanders, each delay starting from the one before."
        ),
        format!(
            "同じポリシーと設定（基準 {base} ms、上限 {cap} ms）で {RETRIES} 回リトライします。\
             細い線: 各ポリシーの最初の {PATHS} クライアント。破線: そのリトライの前の、{clients} \
             クライアント全体の平均の待ち時間。イコールジッターは倍々になる天井のすぐ近くを進み、\
             デコリレーテッドジッターは前回の待ち時間から次を決めるので、上下にさまよいます。"
        ),
    ))
    .panel_height(250.0);
    for policy in Policy::ALL {
        let delays = policy.delays(CLIENTS, RETRIES);
        let mut chart = Chart::new(policy.heading(lang))
            .x_axis(Axis::new("").range(0.0, f64::from(RETRIES - 1)))
            .y_axis(Axis::new("").range(0.0, ms(CAP)));
        let shades = [
            Color::Black,
            Color::SkyBlue,
            Color::ReddishPurple,
            Color::Vermillion,
        ];
        for (client, shade) in delays.iter().take(PATHS).zip(shades) {
            let points = (0..RETRIES)
                .map(|retry| (f64::from(retry), ms(client[retry as usize])))
                .collect();
            chart = chart.line(Line::new("", shade, points));
        }
        let means = (0..RETRIES)
            .map(|retry| (f64::from(retry), ms(mean(&column(&delays, retry)))))
            .collect();
        chart = chart.line(Line::new(lang.pick("mean", "平均"), policy.color(), means).dashed());
        grid = grid.column(
            Column::new(
                "",
                lang.pick("retry", "リトライ"),
                if policy == Policy::Full {
                    lang.pick("delay (ms)", "待ち時間（ms）")
                } else {
                    ""
                },
            )
            .chart(chart),
        );
    }
    Figure::new("ch09-sample-paths", grid.svg())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceilings_are_the_books_table() {
        let ceilings: Vec<u128> = (0..SHOWN)
            .map(|retry| backoff_ceiling(retry, BASE, CAP).as_millis())
            .collect();
        assert_eq!(ceilings, [50, 100, 200, 400, 500]);
    }

    #[test]
    fn every_delay_respects_its_policys_bounds() {
        for policy in Policy::ALL {
            for client in policy.delays(1_000, RETRIES) {
                let mut previous = BASE;
                for (retry, delay) in (0..).zip(client) {
                    let t = backoff_ceiling(retry, BASE, CAP);
                    let (low, high) = match policy {
                        Policy::Full => (Duration::ZERO, t),
                        Policy::Equal => (t / 2, t),
                        Policy::Decorrelated => (BASE, (3 * previous).min(CAP)),
                    };
                    assert!(low <= delay && delay <= high, "{policy:?}: {delay:?}");
                    previous = delay;
                }
            }
        }
    }

    #[test]
    fn equal_jitter_waits_three_quarters_of_t_on_average() {
        let delays = Policy::Equal.delays(CLIENTS, RETRIES);
        for retry in 0..SHOWN {
            let t = backoff_ceiling(retry, BASE, CAP).as_secs_f64();
            let average = mean(&column(&delays, retry)).as_secs_f64();
            assert!(
                (average / t - 0.75).abs() < 0.01,
                "retry {retry}: {average}"
            );
        }
    }

    #[test]
    fn histogram_bins_are_closed_on_the_right() {
        let delays = [Duration::ZERO, BIN, BIN + Duration::from_nanos(1), CAP];
        let counts = histogram_counts(&delays);
        assert_eq!(counts.len(), 50);
        assert_eq!((counts[0], counts[1], counts[49]), (2, 1, 1));
    }
}
