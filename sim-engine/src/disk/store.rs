//! One node's files: what its page cache shows, what its medium holds, and what a crash
//! makes of the difference.
//!
//! Each file (an *inode*) keeps two images: `current`, what reads see (the medium plus every
//! write since the last sync, as a page cache would), and `durable`, what the medium holds.
//! Writes since the file's last sync wait in `pending`, in order; `sync` moves them to the
//! medium. The directory works the same way: `names` is what lookups see, `names_durable`
//! what survives, and `dir_pending` the creates, removes and renames since the last directory
//! sync. A crash keeps, loses or tears each pending write (drawn), keeps a drawn prefix of the
//! pending directory changes, and rebuilds `current` from the medium.

use std::collections::BTreeMap;

use super::labels::{DISK_CRASH_DIR, DISK_CRASH_SET_LEN, DISK_CRASH_TEAR, DISK_CRASH_WRITE};
use crate::choice::{Choices, Source};

/// A write or length change not yet on the medium.
#[derive(Clone, Debug)]
pub(crate) enum Pending {
    Write {
        offset: u64,
        data: Vec<u8>,
        /// A lost write (a fault): in the cache, never to reach the medium.
        lost: bool,
    },
    SetLen(u64),
}

impl Pending {
    /// Applies this change to `image`.
    fn apply(&self, image: &mut Vec<u8>) {
        match self {
            Pending::Write { offset, data, .. } => write_into(image, *offset, data),
            Pending::SetLen(len) => image.resize(*len as usize, 0),
        }
    }
}

/// Writes `data` at `offset`, zero-filling any gap past the end (a hole).
pub(crate) fn write_into(image: &mut Vec<u8>, offset: u64, data: &[u8]) {
    let start = offset as usize;
    let end = start + data.len();
    if image.len() < end {
        image.resize(end, 0);
    }
    image[start..end].copy_from_slice(data);
}

pub(crate) struct Inode {
    /// Its name now (for messages and the fault atlas); changes with renames.
    pub name: String,
    pub current: Vec<u8>,
    pub durable: Vec<u8>,
    pub pending: Vec<Pending>,
    /// False once removed or replaced by a rename: its open handles then fail.
    pub linked: bool,
}

impl Inode {
    /// Moves every pending change that is not lost to the medium.
    pub fn sync(&mut self) {
        for p in self.pending.drain(..) {
            if !matches!(p, Pending::Write { lost: true, .. }) {
                p.apply(&mut self.durable);
            }
        }
    }
}

/// A directory change not yet durable.
#[derive(Clone, Debug)]
pub(crate) enum DirOp {
    Create { name: String, ino: u32 },
    Remove { name: String },
    Rename { from: String, to: String },
}

impl DirOp {
    fn apply(&self, names: &mut BTreeMap<String, u32>) {
        match self {
            DirOp::Create { name, ino } => {
                names.insert(name.clone(), *ino);
            }
            DirOp::Remove { name } => {
                names.remove(name);
            }
            DirOp::Rename { from, to } => {
                // A rename whose source is not there (its create was lost) does nothing.
                if let Some(ino) = names.remove(from) {
                    names.insert(to.clone(), ino);
                }
            }
        }
    }
}

/// An open file description: shared by every clone of a handle.
pub(crate) struct Open {
    pub ino: u32,
    pub closed: bool,
}

/// What a crash decided for one pending change (recorded as a disk fault event).
pub(crate) struct CrashDecision {
    pub fault: super::DiskFault,
    pub ino: u32,
    pub name: String,
    pub at: u64,
    pub len: u64,
}

#[derive(Default)]
pub(crate) struct NodeStore {
    pub files: BTreeMap<u32, Inode>,
    pub names: BTreeMap<String, u32>,
    names_durable: BTreeMap<String, u32>,
    dir_pending: Vec<DirOp>,
    pub opens: Vec<Open>,
    next_ino: u32,
}

impl NodeStore {
    /// A new empty file called `name` (the caller checked that the name is free).
    pub fn create(&mut self, name: &str) -> u32 {
        debug_assert!(!self.names.contains_key(name), "create over {name:?}");
        self.next_ino += 1;
        let ino = self.next_ino;
        self.files.insert(
            ino,
            Inode {
                name: name.to_string(),
                current: Vec::new(),
                durable: Vec::new(),
                pending: Vec::new(),
                linked: true,
            },
        );
        self.names.insert(name.to_string(), ino);
        self.dir_pending.push(DirOp::Create {
            name: name.to_string(),
            ino,
        });
        ino
    }

    /// Opens a description of `ino`; returns its index.
    pub fn open(&mut self, ino: u32) -> u32 {
        self.opens.push(Open { ino, closed: false });
        (self.opens.len() - 1) as u32
    }

    /// Unlinks `name` (the caller checked that it exists); returns its inode.
    pub fn remove(&mut self, name: &str) -> u32 {
        let ino = self
            .names
            .remove(name)
            .expect("remove of a name that exists");
        self.unlink(ino);
        self.dir_pending.push(DirOp::Remove {
            name: name.to_string(),
        });
        ino
    }

