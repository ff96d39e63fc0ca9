//! Checks of `classify_status`: which HTTP failures are worth another attempt.

use std::time::Duration;

use exercise::{ErrorKind, classify_status};

use crate::support::catch;

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
