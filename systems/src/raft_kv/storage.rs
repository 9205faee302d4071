//! Durable state: the current term, the vote and the log, on a disk that loses what was not
//! synced when its node crashes.
//!
//! **The disk** ([`Disk`]) is a node's set of files, kept outside the node so it survives a
//! crash and a restart; nothing else of a node does. A write lands in the file at once (the
//! page cache); [`Disk::sync`] takes a drawn latency and makes the file's contents *as they
//! were when the sync began* durable — if the node crashes before the sync completes, it
//! never happened. At the next start, each file with unsynced changes (writes, truncations)
//! keeps a drawn prefix of them, in order — none, some or all — and the first change lost,
//! if a write, may be **torn**: its first 512-byte sectors on disk, the rest not. Fault model:
//! only what a real disk does to unsynced data at a power loss; synced data is never lost or
//! corrupted (Raft's model: stable storage is stable), so a correct replica is never failed
//! by its disk.
//!
//! **The layout.** `meta`: two 32-byte slots, `[seq, term, vote, checksum]`, written
//! alternately, so a torn write of one leaves the other; the valid slot with the higher seq
//! wins. `log`: records `[len u32][checksum u64][entry]`; recovery keeps records up to the
//! first that is short or fails its checksum (a torn tail), and truncates the rest.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use sim_core::choice::Choices;
use sim_core::sim;
use sim_core::time::sleep;

use super::log::{self, Entry, Log};

const SECTOR_BYTES: usize = 512;
const SLOT_BYTES: usize = 32;
const RECORD_HEADER_BYTES: usize = 12;

/// A change to a file not yet known durable.
#[derive(Clone, Debug)]
enum Change {
    Write { offset: usize, bytes: Vec<u8> },
    Truncate { len: usize },
}

impl Change {
    fn apply(&self, file: &mut Vec<u8>) {
        match self {
            Change::Write { offset, bytes } => {
                if file.len() < offset + bytes.len() {
                    file.resize(offset + bytes.len(), 0);
                }
                file[*offset..offset + bytes.len()].copy_from_slice(bytes);
            }
            Change::Truncate { len } => file.truncate(*len),
        }
    }
}

/// One file: what survives a crash, and the changes since, in the order they were made.
#[derive(Clone, Debug, Default)]
struct File {
    synced: Vec<u8>,
    /// Unsynced changes, each numbered (`first_pending` is the number of the first).
    pending: Vec<Change>,
    first_pending: u64,
    /// What a read sees: `synced` with every pending change applied.
    current: Vec<u8>,
}

impl File {
    fn change(&mut self, change: Change) {
        change.apply(&mut self.current);
        self.pending.push(change);
    }

    /// Makes every change numbered below `upto` durable (a sync that began when `upto`
    /// changes had been made). Durability only moves forward: an earlier sync finishing
    /// after a later one changes nothing.
    fn sync_upto(&mut self, upto: u64) {
        while self.first_pending < upto && !self.pending.is_empty() {
            let change = self.pending.remove(0);
            change.apply(&mut self.synced);
            self.first_pending += 1;
        }
    }
}

/// A node's files (see the module docs for what survives a crash).
#[derive(Clone, Debug, Default)]
pub struct Disk {
    files: Rc<RefCell<BTreeMap<&'static str, File>>>,
}

impl Disk {
    /// Writes `bytes` at `offset` of `name` (the file grows as needed); not yet durable.
    fn write_at(&self, name: &'static str, offset: usize, bytes: &[u8]) {
        let change = Change::Write {
            offset,
            bytes: bytes.to_vec(),
        };
        self.files
            .borrow_mut()
            .entry(name)
            .or_default()
            .change(change);
    }

    /// Cuts `name` to `len` bytes; not yet durable.
    fn truncate(&self, name: &'static str, len: usize) {
        let change = Change::Truncate { len };
        self.files
            .borrow_mut()
            .entry(name)
            .or_default()
            .change(change);
    }

    fn read(&self, name: &'static str) -> Vec<u8> {
        self.files
            .borrow()
            .get(name)
            .map(|f| f.current.clone())
            .unwrap_or_default()
    }

    /// Makes `name` durable as it is now, after a drawn latency (an fsync). A crash before
    /// it completes leaves the file as it was at its last completed sync.
    pub async fn sync(&self, name: &'static str) {
        let upto = {
            let mut files = self.files.borrow_mut();
            let file = files.entry(name).or_default();
            file.first_pending + file.pending.len() as u64
        };
        let latency_ms = sim::draw(|s| s.range_inclusive("raft.fsync_ms", 1, 20));
        sleep(Duration::from_millis(latency_ms)).await;
        self.files
            .borrow_mut()
            .entry(name)
            .or_default()
            .sync_upto(upto);
    }

    /// What a crash did to unsynced data, applied at the next start (nobody reads a crashed
    /// node's disk before then), drawn from the run's input.
    pub fn recover_after_crash(&self) {
        for (name, bytes) in
            self.recover_with(|label, max| sim::draw(|s| s.range_inclusive(label, 0, max)))
        {
            sim::note(&format!("disk: {name} recovered with {bytes} bytes"));
        }
    }

