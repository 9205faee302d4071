//! openraft's storage (`RaftLogStorage`, `RaftStateMachine`) on sim-core's simulated disk.
//!
//! **What is durable.** The vote and the log are on the node's [`sim_core::disk`], synced
//! before openraft is told they are: `save_vote` returns, and `append` calls its
//! `log_io_completed` callback, only after the file's sync. A crash loses, keeps or tears
//! whatever was not synced yet, as the disk's fault model draws it; recovery reads back what
//! survived. The state machine is in memory: a restarted node starts it empty and openraft
//! applies the log again as the commit index is learned (no snapshot is ever built: the
//! snapshot policy is `Never`, so the log is never purged and always holds everything).
//!
//! **`vote`: two alternating slots.** Slot `seq % 2` (at byte 0 or 512, a sector apart)
//! holds `[seq u64][len u32][json][checksum u64]`; recovery takes the valid slot with the
//! higher `seq`. A write goes to the slot not holding the newest record, so a crash while it
//! is unsynced leaves the previous record readable, and the previous record is what the node
//! had promised (openraft acts on a vote only once `save_vote` returned).
//!
//! **`log`: chained records**, a [`sim_core::disk::RecordFile`] of JSON entries, record `i`
//! the entry at index `i`. Recovery keeps records up to the first short, broken or misplaced
//! one and cuts the rest, so a recovered log is a prefix of a log the node once had
//! (a torn or lost unsynced write, or one kept while an earlier one was lost, ends it).
//! Truncation cuts the file and syncs before returning.
//!
//! Disk read and write errors (the `disk` fault kind) are transient: every call retries.
//!
//! Every append, every committed vote and every applied entry is reported to the
//! [`Observer`] (see [`crate::invariants`]).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::io::Cursor;
use std::ops::RangeBounds;
use std::rc::{Rc, Weak};

use openraft::storage::{LogFlushed, LogState, RaftLogStorage, RaftStateMachine, Snapshot};
use openraft::{
    EntryPayload, RaftLogReader, RaftSnapshotBuilder, SnapshotMeta, StorageError, StoredMembership,
};
use serde::{Deserialize, Serialize};
use sim_core::check::kv::{KvInput, KvOutput};
use sim_core::disk::{retry_faults, Disk, File, RecordFile};

use crate::invariants::Observer;
use crate::types::{Applied, Entry, LogId, NodeId, TypeConfig, Vote};

/// The observer, shared by every node and the scenario.
pub type Obs = Rc<RefCell<Observer>>;

const SLOT_STRIDE_BYTES: u64 = 512;
const CHAIN_SEED: u64 = 0x6f70_656e_7261_6674;
const META: &str = "vote";
const LOG: &str = "log";

