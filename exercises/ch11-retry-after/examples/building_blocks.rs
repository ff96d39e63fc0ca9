//! The building blocks of `parse_retry_after`, tried one at a time on awkward values, and a
//! neighbour with the opposite rule for bad values: gRPC's pushback header.
//!
//! ```text
//! cargo run -p ch11_retry_after --example building_blocks
//! ```
//!
//! It does not use your code.

use std::time::{Duration, SystemTime};

// ANCHOR: digits
/// What the standard library's integer parser makes of `text`, and whether `text` is
/// `1*DIGIT`, the grammar of `delay-seconds`. The two disagree.
fn integer_readings(text: &str) -> (Result<u64, std::num::ParseIntError>, bool) {
    let only_digits = text.chars().all(|c| c.is_ascii_digit()) && !text.is_empty();
    (text.parse::<u64>(), only_digits)
}
// ANCHOR_END: digits

// ANCHOR: dates
/// How far `later` lies after `earlier`, or `None` when it does not: `duration_since` is an
/// `Err` when its argument is the later of the two.
fn gap(earlier: SystemTime, later: SystemTime) -> Option<Duration> {
    later.duration_since(earlier).ok()
}
// ANCHOR_END: dates

// ANCHOR: pushback
/// What a `grpc-retry-pushback-ms` value asks of a gRPC client (proposal A6): a non-negative
/// number of milliseconds to wait before the next attempt, or, for a negative or unreadable
/// value, no further attempt at all. `Retry-After` has no such stop signal: an unreadable
/// `Retry-After` is no hint, and the client's own backoff decides.
#[derive(Debug, PartialEq, Eq)]
enum Pushback {
    WaitThen(Duration),
    DoNotRetry,
}

fn read_pushback(text: &str) -> Pushback {
    match text.parse::<i64>().map(u64::try_from) {
        Ok(Ok(millis)) => Pushback::WaitThen(Duration::from_millis(millis)),
        _ => Pushback::DoNotRetry,
    }
}
// ANCHOR_END: pushback

fn main() {
    println!("{:<24} {:<40} only digits", "text", "str::parse::<u64>");
    let texts = [
        "120",
        "0120",
        "+120",
        "-5",
        "1.5",
        " 7\t",
        "",
        "99999999999999999999",
    ];
    for text in texts {
        let (parsed, only_digits) = integer_readings(text);
        let parsed = match parsed {
            Ok(number) => format!("Ok({number})"),
            Err(error) => format!("Err: {error}"),
        };
        println!("{:<24} {parsed:<40} {only_digits}", format!("{text:?}"));
    }

    println!();
    let received = httpdate::parse_http_date("Fri, 31 Dec 1999 23:57:59 GMT")
        .expect("the moment of receipt is a valid IMF-fixdate");
    for text in [
        "Fri, 31 Dec 1999 23:59:59 GMT",
        "Friday, 31-Dec-99 23:59:59 GMT",
        "Fri Dec 31 23:59:59 1999",
        "Fri, 31 Dec 1999 23:00:00 GMT",
        "Mon, 31 Dec 1999 23:59:59 GMT",
        "Fri, 31 Dec 1999 23:59:59 UTC",
    ] {
        match httpdate::parse_http_date(text) {
            Ok(moment) => println!(
                "{text:<32} a date; after receipt by {:?}",
                gap(received, moment)
            ),
            Err(error) => println!("{text:<32} not a date: {error}"),
        }
    }

    println!();
    for text in ["250", "0", "-1", "soon", "+40"] {
        println!("grpc-retry-pushback-ms {text:<6} {:?}", read_pushback(text));
    }
}
