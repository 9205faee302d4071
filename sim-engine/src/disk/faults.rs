//! The disk fault profile: which disk faults a run may inject, and how often.
//!
//! Like the network's [`crate::net::FaultProfile`], every rate is an integer ratio over
//! [`crate::choice::PER_MILLE`], and a rate of zero never fires *and costs no draw*: a run
//! without disk faults spends no input on them. A run's profile comes from its
//! [`DiskFaults`] setting: off (the default), a fixed profile, or swarm (drawn at the start of
//! the run, each fault switched on or off and given a rate from a range that includes zero).
//!
//! Crash semantics (unsynced writes lost, kept or torn; unsynced directory changes lost) are
//! not faults: they are what a crash *is*, and apply whatever the profile says.

use super::labels::{
    DISK_SWARM_CORRUPT, DISK_SWARM_CORRUPT_ON, DISK_SWARM_LOST_WRITE, DISK_SWARM_LOST_WRITE_ON,
    DISK_SWARM_MISDIRECT, DISK_SWARM_MISDIRECT_ON, DISK_SWARM_READ_ERROR, DISK_SWARM_READ_ERROR_ON,
    DISK_SWARM_SLOW, DISK_SWARM_SLOW_ON, DISK_SWARM_WRITE_ERROR, DISK_SWARM_WRITE_ERROR_ON,
};
use crate::choice::{Choices, Source};

/// Which disk faults a run injects, and at what rates (per thousand operations of the kind
/// each names).
///
/// The three *damaging* faults — latent corruption, misdirected writes and lost writes —
/// also need the fault atlas's leave ([`crate::disk::AtlasConfig`]): by default no copy of
/// any data may be damaged, so they never fire until a scenario says how much redundancy its
/// system keeps.
///
/// ```
/// use sim_core::disk::DiskFaultProfile;
///
/// assert!(DiskFaultProfile::default().is_none());
/// let flaky = DiskFaultProfile { read_error_per_mille: 50, ..DiskFaultProfile::NONE };
/// assert_eq!(flaky.write_error_per_mille, 0, "faults are switched independently");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DiskFaultProfile {
    /// Per thousand reads: the read fails with an I/O error (transient; nothing changes).
    pub read_error_per_mille: u32,
    /// Per thousand writes, appends and length changes: the call fails with an I/O error and
    /// nothing is written (transient).
    pub write_error_per_mille: u32,
    /// Per thousand reads: one sector in the range read is found rotted (a byte of it changed
    /// on the medium, for good). The read succeeds and returns the rotted bytes: only a
    /// checksum the system keeps can tell.
    pub corrupt_per_mille: u32,
    /// Per thousand writes and appends: the data lands at another sector of the same file
    /// (clobbering what was there); the place meant keeps its old bytes (zeros past the old
    /// end). The call succeeds.
    pub misdirect_per_mille: u32,
    /// Per thousand writes and appends: the write is acknowledged and readable until the node
    /// crashes, but never reaches the medium, even after a successful `sync`.
    pub lost_write_per_mille: u32,
    /// Per thousand operations: the operation takes up to [`Self::slow_ms_max`] longer.
    pub slow_per_mille: u32,
    /// Longest extra delay of a slow operation.
    pub slow_ms_max: u64,
}

impl DiskFaultProfile {
    /// No faults at all.
    pub const NONE: DiskFaultProfile = DiskFaultProfile {
        read_error_per_mille: 0,
        write_error_per_mille: 0,
        corrupt_per_mille: 0,
        misdirect_per_mille: 0,
        lost_write_per_mille: 0,
        slow_per_mille: 0,
        slow_ms_max: 0,
    };

    /// Every fault on, at the upper end of the swarm ranges.
    pub const EVERYTHING: DiskFaultProfile = SWARM;

    /// True if no fault can fire.
    pub fn is_none(&self) -> bool {
        *self == DiskFaultProfile::NONE
    }

