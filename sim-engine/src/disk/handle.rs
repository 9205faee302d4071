//! The handles a system holds: [`Disk`] (a node's directory) and [`File`] (an open file).
//!
//! Handles are plain ids; every call reaches the run's world, validates the handle, waits its
//! drawn latency in virtual time, then applies the operation, drawing its faults. A handle
//! that is closed, names a removed file, or was opened before its node crashed fails with a
//! clear [`DiskError`] and changes nothing.

use std::fmt;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use super::error::{check_path, DiskError};
use super::labels::{
    DISK_CORRUPT, DISK_CORRUPT_BITS, DISK_CORRUPT_BYTE, DISK_CORRUPT_SECTOR, DISK_LOST_WRITE,
    DISK_MISDIRECT, DISK_MISDIRECT_SECTOR, DISK_READ_ERROR, DISK_WRITE_ERROR,
};
use super::store::{write_into, Pending};
use super::{draw_latency, record_fault, DiskFault, DiskOp, Latency};
use crate::choice::Choices;
use crate::choice::PER_MILLE;
use crate::trace::{stable_hash, EventKind};
use crate::world::{with_disks, DiskView};

/// A node's disk: one flat directory of named files.
///
/// Names are 1 to 255 characters from `A-Z a-z 0-9 . _ -`. See the [module docs](super) for
/// what survives a crash.
///
/// ```
/// use sim_core::disk::Disk;
/// use sim_core::sim::{Config, Sim};
///
/// let mut sim = Sim::new(Config::default());
/// sim.client("c", |_| async {
///     let disk = Disk::current();
///     let f = disk.create("data").await.unwrap();
///     f.write_at(0, b"hello").await.unwrap();
///     disk.rename("data", "data.old").await.unwrap();
///     assert_eq!(disk.list().unwrap(), vec!["data.old".to_string()]);
///     // Bad input is an error value, never a panic.
///     let err = disk.open("no/such").await.unwrap_err();
///     assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
///     assert_eq!(f.read_at(3, 10).await.unwrap_err().kind(), std::io::ErrorKind::UnexpectedEof);
/// });
/// assert!(sim.run_seed(0).outcome.class.is_pass());
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Disk {
    epoch: u32,
    node: u32,
    incarnation: u32,
}

/// An open file. Clones share one open file description: closing one closes them all.
///
/// Reads see every completed write; only [`File::sync`] makes them durable.
#[derive(Clone)]
pub struct File {
    disk: Disk,
    open: u32,
    ino: u32,
    /// The name it was opened under (for messages).
    path: Rc<str>,
}

impl fmt::Debug for Disk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Disk(node {}, incarnation {})",
            self.node, self.incarnation
        )
    }
}

impl fmt::Debug for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "File({:?} on node {})", self.path, self.disk.node)
    }
}

/// Waits `ns` of virtual time.
async fn wait(ns: u64) {
    if ns > 0 {
        crate::time::sleep(Duration::from_nanos(ns)).await;
    }
}

/// A completed operation as the history records it: which, on which file, where, how much,
/// and whether it succeeded (`at` is the offset, or a path's digest for directory calls).
struct Recorded {
    op: DiskOp,
    file: u32,
    at: u64,
    len: u64,
    ok: bool,
}

/// Records a completed operation.
fn record_op(w: &mut DiskView<'_>, node: u32, done: Recorded, detail: impl FnOnce() -> String) {
    let Recorded {
        op,
        file,
        at,
        len,
        ok,
    } = done;
    w.record(
        Some(node),
        EventKind::Disk {
            op: op.code(),
            file,
            at,
            len,
            ok,
        },
        || format!("{} {}", op.name(), detail()),
    );
}

fn result_text<T>(r: &Result<T, DiskError>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(e) => format!("-> {e}"),
    }
}

impl Disk {
    /// The disk of the running task's node.
    ///
    /// # Panics
    /// Outside a task of a simulation.
    pub fn current() -> Disk {
        // Which task is running is the executor's to say, not the disks': the whole world.
        crate::world::with(|w| {
            let node = w
                .current_node()
                .expect("Disk::current must be called from a task in a simulation");
            Disk {
                epoch: w.epoch(),
                node,
                incarnation: w.nodes().incarnation(node),
            }
        })
    }

