//! The decision table of book §2.5, generated from [`classify`] so the book cannot drift from the
//! code. `cargo test` fails when the page's copy is stale; `UPDATE_BOOK=1 cargo test -p
//! ch02_transient_or_permanent_solution` rewrites it.

use std::fmt::Write as _;
use std::io::ErrorKind;
use std::path::Path;
use std::time::Duration;

use crate::{CallError, Retryability, classify};

const TABLE: &str = "../../book/src/ch02-transient-or-permanent/decision-table.md";

fn http(status: u16) -> CallError {
    CallError::http(status)
}

fn hinted(status: u16, seconds: u64) -> CallError {
    CallError::Http {
        status,
        retry_after: Some(Duration::from_secs(seconds)),
    }
}

/// The rows of the table: an error, and why it gets the verdict `classify` gives it.
fn rows() -> Vec<(CallError, &'static str)> {
    vec![
        (
            http(408),
            "The server stopped waiting for the request; a new copy may arrive in time.",
        ),
        (
            http(429),
            "Rate limited: the request is fine, it came too soon.",
        ),
        (
            hinted(429, 30),
            "Rate limited, and the server says when to come back.",
        ),
        (
            http(500),
            "The server failed on a request that looked valid.",
        ),
        (
            http(502),
            "A proxy got a bad answer from the server behind it.",
        ),
        (
            http(503),
            "Overloaded or in maintenance: a temporary state.",
        ),
        (
            hinted(503, 120),
            "Temporarily unavailable, and the server says for how long.",
        ),
        (
            http(504),
            "A proxy timed out waiting for the server behind it.",
        ),
        (
            http(501),
            "The server does not support this method at all; waiting changes nothing.",
        ),
        (
            http(505),
            "The server refuses this HTTP version; only a different request helps.",
        ),
        (
            http(599),
            "Unrecognised 5xx: treated as 500, as RFC 9110 prescribes.",
        ),
        (
            http(400),
            "The request is malformed: it fails the same way every time.",
        ),
        (
            http(401),
            "No valid credentials: fix them first, then send a new request.",
        ),
        (
            http(403),
            "Authenticated but not allowed: a permission must change, not the timing.",
        ),
        (
            http(404),
            "Nothing there: the same lookup finds nothing again.",
        ),
        (
            hinted(404, 30),
            "A hint never makes a permanent status worth retrying.",
        ),
        (
            http(409),
            "Conflict with the resource's state: re-read and decide, don't resend.",
        ),
        (
            http(422),
            "Understood but invalid: the content must change.",
        ),
        (
            http(471),
            "Unrecognised 4xx: treated as 400, as RFC 9110 prescribes.",
        ),
        (
            CallError::Io(ErrorKind::ConnectionRefused),
            "Nothing listening right now: a restart or a deploy.",
        ),
        (
            CallError::Io(ErrorKind::ConnectionReset),
            "The peer dropped the connection mid-call.",
        ),
        (
            CallError::Io(ErrorKind::ConnectionAborted),
            "Our own stack aborted the connection, after a network fault.",
        ),
        (
            CallError::Io(ErrorKind::BrokenPipe),
            "Writing to a connection that has already closed.",
        ),
        (
            CallError::Io(ErrorKind::UnexpectedEof),
            "The answer stopped halfway: the connection closed.",
        ),
        (
            CallError::Io(ErrorKind::NetworkUnreachable),
            "No route just now; routes come back.",
        ),
        (
            CallError::Io(ErrorKind::TimedOut),
            "The OS gave up on the connection or the read.",
        ),
        (
            CallError::Io(ErrorKind::Interrupted),
            "A signal cut the call short; it asks to be repeated.",
        ),
        (
            CallError::Io(ErrorKind::InvalidInput),
            "We passed a bad argument to the OS: a bug.",
        ),
        (
            CallError::Io(ErrorKind::PermissionDenied),
            "The process lacks a right: configuration.",
        ),
        (
            CallError::Io(ErrorKind::NotFound),
            "A file or host entry that does not exist.",
        ),
        (
            CallError::Io(ErrorKind::InvalidData),
            "The answer does not parse; the same server sends the same answer.",
        ),
        (
            CallError::Io(ErrorKind::Other),
            "Unknown kind: reported at once, not retried blindly.",
        ),
        (
            CallError::Timeout,
            "This attempt ran out of time; the next may not. Outcome unknown!",
        ),
        (
            CallError::InvalidArguments,
            "The service rejected the arguments: correct them.",
        ),
        (
            CallError::NotFound,
            "The service found nothing by that name: correct the name.",
        ),
    ]
}

fn describe_error(error: &CallError) -> String {
    match error {
        CallError::Http {
            status,
            retry_after: None,
        } => format!("HTTP {status}"),
        CallError::Http {
            status,
            retry_after: Some(hint),
        } => format!("HTTP {status}, `Retry-After: {}`", hint.as_secs()),
        CallError::Io(kind) => format!("`Io({kind:?})`"),
        other => format!("`{other:?}`"),
    }
}

fn describe_verdict(verdict: Retryability) -> String {
    match verdict {
        Retryability::Transient => "Transient".to_owned(),
        Retryability::Permanent => "**Permanent**".to_owned(),
        Retryability::After(hint) => format!("After({} s)", hint.as_secs()),
    }
}

/// The table as the book shows it.
fn render() -> String {
    let mut table = String::from(
        "<!-- Generated from `classify` by solutions/ch02-transient-or-permanent/src/decision_table.rs; do not edit. -->\n\n\
         | error | `classify` says | why |\n\
         |---|---|---|\n",
    );
    for (error, why) in rows() {
        let verdict = describe_verdict(classify(&error));
        writeln!(table, "| {} | {verdict} | {why} |", describe_error(&error)).unwrap();
    }
    table
}

#[test]
fn the_book_shows_the_table_classify_produces() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(TABLE);
    let expected = render();
    if std::env::var_os("UPDATE_BOOK").is_some() {
        std::fs::write(&path, &expected).unwrap();
        return;
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "{} is out of date with `classify`; regenerate it with \
         `UPDATE_BOOK=1 cargo test -p ch02_transient_or_permanent_solution`",
        path.display()
    );
}
