//! The crash-safe record file ([`RecordFile`]): the format a write-ahead log needs on the
//! simulated disk.

/// Bytes before a record's payload: its length (u32) and chain (u64).
const RECORD_HEADER_BYTES: usize = 12;

const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// FNV-1a over `bytes`, continued from `seed`.
fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(seed, |h, &b| (h ^ u64::from(b)).wrapping_mul(FNV_PRIME))
}

/// The chain value of a record with `payload` after a record whose chain is `prev`.
fn record_chain(prev: u64, payload: &[u8]) -> u64 {
    let len = payload_len(payload).to_le_bytes();
    fnv1a(fnv1a(prev, &len), payload)
}

fn payload_len(payload: &[u8]) -> u32 {
    u32::try_from(payload.len()).expect("invariant: a record's payload is under 4 GiB")
}

/// Where a record starts and the chain value it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RecordAt {
    offset_bytes: u64,
    chain: u64,
}

/// A crash-safe file of records: the format a write-ahead log needs on a disk that loses,
/// keeps or tears each unsynced write.
///
/// Every storage harness wants the same thing from a log file: append records, sync when the
/// protocol says so, and after a crash read back *a prefix* of what was written — everything
/// synced, possibly more, never a record that was torn, never a record whose predecessor was
/// lost while it survived (the simulated disk resolves each unsynced write independently, so a
/// later write may outlive an earlier one). This module is that format, without the I/O: the
/// caller reads and writes the file itself, so its retry policy, sync points and the order of
/// its disk calls stay its own (and with them every draw of its runs).
///
/// **Format.** A record is `[len u32 LE][chain u64 LE][payload]`. `chain` is FNV-1a over the
/// previous record's chain (the caller's `seed` before the first record), then `len`'s four
/// bytes, then the payload. A chain ties each record to every record before it, so a record
/// written after a lost one never validates, and zeros left by a lost write end the prefix.
///
/// **Recovery** keeps records up to the first one that is short, whose chain fails, or that
/// the caller's `accept` refuses (a payload it cannot decode, an index out of order), and
/// says how long that prefix is; the caller cuts the file there and syncs the cut before it
/// appends again, so that new records follow the prefix.
///
/// ```
/// use sim_core::disk::RecordFile;
///
/// const SEED: u64 = 0x6b76_2d6c_6f67; // one per file kind: a record of another file never validates
///
/// // Append two records (the caller writes `bytes` at the old end, then syncs when it must).
/// let mut log = RecordFile::new(SEED);
/// let mut bytes = Vec::new();
/// log.encode(b"set x 1", &mut bytes);
/// log.encode(b"set y 2", &mut bytes);
/// assert_eq!(log.len_bytes(), bytes.len() as u64);
///
/// // A crash tore the second record: recovery keeps the first and says where to cut.
/// bytes.truncate(bytes.len() - 3);
/// let mut payloads = Vec::new();
/// let log = RecordFile::recover(SEED, &bytes, |_, payload| {
///     payloads.push(payload.to_vec());
///     true
/// });
/// assert_eq!(payloads, [b"set x 1".to_vec()]);
/// assert_eq!(log.record_count(), 1);
/// assert!(log.len_bytes() < bytes.len() as u64); // cut the file to len_bytes, sync, go on
/// ```
///
/// The value is the state of one record file: where each valid record is and what chains
/// from the last. [`RecordFile::encode`] appends a record's bytes to the caller's buffer,
/// [`RecordFile::recover`] parses what the caller read, and [`RecordFile::truncate`] says
/// where to cut.
#[derive(Clone, Debug)]
pub struct RecordFile {
    seed: u64,
    records: Vec<RecordAt>,
    end_bytes: u64,
}

impl RecordFile {
    /// An empty file whose first record chains from `seed` (pick one per kind of file).
    pub fn new(seed: u64) -> Self {
        RecordFile {
            seed,
            records: Vec::new(),
            end_bytes: 0,
        }
    }

    /// Parses the longest valid prefix of `bytes` (a file's contents after a crash or a clean
    /// stop). `accept(position, payload)` sees each record whose chain holds, in order, and
    /// returns `false` to end the prefix before it (a payload the caller cannot decode).
    /// The caller cuts the file to [`RecordFile::len_bytes`] (and syncs) when that is less
    /// than `bytes.len()`.
    pub fn recover(
        seed: u64,
        bytes: &[u8],
        mut accept: impl FnMut(usize, &[u8]) -> bool,
    ) -> RecordFile {
        let mut file = RecordFile::new(seed);
        let mut at = 0usize;
        while let Some(header) = bytes.get(at..at + RECORD_HEADER_BYTES) {
            let (len, chain) = header.split_at(4);
            let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
            let chain = u64::from_le_bytes(chain.try_into().expect("8 bytes"));
            let body = at + RECORD_HEADER_BYTES;
            let Some(payload) = body.checked_add(len).and_then(|end| bytes.get(body..end)) else {
                break;
            };
            if chain != record_chain(file.last_chain(), payload)
                || !accept(file.records.len(), payload)
            {
                break;
            }
            file.records.push(RecordAt {
                offset_bytes: at as u64,
                chain,
            });
            at = body + len;
        }
        file.end_bytes = at as u64;
        debug_assert!(file.end_bytes <= bytes.len() as u64);
        file
    }

