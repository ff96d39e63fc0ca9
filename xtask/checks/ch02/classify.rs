//! Checks of `classify`: which errors waiting can fix, and which it cannot.

use std::io::ErrorKind;
use std::time::Duration;

use exercise::{CallError, Retryability, classify};

use super::support::{catch, show};

const SECOND: Duration = Duration::from_secs(1);

/// The learner's verdict on one error, with a panic turned into a readable failure.
fn verdict(error: CallError) -> Retryability {
    catch(|| classify(&error))
        .unwrap_or_else(|message| panic!("classify(&{}) panicked: {message}", name(&error)))
}

/// An error as a message shows it: `Http { status: 503, retry_after: Some(30 s) }`.
fn name(error: &CallError) -> String {
    match error {
        CallError::Http {
            status,
            retry_after: None,
        } => format!("CallError::Http {{ status: {status}, retry_after: None }}"),
        CallError::Http {
            status,
            retry_after: Some(hint),
        } => format!(
            "CallError::Http {{ status: {status}, retry_after: Some({}) }}",
            show(*hint)
        ),
        other => format!("CallError::{other:?}"),
    }
}

/// A verdict as a message shows it: `Transient`, `Permanent`, `After(30 s)`.
fn describe(verdict: Retryability) -> String {
    match verdict {
        Retryability::Transient => "Transient".to_owned(),
        Retryability::Permanent => "Permanent".to_owned(),
        Retryability::After(hint) => format!("After({})", show(hint)),
    }
}

/// Classifies every case and returns the ones whose verdict is not the expected one, as
/// "error → verdict" lines for a message; an empty string when all are right.
fn wrong(cases: impl IntoIterator<Item = (CallError, Retryability)>) -> String {
    let mistakes: Vec<String> = cases
        .into_iter()
        .filter_map(|(error, expected)| {
            let got = verdict(error);
            (got != expected).then(|| {
                format!(
                    "{} gave {}, expected {}",
                    name(&error),
                    describe(got),
                    describe(expected)
                )
            })
        })
        .collect();
    mistakes.join("; ")
}

fn http(status: u16) -> CallError {
    CallError::Http {
        status,
        retry_after: None,
    }
}

/// 501 and 505: the book discusses them, and either verdict passes.
const LEFT_OUT: [u16; 2] = [501, 505];

/// Every transient status: 408, 429, and the whole 5xx class, known codes or not.
fn transient_statuses() -> Vec<u16> {
    [408, 429]
        .into_iter()
        .chain((500..=599).filter(|status| !LEFT_OUT.contains(status)))
        .collect()
}

/// Every permanent status: the whole 4xx class, known codes or not, except 408 and 429.
fn permanent_statuses() -> Vec<u16> {
    (400..=499)
        .filter(|status| ![408, 429].contains(status))
        .collect()
}

/// Statuses outside 100..=599, which RFC 9110 calls invalid and has a client handle as a 5xx:
/// both sides of the valid range, the 600..=999 that libraries use for errors of their own, and
/// values no three-digit field can hold.
const INVALID_STATUSES: [u16; 10] = [0, 1, 99, 600, 601, 699, 700, 999, 1_000, u16::MAX];

fn hinted(status: u16, hint: Duration) -> CallError {
    CallError::Http {
        status,
        retry_after: Some(hint),
    }
}

/// The first `limit` mistakes and how many there were in all, for a message.
fn first_of(mistakes: &str, limit: usize) -> String {
    let all: Vec<&str> = mistakes.split("; ").collect();
    if all.len() <= limit {
        return mistakes.to_owned();
    }
    format!(
        "{} (and {} more)",
        all[..limit].join("; "),
        all.len() - limit
    )
}

#[test]
fn transient_http_statuses() {
    let statuses = [408, 429, 500, 502, 503, 504];
    let mistakes = wrong(statuses.map(|status| (http(status), Retryability::Transient)));
    assert!(
        mistakes.is_empty(),
        "408 Request Timeout, 429 Too Many Requests and the server errors 500, 502, 503 and 504 \
         are transient: the same request may succeed a little later. Yours: {mistakes}",
    );
    let class = transient_statuses()
        .into_iter()
        .map(|status| (http(status), Retryability::Transient));
    let mistakes = wrong(class);
    assert!(
        mistakes.is_empty(),
        "every server error is transient, the codes nobody listed included: RFC 9110 treats an \
         unrecognised status like the x00 of its class, so 507, 511 or 599 are handled like 500 \
         (only 501 and 505 are left to your judgement). Yours: {}",
        first_of(&mistakes, 4),
    );
}

