//! One throttle shared by many threads.

use std::sync::Arc;

use super::fixture::{WINDOW, probability, same, throttle};
use crate::support::seeded;

#[test]
fn threads_share_one_throttle() {
    // Eight threads attempt 1,000 requests each, and record an accept for every fourth one
    // (whether the throttle let it out or not: the counts are what is checked). Every attempt
    // and every accept counts, so the window must hold exactly 8,000 requests and 2,000
    // accepts: (8000 − 2 × 2000) / 8001.
    let throttle = Arc::new(throttle(2.0, WINDOW));
    std::thread::scope(|scope| {
        for thread in 0..8u64 {
            let throttle = Arc::clone(&throttle);
            scope.spawn(move || {
                let mut rng = seeded(thread);
                for n in 0..1_000 {
                    let admitted = throttle.admit(&mut rng);
                    if n % 4 == 0 {
                        throttle.on_response(true);
                    } else if admitted {
                        throttle.on_response(false);
                    }
                }
            });
        }
    });
    let got = probability(&throttle);
    let want = 4_000.0 / 8_001.0;
    assert!(
        same(got, want),
        "8 threads attempted 1,000 requests each through one throttle and recorded an accept \
         for every fourth: 8,000 requests and 2,000 accepts give (8000 − 2 × 2000) / 8001 = \
         {want:.9}; yours is {got:.9}. No request and no accept may be lost under contention"
    );
}
