//! The simulated disk: per-node durable storage with fsync semantics, crashes that lose what
//! was not synced, and faults a real medium can produce.
//!
//! Every node has one flat directory of named files. [`Disk::current`] is the running node's
//! disk; [`Disk::create`], [`Disk::open`], [`Disk::remove`], [`Disk::rename`] and
//! [`Disk::sync_dir`] work on names, and a [`File`] reads and writes at offsets, appends,
//! changes its length and syncs. Every operation is async and takes a latency drawn from the
//! input ([`DiskConfig`]), in virtual time.
//!
//! ```
//! use sim_core::disk::Disk;
//! use sim_core::node::{crash, restart};
//! use sim_core::sim::{Config, Sim};
//!
//! let mut sim = Sim::new(Config::default());
//! sim.node("db", |ctx| async move {
//!     let disk = Disk::current();
//!     if ctx.incarnation() == 0 {
//!         let log = disk.create("log").await.unwrap();
//!         log.append(b"synced").await.unwrap();
//!         log.sync().await.unwrap();
//!         disk.sync_dir().await.unwrap(); // the name "log" survives a crash
//!         log.append(b" and not").await.unwrap();
//!     } else {
//!         // After a crash: the synced bytes are there; the rest may be lost or torn.
//!         let log = disk.open("log").await.unwrap();
//!         assert!(log.read_all().await.unwrap().starts_with(b"synced"));
//!     }
//! });
//! sim.client("nemesis", |_| async {
//!     sim_core::time::sleep(std::time::Duration::from_millis(50)).await;
//!     crash("db").unwrap();
//!     restart("db").unwrap();
//! });
//! assert!(sim.run_seed(1).outcome.class.is_pass());
//! ```
//!
//! # Fault model (this module's contract)
//!
//! **What the disk promises.**
//! * Reads see every completed write, in order (a page cache): `current` bytes.
//! * After [`File::sync`] returns `Ok`, every write and length change of that file completed
//!   before the sync survives any crash — unless a *damaging fault* (below) struck it.
//! * After [`Disk::sync_dir`] returns `Ok`, every create, remove and rename completed before
//!   it survives any crash. A file's data sync does not make its name durable, nor the other
//!   way round (POSIX: fsync the file *and* its directory).
//! * A node's files survive its crash and restart; nothing else of it does (handles opened
//!   before a crash fail with [`DiskError::Stale`]). A node crash is a machine failure (power
//!   loss); a node that exits by itself after a stop request loses nothing it wrote (the
//!   operating system writes its cache back).
//! * A sector ([`DiskConfig::sector_bytes`]) is written atomically: no write tears inside one.
//! * Mistakes get a clear error value, never a panic: a closed or removed file, a read past
//!   the end, an invalid path ([`DiskError`], inside a `std::io::Error` with a real
//!   `ErrorKind`).
//!
//! **What a crash does** (always, whatever the fault profile): each write since the file's
//! last sync is, drawn per write, *kept*, *lost*, or *torn* — its first whole sectors kept,
//! the rest lost (only writes that cross a sector boundary can tear). Writes are resolved
//! independently, so a later one may survive an earlier one (write-back caches do not keep
//! order); a gap left by a lost write reads as zeros. Each unsynced length change is kept or
//! lost. Directory changes since the last directory sync survive as a drawn prefix (file
//! systems journal metadata in order): a rename, create or remove without a directory sync may
//! be lost, and with it everything after it.
//!
//! **What the disk may do** (faults, each off unless the run's [`DiskFaultProfile`] gives it a
//! rate; each is a trace event):
//! * *read error*, *write error*: the call fails with `ErrorKind::Other` (as EIO); nothing
//!   changes; a retry may succeed.
//! * *slow operation*: up to [`DiskFaultProfile::slow_ms_max`] extra latency.
//! * *latent sector corruption*: a read finds a sector of its range rotted (a byte changed on
//!   the medium, for good) and returns it without error.
//! * *misdirected write*: the data lands on another sector of the same file; the place meant
//!   keeps its old bytes.
//! * *lost write*: acknowledged, readable until a crash, never on the medium.
//!
//! **Faults only where a correct system can recover.** Read and write errors and slow
//! operations are transient and reported (or only late): a correct system retries or fails the
//! request. The three *damaging* faults silently destroy data that was acknowledged as durable,
//! which no system can survive without another copy. They go through the fault atlas
//! ([`AtlasConfig`]): a region of data may be damaged on at most
//! [`AtlasConfig::damaged_copies_max`] of its copies per run — copies being the same path on
//! different nodes, or the paths of a mirror set on one node — and that maximum is 0 unless a
//! scenario raises it, so a system that keeps one copy never sees them. Crash losses are not
//! limited by the atlas: they only touch what was never synced.
//!
//! Not modelled: a full disk (ENOSPC), fsync errors that drop dirty pages, hard links,
//! subdirectories, and reads of a removed file through a handle still open (POSIX allows them;
//! here they fail with [`DiskError::Removed`]).
//!
//! **What reaches the history.** Every operation, when it completes (with its file, offset,
//! length and whether it succeeded), every injected fault, and every crash decision. A run
//! that never touches a disk draws nothing and records nothing here.