#[test]
fn permanent_http_statuses() {
    let statuses = [400, 401, 403, 404];
    let bare = statuses.map(|status| (http(status), Retryability::Permanent));
    let mistakes = wrong(bare);
    assert!(
        mistakes.is_empty(),
        "400 Bad Request, 401 Unauthorized, 403 Forbidden and 404 Not Found are permanent: \
         the same request fails the same way however long you wait, so fix the cause instead. \
         Yours: {mistakes}",
    );
    let class = permanent_statuses()
        .into_iter()
        .map(|status| (http(status), Retryability::Permanent));
    let mistakes = wrong(class);
    assert!(
        mistakes.is_empty(),
        "every other client error is permanent too, the codes nobody listed included: 405, \
         409, 422 or an unrecognised 471 are handled like 400 (RFC 9110's class rule); only 408 \
         and 429 are transient. Yours: {}",
        first_of(&mistakes, 4),
    );
    let hints = [Duration::ZERO, Duration::from_nanos(1), 30 * SECOND];
    let hinted_cases = permanent_statuses()
        .into_iter()
        .flat_map(|status| hints.map(|hint| (hinted(status, hint), Retryability::Permanent)));
    let mistakes = wrong(hinted_cases);
    assert!(
        mistakes.is_empty(),
        "a Retry-After value does not make a permanent status worth retrying: every client error \
         but 408 and 429 stays Permanent when it carries one, whatever its value. Yours: {}",
        first_of(&mistakes, 4),
    );
}

#[test]
fn retry_after_hint() {
    let cases = [
        (429, SECOND),
        (429, 120 * SECOND),
        (503, 30 * SECOND),
        (503, Duration::from_millis(1_500)),
    ];
    let mistakes =
        wrong(cases.map(|(status, hint)| (hinted(status, hint), Retryability::After(hint))));
    assert!(
        mistakes.is_empty(),
        "when a 429 or a 503 carries a Retry-After value, the server has said how long to wait: \
         the verdict must be After(that duration), not a plain Transient. Yours: {mistakes}",
    );
    // Every transient status, and hints at the edges: zero, odd nanoseconds, hours.
    let hints = [
        Duration::ZERO,
        Duration::from_nanos(1),
        Duration::from_nanos(1_500_000_001),
        7_200 * SECOND,
    ];
    let class = transient_statuses()
        .into_iter()
        .flat_map(|status| hints.map(|hint| (hinted(status, hint), Retryability::After(hint))));
    let mistakes = wrong(class);
    assert!(
        mistakes.is_empty(),
        "a transient status that carries a Retry-After value d gives After(d), exactly that \
         value: for 408, 429 and every server error (but 501 and 505), and for any d, zero and \
         odd nanoseconds included. Yours: {}",
        first_of(&mistakes, 4),
    );
}

#[test]
fn invalid_statuses_as_5xx() {
    let bare = INVALID_STATUSES.map(|status| (http(status), Retryability::Transient));
    let mistakes = wrong(bare);
    assert!(
        mistakes.is_empty(),
        "a status outside 100..=599 is invalid, and RFC 9110 says a client should handle it as \
         a 5xx: transient, like 500, on both sides of the range (libraries report their own \
         failures as 600 to 999). Yours: {}",
        first_of(&mistakes, 4),
    );
    let hint = 30 * SECOND;
    let hinted_cases =
        INVALID_STATUSES.map(|status| (hinted(status, hint), Retryability::After(hint)));
    let mistakes = wrong(hinted_cases);
    assert!(
        mistakes.is_empty(),
        "an invalid status counts as a 5xx, so with a Retry-After value d it gives After(d), as \
         a 503 would. Yours: {}",
        first_of(&mistakes, 4),
    );
}

#[test]
fn transient_io_kinds() {
    let kinds = [
        ErrorKind::ConnectionReset,
        ErrorKind::ConnectionAborted,
        ErrorKind::TimedOut,
        ErrorKind::Interrupted,
    ];
    let mistakes = wrong(kinds.map(|kind| (CallError::Io(kind), Retryability::Transient)));
    assert!(
        mistakes.is_empty(),
        "a connection that was reset or aborted, an I/O timeout and an interrupted call are \
         transient: the next connection or the next try may well succeed. Yours: {mistakes}",
    );
}

#[test]
fn permanent_io_kinds() {
    let kinds = [
        ErrorKind::InvalidInput,
        ErrorKind::PermissionDenied,
        ErrorKind::NotFound,
    ];
    let mistakes = wrong(kinds.map(|kind| (CallError::Io(kind), Retryability::Permanent)));
    assert!(
        mistakes.is_empty(),
        "InvalidInput, PermissionDenied and NotFound are permanent: a bad argument, a missing \
         right or a missing file does not fix itself while you wait. Yours: {mistakes}",
    );
}

#[test]
fn timeout_is_transient() {
    let mistakes = wrong([(CallError::Timeout, Retryability::Transient)]);
    assert!(
        mistakes.is_empty(),
        "a call that ran out of time is transient: the next attempt may answer in time. \
         Yours: {mistakes}",
    );
}

#[test]
fn domain_errors_are_permanent() {
    let mistakes = wrong([
        (CallError::InvalidArguments, Retryability::Permanent),
        (CallError::NotFound, Retryability::Permanent),
    ]);
    assert!(
        mistakes.is_empty(),
        "the service's own rejections are permanent: invalid arguments need correcting and a \
         missing record stays missing, so sending the same request again cannot help. \
         Yours: {mistakes}",
    );
}
