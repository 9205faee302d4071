//! A key-value register: get, put and compare-and-set on `u64` keys and values, one
//! partition per key.

use std::fmt;

use super::Model;

/// A client's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum KvInput {
    /// Read the key.
    Get {
        /// The key.
        key: u64,
    },
    /// Write the key.
    Put {
        /// The key.
        key: u64,
        /// The value written.
        value: u64,
    },
    /// Write `to` if the key holds `from` (an absent key holds nothing and never matches).
    Cas {
        /// The key.
        key: u64,
        /// The value expected.
        from: u64,
        /// The value written if it matched.
        to: u64,
    },
}

impl KvInput {
    /// The key it touches.
    pub fn key(&self) -> u64 {
        match *self {
            KvInput::Get { key } | KvInput::Put { key, .. } | KvInput::Cas { key, .. } => key,
        }
    }
}

/// What the client saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum KvOutput {
    /// A get's value (`None`: the key was never written).
    Value(Option<u64>),
    /// A put was applied.
    Done,
    /// Whether a compare-and-set matched (and wrote).
    Swapped(bool),
}

/// The key-value register model: each key's state is its value.
///
/// ```
/// use sim_core::check::{self, kv::{Kv, KvInput, KvOutput}, OpLog};
///
/// let mut log = OpLog::new();
/// let w = log.call("c1", KvInput::Put { key: 0, value: 1 });
/// log.ret(w, KvOutput::Done);
/// let cas = log.call("c2", KvInput::Cas { key: 0, from: 1, to: 2 });
/// log.time_out(cas); // maybe swapped, maybe not
/// let r = log.call("c1", KvInput::Get { key: 0 });
/// log.ret(r, KvOutput::Value(Some(2)));
/// assert!(check::linearizable(&Kv, &log).is_ok());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Kv;

impl Model for Kv {
    type State = Option<u64>;
    type Input = KvInput;
    type Output = KvOutput;

    fn init(&self) -> Option<u64> {
        None
    }

    fn step(
        &self,
        state: &Option<u64>,
        input: &KvInput,
        output: Option<&KvOutput>,
    ) -> Option<Option<u64>> {
        match (*input, output) {
            (KvInput::Get { .. }, None) => Some(*state),
            (KvInput::Get { .. }, Some(KvOutput::Value(v))) => (v == state).then_some(*state),
            (KvInput::Put { value, .. }, None | Some(KvOutput::Done)) => Some(Some(value)),
            (KvInput::Cas { from, to, .. }, None) => Some(if *state == Some(from) {
                Some(to)
            } else {
                *state
            }),
            (KvInput::Cas { from, to, .. }, Some(KvOutput::Swapped(swapped))) => {
                let matches = *state == Some(from);
                (matches == *swapped).then_some(if matches { Some(to) } else { *state })
            }
            // An output of the wrong kind for its operation is never explained.
            _ => None,
        }
    }

    fn partition(&self, input: &KvInput) -> u64 {
        input.key()
    }

    fn changes_state(&self, input: &KvInput) -> bool {
        !matches!(input, KvInput::Get { .. })
    }
}

impl fmt::Display for KvInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            KvInput::Get { key } => write!(f, "get({key})"),
            KvInput::Put { key, value } => write!(f, "put({key}, {value})"),
            KvInput::Cas { key, from, to } => write!(f, "cas({key}, {from} -> {to})"),
        }
    }
}
