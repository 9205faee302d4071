//! A node's durable Raft state: one write-ahead log file on its [`sim_core::disk`].
//!
//! **Format.** The file is a [`sim_core::disk::RecordFile`]: chained, checksummed records
//! whose recovery keeps the longest valid prefix. A payload is
//! a log entry (an entry at index `i` replaces every entry from `i` on, as raft's
//! `Storage::append` contract says) or a hard state (term, vote, commit; the last one counts).
//! Entries and hard states share one file, in the order raft handed them out, as etcd's and
//! TiKV's WALs keep them: a hard state whose commit covers an entry is never durable without
//! that entry.
//!
//! **What the disk may do** (`sim_core::disk`'s contract): a crash keeps, loses or tears each
//! write since the last sync, independently. Recovery keeps the records up to the first one
//! that is short or whose chain fails, so the recovered state is always the state after some
//! prefix of the writes — everything synced, and possibly more. It then cuts the file to that
//! prefix and syncs the cut.
//!
//! **When it syncs** is the caller's choice ([`Wal::append`]'s `sync`): the harness syncs
//! exactly when raft's `Ready::must_sync()` says so (see `node`).

use raft::eraftpb::{Entry, EntryType, HardState};
use sim_core::disk::{retry_faults, Disk, File, RecordFile};

const WAL: &str = "raft.wal";
/// The chain value before the first record.
const CHAIN_SEED: u64 = 0x7261_6674_2d72_7321;
const KIND_ENTRY: u8 = 1;
const KIND_HARD_STATE: u8 = 2;

/// What a node reads back at start.
#[derive(Debug, Default)]
pub struct Recovered {
    /// The last durable hard state (default if none was written).
    pub hard_state: HardState,
    /// The durable log, from index 2 on (index 1 is the initial configuration).
    pub entries: Vec<Entry>,
}

/// One record, decoded.
enum Record {
    Entry(Entry),
    HardState(HardState),
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

fn encode_entry(e: &Entry) -> Vec<u8> {
    let mut out = vec![KIND_ENTRY];
    put_u64(&mut out, e.index);
    put_u64(&mut out, e.term);
    let kind = match e.entry_type {
        EntryType::EntryNormal => 0u8,
        // The harness never proposes a configuration change.
        other => panic!("invariant: the harness proposes no {other:?} entries"),
    };
    out.push(kind);
    put_bytes(&mut out, &e.data[..]);
    put_bytes(&mut out, &e.context[..]);
    out
}

fn encode_hard_state(hs: &HardState) -> Vec<u8> {
    let mut out = vec![KIND_HARD_STATE];
    put_u64(&mut out, hs.term);
    put_u64(&mut out, hs.vote);
    put_u64(&mut out, hs.commit);
    out
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_at_checked(8)?;
        self.0 = rest;
        Some(u64::from_le_bytes(head.try_into().ok()?))
    }
    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn bytes(&mut self) -> Option<Vec<u8>> {
        let (len, rest) = self.0.split_at_checked(4)?;
        let len = u32::from_le_bytes(len.try_into().ok()?) as usize;
        let (body, rest) = rest.split_at_checked(len)?;
        self.0 = rest;
        Some(body.to_vec())
    }
}

// `Vec<u8>` into an entry's data: the same type in raft 0.6.0-alpha, `bytes::Bytes` in 0.6.0.
#[allow(clippy::useless_conversion)]
fn decode(payload: &[u8]) -> Option<Record> {
    let mut r = Reader(payload);
    match r.u8()? {
        KIND_ENTRY => {
            let (index, term) = (r.u64()?, r.u64()?);
            if r.u8()? != 0 {
                return None;
            }
            let (data, context) = (r.bytes()?, r.bytes()?);
            Some(Record::Entry(Entry {
                index,
                term,
                entry_type: EntryType::EntryNormal,
                data: data.into(),
                context: context.into(),
                ..Entry::default()
            }))
        }
        KIND_HARD_STATE => Some(Record::HardState(HardState {
            term: r.u64()?,
            vote: r.u64()?,
            commit: r.u64()?,
            ..HardState::default()
        })),
        _ => None,
    }
}

/// The node's log file, open for appending.
#[derive(Debug)]
pub struct Wal {
    file: File,
    /// The valid records: where the next goes, and what it chains from.
    records: RecordFile,
}

impl Wal {
    /// Opens the running node's WAL (creating it, durably, at the first start) and recovers
    /// the longest valid prefix of its records.
    pub async fn open() -> (Wal, Recovered) {
        let disk = Disk::current();
        let names = disk
            .list()
            .expect("invariant: the running node's disk lists");
        if !names.iter().any(|n| n == WAL) {
            retry_faults("create", || disk.create(WAL)).await;
            // The name must outlive a crash before anything is written under it.
            retry_faults("directory sync", || disk.sync_dir()).await;
        }
        let file = retry_faults("open", || disk.open(WAL)).await;
        let bytes = retry_faults("read", || file.read_all()).await;
        let mut recovered = Recovered::default();
        let records = RecordFile::recover(CHAIN_SEED, &bytes, |_, payload| {
            let Some(record) = decode(payload) else {
                return false;
            };
            match record {
                Record::Entry(e) => {
                    // Entry `i` replaces the log from `i` on (index 2 is the first entry).
                    let keep = (e.index.saturating_sub(2) as usize).min(recovered.entries.len());
                    recovered.entries.truncate(keep);
                    recovered.entries.push(e);
                }
                Record::HardState(hs) => recovered.hard_state = hs,
            }
            true
        });
        let end = records.len_bytes();
        if end < bytes.len() as u64 {
            // Cut the torn or stale tail, durably, so that later records follow the prefix.
            retry_faults("truncate", || file.set_len(end)).await;
            retry_faults("sync", || file.sync()).await;
        }
        (Wal { file, records }, recovered)
    }

    /// Appends `entries` and then `hard_state` (if any) as records; with `sync`, waits until
    /// they are durable.
    pub async fn append(&mut self, entries: &[Entry], hard_state: Option<&HardState>, sync: bool) {
        let mut buf = Vec::new();
        let payloads = entries
            .iter()
            .map(encode_entry)
            .chain(hard_state.map(encode_hard_state));
        let end = self.records.len_bytes();
        for payload in payloads {
            self.records.encode(&payload, &mut buf);
        }
        if !buf.is_empty() {
            let file = &self.file;
            retry_faults("write", || file.write_at(end, &buf)).await;
        }
        if sync {
            let file = &self.file;
            retry_faults("sync", || file.sync()).await;
        }
    }
}