    /// Fails if this handle is from another run or an earlier incarnation of its node.
    fn check(&self, w: &DiskView<'_>) -> Result<(), DiskError> {
        let live = w.epoch == self.epoch
            && w.nodes
                .get(self.node)
                .is_some_and(|n| n.up && n.incarnation == self.incarnation);
        if live {
            Ok(())
        } else {
            Err(DiskError::Stale(format!("disk of node {}", self.node)))
        }
    }

    /// Validates, records a failure, or draws the latency: the start of every name operation.
    fn begin(&self, op: DiskOp, paths: &[&str], kind: Latency) -> Result<u64, DiskError> {
        with_disks(|w| {
            let checked = self
                .check(w)
                .and_then(|()| paths.iter().try_for_each(|p| check_path(p)));
            match checked {
                Ok(()) => Ok(draw_latency(w, self.node, op, kind)),
                Err(e) => {
                    let digest = stable_hash(paths);
                    record_op(
                        w,
                        self.node,
                        Recorded {
                            op,
                            file: 0,
                            at: digest,
                            len: 0,
                            ok: false,
                        },
                        || format!("{paths:?} -> {e}"),
                    );
                    Err(e)
                }
            }
        })
    }

    fn file(&self, open: u32, ino: u32, path: &str) -> File {
        File {
            disk: *self,
            open,
            ino,
            path: path.into(),
        }
    }

    /// Creates a new empty file. Fails with `AlreadyExists` if the name is taken. The new
    /// name is durable only after [`Disk::sync_dir`].
    pub async fn create(&self, path: &str) -> io::Result<File> {
        wait(self.begin(DiskOp::Create, &[path], Latency::Write)?).await;
        let r = with_disks(|w| {
            let r = self.check(w).and_then(|()| {
                let store = w.disks.store(self.node);
                if store.names.contains_key(path) {
                    return Err(DiskError::AlreadyExists(path.to_string()));
                }
                let ino = store.create(path);
                Ok((store.open(ino), ino))
            });
            let ino = r.as_ref().map_or(0, |&(_, ino)| ino);
            record_op(
                w,
                self.node,
                Recorded {
                    op: DiskOp::Create,
                    file: ino,
                    at: stable_hash(path),
                    len: 0,
                    ok: r.is_ok(),
                },
                || format!("{path} {}", result_text(&r)),
            );
            r
        });
        let (open, ino) = r?;
        Ok(self.file(open, ino, path))
    }

    /// Opens an existing file. Fails with `NotFound` if there is none.
    pub async fn open(&self, path: &str) -> io::Result<File> {
        wait(self.begin(DiskOp::Open, &[path], Latency::Read)?).await;
        let r = with_disks(|w| {
            let r = self.check(w).and_then(|()| {
                let store = w.disks.store(self.node);
                let ino = *store
                    .names
                    .get(path)
                    .ok_or_else(|| DiskError::NotFound(path.to_string()))?;
                Ok((store.open(ino), ino))
            });
            let ino = r.as_ref().map_or(0, |&(_, ino)| ino);
            record_op(
                w,
                self.node,
                Recorded {
                    op: DiskOp::Open,
                    file: ino,
                    at: stable_hash(path),
                    len: 0,
                    ok: r.is_ok(),
                },
                || format!("{path} {}", result_text(&r)),
            );
            r
        });
        let (open, ino) = r?;
        Ok(self.file(open, ino, path))
    }

    /// Opens the file, creating it empty if there is none.
    pub async fn open_or_create(&self, path: &str) -> io::Result<File> {
        match self.open(path).await {
            Err(e) if e.kind() == io::ErrorKind::NotFound => self.create(path).await,
            other => other,
        }
    }