    /// Per file with unsynced changes: the first `k` of them survive (`k` drawn, from none to
    /// all), and the next, if a write, may be torn — written up to a sector boundary inside
    /// it, the rest not. `draw(label, max)` picks in `0..=max`. Returns the files touched and their sizes.
    fn recover_with(
        &self,
        mut draw: impl FnMut(&'static str, u64) -> u64,
    ) -> Vec<(&'static str, usize)> {
        let mut touched = Vec::new();
        for (name, file) in self.files.borrow_mut().iter_mut() {
            if file.pending.is_empty() {
                continue;
            }
            let kept = draw("raft.crash_changes_kept", file.pending.len() as u64) as usize;
            let mut recovered = file.synced.clone();
            for change in &file.pending[..kept] {
                change.apply(&mut recovered);
            }
            if let Some(Change::Write { offset, bytes }) = file.pending.get(kept) {
                // Sectors are atomic: the write reaches the disk up to one of the sector
                // boundaries inside it (or not at all).
                let first_boundary = (offset / SECTOR_BYTES + 1) * SECTOR_BYTES;
                let end = offset + bytes.len();
                let boundaries = (first_boundary..end).step_by(SECTOR_BYTES).count();
                let torn = draw("raft.torn_sectors", boundaries as u64) as usize;
                let cut = match torn {
                    0 => 0,
                    j => first_boundary + (j - 1) * SECTOR_BYTES - offset,
                };
                let part = &bytes[..cut];
                Change::Write {
                    offset: *offset,
                    bytes: part.to_vec(),
                }
                .apply(&mut recovered);
            }
            file.first_pending += file.pending.len() as u64;
            file.pending.clear();
            file.synced = recovered.clone();
            file.current = recovered;
            touched.push((*name, file.current.len()));
        }
        touched
    }
}

/// What a replica reads back at start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Durable {
    /// The latest term it saw.
    pub term: u64,
    /// Whom it voted for in that term.
    pub vote: Option<u32>,
    /// Its log.
    pub log: Log,
}

/// A replica's persistent state on its [`Disk`].
#[derive(Debug)]
pub struct Storage {
    disk: Disk,
    meta_seq: u64,
    /// Byte offset of each record of the log file (entry index - 1).
    offsets: Vec<usize>,
    log_len: usize,
}

