//! Chapter 8 — Full jitter. Both figures draw their delays with the reference solution's own
//! `full_jitter`, so the book shows what the tested code does.
//!
//! The parameters are the classic `retry_with_backoff(fn, attempts=3, base=0.05, cap=0.5)`
//! stretched to five retries, so the cap is reached: ceilings of 50, 100, 200, 400 and 500 ms.

use std::time::Duration;

use ch08_full_jitter_solution::{backoff_ceiling, full_jitter};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::figure::{Figure, Lang};
use crate::plot::{Axis, Chart, Color, Column, Grid, Histogram, Line, Marker, format_number};

/// The base delay: the ceiling before retry 0.
pub const BASE: Duration = Duration::from_millis(50);
/// The cap: no delay is ever longer.
pub const CAP: Duration = Duration::from_millis(500);
/// Retries per client, numbered 0 to 4.
pub const RETRIES: u32 = 5;
/// Clients in the delay-distribution figure.
pub const CLIENTS: usize = 1_000;
/// Clients in the arrivals figure.
pub const ARRIVAL_CLIENTS: usize = 100;
/// The seed of every random draw in this chapter's figures.
pub const SEED: u64 = 2015;

/// The width of a histogram bin and of an arrivals window.
const BIN: Duration = Duration::from_millis(10);
/// The window of "the same instant" quoted in the book.
const INSTANT: Duration = Duration::from_millis(1);

const NO_JITTER: Color = Color::Vermillion;
const FULL_JITTER: Color = Color::Blue;

pub fn figures(lang: Lang) -> Vec<Figure> {
    vec![delay_distributions(lang), arrivals(lang)]
}

/// The delay each of `clients` waits before retries `0..RETRIES` without jitter:
/// `delays[retry][client]`, every entry the ceiling itself.
pub fn no_jitter_delays(clients: usize) -> Vec<Vec<Duration>> {
    (0..RETRIES)
        .map(|retry| vec![backoff_ceiling(retry, BASE, CAP); clients])
        .collect()
}

/// The full-jitter delays of `clients` before retries `0..RETRIES`, drawn by the solution:
/// `delays[retry][client]`. Each client draws its delays in order, as a real client would.
pub fn full_jitter_delays(clients: usize, seed: u64) -> Vec<Vec<Duration>> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut delays = vec![Vec::with_capacity(clients); RETRIES as usize];
    for _ in 0..clients {
        for (retry, column) in (0..RETRIES).zip(delays.iter_mut()) {
            column.push(full_jitter(retry, BASE, CAP, &mut rng));
        }
    }
    delays
}

/// The most delays that fall into one window `[k·window, (k+1)·window)`.
pub fn busiest_window(delays: &[Duration], window: Duration) -> usize {
    let mut counts = std::collections::BTreeMap::new();
    for delay in delays {
        *counts
            .entry(delay.as_nanos() / window.as_nanos())
            .or_insert(0) += 1;
    }
    counts.into_values().max().unwrap_or(0)
}

/// Counts per bin `(k·BIN, (k+1)·BIN]` over `[0, CAP]`; a delay of exactly zero joins the first
/// bin. Closed on the right, so a delay equal to a ceiling sits in the bin that ends there.
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

fn count(n: usize) -> String {
    format_number(n as f64, 0)
}

fn delay_panel(lang: Lang, title: String, delays: &[Duration], retry: u32, color: Color) -> Chart {
    let ceiling = backoff_ceiling(retry, BASE, CAP);
    Chart::new(title)
        .x_axis(Axis::new("").range(0.0, ms(CAP)))
        .y_axis(Axis::new("").min(0.0))
        .histogram(Histogram::from_counts(
            "",
            color,
            0.0,
            ms(BIN),
            &histogram_counts(delays),
        ))
        .marker(Marker::new(
            ms(ceiling),
            lang.pick(
                format!("ceiling {} ms", ms(ceiling)),
                format!("天井 {} ms", ms(ceiling)),
            ),
        ))
}

