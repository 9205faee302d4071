//! raft's `Storage` trait for one node: an in-memory image of what the node's WAL holds
//! ([`crate::wal`]), rebuilt from the disk at every start.
//!
//! raft reads its storage synchronously, so reads come from memory; durability comes from the
//! WAL, which the node writes (and syncs when raft says so) before it updates this image and
//! before it sends the messages of the same `Ready`. A crash loses the image; the restarted
//! node rebuilds it from what the disk kept.
//!
//! Every node starts from the same initial configuration, as raft's own `MemStorage` does
//! it: a snapshot at index 1, term 1, whose configuration names every voter. The log proper
//! starts at index 2. The harness never compacts, so raft never asks for a snapshot.

use std::cell::RefCell;
use std::rc::Rc;

use raft::eraftpb::{ConfState, Entry, HardState, Snapshot};
use raft::{RaftState, Storage, StorageError};

/// Index and term of the initial configuration (the log's base).
const BASE_INDEX: u64 = 1;
const BASE_TERM: u64 = 1;

#[derive(Debug)]
struct Core {
    hard_state: HardState,
    conf_state: ConfState,
    /// The log from index `BASE_INDEX + 1` on.
    entries: Vec<Entry>,
}

/// A node's storage image, shared between the node's loop (which writes) and its `RawNode`
/// (which reads).
#[derive(Clone, Debug)]
pub struct SimStorage(Rc<RefCell<Core>>);

impl SimStorage {
    /// The image of a recovered WAL, in a cluster whose voters are `voters`.
    pub fn new(voters: Vec<u64>, mut hard_state: HardState, entries: Vec<Entry>) -> Self {
        if hard_state.term < BASE_TERM {
            hard_state.term = BASE_TERM;
        }
        if hard_state.commit < BASE_INDEX {
            hard_state.commit = BASE_INDEX;
        }
        let conf_state = ConfState::from((voters, Vec::<u64>::new()));
        SimStorage(Rc::new(RefCell::new(Core {
            hard_state,
            conf_state,
            entries,
        })))
    }

    /// Appends `entries` (the first replaces the log from its index on), as `Storage`'s users
    /// must before `advance`.
    pub fn append(&self, entries: &[Entry]) {
        let Some(first) = entries.first() else {
            return;
        };
        let mut core = self.0.borrow_mut();
        let keep = (first.index - BASE_INDEX - 1) as usize;
        assert!(
            keep <= core.entries.len(),
            "invariant: raft appends at most one past the last index ({} > {})",
            first.index,
            BASE_INDEX + core.entries.len() as u64 + 1
        );
        core.entries.truncate(keep);
        core.entries.extend_from_slice(entries);
    }

    /// Records the hard state raft handed out.
    pub fn set_hard_state(&self, hs: &HardState) {
        self.0.borrow_mut().hard_state = hs.clone();
    }

    /// The term of the entry at `index`, if the image has it.
    pub fn entry(&self, index: u64) -> Option<Entry> {
        let core = self.0.borrow();
        let at = index.checked_sub(BASE_INDEX + 1)? as usize;
        core.entries.get(at).cloned()
    }
}

impl Storage for SimStorage {
    fn initial_state(&self) -> raft::Result<RaftState> {
        let core = self.0.borrow();
        Ok(RaftState::new(
            core.hard_state.clone(),
            core.conf_state.clone(),
        ))
    }

    fn entries(
        &self,
        low: u64,
        high: u64,
        max_size: impl Into<Option<u64>>,
        #[cfg(feature = "storage-v07")] _context: raft::GetEntriesContext,
    ) -> raft::Result<Vec<Entry>> {
        let core = self.0.borrow();
        if low <= BASE_INDEX {
            return Err(raft::Error::Store(StorageError::Compacted));
        }
        let last = BASE_INDEX + core.entries.len() as u64;
        if high > last + 1 {
            return Err(raft::Error::Store(StorageError::Unavailable));
        }
        let from = (low - BASE_INDEX - 1) as usize;
        let to = (high - BASE_INDEX - 1) as usize;
        let mut out: Vec<Entry> = core.entries[from..to].to_vec();
        if let Some(max) = max_size.into() {
            // At least one entry; then as many as fit in `max` bytes of payload.
            let mut size = 0u64;
            let mut keep = 0;
            for e in &out {
                size += (e.data.len() + e.context.len() + 24) as u64;
                if keep > 0 && size > max {
                    break;
                }
                keep += 1;
            }
            out.truncate(keep);
        }
        Ok(out)
    }

    fn term(&self, idx: u64) -> raft::Result<u64> {
        let core = self.0.borrow();
        if idx == BASE_INDEX {
            return Ok(BASE_TERM);
        }
        if idx < BASE_INDEX {
            return Err(raft::Error::Store(StorageError::Compacted));
        }
        match core.entries.get((idx - BASE_INDEX - 1) as usize) {
            Some(e) => Ok(e.term),
            None => Err(raft::Error::Store(StorageError::Unavailable)),
        }
    }

    fn first_index(&self) -> raft::Result<u64> {
        Ok(BASE_INDEX + 1)
    }

    fn last_index(&self) -> raft::Result<u64> {
        Ok(BASE_INDEX + self.0.borrow().entries.len() as u64)
    }

    fn snapshot(
        &self,
        _request_index: u64,
        #[cfg(feature = "storage-v07")] _to: u64,
    ) -> raft::Result<Snapshot> {
        // Never compacted, so never needed; if raft asks, it asks again later.
        Err(raft::Error::Store(
            StorageError::SnapshotTemporarilyUnavailable,
        ))
    }
}
