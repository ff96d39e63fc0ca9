//! Chapter 16 — Backoff & scheduling in the outbox. One figure: 1,000 outbox rows that fail
//! together during a broker outage, scheduled with and without jitter by the reference
//! solution's own `backoff_ceiling` and `next_retry_at`.

use ch16_outbox_backoff_solution::{BackoffConfig, Millis, backoff_ceiling, next_retry_at};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::figure::{Figure, Lang};
use crate::plot::{Axis, Chart, Color, Column, Grid, Line, Marker, format_number};

/// Rows written at the moment the broker goes down.
pub const ROWS: usize = 1_000;
/// The broker refuses every publish for this long; from then on every publish succeeds.
pub const OUTAGE: Millis = 180_000;
/// The seed of every random draw in this chapter's figure.
pub const SEED: u64 = 16;
/// The width of a bin of the figure: retries per 100 ms.
const BIN: Millis = 100;
/// The figure's time axis ends here.
const HORIZON: Millis = 240_000;

/// The relay's configuration: 1 s doubling to 60 s, and enough attempts to outlast the outage.
pub fn config() -> BackoffConfig {
    BackoffConfig {
        max_attempts: 20,
        ..BackoffConfig::default()
    }
}

/// What happened to one row: the moments of its publish attempts (ms after the outage began),
/// and whether the last of them was a success.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    pub attempts: Vec<Millis>,
    pub published: bool,
}

/// Plays one row through the outage, as an ideal relay would: each attempt at the row's
/// `next_retry_at`, failing before [`OUTAGE`] and succeeding from then on.
fn play(cfg: &BackoffConfig, mut schedule: impl FnMut(Millis, u32) -> Millis) -> History {
    let mut at = 0;
    let mut attempts = Vec::new();
    loop {
        attempts.push(at);
        if at >= OUTAGE {
            return History {
                attempts,
                published: true,
            };
        }
        let failures = attempts.len() as u32;
        if failures >= cfg.max_attempts {
            return History {
                attempts,
                published: false,
            };
        }
        at = schedule(at, failures);
    }
}

/// Every row without jitter: `next_retry_at = now + ceiling`.
pub fn without_jitter(rows: usize) -> Vec<History> {
    let cfg = config();
    (0..rows)
        .map(|_| play(&cfg, |now, failures| now + backoff_ceiling(failures, &cfg)))
        .collect()
}

/// Every row with the solution's capped full jitter, one generator for the whole relay.
pub fn with_full_jitter(rows: usize, seed: u64) -> Vec<History> {
    let cfg = config();
    let mut rng = StdRng::seed_from_u64(seed);
    (0..rows)
        .map(|_| {
            play(&cfg, |now, failures| {
                next_retry_at(now, failures, &cfg, &mut rng)
            })
        })
        .collect()
}

/// The retries (every attempt but the first) of all rows, ms after the outage began.
fn retries(histories: &[History]) -> impl Iterator<Item = Millis> + '_ {
    histories
        .iter()
        .flat_map(|h| h.attempts.iter().skip(1).copied())
}

/// The most of `moments` that fall into one window `[k·window, (k+1)·window)`.
fn busiest(moments: impl Iterator<Item = Millis>, window: Millis) -> usize {
    let mut counts = std::collections::BTreeMap::new();
    for at in moments {
        *counts.entry(at / window).or_insert(0) += 1;
    }
    counts.into_values().max().unwrap_or(0)
}

/// Retries per [`BIN`] from 0 to [`HORIZON`], as `(bin centre in seconds, count)`.
pub fn retries_per_bin(histories: &[History]) -> Vec<(f64, f64)> {
    let mut counts = vec![0u64; (HORIZON / BIN) as usize];
    for at in retries(histories) {
        if let Some(count) = counts.get_mut((at / BIN) as usize) {
            *count += 1;
        }
    }
    counts
        .iter()
        .enumerate()
        .map(|(i, &n)| ((i as f64 + 0.5) * BIN as f64 / 1_000.0, n as f64))
        .collect()
}

/// The numbers the book quotes for one strategy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The most retries in any one millisecond: rows hitting the broker "at once".
    pub busiest_ms: usize,
    /// The most retries in any 100 ms window.
    pub busiest_bin: usize,
    /// Publish attempts in all, failed and successful, the first ones included.
    pub total_attempts: usize,
    /// The most rows published in one millisecond once the broker is back.
    pub publish_peak_ms: usize,
    /// When the first and the last row were published, ms after the outage began.
    pub first_published: Millis,
    pub last_published: Millis,
    /// Rows given up on (every attempt used before the outage ended).
    pub failed: usize,
}

pub fn summary(histories: &[History]) -> Summary {
    let successes: Vec<Millis> = histories
        .iter()
        .filter(|h| h.published)
        .filter_map(|h| h.attempts.last().copied())
        .collect();
    Summary {
        busiest_ms: busiest(retries(histories), 1),
        busiest_bin: busiest(retries(histories), BIN),
        total_attempts: histories.iter().map(|h| h.attempts.len()).sum(),
        publish_peak_ms: busiest(successes.iter().copied(), 1),
        first_published: successes.iter().copied().min().unwrap_or(0),
        last_published: successes.iter().copied().max().unwrap_or(0),
        failed: histories.iter().filter(|h| !h.published).count(),
    }
}

fn count(n: usize) -> String {
    format_number(n as f64, 0)
}

/// Seconds, with one decimal only when they are not whole: `180`, `239.6`.
fn seconds(ms: Millis) -> String {
    let decimals = if ms % 1_000 == 0 { 0 } else { 1 };
    format_number(ms as f64 / 1_000.0, decimals)
}