/// `ch08-delay-distributions`: when 1,000 clients fire each retry, without and with full jitter.
fn delay_distributions(lang: Lang) -> Figure {
    let x_label = lang.pick(
        "delay before the retry (ms), 10 ms bins",
        "リトライ前の待ち時間（ms）、10 ms の階級",
    );
    let y_label = lang.pick("number of clients", "クライアント数");
    let mut plain = Column::new(
        lang.pick("No jitter: wait the ceiling", "ジッターなし: 天井まで待つ"),
        x_label,
        y_label,
    );
    let mut jittered = Column::new(
        lang.pick(
            "Full jitter: uniform in [0, ceiling]",
            "フルジッター: [0, 天井] の一様分布",
        ),
        x_label,
        y_label,
    );
    let no_jitter = no_jitter_delays(CLIENTS);
    let full = full_jitter_delays(CLIENTS, SEED);
    for retry in 0..RETRIES {
        let delays = &no_jitter[retry as usize];
        let same_instant = count(busiest_window(delays, INSTANT));
        let title = lang.pick(
            format!("retry {retry}: {same_instant} in the same 1 ms"),
            format!("リトライ {retry}: 同じ 1 ms に {same_instant}"),
        );
        plain = plain.chart(delay_panel(lang, title, delays, retry, NO_JITTER));

        let delays = &full[retry as usize];
        let busiest = count(busiest_window(delays, INSTANT));
        let title = lang.pick(
            format!("retry {retry}: busiest 1 ms holds {busiest}"),
            format!("リトライ {retry}: 最も混む 1 ms でも {busiest}"),
        );
        jittered = jittered.chart(delay_panel(lang, title, delays, retry, FULL_JITTER));
    }
    let clients = count(CLIENTS);
    let (base, cap, last) = (ms(BASE), ms(CAP), RETRIES - 1);
    let grid = Grid::new(lang.pick(
        format!("Delay before each retry: {clients} clients that failed at the same moment"),
        format!("各リトライの前の待ち時間: 同時に失敗した {clients} クライアント"),
    ))
    .subtitle(lang.pick(
        format!(
            "Ceiling = min(cap, base·2^attempt) with base {base} ms and cap {cap} ms, for retries \
             0 to {last}. Full-jitter delays come from the solution's full_jitter with StdRng \
             seed {SEED}. Each panel has its own y scale: compare the tick labels, not the bar \
             heights."
        ),
        format!(
            "天井 = min(cap, base·2^attempt)、基準 {base} ms、上限 {cap} ms、リトライ 0〜{last}。\
             フルジッターの待ち時間は模範解答の full_jitter（StdRng シード {SEED}）で引いています。\
             縦軸の目盛りはパネルごとに違うので、棒の高さではなく目盛りの数字を比べてください。"
        ),
    ))
    .column(plain)
    .column(jittered)
    .panel_height(128.0);
    Figure::new("ch08-delay-distributions", grid.svg())
}

/// The moments at which each client's retries arrive, if every call fails at once:
/// the running sum of its delays.
fn arrival_times(delays: &[Vec<Duration>], clients: usize) -> Vec<Duration> {
    let mut arrivals = Vec::with_capacity(clients * delays.len());
    for client in 0..clients {
        let mut at = Duration::ZERO;
        for retry in delays {
            at += retry[client];
            arrivals.push(at);
        }
    }
    arrivals
}

/// `(window start + half a window, count)` for every window from 0 to the last arrival.
fn arrivals_per_window(arrivals: &[Duration], windows: usize) -> Vec<(f64, f64)> {
    let mut counts = vec![0u64; windows];
    for at in arrivals {
        let index = (at.as_nanos() / BIN.as_nanos()) as usize;
        counts[index.min(windows - 1)] += 1;
    }
    counts
        .iter()
        .enumerate()
        .map(|(i, &n)| ((i as f64 + 0.5) * ms(BIN), n as f64))
        .collect()
}

