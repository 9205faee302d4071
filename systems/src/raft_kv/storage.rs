//! Durable state: the current term, the vote and the log, in two files on the node's
//! [`sim_core::disk`].
//!
//! **What the disk may do** (its module docs say it all): a crash keeps, loses or tears (at a
//! sector boundary) each write since the file's last sync, independently — a later write may
//! survive an earlier one, and a hole reads as zeros or as the bytes that were there before;
//! a create without a directory sync may be lost; reads and writes may fail with an I/O
//! error (transient: this module retries) or be slow. The damaging faults (latent corruption,
//! misdirected and lost writes of *synced* data) are outside Raft's fault model — a replica
//! that silently loses what it acknowledged breaks the quorum intersection every Raft safety
//! argument rests on — so raft-kv leaves the disk's fault atlas at its default, which never
//! grants them.
//!
//! **`meta`: term and vote, in two alternating slots.** Slot `seq % 2` (at byte 0 or 512, a
//! sector apart) holds `[seq, term, vote, checksum]`; recovery takes the valid slot with the
//! higher `seq`. A write goes to the slot *not* holding the newest valid record, so a crash
//! while it is unsynced (lost, torn, or zeros) leaves the previous record readable — and the
//! previous record is exactly what the replica had promised: a correct replica answers an RPC
//! only after the slot it wrote is synced ([`Storage::save_meta`]), so a vote or term that
//! recovery falls back from was never announced.
//!
//! **`log`: chained records** ([`sim_core::disk::RecordFile`]). Each record is
//! `[len u32][chain u64][entry]`, where `chain` is a checksum of the previous record's chain
//! and this record's bytes. Recovery keeps records
//! up to the first that is short or fails its chain, and truncates the rest. The chain (not a
//! per-record checksum alone) is what makes this sound on a disk that resolves unsynced
//! writes independently: after a follower truncates its log and appends, a crash may keep the
//! new record at index `i` and lose the truncation, leaving an old record at `i + 1` that is
//! whole and checksums fine — but it was written after another record `i`, so its chain
//! fails. By induction, a recovered log is always a prefix of a log the replica once had.
//!
//! **Files exist before anything is written to them**: created and made durable with a
//! directory sync at the first start, before the replica answers anything.

use std::cell::Cell;
use std::rc::Rc;

use sim_core::disk::{retry_faults, Disk, File, RecordFile};

use super::log::{self, Entry, Log};

/// Bytes between the two meta slots: a sector, so that writing one never touches the other.
const SLOT_STRIDE_BYTES: u64 = 512;
const SLOT_BYTES: usize = 32;
/// The chain value before the first record.
const CHAIN_SEED: u64 = 0x7261_6674_6c6f_6721;
const META: &str = "meta";
const LOG: &str = "log";

