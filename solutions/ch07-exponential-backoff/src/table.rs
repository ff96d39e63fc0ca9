//! The book's table of delays for `base = 100 ms`, `factor = 2`, `cap = 30 s`, computed by the
//! solution and pinned with an insta snapshot that the page includes, so the numbers on the page
//! are what this code does (`cargo test -p ch07_exponential_backoff_solution table`).

use std::fmt::Write as _;
use std::time::Duration;

use crate::Exponential;

const BASE: Duration = Duration::from_millis(100);
const CAP: Duration = Duration::from_secs(30);

/// A duration as a person reads it: `400 ms`, `25.6 s`, `1.7 min`, `29.1 h`, `3.3 years`.
fn human(duration: Duration) -> String {
    const MINUTE: f64 = 60.0;
    const HOUR: f64 = 60.0 * MINUTE;
    const DAY: f64 = 24.0 * HOUR;
    const YEAR: f64 = 365.25 * DAY;
    let secs = duration.as_secs_f64();
    let (value, unit) = if secs < 1.0 {
        return format!("{} ms", duration.as_millis());
    } else if secs < 2.0 * MINUTE {
        (secs, "s")
    } else if secs < 2.0 * HOUR {
        (secs / MINUTE, "min")
    } else if secs < 2.0 * DAY {
        (secs / HOUR, "h")
    } else if secs < YEAR {
        (secs / DAY, "days")
    } else if secs < 1_000.0 * YEAR {
        (secs / YEAR, "years")
    } else {
        let years = secs / YEAR;
        let exponent = years.log10().floor();
        return format!("{:.1} × 10^{exponent} years", years / 10f64.powf(exponent));
    };
    let text = format!("{value:.1}");
    format!("{} {unit}", text.trim_end_matches(".0"))
}

/// The sum of the delays before retries `0..=retry`: how long a client has slept in all when it
/// sends retry number `retry`.
fn waited(policy: &Exponential, retry: u32) -> Duration {
    (0..=retry).map(|r| policy.delay(r)).sum()
}

/// The table as Markdown: one row per retry, capped and uncapped side by side.
fn delay_table(retries: &[u32]) -> String {
    let capped = Exponential::new(BASE, 2, CAP, u32::MAX).expect("a valid schedule");
    let uncapped = Exponential::new(BASE, 2, Duration::MAX, u32::MAX).expect("a valid schedule");
    let mut table = String::from(
        "| retry | base · 2^retry (no cap) | slept in all (no cap) | delay, cap 30 s | slept in all, cap 30 s |\n\
         |---:|---:|---:|---:|---:|\n",
    );
    for &retry in retries {
        let delay = capped.delay(retry);
        let shown = if delay == CAP {
            format!("**{}**", human(delay))
        } else {
            human(delay)
        };
        let _ = writeln!(
            table,
            "| {retry} | {} | {} | {shown} | {} |",
            human(uncapped.delay(retry)),
            human(waited(&uncapped, retry)),
            human(waited(&capped, retry)),
        );
    }
    table
}

#[test]
fn delays() {
    let retries: Vec<u32> = (0..=12).chain([15, 20, 30, 40, 64]).collect();
    insta::assert_snapshot!(delay_table(&retries));
}

#[test]
fn human_units() {
    let cases = [
        (Duration::from_millis(400), "400 ms"),
        (Duration::from_millis(25_600), "25.6 s"),
        (Duration::from_secs(30), "30 s"),
        (Duration::from_secs(102), "102 s"),
        (Duration::from_secs(3 * 3_600), "3 h"),
    ];
    for (duration, text) in cases {
        assert_eq!(human(duration), text);
    }
}