fn panel(lang: Lang, title: String, histories: &[History], color: Color) -> Chart {
    Chart::new(title)
        .x_axis(Axis::new("").range(0.0, HORIZON as f64 / 1_000.0))
        .y_axis(Axis::new("").min(0.0))
        .line(Line::new("", color, retries_per_bin(histories)))
        .marker(Marker::new(
            OUTAGE as f64 / 1_000.0,
            lang.pick("broker back", "ブローカー復旧"),
        ))
}

/// `ch16-outage`: retries per 100 ms for 1,000 rows during and after a 3-minute outage.
fn outage(lang: Lang) -> Figure {
    let plain = without_jitter(ROWS);
    let jittered = with_full_jitter(ROWS, SEED);
    let (a, b) = (summary(&plain), summary(&jittered));
    let cfg = config();
    let (plain_busiest, jittered_busiest) = (count(a.busiest_ms), count(b.busiest_ms));
    let column = Column::new(
        "",
        lang.pick(
            "seconds since the rows failed together",
            "行が一斉に失敗してからの秒数",
        ),
        lang.pick("retries per 100 ms", "100 ms ごとのリトライ"),
    )
    .chart(panel(
        lang,
        lang.pick(
            format!("No jitter (now + ceiling): up to {plain_busiest} retries in one millisecond"),
            format!("ジッターなし（now + 天井）: 1 ミリ秒に最大 {plain_busiest} 件のリトライ"),
        ),
        &plain,
        Color::Vermillion,
    ))
    .chart(panel(
        lang,
        lang.pick(
            format!(
                "Full jitter (now + uniform[0, ceiling]): at most {jittered_busiest} in one \
                 millisecond"
            ),
            format!(
                "フルジッター（now + uniform[0, 天井]）: 1 ミリ秒に多くても {jittered_busiest} 件"
            ),
        ),
        &jittered,
        Color::Blue,
    ));
    let rows = count(ROWS);
    let outage = seconds(OUTAGE);
    let base = seconds(cfg.base.as_millis() as Millis);
    let cap = seconds(cfg.cap.as_millis() as Millis);
    let attempts = cfg.max_attempts;
    let (peak, last) = (count(a.publish_peak_ms), seconds(a.last_published));
    let busiest = count(b.busiest_bin);
    let (first, end) = (seconds(b.first_published), seconds(b.last_published));
    let grid = Grid::new(lang.pick(
        format!("{rows} outbox rows fail at the same moment: when does the relay try them again?"),
        format!("アウトボックスの {rows} 行が同時に失敗する: リレーはいつ再び試すか"),
    ))
    .subtitle(lang.pick(
        format!(
            "The broker refuses every publish for {outage} s, then accepts them all. Backoff base \
             {base} s, cap {cap} s, at most {attempts} attempts; each row is retried at its \
             next_retry_at. Without jitter the rows come back as one wave per failure and all \
             {peak} are published in the same millisecond at {last} s. With full jitter (the \
             solution's next_retry_at, StdRng seed {SEED}) no 100 ms holds more than {busiest} \
             retries, and the rows are published between {first} and {end} s. Each panel has \
             its own y scale."
        ),
        format!(
            "ブローカーは {outage} s の間すべてのパブリッシュを拒み、その後はすべて受け入れます。\
             バックオフは基準 {base} s、上限 {cap} s、試行は最大 {attempts} 回で、各行は \
             next_retry_at の時刻にリトライされます。ジッターがなければ行は失敗ごとに 1 つの波と\
             なって戻り、{peak} 行すべてが {last} s の同じ 1 ミリ秒にパブリッシュされます。\
             フルジッター（模範解答の next_retry_at、StdRng シード {SEED}）なら、どの 100 ms にも\
             リトライは {busiest} 件以下で、行は {first}〜{end} s の間にパブリッシュされます。\
             縦軸の目盛りはパネルごとに違います。"
        ),
    ))
    .column(column)
    .panel_height(170.0);
    Figure::new("ch16-outage", grid.svg())
}

pub fn figures(lang: Lang) -> Vec<Figure> {
    vec![outage(lang)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_jitter_every_row_moves_as_one() {
        let histories = without_jitter(ROWS);
        assert!(histories.iter().all(|h| h == &histories[0]));
        // 0, 1, 3, 7, 15, 31, 63, 123 s fail; 183 s succeeds.
        assert_eq!(
            histories[0].attempts,
            [
                0, 1_000, 3_000, 7_000, 15_000, 31_000, 63_000, 123_000, 183_000
            ]
        );
        assert_eq!(summary(&histories).busiest_ms, ROWS);
    }

    #[test]
    fn full_jitter_stays_within_the_ceilings() {
        let cfg = config();
        for history in with_full_jitter(ROWS, SEED) {
            for (failures, pair) in (1u32..).zip(history.attempts.windows(2)) {
                let ceiling = backoff_ceiling(failures, &cfg);
                assert!((0..=ceiling).contains(&(pair[1] - pair[0])));
            }
        }
    }

    /// The numbers section 16.2 and the "predict, then run" box quote.
    #[test]
    fn the_books_numbers() {
        let plain = summary(&without_jitter(ROWS));
        let full = summary(&with_full_jitter(ROWS, SEED));
        assert_eq!(
            (
                plain.busiest_ms,
                plain.total_attempts,
                plain.publish_peak_ms
            ),
            (1_000, 9_000, 1_000)
        );
        assert_eq!(
            (plain.first_published, plain.last_published),
            (183_000, 183_000)
        );
        assert_eq!(
            (
                full.busiest_ms,
                full.busiest_bin,
                full.total_attempts,
                full.publish_peak_ms
            ),
            (6, 168, 12_603, 2)
        );
        assert_eq!(
            (full.first_published, full.last_published),
            (180_081, 239_578)
        );
        assert_eq!((plain.failed, full.failed), (0, 0));
    }
}
