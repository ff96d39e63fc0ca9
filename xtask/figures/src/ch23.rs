//! Chapter 23 — Circuit breakers. One figure and one table, both from the given outage lab run
//! with the reference solution's `CircuitBreaker`.

use std::time::Duration;

use ch23_circuit_breakers_solution::lab::{Lab, Second, simulate};
use ch23_circuit_breakers_solution::{BreakerConfig, Window};

use crate::figure::Figure;
use crate::plot::{Axis, Chart, Color, Column, Grid, Line, Marker, format_number};

/// The breaker of the figure: 50 % over 10 s once 20 calls are in, a 5 s break, 5 probes.
pub fn breaker() -> BreakerConfig {
    BreakerConfig {
        failure_rate_percent: 50,
        minimum_calls: 20,
        window: Window::Time(Duration::from_secs(10)),
        break_duration: Duration::from_secs(5),
        half_open_probes: 5,
        slow_call: None,
    }
}

pub fn figures() -> Vec<Figure> {
    let lab = Lab::default();
    let without = simulate(&lab, None);
    let with = simulate(&lab, Some(breaker()));
    vec![outage(&lab, &without, &with), table(&lab, &without, &with)]
}

fn points(seconds: &[Second], value: fn(&Second) -> u32) -> Vec<(f64, f64)> {
    (0..)
        .zip(seconds)
        .map(|(t, second)| (f64::from(t), f64::from(value(second))))
        .collect()
}

fn panel(
    lab: &Lab,
    title: &str,
    without: &[Second],
    with: &[Second],
    value: fn(&Second) -> u32,
) -> Chart {
    Chart::new(title)
        .x_axis(Axis::new("").range(0.0, f64::from(lab.seconds)))
        .y_axis(Axis::new("").min(0.0))
        .marker(Marker::new(f64::from(lab.outage.start), "outage starts"))
        .marker(Marker::new(f64::from(lab.outage.end), "dependency back"))
        .line(Line::new(
            "without a breaker",
            Color::Vermillion,
            points(without, value),
        ))
        .line(Line::new(
            "with the breaker",
            Color::Blue,
            points(with, value),
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
fn outage(lab: &Lab, without: &[Second], with: &[Second]) -> Figure {
    let calls = |s: &Second| s.calls;
    let answered = |s: &Second| s.answered;
    let column = Column::new("", "seconds", "per second")
        .chart(panel(
            lab,
            "Calls reaching the dependency",
            without,
            with,
            calls,
        ))
        .chart(panel(lab, "Requests answered", without, with, answered));
    let grid = Grid::new(format!(
        "A {}-second outage, {} requests/s, {} attempts each",
        lab.outage.end - lab.outage.start,
        lab.requests_per_second,
        lab.attempts
    ))
    .subtitle(format!(
        "During the outage the dependency received {} calls without a breaker and {} with it \
         (50 % over 10 s, at least 20 calls, 5 s break, 5 probes). Without a breaker every request \
         is answered again from second {}; with it, from second {}.",
        count(total(without, lab.outage.clone(), calls)),
        count(total(with, lab.outage.clone(), calls)),
        recovered_at(lab, without),
        recovered_at(lab, with),
    ))
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