    /// Removes a file. Its open handles fail from now on. Durable after [`Disk::sync_dir`].
    pub async fn remove(&self, path: &str) -> io::Result<()> {
        wait(self.begin(DiskOp::Remove, &[path], Latency::Write)?).await;
        with_disks(|w| {
            let r = self.check(w).and_then(|()| {
                let store = w.disks.store(self.node);
                if !store.names.contains_key(path) {
                    return Err(DiskError::NotFound(path.to_string()));
                }
                Ok(store.remove(path))
            });
            let ino = *r.as_ref().unwrap_or(&0);
            record_op(
                w,
                self.node,
                Recorded {
                    op: DiskOp::Remove,
                    file: ino,
                    at: stable_hash(path),
                    len: 0,
                    ok: r.is_ok(),
                },
                || format!("{path} {}", result_text(&r)),
            );
            r.map(|_| ()).map_err(Into::into)
        })
    }

    /// Renames `from` to `to`, atomically replacing any file called `to` (whose handles then
    /// fail). Handles open on `from` follow the file. Durable after [`Disk::sync_dir`]: until
    /// then a crash may undo it.
    pub async fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        wait(self.begin(DiskOp::Rename, &[from, to], Latency::Write)?).await;
        with_disks(|w| {
            let r = self.check(w).and_then(|()| {
                let store = w.disks.store(self.node);
                if !store.names.contains_key(from) {
                    return Err(DiskError::NotFound(from.to_string()));
                }
                Ok(if from == to {
                    store.names[from]
                } else {
                    store.rename(from, to)
                })
            });
            let ino = *r.as_ref().unwrap_or(&0);
            let digest = stable_hash(&(from, to));
            record_op(
                w,
                self.node,
                Recorded {
                    op: DiskOp::Rename,
                    file: ino,
                    at: digest,
                    len: 0,
                    ok: r.is_ok(),
                },
                || format!("{from} -> {to} {}", result_text(&r)),
            );
            r.map(|_| ()).map_err(Into::into)
        })
    }

    /// Makes every create, remove and rename completed so far durable.
    pub async fn sync_dir(&self) -> io::Result<()> {
        wait(self.begin(DiskOp::SyncDir, &[], Latency::Sync)?).await;
        with_disks(|w| {
            let r = self.check(w).map(|()| w.disks.store(self.node).sync_dir());
            let n = *r.as_ref().unwrap_or(&0) as u64;
            record_op(
                w,
                self.node,
                Recorded {
                    op: DiskOp::SyncDir,
                    file: 0,
                    at: 0,
                    len: n,
                    ok: r.is_ok(),
                },
                || match &r {
                    Ok(n) => format!("{n} directory changes durable"),
                    Err(e) => format!("-> {e}"),
                },
            );
            r.map(|_| ()).map_err(Into::into)
        })
    }

    /// The names of every file, sorted. Immediate (a directory read from the cache).
    pub fn list(&self) -> io::Result<Vec<String>> {
        with_disks(|w| {
            let r = self.check(w).map(|()| {
                w.disks
                    .store(self.node)
                    .names
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
            });
            let n = r.as_ref().map_or(0, Vec::len) as u64;
            record_op(
                w,
                self.node,
                Recorded {
                    op: DiskOp::List,
                    file: 0,
                    at: 0,
                    len: n,
                    ok: r.is_ok(),
                },
                || result_text(&r),
            );
            r.map_err(Into::into)
        })
    }
}

impl File {
    /// The name this handle was opened under.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Checks the handle; `Ok` is the inode's current name.
    fn check(&self, w: &mut DiskView<'_>) -> Result<String, DiskError> {
        self.disk
            .check(w)
            .map_err(|_| DiskError::Stale(self.path.to_string()))?;
        let store = w.disks.store(self.disk.node);
        let open = store
            .opens
            .get(self.open as usize)
            .expect("invariant: a live handle's open description exists");
        debug_assert_eq!(open.ino, self.ino, "handle and description disagree");
        if open.closed {
            return Err(DiskError::Closed(self.path.to_string()));
        }
        match store.files.get(&self.ino) {
            Some(inode) if inode.linked => Ok(inode.name.clone()),
            _ => Err(DiskError::Removed(self.path.to_string())),
        }
    }

    /// Validates, records a failure, or draws the latency: the start of every file operation.
    fn begin(&self, op: DiskOp, kind: Latency) -> Result<u64, DiskError> {
        with_disks(|w| match self.check(w) {
            Ok(_) => Ok(draw_latency(w, self.disk.node, op, kind)),
            Err(e) => {
                record_op(
                    w,
                    self.disk.node,
                    Recorded {
                        op,
                        file: self.ino,
                        at: 0,
                        len: 0,
                        ok: false,
                    },
                    || format!("{} -> {e}", self.path),
                );
                Err(e)
            }
        })
    }