    /// Draws a swarm profile: each fault on with probability one half, its rate then drawn in
    /// `1..=` the swarm maximum. Labels are per fault, so adding one does not reshuffle the
    /// draws of the others.
    pub fn swarm(source: &mut dyn Source) -> DiskFaultProfile {
        fn rate(source: &mut dyn Source, on: &'static str, label: &'static str, max: u32) -> u32 {
            if source.chance(on, 1, 2) {
                source.range_inclusive(label, 1, u64::from(max)) as u32
            } else {
                0
            }
        }
        let s = &SWARM;
        DiskFaultProfile {
            read_error_per_mille: rate(
                source,
                DISK_SWARM_READ_ERROR_ON.name(),
                DISK_SWARM_READ_ERROR.name(),
                s.read_error_per_mille,
            ),
            write_error_per_mille: rate(
                source,
                DISK_SWARM_WRITE_ERROR_ON.name(),
                DISK_SWARM_WRITE_ERROR.name(),
                s.write_error_per_mille,
            ),
            corrupt_per_mille: rate(
                source,
                DISK_SWARM_CORRUPT_ON.name(),
                DISK_SWARM_CORRUPT.name(),
                s.corrupt_per_mille,
            ),
            misdirect_per_mille: rate(
                source,
                DISK_SWARM_MISDIRECT_ON.name(),
                DISK_SWARM_MISDIRECT.name(),
                s.misdirect_per_mille,
            ),
            lost_write_per_mille: rate(
                source,
                DISK_SWARM_LOST_WRITE_ON.name(),
                DISK_SWARM_LOST_WRITE.name(),
                s.lost_write_per_mille,
            ),
            slow_per_mille: rate(
                source,
                DISK_SWARM_SLOW_ON.name(),
                DISK_SWARM_SLOW.name(),
                s.slow_per_mille,
            ),
            slow_ms_max: s.slow_ms_max,
        }
    }
}

/// The upper ends of the swarm ranges. Chosen so that a run of a few hundred disk operations
/// sees a handful of each fault when it is on: I/O errors up to 5 %, latent corruption,
/// misdirected and lost writes up to 2 % (real disks are far better; a simulation that wants
/// to see recovery code run cannot wait for real rates), slow operations up to 5 %, each up to
/// 200 ms late (longer than a typical request timeout).
const SWARM: DiskFaultProfile = DiskFaultProfile {
    read_error_per_mille: 50,
    write_error_per_mille: 50,
    corrupt_per_mille: 20,
    misdirect_per_mille: 20,
    lost_write_per_mille: 20,
    slow_per_mille: 50,
    slow_ms_max: 200,
};

/// Where a run's [`DiskFaultProfile`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DiskFaults {
    /// No faults (the default: the disk only adds latency, and crashes lose unsynced state).
    #[default]
    Off,
    /// This profile, in every run.
    Fixed(DiskFaultProfile),
    /// Drawn from the run's input at its start ([`DiskFaultProfile::swarm`]).
    Swarm,
}

impl DiskFaults {
    /// Parses a command-line name: `off`, `swarm` (drawn per run) or `all` (every fault at
    /// the swarm maxima).
    pub fn parse(name: &str) -> Option<DiskFaults> {
        match name {
            "off" => Some(DiskFaults::Off),
            "swarm" => Some(DiskFaults::Swarm),
            "all" => Some(DiskFaults::Fixed(DiskFaultProfile::EVERYTHING)),
            _ => None,
        }
    }

    /// The profile of one run; draws only for [`DiskFaults::Swarm`].
    pub(crate) fn profile(self, source: &mut dyn Source) -> DiskFaultProfile {
        match self {
            DiskFaults::Off => DiskFaultProfile::NONE,
            DiskFaults::Fixed(p) => p,
            DiskFaults::Swarm => DiskFaultProfile::swarm(source),
        }
    }
}