    /// Appends the record of `payload` to `out` (the bytes to write at the file's old
    /// [`RecordFile::len_bytes`], after whatever `out` already holds from this file).
    pub fn encode(&mut self, payload: &[u8], out: &mut Vec<u8>) {
        let chain = record_chain(self.last_chain(), payload);
        self.records.push(RecordAt {
            offset_bytes: self.end_bytes,
            chain,
        });
        out.extend_from_slice(&payload_len(payload).to_le_bytes());
        out.extend_from_slice(&chain.to_le_bytes());
        out.extend_from_slice(payload);
        self.end_bytes += (RECORD_HEADER_BYTES + payload.len()) as u64;
    }

    /// Forgets the records from position `keep` on and returns the byte length to cut the
    /// file to (`set_len`, then sync before appending again). Keeping as many as there are,
    /// or more, changes nothing.
    pub fn truncate(&mut self, keep: usize) -> u64 {
        if let Some(first_cut) = self.records.get(keep) {
            self.end_bytes = first_cut.offset_bytes;
            self.records.truncate(keep);
        }
        debug_assert!(self
            .records
            .last()
            .is_none_or(|last| last.offset_bytes < self.end_bytes));
        self.end_bytes
    }

    /// The length of the valid file: where the next record goes.
    pub fn len_bytes(&self) -> u64 {
        self.end_bytes
    }

    /// How many records the file holds.
    pub fn record_count(&self) -> usize {
        self.records.len()
    }

    fn last_chain(&self) -> u64 {
        self.records.last().map_or(self.seed, |r| r.chain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: u64 = 7;

    fn file_of(payloads: &[&[u8]]) -> (RecordFile, Vec<u8>) {
        let mut file = RecordFile::new(SEED);
        let mut bytes = Vec::new();
        for p in payloads {
            file.encode(p, &mut bytes);
        }
        (file, bytes)
    }

    fn recovered(bytes: &[u8]) -> (RecordFile, Vec<Vec<u8>>) {
        let mut payloads = Vec::new();
        let file = RecordFile::recover(SEED, bytes, |_, p| {
            payloads.push(p.to_vec());
            true
        });
        (file, payloads)
    }

    #[test]
    fn a_clean_file_recovers_whole() {
        let (written, bytes) = file_of(&[b"a", b"", b"ccc"]);
        let (file, payloads) = recovered(&bytes);
        assert_eq!(payloads, [b"a".to_vec(), vec![], b"ccc".to_vec()]);
        assert_eq!(file.len_bytes(), bytes.len() as u64);
        assert_eq!(file.records, written.records);
    }

    #[test]
    fn a_record_after_a_lost_one_does_not_validate() {
        let (_, bytes) = file_of(&[b"first", b"second", b"third"]);
        let second_at = RECORD_HEADER_BYTES + 5;
        let third_at = second_at + RECORD_HEADER_BYTES + 6;
        // The second write was lost (zeros), the third kept.
        let mut crashed = bytes.clone();
        crashed[second_at..third_at].fill(0);
        let (file, payloads) = recovered(&crashed);
        assert_eq!(payloads, [b"first".to_vec()]);
        assert_eq!(file.len_bytes(), second_at as u64);
    }

    #[test]
    fn every_cut_of_the_file_recovers_a_prefix() {
        let (_, bytes) = file_of(&[b"one", b"two", b"three", b"four"]);
        for cut in 0..=bytes.len() {
            let (file, payloads) = recovered(&bytes[..cut]);
            assert!(file.len_bytes() as usize <= cut);
            let whole: Vec<Vec<u8>> = [&b"one"[..], b"two", b"three", b"four"]
                .iter()
                .map(|p| p.to_vec())
                .collect();
            assert_eq!(payloads[..], whole[..payloads.len()]);
        }
    }

    #[test]
    fn accept_ends_the_prefix() {
        let (_, bytes) = file_of(&[b"ok", b"bad", b"ok"]);
        let file = RecordFile::recover(SEED, &bytes, |_, p| p != b"bad");
        assert_eq!(file.record_count(), 1);
    }

    #[test]
    fn truncate_then_append_chains_from_the_kept_record() {
        let (mut file, mut bytes) = file_of(&[b"a", b"b", b"c"]);
        let cut = file.truncate(1);
        bytes.truncate(cut as usize);
        file.encode(b"d", &mut bytes);
        let (_, payloads) = recovered(&bytes);
        assert_eq!(payloads, [b"a".to_vec(), b"d".to_vec()]);
        assert_eq!(file.truncate(5), bytes.len() as u64);
    }

    #[test]
    fn another_seed_reads_nothing() {
        let (_, bytes) = file_of(&[b"a"]);
        assert_eq!(
            RecordFile::recover(SEED + 1, &bytes, |_, _| true).record_count(),
            0
        );
    }
}