mod atlas;
mod config;
mod error;
mod faults;
mod handle;
mod labels;
mod records;
mod retry;
mod store;

pub use config::{AtlasConfig, DiskConfig};
pub use error::DiskError;
pub use faults::{DiskFaultProfile, DiskFaults};
pub use handle::{Disk, File};
pub use records::RecordFile;
pub use retry::retry_faults;

use crate::choice::Choices;
use crate::trace::EventKind;
use crate::world::DiskView;
use atlas::Atlas;
use labels::{DISK_LATENCY, DISK_SLOW, DISK_SLOW_MS};
use store::NodeStore;

/// Disk operations, as recorded in the history ([`EventKind::Disk`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DiskOp {
    /// [`Disk::create`].
    Create = 1,
    /// [`Disk::open`].
    Open = 2,
    /// [`Disk::remove`].
    Remove = 3,
    /// [`Disk::rename`].
    Rename = 4,
    /// [`Disk::sync_dir`].
    SyncDir = 5,
    /// [`File::read_at`].
    Read = 6,
    /// [`File::write_at`].
    Write = 7,
    /// [`File::append`].
    Append = 8,
    /// [`File::set_len`].
    SetLen = 9,
    /// [`File::sync`].
    Sync = 10,
    /// [`File::len`].
    Len = 11,
    /// [`File::close`].
    Close = 12,
    /// [`Disk::list`].
    List = 13,
}

impl DiskOp {
    /// Its code in [`EventKind::Disk`].
    pub fn code(self) -> u32 {
        self as u32
    }

    /// Its name in traces.
    pub fn name(self) -> &'static str {
        match self {
            DiskOp::Create => "create",
            DiskOp::Open => "open",
            DiskOp::Remove => "remove",
            DiskOp::Rename => "rename",
            DiskOp::SyncDir => "sync-dir",
            DiskOp::Read => "read",
            DiskOp::Write => "write",
            DiskOp::Append => "append",
            DiskOp::SetLen => "set-len",
            DiskOp::Sync => "sync",
            DiskOp::Len => "len",
            DiskOp::Close => "close",
            DiskOp::List => "list",
        }
    }
}

/// Disk faults and crash decisions, as recorded in the history ([`EventKind::DiskFault`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DiskFault {
    /// A read failed (EIO).
    ReadError = 1,
    /// A write failed (EIO); nothing written.
    WriteError = 2,
    /// A sector was found rotted.
    Corrupt = 3,
    /// A write landed elsewhere.
    Misdirect = 4,
    /// A write will never reach the medium.
    LostWrite = 5,
    /// An operation was slow.
    Slow = 6,
    /// Crash: an unsynced change was lost.
    CrashLost = 7,
    /// Crash: an unsynced write was torn at a sector boundary.
    CrashTorn = 8,
    /// Crash: an unsynced change survived.
    CrashKept = 9,
    /// Crash: unsynced directory changes were lost (`at` = kept, `len` = lost).
    CrashDirLost = 10,
    /// A damaging fault was drawn but the fault atlas spared this copy.
    Spared = 11,
}

impl DiskFault {
    /// Its code in [`EventKind::DiskFault`].
    pub fn code(self) -> u32 {
        self as u32
    }

    /// Its name in traces.
    pub fn name(self) -> &'static str {
        match self {
            DiskFault::ReadError => "read error",
            DiskFault::WriteError => "write error",
            DiskFault::Corrupt => "latent corruption",
            DiskFault::Misdirect => "misdirected write",
            DiskFault::LostWrite => "lost write",
            DiskFault::Slow => "slow",
            DiskFault::CrashLost => "crash: lost",
            DiskFault::CrashTorn => "crash: torn",
            DiskFault::CrashKept => "crash: kept",
            DiskFault::CrashDirLost => "crash: directory changes lost",
            DiskFault::Spared => "spared by the fault atlas",
        }
    }
}

