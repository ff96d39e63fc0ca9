//! Chapter 23 — Circuit breakers. Two figures and two tables, from the given outage and fleet
//! labs run with the reference solution's `CircuitBreaker`.

use std::time::Duration;

use ch23_circuit_breakers_solution::lab::{Fleet, FleetRun, Lab, Second, fleet, simulate};
use ch23_circuit_breakers_solution::{BreakerConfig, Breaks, Window};

use crate::figure::{Figure, Lang};
use crate::plot::{
    Axis, Chart, Color, Column, Grid, Histogram, Line, Marker, format_number, per_second,
};

/// The breaker of the figure: 50 % over 10 s once 20 calls are in, a 5 s break, 5 probes.
pub fn breaker() -> BreakerConfig {
    BreakerConfig {
        failure_rate_percent: 50,
        minimum_calls: 20,
        window: Window::Time(Duration::from_secs(10)),
        break_duration: Duration::from_secs(5),
        breaks: Breaks::Fixed,
        half_open_probes: 5,
        slow_call: None,
    }
}

pub fn figures(lang: Lang) -> Vec<Figure> {
    let lab = Lab::default();
    let without = simulate(&lab, None);
    let with = simulate(&lab, Some(breaker()));
    let fleet_lab = Fleet::default();
    let runs = [
        fleet(&fleet_lab, fleet_breaker(Breaks::Fixed), FLEET_SEED),
        fleet(&fleet_lab, fleet_breaker(jittered()), FLEET_SEED),
    ];
    vec![
        outage(lang, &lab, &without, &with),
        table(&lab, &without, &with),
        fleet_figure(lang, &fleet_lab, &runs),
        fleet_table(&fleet_lab, &runs),
    ]
}

/// The seed of the fleet lab's first client; client `i` uses `FLEET_SEED + i`.
const FLEET_SEED: u64 = 23;

/// The fleet's breakers: 50 % of the last 10 calls once 5 are in, a 5 s break, one probe.
pub fn fleet_breaker(breaks: Breaks) -> BreakerConfig {
    BreakerConfig {
        failure_rate_percent: 50,
        minimum_calls: 5,
        window: Window::Count(10),
        break_duration: Duration::from_secs(5),
        breaks,
        half_open_probes: 1,
        slow_call: None,
    }
}

/// Growing, jittered breaks from the same 5 s, capped at 20 s.
fn jittered() -> Breaks {
    Breaks::Jittered {
        cap: Duration::from_secs(20),
    }
}

/// The two fleet runs' names, in the order of `runs`.
const FLEET_NAMES: [&str; 2] = ["Fixed 5 s break", "Growing, jittered breaks (5 s to 20 s)"];
/// The same names in Japanese.
const FLEET_NAMES_JA: [&str; 2] = [
    "固定 5 s の遮断期間",
    "伸びていくジッター付きの遮断期間（5〜20 s）",
];

/// Probes per whole second of the lab.
fn probes_per_second(lab: &Fleet, run: &FleetRun) -> Vec<u64> {
    let mut counts = vec![0; lab.seconds as usize];
    for probe in &run.probes {
        counts[probe.at.as_secs() as usize] += 1;
    }
    counts
}

/// The probes made while the dependency was down.
fn probes_in_outage(lab: &Fleet, run: &FleetRun) -> usize {
    let end = Duration::from_secs(lab.outage_end.into());
    run.probes.iter().filter(|probe| probe.at < end).count()
}

/// The busiest second of probes: (second, probes in it).
fn busiest(lab: &Fleet, run: &FleetRun) -> (usize, u64) {
    probes_per_second(lab, run)
        .into_iter()
        .enumerate()
        .max_by_key(|&(second, count)| (count, std::cmp::Reverse(second)))
        .unwrap_or_default()
}

/// The instant the last client was answered again, in seconds.
fn last_answered_again(run: &FleetRun) -> f64 {
    run.answered_again
        .iter()
        .map(|at| at.map_or(f64::INFINITY, |at| at.as_secs_f64()))
        .fold(0.0, f64::max)
}

