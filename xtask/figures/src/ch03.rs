//! Chapter 3 — Timeouts. Two latency histograms drawn from the solution crate's seeded latency
//! model, with the percentiles a timeout is chosen from marked on them.
//!
//! The long-tail service (median 20 ms, sigma 0.5) is the usual shape: a p99.9 timeout sits far
//! from the median and tolerates a small slowdown. The tight service (median 10 ms, sigma 0.05)
//! has its p99.9 close to its median, and the same slowdown turns a 0.1 % false-timeout rate into
//! more than 10 %: that is why such a timeout needs padding.

use std::time::Duration;

use ch03_timeouts_solution::latency::{log_normal, percentile, share_above};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::figure::{Figure, Lang};
use crate::plot::{Axis, Chart, Color, Histogram, Line, Marker, format_number};

/// Latencies drawn per service.
pub const SAMPLES: usize = 10_000;
/// The seed of every draw in this chapter's figures.
pub const SEED: u64 = 2019;
/// The slowdown applied in the tight-service figure: every call 10 % slower.
pub const SLOWDOWN: f64 = 1.1;
/// The tight service's timeout with padding: p99.9 (11.7 ms) plus about 20 %, rounded up.
pub const PADDED: Duration = Duration::from_millis(14);

/// A service's latency distribution: a log-normal with this median and spread.
#[derive(Clone, Copy, Debug)]
pub struct Service {
    pub median: Duration,
    pub sigma: f64,
}

/// The usual shape: most calls near 20 ms, a long tail of slow ones.
pub const LONG_TAIL: Service = Service {
    median: Duration::from_millis(20),
    sigma: 0.5,
};

/// A service with tight latency bounds: p99.9 close to p50.
pub const TIGHT: Service = Service {
    median: Duration::from_millis(10),
    sigma: 0.05,
};

/// The percentiles the book marks, as fractions and labels.
const PERCENTILES: [(f64, &str, Color); 3] = [
    (0.50, "p50", Color::BluishGreen),
    (0.99, "p99", Color::Orange),
    (0.999, "p99.9", Color::Vermillion),
];

pub fn figures(lang: Lang) -> Vec<Figure> {
    vec![latency_histogram(lang), tight_latency(lang)]
}

/// `SAMPLES` seeded latencies of `service`, drawn with the solution crate's model.
pub fn samples(service: Service) -> Vec<Duration> {
    let mut rng = StdRng::seed_from_u64(SEED);
    (0..SAMPLES)
        .map(|_| log_normal(service.median, service.sigma, &mut rng))
        .collect()
}

/// The same calls, each `factor` times slower.
pub fn slowed(latencies: &[Duration], factor: f64) -> Vec<Duration> {
    latencies
        .iter()
        .map(|latency| latency.mul_f64(factor))
        .collect()
}