    /// Renames `from` (which exists) to `to`, replacing what `to` named; returns the inode.
    pub fn rename(&mut self, from: &str, to: &str) -> u32 {
        let ino = self
            .names
            .remove(from)
            .expect("rename of a name that exists");
        if let Some(replaced) = self.names.insert(to.to_string(), ino) {
            self.unlink(replaced);
        }
        if let Some(inode) = self.files.get_mut(&ino) {
            inode.name = to.to_string();
        }
        self.dir_pending.push(DirOp::Rename {
            from: from.to_string(),
            to: to.to_string(),
        });
        ino
    }

    fn unlink(&mut self, ino: u32) {
        if let Some(inode) = self.files.get_mut(&ino) {
            inode.linked = false;
        }
    }

    /// Makes every directory change so far durable.
    pub fn sync_dir(&mut self) -> usize {
        let n = self.dir_pending.len();
        for op in self.dir_pending.drain(..) {
            op.apply(&mut self.names_durable);
        }
        // The durable directory is the current one once every change is applied to it: a
        // directory operation that reads see but replay would not reproduce (or the reverse)
        // would make a crash right after this sync resurrect or lose a name.
        debug_assert_eq!(
            self.names, self.names_durable,
            "a synced directory must match the directory reads see"
        );
        // A file neither named now nor durably named is gone for good.
        let (names, durable) = (&self.names, &self.names_durable);
        self.files.retain(|ino, _| {
            names.values().any(|i| i == ino) || durable.values().any(|i| i == ino)
        });
        n
    }

    /// Makes every write and directory change durable (what a clean exit leaves behind).
    pub fn flush(&mut self) {
        for inode in self.files.values_mut() {
            inode.sync();
        }
        self.sync_dir();
    }

    /// The crash: resolves every unsynced change by drawing, then rebuilds what reads see
    /// from the medium. Open descriptions are gone (their handles are stale anyway).
    pub fn crash(&mut self, source: &mut dyn Source, sector_bytes: u64) -> Vec<CrashDecision> {
        use super::DiskFault::*;
        let mut decisions = Vec::new();
        for (&ino, inode) in self.files.iter_mut() {
            let mut durable = std::mem::take(&mut inode.durable);
            for p in inode.pending.drain(..) {
                match p {
                    // Already recorded as a lost write when it happened.
                    Pending::Write { lost: true, .. } => {}
                    Pending::Write { offset, data, .. } => {
                        let len = data.len() as u64;
                        let end = offset + len;
                        // Sector boundaries strictly inside the write: where it may tear.
                        let cuts = if len == 0 {
                            0
                        } else {
                            (end - 1) / sector_bytes - offset / sector_bytes
                        };
                        let options = if cuts > 0 { 3 } else { 2 };
                        let (fault, kept) = match source.below(DISK_CRASH_WRITE.name(), options) {
                            0 => (CrashKept, len),
                            1 => (CrashLost, 0),
                            _ => {
                                let k = 1 + source.below(DISK_CRASH_TEAR.name(), cuts);
                                let cut = (offset / sector_bytes + k) * sector_bytes;
                                debug_assert!(
                                    offset < cut && cut < end,
                                    "tear at {cut} outside write {offset}..{end}"
                                );
                                (CrashTorn, cut - offset)
                            }
                        };
                        if kept > 0 {
                            write_into(&mut durable, offset, &data[..kept as usize]);
                        }
                        decisions.push(CrashDecision {
                            fault,
                            ino,
                            name: inode.name.clone(),
                            at: offset,
                            len: kept,
                        });
                    }
                    Pending::SetLen(len) => {
                        let keep = source.below(DISK_CRASH_SET_LEN.name(), 2) == 0;
                        if keep {
                            durable.resize(len as usize, 0);
                        }
                        decisions.push(CrashDecision {
                            fault: if keep { CrashKept } else { CrashLost },
                            ino,
                            name: inode.name.clone(),
                            at: len,
                            len: 0,
                        });
                    }
                }
            }
            inode.current = durable.clone();
            inode.durable = durable;
        }
        let n = self.dir_pending.len() as u64;
        if n > 0 {
            // Directory changes reach the medium in order (a journal): a prefix survives.
            let lost = source.below(DISK_CRASH_DIR.name(), n + 1);
            let kept = (n - lost) as usize;
            for op in &self.dir_pending[..kept] {
                op.apply(&mut self.names_durable);
            }
            decisions.push(CrashDecision {
                fault: if lost > 0 { CrashDirLost } else { CrashKept },
                ino: 0,
                name: String::new(),
                at: kept as u64,
                len: lost,
            });
            self.dir_pending.clear();
        }
        self.names = self.names_durable.clone();
        let live: std::collections::BTreeSet<u32> = self.names.values().copied().collect();
        self.files.retain(|ino, _| live.contains(ino));
        for (name, ino) in &self.names {
            let inode = self
                .files
                .get_mut(ino)
                .expect("a durable name has its inode");
            inode.name = name.clone();
            inode.linked = true;
        }
        self.opens.clear();
        debug_assert!(
            self.files
                .values()
                .all(|i| i.pending.is_empty() && i.current == i.durable),
            "after a crash, reads must see what the medium holds"
        );
        decisions
    }
}
