//! Randomness for code under test, drawn from the run's input.
//!
//! [`rng`] hands out a generator in any task of a run (no node context needed) whose every bit
//! is a draw of the input: replayed, mutated and shrunk with the rest of the run. It
//! implements `RngCore` of both `rand_core` 0.9 (`rand` 0.9) and `rand_core` 0.6 (`rand`
//! 0.8, still what many crates take), so a third-party crate that asks for "an `Rng`" can be
//! given this one instead of `thread_rng()` — which in `rand` 0.8 reads OS entropy by a raw
//! system call that no hook can see (see [`crate::os`]).
//!
//! ```
//! use rand_core::RngCore;
//! use sim_core::sim::{Config, Sim};
//!
//! let mut sim = Sim::new(Config::default());
//! sim.client("c", |_| async {
//!     let mut rng = sim_core::random::rng();
//!     let a = rng.next_u64();
//!     // The same generator through rand 0.8's trait: the next draws of the same input.
//!     let b = rand_core_06::RngCore::next_u64(&mut rng);
//!     assert_ne!((a, b), (0, 0), "seed 3 draws something");
//! });
//! assert!(sim.run_seed(3).outcome.class.is_pass());
//! ```

use crate::choice::Source;
use crate::world::with;

use crate::choice::lanes::Label;

// The labels this part draws, each declared with its lane: a label whose text would read
// another lane does not compile.
const NODE_RNG: Label = Label::workload("node.rng");

/// A generator whose bits come from the run's input; see the [module docs](self).
///
/// It holds nothing: every call draws from the run in progress, so it is `Send`, `Sync` and
/// `Copy`, and may be stored in a struct a crate keeps across `.await`s.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimRng {
    _private: (),
}

/// The run's generator. Call it from a task inside a simulation; using the generator outside
/// one panics.
pub fn rng() -> SimRng {
    SimRng { _private: () }
}

impl SimRng {
    fn fill(dst: &mut [u8]) {
        // The label the node generator always had: hashes of existing runs stay the same.
        with(|w| w.source().fill(NODE_RNG.name(), dst))
    }

    fn next(&mut self) -> u64 {
        let mut b = [0u8; 8];
        Self::fill(&mut b);
        u64::from_le_bytes(b)
    }
}

impl rand_core::RngCore for SimRng {
    fn next_u32(&mut self) -> u32 {
        self.next() as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.next()
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        Self::fill(dst)
    }
}

/// The same draws through rand 0.8's trait.
impl rand_core_06::RngCore for SimRng {
    fn next_u32(&mut self) -> u32 {
        rand_core::RngCore::next_u32(self)
    }
    fn next_u64(&mut self) -> u64 {
        rand_core::RngCore::next_u64(self)
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        rand_core::RngCore::fill_bytes(self, dst)
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), rand_core_06::Error> {
        rand_core::RngCore::fill_bytes(self, dst);
        Ok(())
    }
}

/// Marks the generator as fit for `rand` 0.8's `CryptoRng`-bounded APIs (some crates demand
/// it for ids or nonces). It is not cryptographic — its bits are the test input — which is
/// what a simulation wants.
impl rand_core_06::CryptoRng for SimRng {}
