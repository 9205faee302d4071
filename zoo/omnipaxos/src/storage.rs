//! omnipaxos's `Storage` trait on a per-node durable record that survives crashes.
//!
//! **Model.** Every `Storage` method is synchronous: omnipaxos calls it and, when it returns
//! `Ok`, takes the write as done — it then puts the Promise, Accepted or AcceptSync that
//! depends on it in its outgoing buffer. What omnipaxos requires of a storage backend is
//! therefore that a write is durable when the call returns (its own `PersistentStorage`
//! writes through to RocksDB/sled before returning). sim-core's disk is asynchronous (a
//! write is durable after `File::sync().await`), so a synchronous trait method cannot wait
//! for it; the faithful model is a record that each call updates in place and that outlives
//! the node's task: [`Durable`] lives in the scenario, the node's task holds an `Rc` to it,
//! and a crash (which drops the task, the `OmniPaxos` struct and every in-memory cache with
//! it) leaves it as the last completed call left it. A restart builds a new `OmniPaxos` on
//! the same record, as a restarted process would reopen its database.
//!
//! Torn or lost writes are outside this model: omnipaxos's contract puts durability on the
//! backend (a backend that loses an acknowledged write is a broken backend, not an
//! omnipaxos bug), so injecting them would only find bugs in our storage.
//!
//! **Semantics** follow the reference backend, `omnipaxos_storage::memory_storage::MemoryStorage`
//! of the same release, method for method (`append_on_prefix` truncates to `from_idx` and
//! appends; `get_entries` of a range the log does not cover is empty), except that
//! `get_promise` answers `None` until a promise was stored, as the persistent backends do.

use std::cell::RefCell;
use std::rc::Rc;

use omnipaxos::ballot_leader_election::Ballot;
#[cfg(feature = "atomic-storage")]
use omnipaxos::storage::StorageOp;
use omnipaxos::storage::{Entry, StopSign, Storage, StorageResult};

use crate::{ix, Idx};

/// What one server has stored: survives its crashes and restarts.
#[derive(Debug)]
pub struct Durable<T: Entry> {
    /// The log (entries from the compacted index on).
    pub log: Vec<T>,
    promise: Option<Ballot>,
    accepted_round: Option<Ballot>,
    decided_idx: Idx,
    stopsign: Option<StopSign>,
    compacted_idx: Idx,
    snapshot: Option<T::Snapshot>,
}

impl<T: Entry> Default for Durable<T> {
    fn default() -> Self {
        Durable {
            log: Vec::new(),
            promise: None,
            accepted_round: None,
            decided_idx: 0,
            stopsign: None,
            compacted_idx: 0,
            snapshot: None,
        }
    }
}

/// The methods whose signatures every supported release shares (up to the index type).
macro_rules! common_storage_methods {
    () => {
        fn set_promise(&mut self, n_prom: Ballot) -> StorageResult<()> {
            self.0.borrow_mut().promise = Some(n_prom);
            Ok(())
        }

        fn set_decided_idx(&mut self, ld: Idx) -> StorageResult<()> {
            self.0.borrow_mut().decided_idx = ld;
            Ok(())
        }

        fn get_decided_idx(&self) -> StorageResult<Idx> {
            Ok(self.0.borrow().decided_idx)
        }

        fn set_accepted_round(&mut self, na: Ballot) -> StorageResult<()> {
            self.0.borrow_mut().accepted_round = Some(na);
            Ok(())
        }

        fn get_accepted_round(&self) -> StorageResult<Option<Ballot>> {
            Ok(self.0.borrow().accepted_round)
        }

        fn get_entries(&self, from: Idx, to: Idx) -> StorageResult<Vec<T>> {
            Ok(self.0.borrow().entries(from, to))
        }

        fn get_log_len(&self) -> StorageResult<Idx> {
            Ok(self.0.borrow().log.len() as Idx)
        }

        fn get_suffix(&self, from: Idx) -> StorageResult<Vec<T>> {
            Ok(self.0.borrow().suffix(from))
        }

        fn get_promise(&self) -> StorageResult<Option<Ballot>> {
            Ok(self.0.borrow().promise)
        }

        fn set_stopsign(&mut self, s: Option<StopSign>) -> StorageResult<()> {
            self.0.borrow_mut().stopsign = s;
            Ok(())
        }

        fn get_stopsign(&self) -> StorageResult<Option<StopSign>> {
            Ok(self.0.borrow().stopsign.clone())
        }

        fn set_compacted_idx(&mut self, idx: Idx) -> StorageResult<()> {
            self.0.borrow_mut().compacted_idx = idx;
            Ok(())
        }

        fn get_compacted_idx(&self) -> StorageResult<Idx> {
            Ok(self.0.borrow().compacted_idx)
        }

        fn set_snapshot(&mut self, snapshot: Option<T::Snapshot>) -> StorageResult<()> {
            self.0.borrow_mut().snapshot = snapshot;
            Ok(())
        }

        fn get_snapshot(&self) -> StorageResult<Option<T::Snapshot>> {
            Ok(self.0.borrow().snapshot.clone())
        }
    };
}