/// `ch23-fleet`: when 50 clients' half-open breakers probe the dependency, with a fixed break
/// and with growing, jittered breaks.
fn fleet_figure(lang: Lang, lab: &Fleet, runs: &[FleetRun; 2]) -> Figure {
    let colors = [Color::Vermillion, Color::Blue];
    let mut column = Column::new(
        "",
        lang.pick("seconds", "秒"),
        lang.pick("probes per second", "毎秒のプローブ"),
    );
    let names = lang.pick(FLEET_NAMES, FLEET_NAMES_JA);
    for ((name, run), color) in names.iter().zip(runs).zip(colors) {
        let (second, most) = busiest(lab, run);
        let probes = probes_in_outage(lab, run);
        let chart = Chart::new(lang.pick(
            format!("{name}: {probes} probes in the outage, at most {most} in second {second}"),
            format!("{name}: 障害中のプローブ {probes} 回、最多は {second} 秒目の {most} 回"),
        ))
        .x_axis(Axis::new("").range(0.0, f64::from(lab.seconds)))
        .y_axis(Axis::new("").range(0.0, f64::from(lab.clients)))
        .marker(Marker::new(
            f64::from(lab.outage_end),
            lang.pick("dependency back", "依存先の復旧"),
        ))
        .histogram(Histogram::from_counts(
            "",
            color,
            0.0,
            1.0,
            &probes_per_second(lab, run),
        ));
        column = column.chart(chart);
    }
    let (clients, rate, down) = (lab.clients, lab.calls_per_second, lab.outage_end);
    let fixed = format_number(last_answered_again(&runs[0]), 1);
    let growing = format_number(last_answered_again(&runs[1]), 1);
    let grid = Grid::new(lang.pick(
        format!("{clients} breakers opened together: when do they probe?"),
        format!("一斉に開いた {clients} 個のサーキットブレーカー: いつプローブするか"),
    ))
    .subtitle(lang.pick(
        format!(
            "{clients} clients call one dependency {rate} times a second each, each through its \
             own breaker; the dependency is down for the first {down} s. A bar counts the probes \
             let through in one second. Every client is answered again by second {fixed} with \
             the fixed break, by second {growing} with growing breaks."
        ),
        format!(
            "{clients} クライアントがそれぞれ自分のサーキットブレーカーを通して、1 つの依存先を毎秒 \
             {rate} 回呼び出します。依存先は最初の {down} s の間落ちています。棒は 1 秒間に通した\
             プローブの数です。すべてのクライアントが再び応答を得るのは、固定の遮断期間なら \
             {fixed} 秒目まで、伸びていく遮断期間なら {growing} 秒目までです。"
        ),
    ))
    .column(column)
    .panel_height(180.0);
    Figure::new("ch23-fleet", grid.svg())
}

/// `ch23-fleet-table`: the fleet lab's numbers, for the prediction's answer.
fn fleet_table(lab: &Fleet, runs: &[FleetRun; 2]) -> Figure {
    let mut text = String::from(
        "| breaks | probes during the outage | most probes in one second | seconds with a probe in the outage | every client answered again by |\n|---|---:|---:|---:|---:|\n",
    );
    for (name, run) in FLEET_NAMES.iter().zip(runs) {
        let (second, most) = busiest(lab, run);
        let seconds_with_probes = probes_per_second(lab, run)[..lab.outage_end as usize]
            .iter()
            .filter(|&&count| count > 0)
            .count();
        text.push_str(&format!(
            "| {name} | {} | {most} (second {second}) | {seconds_with_probes} | second {} |\n",
            probes_in_outage(lab, run),
            format_number(last_answered_again(run), 1),
        ));
    }
    Figure::markdown("ch23-fleet-table", text)
}

fn panel(
    lang: Lang,
    lab: &Lab,
    title: &str,
    without: &[Second],
    with: &[Second],
    value: fn(&Second) -> u32,
) -> Chart {
    Chart::new(title)
        .x_axis(Axis::new("").range(0.0, f64::from(lab.seconds)))
        .y_axis(Axis::new("").min(0.0))
        .marker(Marker::new(
            f64::from(lab.outage.start),
            lang.pick("outage starts", "障害の開始"),
        ))
        .marker(Marker::new(
            f64::from(lab.outage.end),
            lang.pick("dependency back", "依存先の復旧"),
        ))
        .line(Line::new(
            lang.pick("without a breaker", "サーキットブレーカーなし"),
            Color::Vermillion,
            per_second(without, value),
        ))
        .line(Line::new(
            lang.pick("with the breaker", "サーキットブレーカーあり"),
            Color::Blue,
            per_second(with, value),
        ))
}

