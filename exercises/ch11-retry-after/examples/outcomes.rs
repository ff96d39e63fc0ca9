//! The table of book §11.3: what `parse_retry_after` and `next_delay` make of header values.
//!
//! Run it with `cargo run -p ch11_retry_after --example outcomes` once your exercise passes.
//! Every response is received at `Fri, 31 Dec 1999 23:57:59 GMT`; the client's backoff is
//! 400 ms, it accepts hints up to 60 s, and 5 minutes of its budget are left.

use std::time::Duration;

use ch11_retry_after::stubs::clock_start;
use ch11_retry_after::{Decision, next_delay, parse_retry_after};

const BACKOFF: Duration = Duration::from_millis(400);
const MAX_HINT: Duration = Duration::from_secs(60);
const REMAINING: Duration = Duration::from_secs(300);

/// Header values, each with what it is.
const VALUES: [(&str, &str); 17] = [
    ("120", "delay-seconds (RFC 9110's example)"),
    (
        "Fri, 31 Dec 1999 23:59:59 GMT",
        "IMF-fixdate (RFC 9110's example)",
    ),
    (
        "Friday, 31-Dec-99 23:59:59 GMT",
        "the same instant, RFC 850 format",
    ),
    (
        "Fri Dec 31 23:59:59 1999",
        "the same instant, asctime format",
    ),
    ("Fri, 31 Dec 1999 23:58:29 GMT", "a date 30 s after receipt"),
    ("Fri, 31 Dec 1999 23:00:00 GMT", "a date already past"),
    ("0", "zero seconds"),
    (" 7\t", "whitespace around digits"),
    ("3600", "an hour: longer than the budget left"),
    ("-5", "negative"),
    ("1.5", "fractional"),
    ("+30", "a sign"),
    ("", "empty"),
    ("soon", "garbage"),
    ("99999999999999999999", "too large for a u64"),
    (
        "Mon, 31 Dec 1999 23:59:59 GMT",
        "a weekday that does not match the date",
    ),
    ("Fri, 31 Dec 1999 23:59:59 UTC", "a zone other than GMT"),
];

/// A duration the way the book writes it: `400 ms`, `30 s`, `2 min`, `1 h`.
fn human(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match seconds {
        0 if duration.is_zero() => "0 s".to_owned(),
        0 => format!("{} ms", duration.as_millis()),
        s if s % 3_600 == 0 => format!("{} h", s / 3_600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

fn main() {
    println!("| `Retry-After` value | what it is | `parse_retry_after` | `next_delay` |");
    println!("|---|---|---|---|");
    for (value, what) in VALUES {
        let hint = parse_retry_after(value, clock_start());
        let parsed = hint.map_or_else(|| "`None`".to_owned(), |d| format!("`Some({})`", human(d)));
        let decision = match next_delay(hint, BACKOFF, MAX_HINT, REMAINING) {
            Decision::Sleep(delay) => format!("`Sleep({})`", human(delay)),
            Decision::GiveUp => "`GiveUp`".to_owned(),
        };
        println!("| `{value:?}` | {what} | {parsed} | {decision} |");
    }
}
