//! Chapter 10 — Lab: contention, with and without jitter. Runs the solution's sweep once (every
//! strategy, 10 to 190 clients, `lab::RUNS` seeded runs per point) and draws it twice, as calls
//! and as completion time, and writes it as the page's two tables.

use std::sync::OnceLock;

use ch10_contention_lab_solution::Strategy;
use ch10_contention_lab_solution::lab::{self, CLIENT_COUNTS, Point, RUNS};

use crate::figure::{Figure, Lang};
use crate::plot::{Axis, Chart, Color, Column, Grid, Line};

pub fn figures(lang: Lang) -> Vec<Figure> {
    vec![calls(lang), completion(lang), results(), numbers()]
}

/// The sweep, computed once per process: it is the slow part of `cargo xtask figures`.
fn points() -> &'static [Point] {
    static POINTS: OnceLock<Vec<Point>> = OnceLock::new();
    POINTS.get_or_init(|| lab::sweep(RUNS))
}

fn color(strategy: Strategy) -> Color {
    match strategy {
        Strategy::NoBackoff => Color::Black,
        Strategy::Exponential => Color::Vermillion,
        Strategy::FullJitter => Color::Blue,
        Strategy::EqualJitter => Color::BluishGreen,
        Strategy::Decorrelated => Color::Orange,
    }
}

/// The strategy's name in the legend: the solution's own name in English.
fn name(strategy: Strategy, lang: Lang) -> &'static str {
    let ja = match strategy {
        Strategy::NoBackoff => "バックオフなし",
        Strategy::Exponential => "指数",
        Strategy::FullJitter => "フルジッター",
        Strategy::EqualJitter => "イコールジッター",
        Strategy::Decorrelated => "デコリレーテッド",
    };
    lang.pick(strategy.name(), ja)
}

/// One line per strategy: `value(point)` against the number of clients.
fn line(lang: Lang, strategy: Strategy, value: impl Fn(&Point) -> f64) -> Line {
    let points = points()
        .iter()
        .filter(|point| point.strategy == strategy)
        .map(|point| (point.clients as f64, value(point)))
        .collect();
    let line = Line::new(name(strategy, lang), color(strategy), points);
    if strategy == Strategy::NoBackoff {
        line.dashed()
    } else {
        line
    }
}

fn at(strategy: Strategy, clients: usize) -> Point {
    *points()
        .iter()
        .find(|point| point.strategy == strategy && point.clients == clients)
        .expect("the sweep covers every strategy and client count")
}

fn subtitle(lang: Lang) -> String {
    lang.pick(
        format!(
            "Mean of {RUNS} seeded runs per point, simulated by the solution's simulate: base 5 \
             ms, cap 2 s, every network hop |Normal(10 ms, 2 ms)|. A call is a read or a \
             conditional write."
        ),
        format!(
            "各点は、模範解答の simulate でシード付きで {RUNS} 回シミュレーションした平均です。\
             基準 5 ms、上限 2 s、ネットワークの各ホップは |Normal(10 ms, 2 ms)|。呼び出しとは\
             読み取り 1 回か条件付き書き込み 1 回のことです。"
        ),
    )
}

/// The x axis of every chart: the number of clients, 0 to 190.
fn clients_axis(label: &str) -> Axis {
    let last = CLIENT_COUNTS[CLIENT_COUNTS.len() - 1] as f64;
    Axis::new(label).range(0.0, last)
}

/// The strategies in drawing order: full jitter last, on top of equal jitter, which makes
/// nearly the same number of calls and would otherwise hide it.
const DRAWING_ORDER: [Strategy; 5] = [
    Strategy::NoBackoff,
    Strategy::Exponential,
    Strategy::Decorrelated,
    Strategy::EqualJitter,
    Strategy::FullJitter,
];

