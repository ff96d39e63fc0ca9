//! Checks of what `retry_immediately` returns when every call fails: the last error.

use super::calls::{Service, count, run};

#[test]
fn last_error() {
    for max_retries in [2, 5, 1] {
        let setting = format!("with max_retries = {max_retries} and a service that always fails");
        let run = run(max_retries, Service::always_failing());
        let result = run.result(&setting);
        let last = max_retries + 1;
        let errors = match last {
            2 => "Err(1), then Err(2)".to_owned(),
            3 => "Err(1), Err(2), then Err(3)".to_owned(),
            _ => format!("Err(1), Err(2), … and finally Err({last})"),
        };
        assert!(
            result == Err(last),
            "{setting}, the calls fail with {errors}; the loop must return the error of the \
             last call, Err({last}), the freshest news about the service; yours returned \
             {result:?} after {}",
            count(run.calls(), "call"),
        );
    }
}