/// Counts per bin `[start + k·bin, start + (k+1)·bin)` for `k` in `0..bins`; latencies outside
/// are not counted.
fn histogram_counts(
    latencies: &[Duration],
    start: Duration,
    bin: Duration,
    bins: usize,
) -> Vec<u64> {
    let mut counts = vec![0; bins];
    for latency in latencies {
        let Some(offset) = latency.checked_sub(start) else {
            continue;
        };
        let index = (offset.as_nanos() / bin.as_nanos()) as usize;
        if let Some(count) = counts.get_mut(index) {
            *count += 1;
        }
    }
    counts
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

/// A latency for a label: `19.9 ms`.
pub fn show_ms(duration: Duration) -> String {
    format!("{} ms", format_number(ms(duration), 1))
}

/// A share for a label: `0.1 %`.
pub fn show_share(share: f64) -> String {
    format!("{} %", format_number(share * 100.0, 1))
}

fn percentile_markers(latencies: &[Duration]) -> Vec<Marker> {
    PERCENTILES
        .iter()
        .map(|&(fraction, name, color)| {
            let at = percentile(latencies, fraction);
            Marker::new(ms(at), format!("{name} {}", show_ms(at))).color(color)
        })
        .collect()
}

/// `ch03-latency-histogram`: 10,000 calls to a long-tailed service, p50, p99 and p99.9 marked.
fn latency_histogram(lang: Lang) -> Figure {
    let latencies = samples(LONG_TAIL);
    let (bin, bins) = (Duration::from_millis(2), 75);
    let shown_up_to = bin * bins as u32;
    let beyond = latencies.iter().filter(|l| **l >= shown_up_to).count();
    let p999 = percentile(&latencies, 0.999);
    let limit = ms(shown_up_to);
    let off_chart = match beyond {
        0 => lang.pick(
            format!("no call took {limit} ms or more"),
            format!("{limit} ms 以上かかった呼び出しはありません"),
        ),
        1 => lang.pick(
            format!("1 call slower than {limit} ms is off the chart"),
            format!("{limit} ms より遅い 1 回の呼び出しは図の外です"),
        ),
        n => lang.pick(
            format!("{n} calls slower than {limit} ms are off the chart"),
            format!("{limit} ms より遅い {n} 回の呼び出しは図の外です"),
        ),
    };
    let samples = format_number(SAMPLES as f64, 0);
    let (median, sigma) = (ms(LONG_TAIL.median), LONG_TAIL.sigma);
    let (at, cut) = (show_ms(p999), show_share(share_above(&latencies, p999)));
    let mut chart = Chart::new(lang.pick(
        format!("Latency of {samples} calls to one service"),
        format!("1 つのサービスへの {samples} 回の呼び出しのレイテンシ"),
    ))
    .subtitle(lang.pick(
        format!(
            "Log-normal latencies (median {median} ms, sigma {sigma}), drawn with the solution \
             crate's latency::log_normal, StdRng seed {SEED}; 2 ms bins; {off_chart}. A timeout \
             at p99.9 ({at}) cuts {cut} of these calls: the false timeouts you accept."
        ),
        format!(
            "対数正規分布のレイテンシ（中央値 {median} ms、sigma {sigma}）。模範解答クレートの \
             latency::log_normal で StdRng シード {SEED} から生成し、2 ms ごとの階級で数えました。\
             {off_chart}。p99.9（{at}）のタイムアウトはこれらの呼び出しの {cut} を打ち切ります。\
             これが受け入れる誤ったタイムアウトです。"
        ),
    ))
    .x_axis(
        Axis::new(lang.pick(
            "latency of one call (ms)",
            "1 回の呼び出しのレイテンシ（ms）",
        ))
        .range(0.0, ms(shown_up_to)),
    )
    .y_axis(Axis::new(lang.pick("calls per 2 ms bin", "2 ms の階級ごとの呼び出し数")).min(0.0))
    .histogram(Histogram::from_counts(
        "",
        Color::Blue,
        0.0,
        ms(bin),
        &histogram_counts(&latencies, Duration::ZERO, bin, bins),
    ));
    for marker in percentile_markers(&latencies) {
        chart = chart.marker(marker);
    }
    Figure::new("ch03-latency-histogram", chart.height(440.0).svg())
}

/// `ch03-tight-latency`: a service whose p99.9 is close to its p50, before and after every call
/// got 10 % slower.
fn tight_latency(lang: Lang) -> Figure {
    let latencies = samples(TIGHT);
    let slower = slowed(&latencies, SLOWDOWN);
    let (start, bin, bins) = (Duration::from_millis(7), Duration::from_micros(200), 40);
    let p50 = percentile(&latencies, 0.5);
    let p999 = percentile(&latencies, 0.999);
    let slower_counts: Vec<(f64, f64)> = histogram_counts(&slower, start, bin, bins)
        .iter()
        .enumerate()
        .map(|(i, &n)| (ms(start) + (i as f64 + 0.5) * ms(bin), n as f64))
        .collect();
    let samples = format_number(SAMPLES as f64, 0);
    let (median, sigma) = (ms(TIGHT.median), TIGHT.sigma);
    let at = show_ms(p999);
    let normal_cut = show_share(share_above(&latencies, p999));
    let slower_cut = show_share(share_above(&slower, p999));
    let padded = show_ms(PADDED);
    let padded_cut = match share_above(&slower, PADDED) {
        0.0 => lang.pick("none", "0 件").to_owned(),
        share => show_share(share),
    };
    let chart = Chart::new(lang.pick(
        "A tight service: p99.9 close to p50, and a 10 % slowdown",
        "ばらつきの小さいサービス: p50 に近い p99.9 と、10 % の減速",
    ))
    .subtitle(lang.pick(
        format!(
            "{samples} calls, log-normal (median {median} ms, sigma {sigma}), seed {SEED}, 0.2 ms \
             bins. With the timeout at p99.9 ({at}), {normal_cut} of normal calls time out; once \
             every call is 10 % slower, {slower_cut} do. Padded to {padded}, the timeout cuts \
             {padded_cut} of the slower calls."
        ),
        format!(
            "{samples} 回の呼び出し、対数正規分布（中央値 {median} ms、sigma {sigma}）、シード \
             {SEED}、0.2 ms ごとの階級。タイムアウトが p99.9（{at}）なら、通常の呼び出しの \
             {normal_cut} がタイムアウトします。すべての呼び出しが 10 % 遅くなると {slower_cut} \
             です。余裕を持たせて {padded} にすると、遅くなった呼び出しのうち打ち切られるのは \
             {padded_cut} です。"
        ),
    ))
    .x_axis(
        Axis::new(lang.pick(
            "latency of one call (ms)",
            "1 回の呼び出しのレイテンシ（ms）",
        ))
        .range(ms(start), ms(start + bin * bins as u32)),
    )
    .y_axis(Axis::new(lang.pick("calls per 0.2 ms bin", "0.2 ms の階級ごとの呼び出し数")).min(0.0))
    .histogram(Histogram::from_counts(
        lang.pick("normal", "通常"),
        Color::Blue,
        ms(start),
        ms(bin),
        &histogram_counts(&latencies, start, bin, bins),
    ))
    .line(
        Line::new(
            lang.pick("every call 10 % slower", "すべての呼び出しが 10 % 遅い"),
            Color::Vermillion,
            slower_counts,
        )
        .dashed(),
    )
    .marker(Marker::new(ms(p50), format!("p50 {}", show_ms(p50))).color(Color::BluishGreen))
    .marker(
        Marker::new(
            ms(p999),
            lang.pick(
                format!("p99.9 timeout {}", show_ms(p999)),
                format!("p99.9 タイムアウト {}", show_ms(p999)),
            ),
        )
        .color(Color::Vermillion),
    )
    .marker(Marker::new(
        ms(PADDED),
        lang.pick(
            format!("padded timeout {}", show_ms(PADDED)),
            format!("余裕を持たせたタイムアウト {}", show_ms(PADDED)),
        ),
    ))
    .height(440.0);
    Figure::new("ch03-tight-latency", chart.svg())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers the book quotes in §3.5, as `show_ms` / `show_share` print them.
    fn table(service: Service) -> [String; 6] {
        let latencies = samples(service);
        let p999 = percentile(&latencies, 0.999);
        let padded = if service.sigma == TIGHT.sigma {
            PADDED
        } else {
            p999
        };
        [
            show_ms(percentile(&latencies, 0.5)),
            show_ms(percentile(&latencies, 0.99)),
            show_ms(p999),
            show_share(share_above(&latencies, p999)),
            show_share(share_above(&slowed(&latencies, SLOWDOWN), p999)),
            show_share(share_above(&slowed(&latencies, SLOWDOWN), padded)),
        ]
    }

    #[test]
    fn the_books_table() {
        assert_eq!(
            table(LONG_TAIL),
            ["20.1 ms", "66.0 ms", "96.8 ms", "0.1 %", "0.2 %", "0.2 %"],
        );
        assert_eq!(
            table(TIGHT),
            ["10.0 ms", "11.3 ms", "11.7 ms", "0.1 %", "10.8 %", "0.0 %"],
        );
    }
}