/// `ch10-calls`: the work each strategy costs the server.
fn calls(lang: Lang) -> Figure {
    let exponential = at(Strategy::Exponential, 100).calls;
    let full = at(Strategy::FullJitter, 100).calls;
    let (common, ratio) = (subtitle(lang), exponential / full);
    let mut chart = Chart::new(lang.pick(
        "The server's work: calls per run",
        "サーバーの仕事: 1 回の実行あたりの呼び出し数",
    ))
    .subtitle(lang.pick(
        format!(
            "{common} At 100 clients exponential backoff without jitter makes {ratio:.1}× the \
             calls of full jitter; full and equal jitter nearly coincide."
        ),
        format!(
            "{common}100 クライアントでは、ジッターなしの指数バックオフはフルジッターの \
             {ratio:.1} 倍の呼び出しをします。フルジッターとイコールジッターはほぼ重なります。"
        ),
    ))
    .x_axis(clients_axis(lang.pick(
        "clients racing for the row",
        "同じ行を奪い合うクライアント数",
    )))
    .y_axis(
        Axis::new(lang.pick(
            "server calls per run (reads + writes)",
            "1 回の実行あたりのサーバー呼び出し",
        ))
        .min(0.0),
    )
    .height(460.0);
    for strategy in DRAWING_ORDER {
        chart = chart.line(line(lang, strategy, |point| point.calls));
    }
    Figure::new("ch10-calls", chart.svg())
}

/// `ch10-completion`: when the last client finished, with and without the exponential line,
/// which dwarfs the others.
fn completion(lang: Lang) -> Figure {
    let seconds = |point: &Point| point.completion.as_secs_f64();
    let mut all =
        Chart::new(lang.pick("all five strategies", "5 つの戦略すべて")).x_axis(clients_axis(""));
    let mut zoom = Chart::new(lang.pick("without exponential, enlarged", "指数を除いて拡大"))
        .x_axis(clients_axis(""));
    for strategy in DRAWING_ORDER {
        all = all.line(line(lang, strategy, seconds));
        if strategy != Strategy::Exponential {
            zoom = zoom.line(line(lang, strategy, seconds));
        }
    }
    let x_label = lang.pick(
        "clients racing for the row",
        "同じ行を奪い合うクライアント数",
    );
    let y_label = lang.pick("last client done (s)", "最後のクライアントの完了（s）");
    let exponential = seconds(&at(Strategy::Exponential, 100));
    let full = seconds(&at(Strategy::FullJitter, 100));
    let grid = Grid::new(lang.pick(
        format!(
            "When the last client finished: at 100 clients, {exponential:.1} s without jitter, \
             {full:.1} s with full jitter"
        ),
        format!(
            "最後のクライアントが終わった時刻: 100 クライアントで、ジッターなし {exponential:.1} s、\
             フルジッター {full:.1} s"
        ),
    ))
    .subtitle(subtitle(lang))
    .column(Column::new("", x_label, y_label).chart(all.y_axis(Axis::new("").min(0.0))))
    .column(Column::new("", x_label, y_label).chart(zoom.y_axis(Axis::new("").min(0.0))))
    .panel_height(330.0);
    Figure::new("ch10-completion", grid.svg())
}

/// `ch10-results.md`: the sweep as two Markdown tables, included by the page.
fn results() -> Figure {
    Figure::markdown("ch10-results", lab::markdown_tables(points()))
}