    fn chance(w: &mut DiskView<'_>, label: &'static str, per_mille: u32) -> bool {
        w.source.chance(label, u64::from(per_mille), PER_MILLE)
    }

    /// Reads exactly `len` bytes at `offset`. Fails with `UnexpectedEof` if that goes past the
    /// end.
    pub async fn read_at(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        wait(self.begin(DiskOp::Read, Latency::Read)?).await;
        with_disks(|w| {
            let node = self.disk.node;
            let r = self.check(w).and_then(|name| {
                let file_len = w.disks.store(node).files[&self.ino].current.len() as u64;
                let end = offset.checked_add(len).filter(|&e| e <= file_len);
                let Some(end) = end else {
                    return Err(DiskError::PastEnd {
                        path: name,
                        offset,
                        len,
                        file_len,
                    });
                };
                let p = w.disks.profile;
                if Self::chance(w, DISK_READ_ERROR.name(), p.read_error_per_mille) {
                    record_fault(w, node, DiskFault::ReadError, self.ino, offset, len, || {
                        format!("{name} @{offset}+{len}")
                    });
                    return Err(DiskError::ReadFault(name));
                }
                if len > 0
                    && w.disks.atlas.allows_damage()
                    && Self::chance(w, DISK_CORRUPT.name(), p.corrupt_per_mille)
                {
                    self.rot(w, &name, offset, end);
                }
                let image = &w.disks.store(node).files[&self.ino].current;
                Ok(image[offset as usize..end as usize].to_vec())
            });
            record_op(
                w,
                node,
                Recorded {
                    op: DiskOp::Read,
                    file: self.ino,
                    at: offset,
                    len,
                    ok: r.is_ok(),
                },
                || format!("{} @{offset}+{len} {}", self.path, result_text(&r)),
            );
            r.map_err(Into::into)
        })
    }

    /// Latent corruption: one byte of one sector in `offset..end` changes on the medium (and
    /// in the cache), if the fault atlas allows damage there.
    fn rot(&self, w: &mut DiskView<'_>, name: &str, offset: u64, end: u64) {
        let node = self.disk.node;
        let sector = w.disks.sector_bytes();
        let (first, last) = (offset / sector, (end - 1) / sector);
        let s = first + w.source.below(DISK_CORRUPT_SECTOR.name(), last - first + 1);
        let lo = (s * sector).max(offset);
        let hi = ((s + 1) * sector).min(end);
        let at = lo + w.source.below(DISK_CORRUPT_BYTE.name(), hi - lo);
        let flip = 1 + w.source.below(DISK_CORRUPT_BITS.name(), 255) as u8;
        if !w.disks.atlas.grant(node, name, s * sector, sector) {
            record_fault(w, node, DiskFault::Spared, self.ino, at, 1, || {
                format!("{name}: corruption @{at} (another copy is damaged there)")
            });
            return;
        }
        let inode = w
            .disks
            .store(node)
            .files
            .get_mut(&self.ino)
            .expect("checked above");
        for image in [&mut inode.current, &mut inode.durable] {
            if let Some(b) = image.get_mut(at as usize) {
                *b ^= flip;
            }
        }
        record_fault(w, node, DiskFault::Corrupt, self.ino, at, 1, || {
            format!("{name} @{at}: byte xor {flip:#04x}")
        });
    }

