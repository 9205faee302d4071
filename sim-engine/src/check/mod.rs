//! Checks users plug their histories into: a linearizability checker.
//!
//! A system under test records every client operation in an [`OpLog`] — the input when it
//! starts, the output when it returns, or nothing when it timed out — alongside the history's
//! operation marks ([`crate::sim::op_start`] / [`crate::sim::op_result`], which [`OpLog`]
//! writes for it, so the operations stay in the history hash and the trace). At the end of a
//! run, [`linearizable`] asks whether some order of the operations, one at a time, explains
//! every result and respects real time: an operation that returned before another started
//! comes first.
//!
//! * **Models** are one trait, [`Model`]: an initial state and a step function. [`kv::Kv`] is
//!   a key-value register (get, put, compare-and-set), partitioned per key.
//! * **Indeterminate operations** (timed out, the client never learned the outcome) may have
//!   taken effect at any moment after they started, or never: their output is free and they
//!   need not be placed at all.
//! * **Partitions**: operations the model puts in different partitions ([`Model::partition`])
//!   never interact, so each partition is searched on its own (P-compositionality: a history
//!   is linearizable when each per-key sub-history is).
//! * **The search** is Wing & Gong's, with Lowe's memoisation (as in Porcupine): operations
//!   are linearized depth first in real-time order; a configuration already seen (the set of
//!   linearized operations as a bitset, plus the model state) is never explored again.
//! * **On failure**, a [`Violation`] names the shortest non-linearizable window it found: the
//!   first return in the partition after which no linearization exists, and a small set of
//!   operations (each with its client and its interval) that alone admit none — dropping any
//!   one of them makes the rest linearizable (when the minimisation finished within its
//!   budget; the report says so). The message names the window's span and its operations'
//!   numbers in the history, which [`WindowMark::find`] reads back: the space-time diagram
//!   (`sim_core::render::svg`) shades the window and highlights its operations.
//!
//! # Cost and bound
//!
//! Per partition of `n` operations, memory and time are bounded by the number of distinct
//! configurations the search meets: at most `n + 1` prefixes times the model states when
//! operations never overlap, and up to `2^c` subsets at each point where `c` operations are
//! concurrent, times the states — exponential only in concurrency, never in length. Each
//! configuration costs `O(n / 64)` to hash and compare. A run of a replicated store with a
//! few clients (concurrency ≤ clients + timed-out operations) stays linear in `n`; the bench
//! (`cargo bench -p sim-core --bench check`) measures histories of 100, 1,000 and 10,000
//! operations. Every search is bounded: [`Limits::budget_steps`] caps the steps of one
//! partition's search and [`Limits::ops_max`] its length; past either the answer is
//! a [`CheckError`] that says so, never a guess. Finding the window costs a few more searches of the
//! failing prefix (a binary search over returns, then a bounded minimisation).
//!
//! ```
//! use sim_core::check::{self, kv::{Kv, KvInput, KvOutput}, OpLog};
//!
//! let mut log = OpLog::new();
//! let put = log.call("c1", KvInput::Put { key: 1, value: 7 });
//! let get = log.call("c2", KvInput::Get { key: 1 });
//! log.ret(put, KvOutput::Done);
//! log.ret(get, KvOutput::Value(None)); // concurrent with the put: reading nothing is fine
//! assert!(check::linearizable(&Kv, &log).is_ok());
//!
//! let late = log.call("c2", KvInput::Get { key: 1 });
//! log.ret(late, KvOutput::Value(None)); // after the put returned: must read 7
//! let violation = check::linearizable(&Kv, &log).unwrap_err();
//! assert!(violation.to_string().contains("no linearization"));
//! ```

use std::fmt::Debug;
use std::hash::Hash;

mod clients;
mod history;
pub mod kv;
pub mod raft;
mod search;

pub use clients::ClientHistory;
pub use history::{Indeterminate, OpLog, Operation, Pending};
pub use search::{CheckError, Violation, WindowMark, WindowOp};

/// A sequential specification: what one operation at a time does to a state.
///
/// Implement it to check your own system's histories.
///
/// ```
/// use sim_core::check::{self, Model, OpLog};
///
/// /// A counter: `Some(n)` adds n and returns nothing; `None` reads it.
/// struct Counter;
/// impl Model for Counter {
///     type State = u64;
///     type Input = Option<u64>;
///     type Output = u64;
///     fn init(&self) -> u64 { 0 }
///     fn step(&self, state: &u64, input: &Option<u64>, output: Option<&u64>) -> Option<u64> {
///         match input {
///             Some(n) => Some(state + n),
///             None => (output.is_none() || output == Some(state)).then_some(*state),
///         }
///     }
/// }
/// let mut log = OpLog::new();
/// let add = log.call("a", Some(2));
/// log.ret(add, 0);
/// let read = log.call("b", None);
/// log.ret(read, 2);
/// assert!(check::linearizable(&Counter, &log).is_ok());
/// ```
pub trait Model {
    /// The state of one partition. Hashed for memoisation: keep it small.
    type State: Clone + Eq + Hash + Debug;
    /// An operation as the client issued it.
    type Input: Debug;
    /// A result as the client saw it.
    type Output: Debug;

    /// The state of every partition before any operation.
    fn init(&self) -> Self::State;

    /// Applies `input` to `state`. With `Some(output)`, returns the next state if the
    /// operation could have returned exactly `output` from `state`, else `None`. With `None`
    /// (the operation is indeterminate: the client never saw its result), returns the state it
    /// leaves if it took effect now; it must then return `Some`.
    fn step(
        &self,
        state: &Self::State,
        input: &Self::Input,
        output: Option<&Self::Output>,
    ) -> Option<Self::State>;

    /// Operations in different partitions never interact (a key-value store: the key). The
    /// default puts every operation in one partition.
    fn partition(&self, _input: &Self::Input) -> u64 {
        0
    }

    /// False when the operation never changes the state (a read): an indeterminate one is
    /// then dropped before the search, since placing it or not explains nothing.
    fn changes_state(&self, _input: &Self::Input) -> bool {
        true
    }
}

/// Bounds of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Steps of one partition's search (one step tries one operation in one configuration).
    pub budget_steps: u64,
    /// Operations in one partition.
    pub ops_max: usize,
    /// Searches spent making a failure's window small.
    pub window_searches_max: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            budget_steps: 10_000_000,
            ops_max: 1_000_000,
            window_searches_max: 200,
        }
    }
}

/// Checks `log` against `model` with the default [`Limits`]: `Ok` if linearizable, else
/// [`CheckError::NotLinearizable`] with the shortest non-linearizable window found (see the
/// module docs), or the limit that stopped the search.
pub fn linearizable<M: Model>(
    model: &M,
    log: &OpLog<M::Input, M::Output>,
) -> Result<(), CheckError> {
    linearizable_within(model, log, Limits::default())
}

/// [`linearizable`] within `limits`.
pub fn linearizable_within<M: Model>(
    model: &M,
    log: &OpLog<M::Input, M::Output>,
    limits: Limits,
) -> Result<(), CheckError> {
    search::check(model, log, limits)
}

#[cfg(test)]
mod tests;