/// A checksum of `bytes` continuing from `seed`. FNV-1a: enough to tell a torn, stale or
/// misplaced record from the one written.
fn checksum(seed: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(seed, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
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

/// The newest valid meta slot in `bytes`: `(seq, term, vote)`, or `None` if neither is valid.
fn parse_meta(bytes: &[u8]) -> Option<(u64, u64, Option<u32>)> {
    let mut best: Option<(u64, u64, Option<u32>)> = None;
    for slot in 0..2u64 {
        let at = (slot * SLOT_STRIDE_BYTES) as usize;
        let Some(slot) = bytes.get(at..at + SLOT_BYTES) else {
            continue;
        };
        let word = |i: usize| u64::from_le_bytes(slot[i * 8..i * 8 + 8].try_into().expect("8"));
        if checksum(CHAIN_SEED, &slot[..24]) != word(3) {
            continue;
        }
        let vote = (word(2) != u64::MAX).then(|| word(2) as u32);
        if best.is_none_or(|(seq, _, _)| word(0) > seq) {
            best = Some((word(0), word(1), vote));
        }
    }
    best
}

/// One encoded meta slot.
fn meta_slot(seq: u64, term: u64, vote: Option<u32>) -> Vec<u8> {
    let mut slot = Vec::with_capacity(SLOT_BYTES);
    for word in [seq, term, vote.map_or(u64::MAX, u64::from)] {
        slot.extend_from_slice(&word.to_le_bytes());
    }
    slot.extend_from_slice(&checksum(CHAIN_SEED, &slot).to_le_bytes());
    slot
}

/// The log records of `bytes` up to the first short or broken one.
#[derive(Debug)]
struct ParsedLog {
    entries: Vec<Entry>,
    /// Where each valid record is, and where they end.
    records: RecordFile,
}

fn parse_log(bytes: &[u8]) -> ParsedLog {
    let mut entries = Vec::new();
    let records = RecordFile::recover(CHAIN_SEED, bytes, |_, payload| {
        log::decode(payload)
            .map(|entry| entries.push(entry))
            .is_some()
    });
    ParsedLog { entries, records }
}

/// A replica's persistent state on its node's disk.
#[derive(Debug)]
pub struct Storage {
    meta: File,
    log: File,
    meta_seq: u64,
    /// The log file's records, record `i` the entry at index `i + 1`.
    records: RecordFile,
    /// How many entries are known durable: set by completed log syncs, lowered by
    /// truncations.
    synced: Rc<Cell<u64>>,
    /// Counts truncations, so a sync that a truncation overtook does not claim entries
    /// written after it began.
    truncations: Rc<Cell<u64>>,
    /// A meta record was written and no sync has covered it yet.
    meta_unsynced: bool,
}

impl Storage {
    /// Opens the running node's disk and recovers: creates the files at the first start,
    /// reads the newest valid meta slot, and the log up to its first torn or broken record
    /// (truncating the rest).
    pub async fn open() -> (Storage, Durable) {
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
            // The names must outlive a crash before anything is written under them.
            retry_faults("directory sync", || disk.sync_dir()).await;
        }
        let meta = retry_faults("open", || disk.open(META)).await;
        let log = retry_faults("open", || disk.open(LOG)).await;

        let meta_bytes = retry_faults("read", || meta.read_all()).await;
        let (meta_seq, term, vote) = parse_meta(&meta_bytes).unwrap_or((0, 0, None));
        let log_bytes = retry_faults("read", || log.read_all()).await;
        let parsed = parse_log(&log_bytes);
        let valid_bytes = parsed.records.len_bytes();
        if valid_bytes < log_bytes.len() as u64 {
            // A torn or stale tail: cut it so appends follow the last whole record. Not synced
            // here: if the cut is lost, the same broken bytes are cut again.
            retry_faults("truncate", || log.set_len(valid_bytes)).await;
        }
        let entries = parsed.entries.len() as u64;
        let storage = Storage {
            meta,
            log,
            meta_seq,
            records: parsed.records,
            // What recovery read is what the crash left on the medium.
            synced: Rc::new(Cell::new(entries)),
            truncations: Rc::new(Cell::new(0)),
            meta_unsynced: false,
        };
        let durable = Durable {
            term,
            vote,
            log: Log::from_entries(parsed.entries),
        };
        (storage, durable)
    }

    /// Writes term and vote to the next meta slot and syncs it (Figure 2: persistent state
    /// is updated on stable storage before responding to RPCs).
    pub async fn save_meta(&mut self, term: u64, vote: Option<u32>) {
        self.write_meta(term, vote).await;
        retry_faults("meta sync", || self.meta.sync()).await;
        self.meta_unsynced = false;
    }

    /// Writes term and vote to the slot not holding the newest record, without syncing it.
    pub async fn write_meta(&mut self, term: u64, vote: Option<u32>) {
        self.meta_seq += 1;
        let slot = meta_slot(self.meta_seq, term, vote);
        let offset = (self.meta_seq % 2) * SLOT_STRIDE_BYTES;
        retry_faults("meta write", || self.meta.write_at(offset, &slot)).await;
        self.meta_unsynced = true;
    }

    /// True while term and vote as last written are not known durable.
    pub fn meta_unsynced(&self) -> bool {
        self.meta_unsynced
    }

    /// Replaces the log from `index` (from 1) on with `entries`; not yet durable.
    pub async fn write_log(&mut self, index: u64, entries: &[Entry]) {
        let keep = (index - 1) as usize;
        if keep < self.records.record_count() {
            let len = self.records.truncate(keep);
            self.synced.set(self.synced.get().min(keep as u64));
            self.truncations.set(self.truncations.get() + 1);
            retry_faults("log truncate", || self.log.set_len(len)).await;
        }
        debug_assert_eq!(
            self.records.record_count(),
            keep,
            "log written with a gap at {index}"
        );
        let at = self.records.len_bytes();
        let mut bytes = Vec::new();
        for entry in entries {
            let mut payload = Vec::new();
            log::encode(entry, &mut payload);
            self.records.encode(&payload, &mut bytes);
        }
        retry_faults("log write", || self.log.write_at(at, &bytes)).await;
    }

    /// How many entries are known durable (a completed sync covered them).
    pub fn synced_entries(&self) -> u64 {
        self.synced.get()
    }

    /// Syncs the log; returns how many entries the sync made durable. Runs as its own future
    /// (a leader replicates while it syncs, §10.2.1), independent of `&self`.
    pub fn sync_log(&self) -> impl std::future::Future<Output = u64> + 'static {
        let (log, synced, truncations) = (
            self.log.clone(),
            self.synced.clone(),
            self.truncations.clone(),
        );
        let upto = self.records.record_count() as u64;
        let truncations_before = truncations.get();
        async move {
            retry_faults("log sync", || log.sync()).await;
            if truncations.get() == truncations_before {
                synced.set(synced.get().max(upto));
            }
            upto
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raft_kv::log::Command;
    use sim_core::check::kv::KvInput;
    use sim_core::node::{crash, restart};
    use sim_core::sim::{Config, Sim};
    use std::cell::RefCell;

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

    /// Encodes a log as `write_log` would.
    fn image(entries: &[Entry]) -> Vec<u8> {
        let mut records = RecordFile::new(CHAIN_SEED);
        let mut out = Vec::new();
        for e in entries {
            let mut payload = Vec::new();
            log::encode(e, &mut payload);
            records.encode(&payload, &mut out);
        }
        out
    }

    #[test]
    fn a_torn_record_ends_the_log() {
        let entries: Vec<Entry> = (1..5).map(|seq| entry(1, seq)).collect();
        let bytes = image(&entries);
        let whole = parse_log(&bytes);
        assert_eq!(whole.entries, entries);
        assert_eq!(whole.records.len_bytes(), bytes.len() as u64);
        // Cut inside the third record: two survive.
        let record_bytes = bytes.len() / 4;
        let torn = parse_log(&bytes[..2 * record_bytes + 20]);
        assert_eq!(torn.entries, &entries[..2]);
        assert_eq!(torn.records.len_bytes(), 2 * record_bytes as u64);
        // A flipped byte inside the second record: one survives.
        let mut rotted = bytes.clone();
        rotted[record_bytes + 30] ^= 1;
        assert_eq!(parse_log(&rotted).entries, &entries[..1]);
        // Zeros (a lost write past the end) are not a record.
        let mut holed = bytes[..record_bytes].to_vec();
        holed.extend_from_slice(&[0; 64]);
        assert_eq!(parse_log(&holed).entries, &entries[..1]);
    }

    #[test]
    fn a_whole_record_after_a_different_predecessor_fails_its_chain() {
        // The disk held a, b, c; a follower replaced b with b' (same length) and the crash
        // kept b' but lost the truncation: c is whole and checksums fine on its own.
        let (a, b, c, b2) = (entry(1, 1), entry(1, 2), entry(1, 3), entry(2, 9));
        let mut bytes = image(&[a, b, c]);
        let replaced = image(&[a, b2]);
        bytes[..replaced.len()].copy_from_slice(&replaced);
        assert_eq!(
            parse_log(&bytes).entries,
            vec![a, b2],
            "c was written after b, not b': it must not follow b'"
        );
    }

    #[test]
    fn the_newest_valid_meta_slot_wins_and_a_torn_one_falls_back() {
        let mut bytes = vec![0; SLOT_STRIDE_BYTES as usize + SLOT_BYTES];
        assert_eq!(parse_meta(&bytes), None, "zeros are no slot");
        bytes[..SLOT_BYTES].copy_from_slice(&meta_slot(2, 5, Some(1)));
        bytes[SLOT_STRIDE_BYTES as usize..].copy_from_slice(&meta_slot(3, 6, None));
        assert_eq!(parse_meta(&bytes), Some((3, 6, None)));
        // The slot being rewritten is damaged: the other one stands.
        bytes[SLOT_STRIDE_BYTES as usize + 9] ^= 0x40;
        assert_eq!(parse_meta(&bytes), Some((2, 5, Some(1))));
        assert_eq!(parse_meta(&bytes[..SLOT_BYTES]), Some((2, 5, Some(1))));
    }

    /// A replica's storage through crashes on the real simulated disk: what was synced is
    /// read back whole, whatever the crash did to the rest.
    #[test]
    fn synced_state_survives_crashes_on_the_simulated_disk() {
        for seed in 0..20 {
            let seen: Rc<RefCell<Vec<Durable>>> = Rc::default();
            let mut sim = Sim::new(Config::default());
            let record = seen.clone();
            sim.node("r", move |ctx| {
                let record = record.clone();
                async move {
                    let (mut storage, durable) = Storage::open().await;
                    record.borrow_mut().push(durable);
                    if ctx.incarnation() == 0 {
                        storage.save_meta(3, Some(1)).await;
                        storage.write_log(1, &[entry(1, 1), entry(1, 2)]).await;
                        storage.sync_log().await;
                        assert_eq!(storage.synced_entries(), 2);
                        // Unsynced: a new vote, and a follower's truncate-and-append.
                        storage.write_meta(4, Some(2)).await;
                        storage.write_log(2, &[entry(4, 3), entry(4, 4)]).await;
                        assert_eq!(storage.synced_entries(), 1, "a truncation lowers it");
                    }
                    sim_core::time::sleep(std::time::Duration::from_secs(1)).await;
                }
            });
            sim.client("nemesis", |_| async {
                sim_core::time::sleep(std::time::Duration::from_millis(500)).await;
                crash("r").unwrap();
                restart("r").unwrap();
                sim_core::time::sleep(std::time::Duration::from_millis(500)).await;
            });
            assert!(sim.run_seed(seed).outcome.class.is_pass(), "seed {seed}");
            let seen = seen.borrow();
            assert_eq!(seen.len(), 2, "seed {seed}: started twice");
            assert_eq!(seen[0], Durable::default());
            let after = &seen[1];
            assert!(
                [(3, Some(1)), (4, Some(2))].contains(&(after.term, after.vote)),
                "seed {seed}: {after:?}"
            );
            let old = [entry(1, 1), entry(1, 2)];
            let new = [entry(1, 1), entry(4, 3), entry(4, 4)];
            let got = after.log.entries();
            assert!(
                old.starts_with(got) || new.starts_with(got),
                "seed {seed}: recovered a log the replica never had: {got:?}"
            );
            assert!(
                !got.is_empty(),
                "seed {seed}: the synced first entry was lost"
            );
        }
    }
}
