//! Given: the network between the clients and the row.
//!
//! Every message, request or reply, takes one *hop*. As in the published simulator, a hop takes
//! `|Normal(mean, sd)|`: 10 ms on average, give or take 2 ms. `rand_distr` is not a dependency of
//! this workbook, so the normal draw is made by hand with the Box–Muller transform.

use std::f64::consts::TAU;
use std::time::Duration;

use rand::Rng;

/// How long a hop takes: `|Normal(mean, sd)|`, rounded to the nanosecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Network {
    pub mean: Duration,
    pub sd: Duration,
}

impl Network {
    /// The lab's network: 10 ms per hop, standard deviation 2 ms.
    pub const LAB: Network = Network {
        mean: Duration::from_millis(10),
        sd: Duration::from_millis(2),
    };

    /// A network on which every hop takes exactly `hop`: for worked examples and tests, where
    /// every time can be computed by hand.
    pub const fn fixed(hop: Duration) -> Network {
        Network {
            mean: hop,
            sd: Duration::ZERO,
        }
    }

    /// The duration of one hop. Takes one `u64` from `rng`, even on a fixed network.
    pub fn delay(&self, rng: &mut impl Rng) -> Duration {
        // Box–Muller: two independent uniforms u1 in (0, 1] and u2 in [0, 1) make one standard
        // normal draw z. Both come from the two halves of one 64-bit draw, which halves the work
        // of the generator; 32 bits of resolution each are plenty for a network model.
        let bits = rng.next_u64();
        let u1 = ((bits >> 32) as f64 + 1.0) / TWO_TO_THE_32;
        let u2 = (bits & 0xFFFF_FFFF) as f64 / TWO_TO_THE_32;
        let z = (-2.0 * u1.ln()).sqrt() * (TAU * u2).cos();
        let nanos = (self.mean.as_nanos() as f64 + self.sd.as_nanos() as f64 * z).abs();
        Duration::from_nanos(nanos.round() as u64)
    }
}

const TWO_TO_THE_32: f64 = 4_294_967_296.0;