fn checksum(bytes: &[u8]) -> u64 {
    // FNV-1a: enough to tell a torn or stale record from a written one.
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Storage {
    /// Opens the disk, recovering from a crash: the newest valid meta slot, and the log up to
    /// its first torn or invalid record (the rest is truncated).
    pub fn open(disk: Disk) -> (Storage, Durable) {
        disk.recover_after_crash();
        Storage::read(disk)
    }

    /// Reads what `disk` holds, truncating a torn log tail.
    fn read(disk: Disk) -> (Storage, Durable) {
        let meta = disk.read("meta");
        let mut best: Option<(u64, u64, Option<u32>)> = None;
        for slot in meta.chunks_exact(SLOT_BYTES) {
            let word = |i: usize| u64::from_le_bytes(slot[i * 8..i * 8 + 8].try_into().expect("8"));
            if checksum(&slot[..24]) != word(3) {
                continue;
            }
            let vote = (word(2) != u64::MAX).then(|| word(2) as u32);
            if best.is_none_or(|(seq, _, _)| word(0) > seq) {
                best = Some((word(0), word(1), vote));
            }
        }
        let (meta_seq, term, vote) = best.unwrap_or((0, 0, None));

        let bytes = disk.read("log");
        let (mut entries, mut offsets, mut at) = (Vec::new(), Vec::new(), 0);
        while at + RECORD_HEADER_BYTES <= bytes.len() {
            let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4")) as usize;
            let sum = u64::from_le_bytes(bytes[at + 4..at + 12].try_into().expect("8"));
            let body = at + RECORD_HEADER_BYTES;
            let Some(payload) = bytes.get(body..body + len) else {
                break;
            };
            let Some(entry) = (checksum(payload) == sum)
                .then(|| log::decode(payload))
                .flatten()
            else {
                break;
            };
            entries.push(entry);
            offsets.push(at);
            at = body + len;
        }
        if at < bytes.len() {
            disk.truncate("log", at);
        }
        let storage = Storage {
            disk,
            meta_seq,
            offsets,
            log_len: at,
        };
        let durable = Durable {
            term,
            vote,
            log: Log::from_entries(entries),
        };
        (storage, durable)
    }

    /// Writes term and vote to the next meta slot and syncs it (Raft §5: both are persisted
    /// before the replica answers an RPC).
    pub async fn save_meta(&mut self, term: u64, vote: Option<u32>) {
        self.write_meta(term, vote);
        self.disk.sync("meta").await;
    }

    /// Writes term and vote to the next meta slot, without syncing it.
    pub fn write_meta(&mut self, term: u64, vote: Option<u32>) {
        self.meta_seq += 1;
        let mut slot = Vec::with_capacity(SLOT_BYTES);
        for word in [self.meta_seq, term, vote.map_or(u64::MAX, u64::from)] {
            slot.extend_from_slice(&word.to_le_bytes());
        }
        slot.extend_from_slice(&checksum(&slot).to_le_bytes());
        let offset = (self.meta_seq % 2) as usize * SLOT_BYTES;
        self.disk.write_at("meta", offset, &slot);
    }

    /// Replaces the log from `index` (from 1) on with `entries`; not yet durable.
    pub fn write_log(&mut self, index: u64, entries: &[Entry]) {
        let keep = (index - 1) as usize;
        if keep < self.offsets.len() {
            self.log_len = self.offsets[keep];
            self.offsets.truncate(keep);
            self.disk.truncate("log", self.log_len);
        }
        debug_assert_eq!(
            self.offsets.len(),
            keep,
            "log written with a gap at {index}"
        );
        let mut bytes = Vec::new();
        for entry in entries {
            let mut payload = Vec::new();
            log::encode(entry, &mut payload);
            self.offsets.push(self.log_len + bytes.len());
            bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            bytes.extend_from_slice(&checksum(&payload).to_le_bytes());
            bytes.extend_from_slice(&payload);
        }
        self.disk.write_at("log", self.log_len, &bytes);
        self.log_len += bytes.len();
    }

    /// A handle to sync the log with (it may run in a task of its own, next to the replica).
    pub fn disk(&self) -> Disk {
        self.disk.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raft_kv::log::Command;
    use sim_core::check::kv::KvInput;

    fn entry(term: u64, seq: u64) -> Entry {
        Entry {
            term,
            command: Command {
                client: 1,
                seq,
                op: KvInput::Put { key: 0, value: seq },
            },
        }
    }

    /// Stands in for a completed fsync of everything written so far.
    fn sync_all(disk: &Disk) {
        for file in disk.files.borrow_mut().values_mut() {
            let upto = file.first_pending + file.pending.len() as u64;
            file.sync_upto(upto);
        }
    }

    /// Reopens after a crash where `kept` unsynced changes survive and `torn` sector
    /// boundaries of the next one are reached.
    fn crash(disk: &Disk, kept: u64, torn: u64) -> Durable {
        disk.recover_with(|label, max| match label {
            "raft.crash_changes_kept" => kept.min(max),
            _ => torn.min(max),
        });
        let (_, durable) = Storage::read(disk.clone());
        durable
    }

    #[test]
    fn synced_state_survives_and_unsynced_changes_are_lost_in_order() {
        let disk = Disk::default();
        let (mut storage, _) = Storage::read(disk.clone());
        storage.write_meta(3, Some(1));
        storage.write_log(1, &[entry(1, 1), entry(1, 2)]);
        sync_all(&disk);
        storage.write_meta(4, Some(2));
        storage.write_log(3, &[entry(4, 3)]);
        let durable = crash(&disk, 0, 0);
        assert_eq!(
            (durable.term, durable.vote),
            (3, Some(1)),
            "the unsynced vote is lost"
        );
        assert_eq!(durable.log.entries(), &[entry(1, 1), entry(1, 2)]);

        let (mut storage, _) = Storage::read(disk.clone());
        storage.write_meta(5, Some(0));
        let durable = crash(&disk, 1, 0);
        assert_eq!(
            (durable.term, durable.vote),
            (5, Some(0)),
            "a kept write is read back"
        );
    }

    #[test]
    fn a_torn_log_append_is_cut_at_its_last_whole_record() {
        let disk = Disk::default();
        let (mut storage, _) = Storage::read(disk.clone());
        storage.write_log(1, &[entry(1, 1)]);
        sync_all(&disk);
        // Twenty records cross several sector boundaries.
        let batch: Vec<Entry> = (2..22).map(|seq| entry(2, seq)).collect();
        storage.write_log(2, &batch);
        let durable = crash(&disk, 0, 1);
        let len = durable.log.last_index();
        assert!(len > 1 && len < 21, "torn inside the batch: {len} entries");
        assert_eq!(
            durable.log.entries(),
            &[&[entry(1, 1)], &batch[..len as usize - 1]].concat()
        );
        // The torn tail was truncated: appending after it reads back whole.
        let (mut storage, _) = Storage::read(disk.clone());
        storage.write_log(len + 1, &[entry(3, 99)]);
        sync_all(&disk);
        let (_, durable) = Storage::read(disk.clone());
        assert_eq!(durable.log.last_index(), len + 1);
        assert_eq!(durable.log.get(len + 1), Some(&entry(3, 99)));
    }

    #[test]
    fn a_lost_meta_write_leaves_the_other_slot() {
        let disk = Disk::default();
        let (mut storage, _) = Storage::read(disk.clone());
        storage.write_meta(1, None);
        storage.write_meta(2, Some(1));
        sync_all(&disk);
        storage.write_meta(3, Some(2));
        storage.write_meta(4, None);
        let durable = crash(&disk, 1, 0);
        assert_eq!((durable.term, durable.vote), (3, Some(2)));
    }
}
