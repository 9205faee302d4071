//! The replicated log: entries, their encoding on disk, and the paper's log comparisons.

use sim_core::check::kv::KvInput;

/// What an entry asks the state machine to do: one client operation, tagged with the
/// client's session so a retried request is applied once (Raft thesis §6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Command {
    /// The client's number.
    pub client: u32,
    /// The client's request number; requests of one client are applied in order, each once.
    pub seq: u64,
    /// The operation.
    pub op: KvInput,
}

/// One log entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    /// The term of the leader that created it.
    pub term: u64,
    /// The command.
    pub command: Command,
}

/// A replica's log, indexed from 1 as in the paper (index 0 is the empty prefix, term 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Log {
    entries: Vec<Entry>,
}

impl Log {
    /// A log holding `entries` (index 1 first).
    pub fn from_entries(entries: Vec<Entry>) -> Self {
        Log { entries }
    }

    /// Index of the last entry (0 when empty).
    pub fn last_index(&self) -> u64 {
        self.entries.len() as u64
    }

    /// Term of the last entry (0 when empty).
    pub fn last_term(&self) -> u64 {
        self.term_at(self.last_index()).unwrap_or(0)
    }

    /// The term at `index`: `Some(0)` for index 0, `None` past the end.
    pub fn term_at(&self, index: u64) -> Option<u64> {
        match index {
            0 => Some(0),
            i => self.entries.get(i as usize - 1).map(|e| e.term),
        }
    }

    /// The entry at `index` (from 1).
    pub fn get(&self, index: u64) -> Option<&Entry> {
        index
            .checked_sub(1)
            .and_then(|i| self.entries.get(i as usize))
    }

    /// Entries from `index` (from 1) to the end.
    pub fn from(&self, index: u64) -> &[Entry] {
        let start = (index.max(1) - 1) as usize;
        self.entries.get(start..).unwrap_or(&[])
    }

    /// Every entry, index 1 first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Appends one entry; returns its index.
    pub fn push(&mut self, entry: Entry) -> u64 {
        self.entries.push(entry);
        self.last_index()
    }

    /// Drops every entry from `index` on.
    pub fn truncate_from(&mut self, index: u64) {
        self.entries.truncate((index.max(1) - 1) as usize);
    }

    /// Election restriction (§5.4.1): a candidate whose log ends at (`last_term`,
    /// `last_index`) is at least as up to date as this log.
    pub fn candidate_is_up_to_date(&self, last_term: u64, last_index: u64) -> bool {
        (last_term, last_index) >= (self.last_term(), self.last_index())
    }

    /// The index of the client's request, if the log holds it.
    pub fn find(&self, client: u32, seq: u64) -> Option<u64> {
        self.entries
            .iter()
            .rposition(|e| e.command.client == client && e.command.seq == seq)
            .map(|i| i as u64 + 1)
    }
}

/// Encodes an entry for the log file (the record framing and checksum are the storage's).
pub fn encode(entry: &Entry, out: &mut Vec<u8>) {
    let c = &entry.command;
    out.extend_from_slice(&entry.term.to_le_bytes());
    out.extend_from_slice(&c.client.to_le_bytes());
    out.extend_from_slice(&c.seq.to_le_bytes());
    let (kind, key, a, b) = match c.op {
        KvInput::Get { key } => (0u8, key, 0, 0),
        KvInput::Put { key, value } => (1, key, value, 0),
        KvInput::Cas { key, from, to } => (2, key, from, to),
    };
    out.push(kind);
    for word in [key, a, b] {
        out.extend_from_slice(&word.to_le_bytes());
    }
}

/// Decodes what [`encode`] wrote; `None` if the bytes are not an entry.
pub fn decode(bytes: &[u8]) -> Option<Entry> {
    if bytes.len() != 8 + 4 + 8 + 1 + 24 {
        return None;
    }
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let client = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    let (key, a, b) = (u64_at(21), u64_at(29), u64_at(37));
    let op = match bytes[20] {
        0 => KvInput::Get { key },
        1 => KvInput::Put { key, value: a },
        2 => KvInput::Cas {
            key,
            from: a,
            to: b,
        },
        _ => return None,
    };
    Some(Entry {
        term: u64_at(0),
        command: Command {
            client,
            seq: u64_at(12),
            op,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_through_their_encoding() {
        for op in [
            KvInput::Get { key: 3 },
            KvInput::Put { key: 1, value: 9 },
            KvInput::Cas {
                key: 2,
                from: 4,
                to: u64::MAX,
            },
        ] {
            let entry = Entry {
                term: 7,
                command: Command {
                    client: 2,
                    seq: 11,
                    op,
                },
            };
            let mut bytes = Vec::new();
            encode(&entry, &mut bytes);
            assert_eq!(decode(&bytes), Some(entry));
            assert_eq!(decode(&bytes[1..]), None);
        }
    }

    #[test]
    fn the_election_restriction_compares_last_term_then_length() {
        let entry = |term| Entry {
            term,
            command: Command {
                client: 0,
                seq: 0,
                op: KvInput::Get { key: 0 },
            },
        };
        let log = Log::from_entries(vec![entry(1), entry(2)]);
        assert!(log.candidate_is_up_to_date(2, 2));
        assert!(log.candidate_is_up_to_date(3, 1), "a later last term wins");
        assert!(
            !log.candidate_is_up_to_date(2, 1),
            "same term, shorter log loses"
        );
        assert!(
            !log.candidate_is_up_to_date(1, 5),
            "an earlier last term loses"
        );
    }
}