/// `ch10-numbers.md`: every number the page's prose quotes, each between `ANCHOR:` lines so that
/// the page includes it inline (`{{#include figures/ch10-numbers.md:calls_full_100}}`). They come
/// from the same sweep as the tables, so prose and tables cannot drift apart.
fn numbers() -> Figure {
    use Strategy::{Decorrelated, EqualJitter, Exponential, FullJitter, NoBackoff};
    let calls = |strategy, clients| at(strategy, clients).calls;
    let secs = |strategy, clients| at(strategy, clients).completion.as_secs_f64();
    let percent = |ratio: f64| format!("{:.0} %", (ratio * 100.0).abs());
    // The first client count from which equal jitter makes no more calls than full jitter, and
    // the last at which decorrelated jitter still finishes before full jitter.
    let equal_meets_full = CLIENT_COUNTS
        .iter()
        .copied()
        .find(|&n| calls(EqualJitter, n) <= calls(FullJitter, n))
        .unwrap_or(CLIENT_COUNTS[CLIENT_COUNTS.len() - 1]);
    let decorrelated_faster_until = CLIENT_COUNTS
        .iter()
        .copied()
        .filter(|&n| secs(Decorrelated, n) < secs(FullJitter, n))
        .max()
        .unwrap_or(CLIENT_COUNTS[0]);
    let values: Vec<(&str, String)> = vec![
        ("calls_none_100", thousands(calls(NoBackoff, 100))),
        ("calls_exponential_100", thousands(calls(Exponential, 100))),
        ("calls_full_100", thousands(calls(FullJitter, 100))),
        (
            "calls_decorrelated_100",
            thousands(calls(Decorrelated, 100)),
        ),
        (
            "exponential_over_full_100",
            format!("{:.1}", calls(Exponential, 100) / calls(FullJitter, 100)),
        ),
        (
            "none_over_full_100",
            format!("{:.1}", calls(NoBackoff, 100) / calls(FullJitter, 100)),
        ),
        (
            "exponential_saves_100",
            percent(1.0 - calls(Exponential, 100) / calls(NoBackoff, 100)),
        ),
        (
            "per_client_full_100",
            format!("{:.0}", calls(FullJitter, 100) / 100.0),
        ),
        (
            "per_client_full_190",
            format!("{:.0}", calls(FullJitter, 190) / 190.0),
        ),
        (
            "per_client_none_100",
            format!("{:.0}", calls(NoBackoff, 100) / 100.0),
        ),
        (
            "per_client_none_190",
            format!("{:.0}", calls(NoBackoff, 190) / 190.0),
        ),
        (
            "equal_extra_calls_10",
            percent(calls(EqualJitter, 10) / calls(FullJitter, 10) - 1.0),
        ),
        (
            "equal_extra_calls_100",
            percent(calls(EqualJitter, 100) / calls(FullJitter, 100) - 1.0),
        ),
        ("equal_meets_full", equal_meets_full.to_string()),
        (
            "decorrelated_extra_calls_100",
            percent(calls(Decorrelated, 100) / calls(FullJitter, 100) - 1.0),
        ),
        (
            "decorrelated_faster_until",
            decorrelated_faster_until.to_string(),
        ),
        ("seconds_none_100", format!("{:.1} s", secs(NoBackoff, 100))),
        (
            "seconds_exponential_100",
            format!("{:.0} s", secs(Exponential, 100)),
        ),
        (
            "seconds_full_100",
            format!("{:.1} s", secs(FullJitter, 100)),
        ),
        (
            "seconds_equal_100",
            format!("{:.1} s", secs(EqualJitter, 100)),
        ),
        (
            "seconds_decorrelated_100",
            format!("{:.1} s", secs(Decorrelated, 100)),
        ),
        (
            "equal_later_100",
            percent(secs(EqualJitter, 100) / secs(FullJitter, 100) - 1.0),
        ),
    ];
    let mut text = String::from(
        "Generated by `cargo xtask figures` from the same sweep as ch10-results.md: the numbers\n\
         that the prose of ch10-contention-lab.md quotes, each between anchors.\n",
    );
    for (name, value) in values {
        text.push_str(&format!("ANCHOR: {name}\n{value}\nANCHOR_END: {name}\n"));
    }
    Figure::markdown("ch10-numbers", text)
}

/// A count rounded to a whole number, with thousands separated by commas: `4,852`.
fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value);
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rankings the page describes (§10.7), at every size from 50 clients on; at 100
    /// clients, the ratio the hidden checks require.
    #[test]
    fn the_lab_reproduces_the_published_rankings() {
        for &clients in &CLIENT_COUNTS[4..] {
            let exponential = at(Strategy::Exponential, clients);
            let full = at(Strategy::FullJitter, clients);
            let equal = at(Strategy::EqualJitter, clients);
            let decorrelated = at(Strategy::Decorrelated, clients);
            assert!(exponential.calls > 1.5 * full.calls, "{clients} clients");
            assert!(full.calls < decorrelated.calls, "{clients} clients");
            assert!(equal.completion > full.completion, "{clients} clients");
        }
        let ratio = at(Strategy::Exponential, 100).calls / at(Strategy::FullJitter, 100).calls;
        assert!(ratio > 2.0, "{ratio}");
    }
}