fn total(seconds: &[Second], range: std::ops::Range<u32>, value: fn(&Second) -> u32) -> u32 {
    seconds[range.start as usize..range.end as usize]
        .iter()
        .map(value)
        .sum()
}

fn count(n: u32) -> String {
    format_number(f64::from(n), 0)
}

/// The first second from the end of the outage in which every request was answered.
fn recovered_at(lab: &Lab, seconds: &[Second]) -> u32 {
    (lab.outage.end..lab.seconds)
        .find(|&t| seconds[t as usize].answered == lab.requests_per_second)
        .unwrap_or(lab.seconds)
}

/// `ch23-outage`: calls reaching the dependency and requests answered, per second, through a
/// 30-second outage, with and without the breaker.
fn outage(lang: Lang, lab: &Lab, without: &[Second], with: &[Second]) -> Figure {
    let calls = |s: &Second| s.calls;
    let answered = |s: &Second| s.answered;
    let column = Column::per_second(lang)
        .chart(panel(
            lang,
            lab,
            lang.pick("Calls reaching the dependency", "依存先に届く呼び出し"),
            without,
            with,
            calls,
        ))
        .chart(panel(
            lang,
            lab,
            lang.pick("Requests answered", "応答できたリクエスト"),
            without,
            with,
            answered,
        ));
    let (length, rate, attempts) = (
        lab.outage.end - lab.outage.start,
        lab.requests_per_second,
        lab.attempts,
    );
    let grid = Grid::new(lang.pick(
        format!("A {length}-second outage, {rate} requests/s, {attempts} attempts each"),
        format!("{length} 秒間の障害、毎秒 {rate} リクエスト、それぞれ {attempts} 回の試行"),
    ))
    .subtitle({
        let without_calls = count(total(without, lab.outage.clone(), calls));
        let with_calls = count(total(with, lab.outage.clone(), calls));
        let (without_back, with_back) = (recovered_at(lab, without), recovered_at(lab, with));
        lang.pick(
            format!(
                "During the outage the dependency received {without_calls} calls without a \
                 breaker and {with_calls} with it (50 % over 10 s, at least 20 calls, 5 s break, \
                 5 probes). Without a breaker every request is answered again from second \
                 {without_back}; with it, from second {with_back}."
            ),
            format!(
                "障害中に依存先が受けた呼び出しは、サーキットブレーカーなしで {without_calls} 回、\
                 ありで {with_calls} 回でした（10 s で 50 %、最低 20 回の呼び出し、遮断期間 5 s、\
                 プローブ 5 回）。すべてのリクエストに再び応答できるようになるのは、サーキット\
                 ブレーカーなしでは {without_back} 秒目から、ありでは {with_back} 秒目からです。"
            ),
        )
    })
    .column(column)
    .panel_height(200.0);
    Figure::new("ch23-outage", grid.svg())
}

/// `ch23-outage-table`: the lab's totals, for the page's prose to quote.
fn table(lab: &Lab, without: &[Second], with: &[Second]) -> Figure {
    let calls = |s: &Second| s.calls;
    let refused = |s: &Second| s.refused;
    let answered = |s: &Second| s.answered;
    let all = 0..lab.seconds;
    let mut text = String::from(
        "| | calls during the outage | refused by the breaker | requests answered (of 6,000) | every request answered again from |\n|---|---:|---:|---:|---:|\n",
    );
    for (name, seconds) in [("without a breaker", without), ("with the breaker", with)] {
        text.push_str(&format!(
            "| {name} | {} | {} | {} | second {} |\n",
            count(total(seconds, lab.outage.clone(), calls)),
            count(total(seconds, all.clone(), refused)),
            count(total(seconds, all.clone(), answered)),
            recovered_at(lab, seconds),
        ));
    }
    Figure::markdown("ch23-outage-table", text)
}