/// FNV-1a from `seed`: tells a torn, stale or misplaced record from the one written.
fn checksum(seed: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(seed, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What the vote file holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Meta {
    vote: Option<Vote>,
}

fn meta_slot(seq: u64, meta: &Meta) -> Vec<u8> {
    let json = serde_json::to_vec(meta).expect("a vote encodes");
    let mut slot = Vec::with_capacity(20 + json.len());
    slot.extend_from_slice(&seq.to_le_bytes());
    slot.extend_from_slice(&(json.len() as u32).to_le_bytes());
    slot.extend_from_slice(&json);
    let sum = checksum(CHAIN_SEED, &slot);
    slot.extend_from_slice(&sum.to_le_bytes());
    assert!(
        slot.len() as u64 <= SLOT_STRIDE_BYTES,
        "invariant: a vote fits its slot"
    );
    slot
}

/// The newest valid slot of the vote file: `(seq, meta)`.
fn parse_meta(bytes: &[u8]) -> Option<(u64, Meta)> {
    let mut best: Option<(u64, Meta)> = None;
    for slot in 0..2u64 {
        let at = (slot * SLOT_STRIDE_BYTES) as usize;
        let Some(head) = bytes.get(at..at + 12) else {
            continue;
        };
        let seq = u64::from_le_bytes(head[..8].try_into().expect("8"));
        let len = u32::from_le_bytes(head[8..12].try_into().expect("4")) as usize;
        let Some(body) = bytes.get(at..at + 12 + len + 8) else {
            continue;
        };
        let sum = u64::from_le_bytes(body[12 + len..].try_into().expect("8"));
        if checksum(CHAIN_SEED, &body[..12 + len]) != sum {
            continue;
        }
        let Ok(meta) = serde_json::from_slice::<Meta>(&body[12..12 + len]) else {
            continue;
        };
        if best.as_ref().is_none_or(|(s, _)| seq > *s) {
            best = Some((seq, meta));
        }
    }
    best
}

/// What a stable reader reads once a truncation came after it was handed out: the log just
/// before the truncation (`None` until then: the live log).
type View = RefCell<Option<BTreeMap<u64, Entry>>>;

/// The log as the node has it, mirrored in memory (reads never touch the disk).
#[derive(Debug)]
struct LogMem {
    entries: BTreeMap<u64, Entry>,
    /// The log file's records, record `i` the entry at index `i`.
    records: RecordFile,
    vote: Option<Vote>,
    meta_seq: u64,
    /// The views of the readers handed out (see [`Reader`]); empty with live readers.
    readers: Vec<Weak<View>>,
}

/// How the readers openraft asks for (one per replication stream) see a truncation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readers {
    /// A reader keeps every entry it could read: a truncation after it was handed out leaves
    /// it the log as it was (as a reader over a storage snapshot would). openraft's contract
    /// for `limited_get_log_entries` ("it must not return empty result if the input range is
    /// not empty") holds for every range the leader once had.
    Stable,
    /// A reader reads the live log, as openraft's own example stores do: a truncation (the
    /// node stepped down and a new leader overwrote its tail) takes entries away from the
    /// replication stream of the leadership it lost, which may still be reading them.
    Live,
}

/// The node's log store: [`RaftLogStorage`] and its reader.
#[derive(Clone)]
pub struct LogStore {
    me: NodeId,
    readers: Readers,
    mem: Rc<RefCell<LogMem>>,
    meta: File,
    log: File,
    observer: Obs,
}

/// Opens the running node's disk and recovers its vote and log; the state machine starts
/// empty. Creates the files (and makes their names durable) at the first start.
pub async fn open(me: NodeId, readers: Readers, observer: Obs) -> (LogStore, StateMachine) {
    let disk = Disk::current();
    let names = disk
        .list()
        .expect("invariant: the running node's disk lists");
    let mut created = false;
    for name in [META, LOG] {
        if !names.iter().any(|n| n == name) {
            retry_faults("create", || disk.create(name)).await;
            created = true;
        }
    }
    if created {
        retry_faults("directory sync", || disk.sync_dir()).await;
    }
    let meta = retry_faults("open", || disk.open(META)).await;
    let log = retry_faults("open", || disk.open(LOG)).await;
    let (mut meta_seq, mut vote) = (0, None);
    let meta_bytes = retry_faults("read", || meta.read_all()).await;
    if let Some((seq, m)) = parse_meta(&meta_bytes) {
        meta_seq = seq;
        vote = m.vote;
    }
    let bytes = retry_faults("read", || log.read_all()).await;
    let mut entries = BTreeMap::new();
    let records =
        RecordFile::recover(
            CHAIN_SEED,
            &bytes,
            |index, payload| match serde_json::from_slice::<Entry>(payload) {
                Ok(entry) if entry.log_id.index == index as u64 => {
                    entries.insert(entry.log_id.index, entry);
                    true
                }
                _ => false,
            },
        );
    let valid_bytes = records.len_bytes();
    if valid_bytes < bytes.len() as u64 {
        retry_faults("truncate", || log.set_len(valid_bytes)).await;
        retry_faults("sync", || log.sync()).await;
    }
    let mem = LogMem {
        entries,
        records,
        vote,
        meta_seq,
        readers: Vec::new(),
    };
    observer.borrow_mut().recovered(me, &mem.entries);
    let mem = Rc::new(RefCell::new(mem));
    let store = LogStore {
        me,
        readers,
        mem: mem.clone(),
        meta,
        log,
        observer: observer.clone(),
    };
    let sm = StateMachine {
        me,
        log: mem,
        state: Rc::new(RefCell::new(SmState::default())),
        observer,
    };
    (store, sm)
}

/// A reader handed to a replication stream: the live log until the next truncation, then
/// (with [`Readers::Stable`]) the log as it was just before it.
pub struct Reader {
    mem: Rc<RefCell<LogMem>>,
    view: Option<Rc<View>>,
}

impl RaftLogReader<TypeConfig> for Reader {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError<NodeId>> {
        if let Some(view) = &self.view {
            if let Some(entries) = view.borrow().as_ref() {
                return Ok(entries.range(range).map(|(_, e)| e.clone()).collect());
            }
        }
        let mem = self.mem.borrow();
        Ok(mem.entries.range(range).map(|(_, e)| e.clone()).collect())
    }
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError<NodeId>> {
        let mem = self.mem.borrow();
        Ok(mem.entries.range(range).map(|(_, e)| e.clone()).collect())
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = Reader;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError<NodeId>> {
        let mem = self.mem.borrow();
        Ok(LogState {
            last_purged_log_id: None,
            last_log_id: mem.entries.values().next_back().map(|e| e.log_id),
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        let view = match self.readers {
            Readers::Live => None,
            Readers::Stable => {
                let view = Rc::new(RefCell::new(None));
                let mut mem = self.mem.borrow_mut();
                mem.readers.retain(|r| r.strong_count() > 0);
                mem.readers.push(Rc::downgrade(&view));
                Some(view)
            }
        };
        Reader {
            mem: self.mem.clone(),
            view,
        }
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError<NodeId>> {
        let (seq, slot) = {
            let mut mem = self.mem.borrow_mut();
            mem.meta_seq += 1;
            let seq = mem.meta_seq;
            (seq, meta_slot(seq, &Meta { vote: Some(*vote) }))
        };
        let at = (seq % 2) * SLOT_STRIDE_BYTES;
        retry_faults("write", || self.meta.write_at(at, &slot)).await;
        retry_faults("sync", || self.meta.sync()).await;
        let mem = {
            let mut mem = self.mem.borrow_mut();
            mem.vote = Some(*vote);
            mem
        };
        if vote.committed {
            if let Some(leader) = vote.leader_id.voted_for {
                self.observer.borrow_mut().committed_vote(
                    self.me,
                    vote.leader_id.term,
                    leader,
                    &mem.entries,
                );
            }
        }
        Ok(())
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError<NodeId>> {
        Ok(self.mem.borrow().vote)
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError<NodeId>>
    where
        I: IntoIterator<Item = Entry>,
    {
        let mut bytes = Vec::new();
        let mut ids = Vec::new();
        let at = {
            let mut mem = self.mem.borrow_mut();
            let mut observer = self.observer.borrow_mut();
            let at = mem.records.len_bytes();
            for entry in entries {
                let index = entry.log_id.index;
                assert!(
                    mem.entries.range(index..).next().is_none(),
                    "invariant: openraft appends after the last log entry (index {index})"
                );
                assert_eq!(
                    index,
                    mem.records.record_count() as u64,
                    "invariant: openraft's log has no gap (record i holds index i)"
                );
                let prev_term = index
                    .checked_sub(1)
                    .and_then(|p| mem.entries.get(&p))
                    .map(|e| e.log_id.leader_id.term);
                observer.appended(self.me, index, prev_term, &entry);
                let payload = serde_json::to_vec(&entry).expect("an entry encodes");
                mem.records.encode(&payload, &mut bytes);
                ids.push((index, entry.log_id.leader_id.term));
                mem.entries.insert(index, entry);
            }
            at
        };
        retry_faults("write", || self.log.write_at(at, &bytes)).await;
        retry_faults("sync", || self.log.sync()).await;
        // Nothing truncated the log while the sync ran: openraft awaits `append`, which
        // returns only now, before it submits its next log IO.
        self.observer.borrow_mut().synced(self.me, &ids);
        callback.log_io_completed(Ok(()));
        Ok(())
    }

    async fn truncate(&mut self, log_id: LogId) -> Result<(), StorageError<NodeId>> {
        let cut = {
            let mut mem = self.mem.borrow_mut();
            if log_id.index >= mem.records.record_count() as u64 {
                return Ok(());
            }
            // Readers handed out before keep the log as it was.
            for reader in mem.readers.iter().filter_map(Weak::upgrade) {
                let mut view = reader.borrow_mut();
                if view.is_none() {
                    *view = Some(mem.entries.clone());
                }
            }
            mem.readers.clear();
            self.observer.borrow_mut().truncated(self.me, log_id.index);
            mem.entries.split_off(&log_id.index);
            mem.records.truncate(log_id.index as usize)
        };
        retry_faults("truncate", || self.log.set_len(cut)).await;
        retry_faults("sync", || self.log.sync()).await;
        Ok(())
    }

    async fn purge(&mut self, _log_id: LogId) -> Result<(), StorageError<NodeId>> {
        // The snapshot policy is `Never`: openraft purges only what a snapshot covers.
        Ok(())
    }
}

/// The key-value state and the client sessions (the last operation of each client and its
/// output, so that a retried request is applied once).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Data {
    kv: BTreeMap<u64, u64>,
    sessions: BTreeMap<u32, (u64, KvOutput)>,
}

#[derive(Debug, Default)]
struct SmState {
    last_applied: Option<LogId>,
    membership: StoredMembership<NodeId, openraft::BasicNode>,
    data: Data,
    snapshot: Option<(SnapshotMeta<NodeId, openraft::BasicNode>, Vec<u8>)>,
}

/// The node's state machine, in memory (see the module docs).
#[derive(Clone)]
pub struct StateMachine {
    me: NodeId,
    log: Rc<RefCell<LogMem>>,
    state: Rc<RefCell<SmState>>,
    observer: Obs,
}

impl StateMachine {
    /// The index of the last applied entry.
    pub fn applied_index(&self) -> Option<u64> {
        self.state.borrow().last_applied.map(|l| l.index)
    }

    /// What a get of `key` reads now.
    pub fn read(&self, key: u64) -> Option<u64> {
        self.state.borrow().data.kv.get(&key).copied()
    }
}

fn execute(data: &mut Data, client: u32, seq: u64, op: KvInput) -> KvOutput {
    if let Some(&(last, output)) = data.sessions.get(&client) {
        if seq <= last {
            return output;
        }
    }
    let output = match op {
        KvInput::Get { key } => KvOutput::Value(data.kv.get(&key).copied()),
        KvInput::Put { key, value } => {
            data.kv.insert(key, value);
            KvOutput::Done
        }
        KvInput::Cas { key, from, to } => {
            let matches = data.kv.get(&key) == Some(&from);
            if matches {
                data.kv.insert(key, to);
            }
            KvOutput::Swapped(matches)
        }
    };
    data.sessions.insert(client, (seq, output));
    output
}

impl RaftSnapshotBuilder<TypeConfig> for StateMachine {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError<NodeId>> {
        let mut state = self.state.borrow_mut();
        let bytes = serde_json::to_vec(&state.data).expect("the state encodes");
        let meta = SnapshotMeta {
            last_log_id: state.last_applied,
            last_membership: state.membership.clone(),
            snapshot_id: format!("{:?}", state.last_applied),
        };
        state.snapshot = Some((meta.clone(), bytes.clone()));
        Ok(Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(bytes)),
        })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = StateMachine;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogId>, StoredMembership<NodeId, openraft::BasicNode>), StorageError<NodeId>>
    {
        let state = self.state.borrow();
        Ok((state.last_applied, state.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<Applied>, StorageError<NodeId>>
    where
        I: IntoIterator<Item = Entry>,
    {
        let term = self.log.borrow().vote.map_or(0, |v| v.leader_id.term);
        let mut state = self.state.borrow_mut();
        let mut observer = self.observer.borrow_mut();
        let mut out = Vec::new();
        for entry in entries {
            observer.applied(self.me, term, &entry);
            state.last_applied = Some(entry.log_id);
            out.push(match &entry.payload {
                EntryPayload::Blank => Applied(None),
                EntryPayload::Normal(c) => {
                    Applied(Some(execute(&mut state.data, c.client, c.seq, c.op)))
                }
                EntryPayload::Membership(m) => {
                    state.membership = StoredMembership::new(Some(entry.log_id), m.clone());
                    Applied(None)
                }
            });
        }
        Ok(out)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    async fn begin_receiving_snapshot(
        &mut self,
    ) -> Result<Box<Cursor<Vec<u8>>>, StorageError<NodeId>> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta<NodeId, openraft::BasicNode>,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> Result<(), StorageError<NodeId>> {
        let bytes = snapshot.into_inner();
        let data: Data = serde_json::from_slice(&bytes).expect("a snapshot this store built");
        let mut state = self.state.borrow_mut();
        state.data = data;
        state.last_applied = meta.last_log_id;
        state.membership = meta.last_membership.clone();
        state.snapshot = Some((meta.clone(), bytes));
        Ok(())
    }

    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<Snapshot<TypeConfig>>, StorageError<NodeId>> {
        let state = self.state.borrow();
        Ok(state.snapshot.as_ref().map(|(meta, bytes)| Snapshot {
            meta: meta.clone(),
            snapshot: Box::new(Cursor::new(bytes.clone())),
        }))
    }
}