    /// Writes `data` at `offset` (past the end leaves a hole of zeros). Durable after
    /// [`File::sync`].
    pub async fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        wait(self.begin(DiskOp::Write, Latency::Write)?).await;
        self.write(DiskOp::Write, Some(offset), data).map(|_| ())
    }

    /// Appends `data` at the end; returns the offset it was written at. Durable after
    /// [`File::sync`].
    pub async fn append(&self, data: &[u8]) -> io::Result<u64> {
        wait(self.begin(DiskOp::Append, Latency::Write)?).await;
        self.write(DiskOp::Append, None, data)
    }

    fn write(&self, op: DiskOp, offset: Option<u64>, data: &[u8]) -> io::Result<u64> {
        with_disks(|w| {
            let node = self.disk.node;
            let len = data.len() as u64;
            let r = self.check(w).and_then(|name| {
                let current_len = w.disks.store(node).files[&self.ino].current.len() as u64;
                let offset = offset.unwrap_or(current_len);
                let p = w.disks.profile;
                if Self::chance(w, DISK_WRITE_ERROR.name(), p.write_error_per_mille) {
                    record_fault(
                        w,
                        node,
                        DiskFault::WriteError,
                        self.ino,
                        offset,
                        len,
                        || format!("{name} @{offset}+{len}"),
                    );
                    return Err(DiskError::WriteFault(name));
                }
                let damage = w.disks.atlas.allows_damage() && len > 0;
                if damage && Self::chance(w, DISK_MISDIRECT.name(), p.misdirect_per_mille) {
                    if self.misdirect(w, &name, offset, data, current_len) {
                        return Ok(offset);
                    }
                } else if damage && Self::chance(w, DISK_LOST_WRITE.name(), p.lost_write_per_mille)
                {
                    let lost = w.disks.atlas.grant(node, &name, offset, len);
                    let fault = if lost {
                        DiskFault::LostWrite
                    } else {
                        DiskFault::Spared
                    };
                    record_fault(w, node, fault, self.ino, offset, len, || {
                        format!("{name} @{offset}+{len}")
                    });
                    if lost {
                        self.apply(w, offset, data, true);
                        return Ok(offset);
                    }
                }
                self.apply(w, offset, data, false);
                Ok(offset)
            });
            let at = *r.as_ref().unwrap_or(&offset.unwrap_or(0));
            record_op(
                w,
                node,
                Recorded {
                    op,
                    file: self.ino,
                    at,
                    len,
                    ok: r.is_ok(),
                },
                || format!("{} @{at}+{len} {}", self.path, result_text(&r)),
            );
            r.map_err(Into::into)
        })
    }

    /// Applies a write to the cache and queues it for the medium.
    fn apply(&self, w: &mut DiskView<'_>, offset: u64, data: &[u8], lost: bool) {
        let inode = w
            .disks
            .store(self.disk.node)
            .files
            .get_mut(&self.ino)
            .expect("checked by the caller");
        write_into(&mut inode.current, offset, data);
        inode.pending.push(Pending::Write {
            offset,
            data: data.to_vec(),
            lost,
        });
    }

    /// A misdirected write: `data` lands on other sectors inside the file, the place meant
    /// keeps its old bytes (the length grows as if it had been written). False if there is no
    /// other place for it, or the fault atlas spares either place.
    fn misdirect(
        &self,
        w: &mut DiskView<'_>,
        name: &str,
        offset: u64,
        data: &[u8],
        len: u64,
    ) -> bool {
        let node = self.disk.node;
        let sector = w.disks.sector_bytes();
        let n = data.len() as u64;
        // The data keeps its place within a sector and lands inside the file as it is: a
        // head that writes the wrong sector does not make the file longer.
        let shift = offset % sector;
        let Some(room) = len.checked_sub(shift + n) else {
            return false;
        };
        let starts = room / sector + 1;
        let meant = offset / sector;
        let others = starts - u64::from(meant < starts);
        if others == 0 {
            return false;
        }
        let mut s = w.source.below(DISK_MISDIRECT_SECTOR.name(), others);
        if s >= meant {
            s += 1;
        }
        let target = s * sector + shift;
        debug_assert!(
            target + n <= len && target != offset,
            "misdirect to {target}+{n} in {len}"
        );
        let granted = w.disks.atlas.grant(node, name, offset, n)
            && w.disks.atlas.grant(node, name, target, n);
        let fault = if granted {
            DiskFault::Misdirect
        } else {
            DiskFault::Spared
        };
        record_fault(w, node, fault, self.ino, target, n, || {
            format!("{name}: write meant for @{offset}+{n} lands @{target}")
        });
        if !granted {
            return false;
        }
        self.apply(w, target, data, false);
        let end = offset + n;
        let inode = w
            .disks
            .store(node)
            .files
            .get_mut(&self.ino)
            .expect("checked by the caller");
        if (inode.current.len() as u64) < end {
            inode.current.resize(end as usize, 0);
            inode.pending.push(Pending::SetLen(end));
        }
        true
    }

    /// Truncates or extends (with zeros) to `len` bytes. Durable after [`File::sync`].
    pub async fn set_len(&self, len: u64) -> io::Result<()> {
        wait(self.begin(DiskOp::SetLen, Latency::Write)?).await;
        with_disks(|w| {
            let node = self.disk.node;
            let r = self.check(w).and_then(|name| {
                let p = w.disks.profile;
                if Self::chance(w, DISK_WRITE_ERROR.name(), p.write_error_per_mille) {
                    record_fault(w, node, DiskFault::WriteError, self.ino, len, 0, || {
                        format!("{name} set-len {len}")
                    });
                    return Err(DiskError::WriteFault(name));
                }
                let inode = w
                    .disks
                    .store(node)
                    .files
                    .get_mut(&self.ino)
                    .expect("checked");
                inode.current.resize(len as usize, 0);
                inode.pending.push(Pending::SetLen(len));
                Ok(())
            });
            record_op(
                w,
                node,
                Recorded {
                    op: DiskOp::SetLen,
                    file: self.ino,
                    at: len,
                    len: 0,
                    ok: r.is_ok(),
                },
                || format!("{} to {len} {}", self.path, result_text(&r)),
            );
            r.map_err(Into::into)
        })
    }

    /// Makes every completed write and length change of this file durable (fsync).
    pub async fn sync(&self) -> io::Result<()> {
        wait(self.begin(DiskOp::Sync, Latency::Sync)?).await;
        with_disks(|w| {
            let node = self.disk.node;
            let r = self.check(w).map(|_| {
                let inode = w
                    .disks
                    .store(node)
                    .files
                    .get_mut(&self.ino)
                    .expect("checked");
                let n = inode.pending.len() as u64;
                inode.sync();
                n
            });
            let n = *r.as_ref().unwrap_or(&0);
            record_op(
                w,
                node,
                Recorded {
                    op: DiskOp::Sync,
                    file: self.ino,
                    at: 0,
                    len: n,
                    ok: r.is_ok(),
                },
                || match &r {
                    Ok(n) => format!("{}: {n} changes durable", self.path),
                    Err(e) => format!("{} -> {e}", self.path),
                },
            );
            r.map(|_| ()).map_err(Into::into)
        })
    }

    /// The file's length, as reads see it. Immediate (metadata from the cache).
    pub fn len(&self) -> io::Result<u64> {
        with_disks(|w| {
            let node = self.disk.node;
            let r = self
                .check(w)
                .map(|_| w.disks.store(node).files[&self.ino].current.len() as u64);
            let n = *r.as_ref().unwrap_or(&0);
            record_op(
                w,
                node,
                Recorded {
                    op: DiskOp::Len,
                    file: self.ino,
                    at: 0,
                    len: n,
                    ok: r.is_ok(),
                },
                || format!("{} {}", self.path, result_text(&r)),
            );
            r.map_err(Into::into)
        })
    }

    /// True if the file is empty.
    pub fn is_empty(&self) -> io::Result<bool> {
        self.len().map(|n| n == 0)
    }

    /// Reads the whole file.
    pub async fn read_all(&self) -> io::Result<Vec<u8>> {
        let len = self.len()?;
        self.read_at(0, len).await
    }

    /// Closes the file: every clone of this handle fails from now on. Unsynced writes stay
    /// unsynced (closing is not syncing). Immediate.
    pub fn close(&self) -> io::Result<()> {
        with_disks(|w| {
            let node = self.disk.node;
            let r = self.check(w).map(|_| {
                w.disks.store(node).opens[self.open as usize].closed = true;
            });
            record_op(
                w,
                node,
                Recorded {
                    op: DiskOp::Close,
                    file: self.ino,
                    at: 0,
                    len: 0,
                    ok: r.is_ok(),
                },
                || format!("{} {}", self.path, result_text(&r)),
            );
            r.map_err(Into::into)
        })
    }
}
