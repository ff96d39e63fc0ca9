//! Visible tests: run them with `cargo xtask check ch06` (or `cargo test -p ch06_fixed_and_linear`).
//! The grader runs hidden checks beside them.

use std::time::Duration;

use ch06_fixed_and_linear::{Fixed, Linear, load_per_window};

const MS: Duration = Duration::from_millis(1);
const S: Duration = Duration::from_secs(1);

#[test]
fn fixed_waits_three_seconds_each_time() {
    let delays: Vec<Duration> = Fixed::new(3 * S, 3).collect();
    assert_eq!(delays, [3 * S, 3 * S, 3 * S]);
}

#[test]
fn linear_grows_by_the_increment() {
    let delays: Vec<Duration> = Linear::new(3 * S, 3 * S, 3).collect();
    assert_eq!(delays, [3 * S, 6 * S, 9 * S]);
}

#[test]
fn three_clients_arrive_together() {
    // Retries at 20 ms and 40 ms; 10 ms windows 0 to 4.
    let load = load_per_window(&[20 * MS, 20 * MS], 3, 10 * MS);
    assert_eq!(load, [0, 0, 3, 0, 3]);
}
