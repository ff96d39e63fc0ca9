//! One throttle shared by many threads.

use std::sync::Arc;

use super::fixture::{WINDOW, probability, same, throttle};
use crate::support::seeded;

#[test]
fn threads_share_one_throttle() {
    // Eight threads attempt 1,000 requests each; the backend accepts none. Every attempt counts,
    // so the window must hold exactly 8,000 requests: 8000/8001.
    let throttle = Arc::new(throttle(2.0, WINDOW));
    std::thread::scope(|scope| {
        for thread in 0..8u64 {
            let throttle = Arc::clone(&throttle);
            scope.spawn(move || {
                let mut rng = seeded(thread);
                for _ in 0..1_000 {
                    if throttle.admit(&mut rng) {
                        throttle.on_response(false);
                    }
                }
            });
        }
    });
    let got = probability(&throttle);
    let want = 8_000.0 / 8_001.0;
    assert!(
        same(got, want),
        "8 threads attempted 1,000 requests each through one throttle and none was accepted: \
         the probability should be 8000/8001 = {want:.9}; yours is {got:.9}, as if {:.0} \
         requests had been counted. No update may be lost under contention",
        got / (1.0 - got)
    );
}
