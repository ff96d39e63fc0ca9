//! Checks of the run as a whole: a seed replays exactly.

use exercise::{Scenario, simulate};

use super::sweep::{run, runs};

#[test]
fn same_seed_same_run() {
    for seed in [3u64, 41] {
        let first = runs().nth(seed as usize).unwrap_or_else(|| run(seed));
        let again = simulate(seed, &Scenario::default());
        assert!(
            again == *first,
            "seed {seed} ran twice gave two different runs: first \"{}\", then \"{}\" ({} and {} \
             calls to payment). A seed must replay exactly: draw every random number from the \
             `rng` you are given (never a generator seeded from the OS), read time only from \
             tokio's clock, and write `biased;` in any `tokio::select!`",
            first.summary(),
            again.summary(),
            first.service(exercise::Step::Payment).total(),
            again.service(exercise::Step::Payment).total(),
        );
    }
}
