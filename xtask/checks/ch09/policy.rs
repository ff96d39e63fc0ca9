//! Checks both policies share: how many delays they yield, and where their randomness comes from.

use std::time::Duration;

use exercise::{DecorrelatedJitter, EqualJitter};

use super::support::{catch, seeded, show_all};

const BASE: Duration = Duration::from_millis(50);
const CAP: Duration = Duration::from_millis(500);

/// The two policies under one name, so each check runs the same steps on both.
#[derive(Clone, Copy)]
enum Kind {
    Equal,
    Decorrelated,
}

impl Kind {
    const BOTH: [Kind; 2] = [Kind::Equal, Kind::Decorrelated];

    fn name(self) -> &'static str {
        match self {
            Kind::Equal => "EqualJitter",
            Kind::Decorrelated => "DecorrelatedJitter",
        }
    }

    /// A policy over (BASE, CAP), boxed so both kinds share one type.
    fn policy(self, max_retries: u32, seed: u64) -> Box<dyn Iterator<Item = Duration>> {
        match self {
            Kind::Equal => Box::new(EqualJitter::new(BASE, CAP, max_retries, seeded(seed))),
            Kind::Decorrelated => Box::new(DecorrelatedJitter::new(
                BASE,
                CAP,
                max_retries,
                seeded(seed),
            )),
        }
    }

    /// The first `max_retries + 5` items at most, with a panic turned into a readable failure.
    fn delays(self, max_retries: u32, seed: u64) -> Vec<Duration> {
        self.delays_of(max_retries, max_retries as usize + 5, seed)
    }

    /// The first `limit` items at most, with a panic turned into a readable failure.
    fn delays_of(self, max_retries: u32, limit: usize, seed: u64) -> Vec<Duration> {
        catch(|| self.policy(max_retries, seed).take(limit).collect()).unwrap_or_else(|message| {
            panic!(
                "{}::new(base = 50 ms, cap = 500 ms, max_retries = {max_retries}, rng) panicked \
                 while yielding its delays (seed {seed}): {message}",
                self.name(),
            )
        })
    }
}

#[test]
fn yields_max_retries_delays() {
    for kind in Kind::BOTH {
        // 5,000: a policy allowed that many retries yields them all, with no safety net of 100
        // or 1,000 of its own.
        for max_retries in [0, 1, 2, 3, 5, 8, 100, 5_000] {
            let count = kind.delays(max_retries, 7).len();
            assert!(
                count == max_retries as usize,
                "{}::new(base = 50 ms, cap = 500 ms, max_retries = {max_retries}, rng) should \
                 yield exactly {max_retries} delay(s), one per retry, and then None; yours \
                 yielded {count}{}",
                kind.name(),
                if count > max_retries as usize {
                    " (or more)"
                } else {
                    ""
                },
            );
        }
        // Asked again after the end, a policy stays ended: `None` means "give up".
        let after_end = catch(|| {
            let mut policy = kind.policy(2, 7);
            policy.by_ref().take(2).for_each(drop);
            (0..3).filter_map(|_| policy.next()).count()
        });
        match after_end {
            Ok(0) => {}
            Ok(extra) => panic!(
                "{} with max_retries = 2 yielded two delays, but asked three more times it \
                 yielded {extra} more; after its first None a policy must stay ended",
                kind.name(),
            ),
            Err(message) => panic!(
                "{} with max_retries = 2 yielded two delays, but asked for more it panicked: \
                 {message}; after its first None a policy must keep answering None",
                kind.name(),
            ),
        }
    }
}

#[test]
fn seeded_determinism() {
    for kind in Kind::BOTH {
        // Another policy runs in between: a policy's delays must depend on its own generator
        // only, never on state shared with other policies.
        let first = kind.delays(8, 1);
        let other = kind.delays(8, 2);
        let again = kind.delays(8, 1);
        assert!(
            first == again,
            "two {} policies built with the same seed (1) must yield the same delays, even when \
             another policy (seed 2) ran in between; yours gave {} and then {}: draw only from \
             the generator the policy owns, and keep all state in the policy itself",
            kind.name(),
            show_all(&first, 6),
            show_all(&again, 6),
        );
        assert!(
            first != other,
            "two {} policies built with different seeds (1 and 2) yielded the same delays {}: \
             draw from the generator passed to `new`, not from one you create yourself",
            kind.name(),
            show_all(&first, 6),
        );
    }
}

#[test]
fn huge_max_retries() {
    // max_retries = u32::MAX is a policy that (practically) never gives up: it must start like
    // any other, without overflowing while it counts. 2^16 + 3 retries are 65,539, not the 3 a
    // count compared as u16 sees.
    for (kind, max_retries) in Kind::BOTH
        .into_iter()
        .flat_map(|kind| [(kind, u32::MAX), (kind, (1 << 16) + 3)])
    {
        let delays = kind.delays_of(max_retries, 200, 3);
        assert!(
            delays.len() == 200 && delays.iter().all(|delay| *delay <= CAP),
            "{}::new(base = 50 ms, cap = 500 ms, max_retries = {max_retries}, rng) should yield \
             delay after delay, all within the cap; the first 200 were {} ({} in all)",
            kind.name(),
            show_all(&delays, 8),
            delays.len(),
        );
    }
}