/// Every node's disk, the run's disk fault profile and its fault atlas.
pub(crate) struct Disks {
    config: DiskConfig,
    profile: DiskFaultProfile,
    atlas: Atlas,
    /// Per node id; a node that never touched its disk has none.
    stores: Vec<Option<NodeStore>>,
}

impl Disks {
    pub fn new(config: DiskConfig) -> Self {
        Disks {
            atlas: Atlas::new(config.atlas.clone()),
            config,
            profile: DiskFaultProfile::NONE,
            stores: Vec::new(),
        }
    }

    fn store(&mut self, node: u32) -> &mut NodeStore {
        let i = node as usize;
        if self.stores.len() <= i {
            self.stores.resize_with(i + 1, || None);
        }
        self.stores[i].get_or_insert_with(NodeStore::default)
    }

    fn sector_bytes(&self) -> u64 {
        self.config.sector_bytes.max(1)
    }
}

/// Called once when a run starts, after the network's draws: draws the disk fault profile
/// (only for [`DiskFaults::Swarm`]).
pub(crate) fn start_run(w: &mut DiskView<'_>) {
    let faults = w.disks.config.faults;
    w.disks.profile = faults.profile(w.source);
    let c = &mut w.disks.config;
    c.read_us_max = c.read_us_max.max(c.read_us_min);
    c.write_us_max = c.write_us_max.max(c.write_us_min);
    c.sync_us_max = c.sync_us_max.max(c.sync_us_min);
}

/// The disk profile this run drew. Must be called from within a simulation.
pub fn profile() -> DiskFaultProfile {
    crate::world::with_disks(|w| w.disks.profile)
}

/// `node` goes down (called by the node lifecycle after its crash or exit event). A crash
/// (a machine failure) resolves its unsynced state by drawing (see the module docs), and
/// draws nothing for a node with nothing unsynced. A clean exit (`exited`) loses nothing: the
/// operating system writes the process's cached writes back.
pub(crate) fn take_down(w: &mut DiskView<'_>, node: u32, exited: bool) {
    let sector_bytes = w.disks.sector_bytes();
    let Some(Some(mut store)) = w.disks.stores.get_mut(node as usize).map(Option::take) else {
        return;
    };
    if exited {
        store.flush();
    }
    let decisions = store.crash(w.source, sector_bytes);
    w.disks.stores[node as usize] = Some(store);
    for d in decisions {
        record_fault(w, node, d.fault, d.ino, d.at, d.len, || {
            if d.fault == DiskFault::CrashDirLost {
                format!("{} of {} directory changes", d.len, d.len + d.at)
            } else {
                format!("{} @{}+{}", d.name, d.at, d.len)
            }
        });
    }
}

fn record_fault(
    w: &mut DiskView<'_>,
    node: u32,
    fault: DiskFault,
    file: u32,
    at: u64,
    len: u64,
    detail: impl FnOnce() -> String,
) {
    w.record(
        Some(node),
        EventKind::DiskFault {
            fault: fault.code(),
            file,
            at,
            len,
        },
        || format!("{}: {}", fault.name(), detail()),
    );
}

/// Which latency range an operation draws from.
#[derive(Clone, Copy)]
pub(crate) enum Latency {
    Read,
    Write,
    Sync,
}

/// Draws an operation's latency in nanoseconds, and whether it is slow (a fault).
pub(crate) fn draw_latency(w: &mut DiskView<'_>, node: u32, op: DiskOp, kind: Latency) -> u64 {
    let c = &w.disks.config;
    let (lo, hi) = match kind {
        Latency::Read => (c.read_us_min, c.read_us_max),
        Latency::Write => (c.write_us_min, c.write_us_max),
        Latency::Sync => (c.sync_us_min, c.sync_us_max),
    };
    let mut ns = w.source.range_inclusive(DISK_LATENCY.name(), lo, hi) * 1_000;
    let p = w.disks.profile;
    if w.source.chance(
        DISK_SLOW.name(),
        u64::from(p.slow_per_mille),
        crate::choice::PER_MILLE,
    ) {
        let extra_ms = w
            .source
            .range_inclusive(DISK_SLOW_MS.name(), 1, p.slow_ms_max.max(1));
        ns += extra_ms * 1_000_000;
        record_fault(w, node, DiskFault::Slow, 0, extra_ms, 0, || {
            format!("{} takes {extra_ms} ms longer", op.name())
        });
    }
    ns
}