/// `ch08-arrivals`: retries reaching the server per 10 ms after 100 clients failed together.
fn arrivals(lang: Lang) -> Figure {
    let plain = arrival_times(&no_jitter_delays(ARRIVAL_CLIENTS), ARRIVAL_CLIENTS);
    let full = arrival_times(&full_jitter_delays(ARRIVAL_CLIENTS, SEED), ARRIVAL_CLIENTS);
    let last = plain.iter().chain(&full).max().copied().unwrap_or(CAP);
    let windows = (last.as_nanos() / BIN.as_nanos()) as usize + 2;
    let busiest_plain = busiest_window(&plain, BIN);
    let busiest_full = busiest_window(&full, BIN);
    let clients = count(ARRIVAL_CLIENTS);
    let (base, cap) = (ms(BASE), ms(CAP));
    let (busiest_plain, busiest_full) = (count(busiest_plain), count(busiest_full));
    let chart = Chart::new(lang.pick(
        format!("{clients} clients that failed together: when their retries reach the server"),
        format!("一斉に失敗した {clients} クライアント: リトライがサーバーに届く時刻"),
    ))
    .subtitle(lang.pick(
        format!(
            "Every call fails, so each client retries {RETRIES} times (base {base} ms, cap {cap} \
             ms). Without jitter the retries land as {RETRIES} spikes of {busiest_plain} calls; \
             with full jitter the busiest 10 ms window holds {busiest_full} calls. Drawn with the \
             solution's full_jitter, StdRng seed {SEED}."
        ),
        format!(
            "すべての呼び出しが失敗するので、各クライアントは {RETRIES} 回リトライします（基準 \
             {base} ms、上限 {cap} ms）。ジッターがなければリトライは {busiest_plain} 件ずつの \
             {RETRIES} つの山になって届きます。フルジッターなら、最も混む 10 ms の時間窓でも \
             {busiest_full} 件です。模範解答の full_jitter（StdRng シード {SEED}）で引きました。"
        ),
    ))
    .x_axis(
        Axis::new(lang.pick(
            "time since the common failure (ms)",
            "一斉に失敗してからの時間（ms）",
        ))
        .min(0.0),
    )
    .y_axis(
        Axis::new(lang.pick(
            "retries arriving per 10 ms window",
            "10 ms の時間窓ごとに届くリトライ",
        ))
        .min(0.0),
    )
    .line(Line::new(
        lang.pick("no jitter", "ジッターなし"),
        NO_JITTER,
        arrivals_per_window(&plain, windows),
    ))
    .line(Line::new(
        lang.pick("full jitter", "フルジッター"),
        FULL_JITTER,
        arrivals_per_window(&full, windows),
    ))
    .height(420.0);
    Figure::new("ch08-arrivals", chart.svg())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceilings_are_the_books_table() {
        let ceilings: Vec<u128> = (0..7)
            .map(|retry| backoff_ceiling(retry, BASE, CAP).as_millis())
            .collect();
        assert_eq!(ceilings, [50, 100, 200, 400, 500, 500, 500]);
    }

    #[test]
    fn without_jitter_every_client_fires_in_the_same_instant() {
        for delays in no_jitter_delays(CLIENTS) {
            assert_eq!(busiest_window(&delays, INSTANT), CLIENTS);
        }
    }

    #[test]
    fn full_jitter_spreads_clients_within_the_ceiling() {
        let delays = full_jitter_delays(CLIENTS, SEED);
        for (retry, delays) in (0..RETRIES).zip(&delays) {
            let ceiling = backoff_ceiling(retry, BASE, CAP);
            assert!(delays.iter().all(|d| *d <= ceiling));
            // Uniform over the ceiling in 1 ms windows: about CLIENTS / ceiling_ms per window.
            assert!(busiest_window(delays, INSTANT) < CLIENTS / 10);
        }
    }

    #[test]
    fn histogram_bins_are_closed_on_the_right() {
        let delays = [
            Duration::ZERO,
            Duration::from_millis(10),
            Duration::from_nanos(10_000_001),
            CAP,
        ];
        let counts = histogram_counts(&delays);
        assert_eq!(counts.len(), 50);
        assert_eq!((counts[0], counts[1], counts[49]), (2, 1, 1));
    }
}
