//! Checks of `classify`: which errors waiting can fix, and which it cannot.

use std::io::ErrorKind;
use std::time::Duration;

use exercise::{CallError, Retryability, classify};

use crate::support::{catch, show};

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

#[test]
fn transient_http_statuses() {
    let statuses = [408, 429, 500, 502, 503, 504];
    let mistakes = wrong(statuses.map(|status| (http(status), Retryability::Transient)));
    assert!(
        mistakes.is_empty(),
        "408 Request Timeout, 429 Too Many Requests and the server errors 500, 502, 503 and 504 \
         are transient: the same request may succeed a little later. Yours: {mistakes}",
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
    let hinted = statuses.map(|status| {
        let error = CallError::Http {
            status,
            retry_after: Some(30 * SECOND),
        };
        (error, Retryability::Permanent)
    });
    let mistakes = wrong(hinted);
    assert!(
        mistakes.is_empty(),
        "a Retry-After value does not make a permanent status worth retrying: 400, 401, 403 and \
         404 stay Permanent even when they carry one. Yours: {mistakes}",
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
    let mistakes = wrong(cases.map(|(status, hint)| {
        let error = CallError::Http {
            status,
            retry_after: Some(hint),
        };
        (error, Retryability::After(hint))
    }));
    assert!(
        mistakes.is_empty(),
        "when a 429 or a 503 carries a Retry-After value, the server has said how long to wait: \
         the verdict must be After(that duration), not a plain Transient. Yours: {mistakes}",
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
