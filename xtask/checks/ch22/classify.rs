//! Checks of `classify_status`: which HTTP failures are worth another attempt.

use std::time::Duration;

use exercise::{ErrorKind, classify_status};

use super::support::catch;

fn classify(status: u16, retry_after: Option<Duration>) -> ErrorKind {
    catch(|| classify_status(status, retry_after)).unwrap_or_else(|message| {
        panic!("classify_status({status}, {retry_after:?}) panicked: {message}")
    })
}

#[test]
fn transient_statuses() {
    let hint = Duration::from_secs(2);
    for status in [408, 429, 500, 502, 503, 504] {
        let plain = classify(status, None);
        assert_eq!(
            plain,
            ErrorKind::Transient,
            "HTTP {status} is a failure that waiting can fix, so classify_status({status}, None) \
             must be Transient; yours returned {plain:?}",
        );
        let hinted = classify(status, Some(hint));
        assert_eq!(
            hinted,
            ErrorKind::RetryAfter(hint),
            "HTTP {status} with `Retry-After: 2` must be RetryAfter(2 s): the server said when \
             to come back; yours returned {hinted:?}",
        );
    }
}

#[test]
fn permanent_statuses() {
    for status in [400, 401, 403, 404, 409, 422] {
        for retry_after in [None, Some(Duration::from_secs(5))] {
            let kind = classify(status, retry_after);
            assert_eq!(
                kind,
                ErrorKind::Permanent,
                "HTTP {status} describes the request itself (bad input, missing credentials, no \
                 such thing); the same request will fail the same way however long you wait, so \
                 classify_status({status}, {retry_after:?}) must be Permanent; yours returned \
                 {kind:?}",
            );
        }
    }
}

#[test]
fn every_status() {
    let hint = Duration::from_millis(1_500);
    for status in (0..=1_000u16).chain([u16::MAX]) {
        if matches!(status, 501 | 505) {
            continue;
        }
        let invalid = !(100..=599).contains(&status);
        let transient = invalid || matches!(status, 408 | 429 | 500..=599);
        for retry_after in [None, Some(hint)] {
            let expected = match (transient, retry_after) {
                (false, _) => ErrorKind::Permanent,
                (true, None) => ErrorKind::Transient,
                (true, Some(delay)) => ErrorKind::RetryAfter(delay),
            };
            let kind = classify(status, retry_after);
            assert_eq!(
                kind, expected,
                "HTTP {status}: 408, 429 and the 5xx statuses (500 to 599) are transient, with \
                 the hint when there is one, and so is a status outside 100 to 599, which RFC \
                 9110 has handled as a 5xx; every other status is permanent, hint or not. \
                 classify_status({status}, {retry_after:?}) must be {expected:?}; yours returned \
                 {kind:?}",
            );
        }
    }
}