impl<T: Entry> Durable<T> {
    fn append_on_prefix(&mut self, from_idx: Idx, mut entries: Vec<T>) {
        self.log.truncate(ix(from_idx));
        self.log.append(&mut entries);
    }

    fn trim(&mut self, idx: Idx) {
        let to = ix(idx).min(self.log.len());
        self.log.drain(0..to);
    }

    fn entries(&self, from: Idx, to: Idx) -> Vec<T> {
        self.log.get(ix(from)..ix(to)).unwrap_or(&[]).to_vec()
    }

    fn suffix(&self, from: Idx) -> Vec<T> {
        self.log.get(ix(from)..).unwrap_or(&[]).to_vec()
    }

    #[cfg(feature = "atomic-storage")]
    fn apply(&mut self, op: StorageOp<T>) {
        match op {
            StorageOp::AppendEntry(entry) => self.log.push(entry),
            StorageOp::AppendEntries(mut entries) => self.log.append(&mut entries),
            StorageOp::AppendOnPrefix(from_idx, entries) => {
                self.append_on_prefix(from_idx, entries)
            }
            StorageOp::SetPromise(n) => self.promise = Some(n),
            StorageOp::SetDecidedIndex(idx) => self.decided_idx = idx,
            StorageOp::SetAcceptedRound(n) => self.accepted_round = Some(n),
            StorageOp::SetCompactedIdx(idx) => self.compacted_idx = idx,
            StorageOp::Trim(idx) => self.trim(idx),
            StorageOp::SetStopsign(s) => self.stopsign = s,
            StorageOp::SetSnapshot(s) => self.snapshot = s,
        }
    }
}

/// The backend handed to `OmniPaxos`: a handle on the server's [`Durable`] record.
pub struct SimStorage<T: Entry>(pub Rc<RefCell<Durable<T>>>);

/// omnipaxos up to 0.2.2: each write returns the log length.
#[cfg(not(feature = "atomic-storage"))]
impl<T: Entry> Storage<T> for SimStorage<T> {
    fn append_entry(&mut self, entry: T) -> StorageResult<Idx> {
        let mut d = self.0.borrow_mut();
        d.log.push(entry);
        Ok(d.log.len() as Idx)
    }

    fn append_entries(&mut self, mut entries: Vec<T>) -> StorageResult<Idx> {
        let mut d = self.0.borrow_mut();
        d.log.append(&mut entries);
        Ok(d.log.len() as Idx)
    }

    fn append_on_prefix(&mut self, from_idx: Idx, entries: Vec<T>) -> StorageResult<Idx> {
        let mut d = self.0.borrow_mut();
        d.append_on_prefix(from_idx, entries);
        Ok(d.log.len() as Idx)
    }

    fn trim(&mut self, idx: Idx) -> StorageResult<()> {
        self.0.borrow_mut().trim(idx);
        Ok(())
    }

    common_storage_methods!();
}

/// omnipaxos 0.2.3 on: writes return nothing, and a batch of writes is applied at once
/// (`write_atomically`: all or nothing; ours never fails, and a crash falls between calls).
#[cfg(feature = "atomic-storage")]
impl<T: Entry> Storage<T> for SimStorage<T> {
    fn write_atomically(&mut self, ops: Vec<StorageOp<T>>) -> StorageResult<()> {
        let mut d = self.0.borrow_mut();
        for op in ops {
            d.apply(op);
        }
        Ok(())
    }

    fn append_entry(&mut self, entry: T) -> StorageResult<()> {
        self.0.borrow_mut().log.push(entry);
        Ok(())
    }

    fn append_entries(&mut self, mut entries: Vec<T>) -> StorageResult<()> {
        self.0.borrow_mut().log.append(&mut entries);
        Ok(())
    }

    fn append_on_prefix(&mut self, from_idx: Idx, entries: Vec<T>) -> StorageResult<()> {
        self.0.borrow_mut().append_on_prefix(from_idx, entries);
        Ok(())
    }

    fn trim(&mut self, idx: Idx) -> StorageResult<()> {
        self.0.borrow_mut().trim(idx);
        Ok(())
    }

    common_storage_methods!();
}
