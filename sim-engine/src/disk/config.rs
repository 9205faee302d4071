//! Disk settings of a run: geometry, latencies, the fault setting and the fault atlas.

use super::faults::DiskFaults;

/// Disk settings, part of [`crate::sim::Config`] (field `disk`).
///
/// Every latency is a range in microseconds from which each operation's latency is drawn
/// (the lower end being the default, zero-input choice).
///
/// ```
/// use sim_core::disk::{DiskConfig, DiskFaults};
///
/// let config = DiskConfig::default();
/// assert_eq!(config.sector_bytes, 512);
/// assert_eq!(config.faults, DiskFaults::Off);
/// assert_eq!(config.atlas.damaged_copies_max, 0, "no data is damaged unless a scenario says so");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskConfig {
    /// The unit a disk writes atomically: a torn write is cut at a multiple of it, and
    /// misdirected writes and rot strike whole sectors. 512 (the classic sector) by default.
    pub sector_bytes: u64,
    /// Smallest latency of a read (also of `len`-free metadata reads: open).
    pub read_us_min: u64,
    /// Largest latency of a read. Default 20..=200 µs, an SSD's range.
    pub read_us_max: u64,
    /// Smallest latency of a write, append, length change, create, remove or rename (they
    /// reach the page cache or the directory, not yet the medium).
    pub write_us_min: u64,
    /// Largest latency of those. Default 10..=100 µs.
    pub write_us_max: u64,
    /// Smallest latency of a file or directory sync (they wait for the medium).
    pub sync_us_min: u64,
    /// Largest latency of a sync. Default 500..=5000 µs.
    pub sync_us_max: u64,
    /// Which faults the disk injects.
    pub faults: DiskFaults,
    /// Where damaging faults may strike.
    pub atlas: AtlasConfig,
}

impl Default for DiskConfig {
    fn default() -> Self {
        DiskConfig {
            sector_bytes: 512,
            read_us_min: 20,
            read_us_max: 200,
            write_us_min: 10,
            write_us_max: 100,
            sync_us_min: 500,
            sync_us_max: 5_000,
            faults: DiskFaults::Off,
            atlas: AtlasConfig::default(),
        }
    }
}

/// The fault atlas's settings: how many copies of the same data a run may damage.
///
/// Data is located by its *copy key* and *region*: the region is the file offset divided by
/// [`AtlasConfig::region_bytes`]; the copy key is the file's path, or — for a path listed in
/// one of [`AtlasConfig::mirrors`] — the first path of its mirror set. The same key on several
/// nodes (a replicated log called `log` on every replica), or the paths of one mirror set on
/// one node (`wal.a` and `wal.b`), are copies of the same data.
///
/// A damaging fault (latent corruption, misdirected write, lost write) strikes a region of a
/// copy only if that copy was already damaged there, or fewer than
/// [`AtlasConfig::damaged_copies_max`] copies of that region have been damaged in this run.
///
/// ```
/// use sim_core::disk::AtlasConfig;
///
/// // A single-node store that writes every record to two files: one may be damaged.
/// let atlas = AtlasConfig {
///     damaged_copies_max: 1,
///     mirrors: vec![vec!["wal.a".into(), "wal.b".into()]],
///     ..AtlasConfig::default()
/// };
/// assert_eq!(atlas.region_bytes, 4096);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtlasConfig {
    /// How many copies of any region may be damaged in one run. 0 (the default) means the
    /// damaging faults never fire: a system that keeps one copy of its data cannot survive
    /// their damage, and a correct system must never be failed by an impossible fault. Set it
    /// to the number of copies your system can lose (e.g. 1 for three replicas that repair
    /// from each other, or for a mirrored log).
    pub damaged_copies_max: u32,
    /// The size of a region: damage is accounted per region. Default 4096.
    pub region_bytes: u64,
    /// Sets of paths on one node that hold copies of the same data (mirrors, and the
    /// temporary names they are written under before a rename).
    pub mirrors: Vec<Vec<String>>,
}

impl Default for AtlasConfig {
    fn default() -> Self {
        AtlasConfig {
            damaged_copies_max: 0,
            region_bytes: 4096,
            mirrors: Vec::new(),
        }
    }
}
