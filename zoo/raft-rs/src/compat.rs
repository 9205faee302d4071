//! The two raft APIs the harness drives, behind one shape.
//!
//! raft 0.6.0-alpha hands out one `Ready` whose messages are all sent after its entries and
//! hard state are persisted, then `advance(ready)`. raft 0.6.0 (asynchronous ready) splits
//! the messages: `messages()` may go out at once (a leader's appends, sent while it persists
//! in parallel), `persisted_messages()` only after persistence; `advance(ready)` then returns
//! a `LightReady` with more messages and committed entries, and `advance_apply()` ends the
//! round. Feature `ready-v06` selects the second.

use raft::eraftpb::{Entry, HardState, Message};
use raft::{Config, RawNode, ReadState};
use slog::{o, Discard, Logger};

use crate::store::SimStorage;

/// A node's raft, built with a logger that discards everything.
pub fn raw_node(config: &Config, storage: SimStorage) -> RawNode<SimStorage> {
    let logger = Logger::root(Discard, o!());
    #[cfg(feature = "ready-v06")]
    {
        RawNode::new(config, storage, &logger).expect("invariant: the harness's config is valid")
    }
    #[cfg(not(feature = "ready-v06"))]
    {
        RawNode::new(config, storage)
            .expect("invariant: the harness's config is valid")
            .with_logger(&logger)
    }
}

/// What one round of `ready` asks the application to do, in order.
#[derive(Default)]
pub struct Round {
    /// Messages that may be sent before persisting (0.6.0: a leader's appends).
    pub send_now: Vec<Message>,
    /// Entries to persist.
    pub entries: Vec<Entry>,
    /// Hard state to persist.
    pub hard_state: Option<HardState>,
    /// Whether persisting must be synchronous (`Ready::must_sync`).
    pub must_sync: bool,
    /// Messages to send after persisting.
    pub send_after: Vec<Message>,
    /// Entries to apply.
    pub committed: Vec<Entry>,
    /// Read-index results.
    pub read_states: Vec<ReadState>,
}

/// The ready in flight between [`take`] and [`finish`].
pub struct Pending(raft::Ready);

/// Takes the node's ready and lays it out as a [`Round`].
#[cfg(not(feature = "ready-v06"))]
pub fn take(raw: &mut RawNode<SimStorage>) -> (Round, Pending) {
    let mut rd = raw.ready();
    let round = Round {
        send_now: Vec::new(),
        entries: rd.entries().to_vec(),
        hard_state: rd.hs().cloned(),
        must_sync: rd.must_sync(),
        send_after: std::mem::take(&mut rd.messages),
        committed: rd.committed_entries.take().unwrap_or_default(),
        read_states: rd.read_states().to_vec(),
    };
    (round, Pending(rd))
}

/// Takes the node's ready and lays it out as a [`Round`].
#[cfg(feature = "ready-v06")]
pub fn take(raw: &mut RawNode<SimStorage>) -> (Round, Pending) {
    let mut rd = raw.ready();
    let round = Round {
        send_now: rd.take_messages(),
        entries: rd.take_entries(),
        hard_state: rd.hs().cloned(),
        must_sync: rd.must_sync(),
        send_after: rd.take_persisted_messages(),
        committed: rd.take_committed_entries(),
        read_states: rd.take_read_states(),
    };
    (round, Pending(rd))
}

/// Tells raft the round was persisted and applied; returns what the advance released (more
/// messages to send and entries to apply, 0.6.0 only). The caller applies those and then
/// calls [`finish_apply`].
pub fn finish(raw: &mut RawNode<SimStorage>, pending: Pending) -> (Vec<Message>, Vec<Entry>) {
    #[cfg(feature = "ready-v06")]
    {
        let mut light = raw.advance(pending.0);
        (light.take_messages(), light.take_committed_entries())
    }
    #[cfg(not(feature = "ready-v06"))]
    {
        raw.advance(pending.0);
        (Vec::new(), Vec::new())
    }
}

/// Ends the round: everything handed out is applied.
pub fn finish_apply(raw: &mut RawNode<SimStorage>) {
    #[cfg(feature = "ready-v06")]
    raw.advance_apply();
    #[cfg(not(feature = "ready-v06"))]
    let _ = raw;
}
