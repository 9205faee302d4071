//! The fault profile: which network faults a run may inject, and how often.
//!
//! Every rate is an integer ratio over [`PER_MILLE`] (never a float), and every duration an
//! upper bound in milliseconds from which each fault's own duration is drawn. A rate of zero
//! means the fault never fires *and costs no draw*: a run without faults spends no input on
//! them.
//!
//! A run's profile comes from its [`Faults`] setting: off (the default), a fixed profile, or
//! **swarm** — drawn from the run's input before anything else happens, each fault switched on
//! or off and given a rate from a range that includes zero, so one sweep covers runs with a
//! single fault, runs with every fault, and runs with none (TigerBeetle's `options_swarm`).

use crate::choice::Choices;
use crate::choice::Source;
use crate::fault_kinds::{FaultKind, FaultKinds};

use super::labels::{
    NET_SWARM_BLACKHOLE, NET_SWARM_BLACKHOLE_ON, NET_SWARM_CLOG, NET_SWARM_CLOG_ON, NET_SWARM_DUP,
    NET_SWARM_DUP_ON, NET_SWARM_LOSS, NET_SWARM_LOSS_ON, NET_SWARM_PARTITION,
    NET_SWARM_PARTITION_ON, NET_SWARM_REFUSE, NET_SWARM_REFUSE_ON, NET_SWARM_REORDER,
    NET_SWARM_REORDER_ON, NET_SWARM_RESET, NET_SWARM_RESET_ON, NET_SWARM_SILENT,
    NET_SWARM_SILENT_ON, NET_SWARM_STALL, NET_SWARM_STALL_ON,
};
/// Probability vocabulary is the input's (see [`crate::choice::PER_MILLE`]); this path stays.
pub use crate::choice::PER_MILLE;

/// Which faults the network injects, and at what rates.
///
/// Datagram faults (loss, duplication, reordering) apply to [`crate::net::Socket`] traffic
/// only; stream faults (stall, reset, silent peer, refused or black-holed connects) only to
/// [`crate::net::Stream`]s, which never lose, duplicate or reorder bytes. Partitions and clogs
/// apply to both. Only traffic between two *faultable* endpoints on different nodes is ever
/// faulted (see the module docs of [`crate::net`]).
///
/// ```
/// use sim_core::net::FaultProfile;
///
/// let quiet = FaultProfile::default();
/// assert_eq!(quiet, FaultProfile::NONE);
/// let lossy = FaultProfile { loss_per_mille: 100, ..FaultProfile::NONE };
/// assert_eq!(lossy.duplicate_per_mille, 0, "faults are switched independently");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FaultProfile {
    /// Datagrams lost, per thousand sent.
    pub loss_per_mille: u32,
    /// Datagrams delivered twice, per thousand sent.
    pub duplicate_per_mille: u32,
    /// Datagrams delayed past later ones on their link, per thousand sent.
    pub reorder_per_mille: u32,
    /// Largest extra delay of a reordered datagram.
    pub reorder_ms_max: u64,
    /// Per thousand sends between two nodes: the pair is partitioned (symmetric or one way,
    /// drawn), and healed after a drawn duration.
    pub partition_per_mille: u32,
    /// Longest drawn partition.
    pub partition_ms_max: u64,
    /// Per thousand sends: the sending direction is clogged (traffic held, not lost) and
    /// released after a drawn duration.
    pub clog_per_mille: u32,
    /// Longest drawn clog.
    pub clog_ms_max: u64,
    /// Per thousand stream segments: the direction stalls (bytes held, none lost).
    pub stall_per_mille: u32,
    /// Longest drawn stall.
    pub stall_ms_max: u64,
    /// Per thousand stream segments: the connection is reset (both ends see
    /// `ConnectionReset`).
    pub reset_per_mille: u32,
    /// Per thousand connections: the peer falls silent after a drawn number of segments (no
    /// data, no FIN, no RST ever arrives again in either direction).
    pub silent_per_mille: u32,
    /// Per thousand connects to a listener: refused anyway (as by a full backlog).
    pub refuse_per_mille: u32,
    /// Per thousand connects: the SYN is black-holed and the connect never completes.
    pub blackhole_per_mille: u32,
}

impl FaultProfile {
    /// True when this profile may fault a datagram: loss, duplication, reordering, or drawn
    /// partitions or clogs. A send under any other profile draws no fault.
    pub(crate) fn faults_datagrams(&self) -> bool {
        self.loss_per_mille > 0
            || self.duplicate_per_mille > 0
            || self.reorder_per_mille > 0
            || self.partition_per_mille > 0
            || self.clog_per_mille > 0
    }

    /// No faults at all.
    pub const NONE: FaultProfile = FaultProfile {
        loss_per_mille: 0,
        duplicate_per_mille: 0,
        reorder_per_mille: 0,
        reorder_ms_max: 0,
        partition_per_mille: 0,
        partition_ms_max: 0,
        clog_per_mille: 0,
        clog_ms_max: 0,
        stall_per_mille: 0,
        stall_ms_max: 0,
        reset_per_mille: 0,
        silent_per_mille: 0,
        refuse_per_mille: 0,
        blackhole_per_mille: 0,
    };

    /// Every fault on, at the upper end of the swarm ranges (for tests that want all of them).
    pub const EVERYTHING: FaultProfile = FaultProfile {
        loss_per_mille: SWARM.loss_per_mille,
        duplicate_per_mille: SWARM.duplicate_per_mille,
        reorder_per_mille: SWARM.reorder_per_mille,
        reorder_ms_max: SWARM.reorder_ms_max,
        partition_per_mille: SWARM.partition_per_mille,
        partition_ms_max: SWARM.partition_ms_max,
        clog_per_mille: SWARM.clog_per_mille,
        clog_ms_max: SWARM.clog_ms_max,
        stall_per_mille: SWARM.stall_per_mille,
        stall_ms_max: SWARM.stall_ms_max,
        reset_per_mille: SWARM.reset_per_mille,
        silent_per_mille: SWARM.silent_per_mille,
        refuse_per_mille: SWARM.refuse_per_mille,
        blackhole_per_mille: SWARM.blackhole_per_mille,
    };

    /// True if no fault can fire.
    pub fn is_none(&self) -> bool {
        *self == FaultProfile::NONE
    }

    /// Draws a swarm profile: each fault on with probability one half, its rate then drawn in
    /// `1..=` the swarm maximum. Labels are per fault, so adding a fault does not reshuffle
    /// the draws of the others.
    pub fn swarm(source: &mut dyn Source) -> FaultProfile {
        FaultProfile::swarm_over(source, FaultKinds::NET)
    }

    /// Draws a swarm profile over `kinds` only: a kind left out is off and costs no draw, so
    /// [`FaultProfile::swarm`] (every network kind) draws exactly what it always did.
    pub fn swarm_over(source: &mut dyn Source, kinds: FaultKinds) -> FaultProfile {
        let mut rate = |kind: FaultKind, on: &'static str, label: &'static str, max: u32| {
            if kinds.contains(kind) && source.chance(on, 1, 2) {
                source.range_inclusive(label, 1, u64::from(max)) as u32
            } else {
                0
            }
        };
        let s = &SWARM;
        use FaultKind as K;
        FaultProfile {
            loss_per_mille: rate(
                K::Loss,
                NET_SWARM_LOSS_ON.name(),
                NET_SWARM_LOSS.name(),
                s.loss_per_mille,
            ),
            duplicate_per_mille: rate(
                K::Duplicate,
                NET_SWARM_DUP_ON.name(),
                NET_SWARM_DUP.name(),
                s.duplicate_per_mille,
            ),
            reorder_per_mille: rate(
                K::Reorder,
                NET_SWARM_REORDER_ON.name(),
                NET_SWARM_REORDER.name(),
                s.reorder_per_mille,
            ),
            reorder_ms_max: s.reorder_ms_max,
            partition_per_mille: rate(
                K::Partition,
                NET_SWARM_PARTITION_ON.name(),
                NET_SWARM_PARTITION.name(),
                s.partition_per_mille,
            ),
            partition_ms_max: s.partition_ms_max,
            clog_per_mille: rate(
                K::Clog,
                NET_SWARM_CLOG_ON.name(),
                NET_SWARM_CLOG.name(),
                s.clog_per_mille,
            ),
            clog_ms_max: s.clog_ms_max,
            stall_per_mille: rate(
                K::Stall,
                NET_SWARM_STALL_ON.name(),
                NET_SWARM_STALL.name(),
                s.stall_per_mille,
            ),
            stall_ms_max: s.stall_ms_max,
            reset_per_mille: rate(
                K::Reset,
                NET_SWARM_RESET_ON.name(),
                NET_SWARM_RESET.name(),
                s.reset_per_mille,
            ),
            silent_per_mille: rate(
                K::Silent,
                NET_SWARM_SILENT_ON.name(),
                NET_SWARM_SILENT.name(),
                s.silent_per_mille,
            ),
            refuse_per_mille: rate(
                K::Refuse,
                NET_SWARM_REFUSE_ON.name(),
                NET_SWARM_REFUSE.name(),
                s.refuse_per_mille,
            ),
            blackhole_per_mille: rate(
                K::Blackhole,
                NET_SWARM_BLACKHOLE_ON.name(),
                NET_SWARM_BLACKHOLE.name(),
                s.blackhole_per_mille,
            ),
        }
    }

    /// This profile with every fault not in `kinds` switched off.
    ///
    /// ```
    /// use sim_core::faults::{FaultKind, FaultKinds};
    /// use sim_core::net::FaultProfile;
    ///
    /// let p = FaultProfile::EVERYTHING.only(FaultKinds::NONE.with(FaultKind::Clog));
    /// assert!(p.clog_per_mille > 0 && p.loss_per_mille == 0 && p.partition_per_mille == 0);
    /// ```
    pub fn only(mut self, kinds: FaultKinds) -> FaultProfile {
        use FaultKind as K;
        let keep = |kind: K, rate: &mut u32| {
            if !kinds.contains(kind) {
                *rate = 0;
            }
        };
        keep(K::Loss, &mut self.loss_per_mille);
        keep(K::Duplicate, &mut self.duplicate_per_mille);
        keep(K::Reorder, &mut self.reorder_per_mille);
        keep(K::Partition, &mut self.partition_per_mille);
        keep(K::Clog, &mut self.clog_per_mille);
        keep(K::Stall, &mut self.stall_per_mille);
        keep(K::Reset, &mut self.reset_per_mille);
        keep(K::Silent, &mut self.silent_per_mille);
        keep(K::Refuse, &mut self.refuse_per_mille);
        keep(K::Blackhole, &mut self.blackhole_per_mille);
        self
    }
}

/// The upper ends of the swarm ranges. Chosen so that a run of a few hundred messages sees a
/// handful of each fault when it is on: loss and reordering up to 30 %, duplication 20 %,
/// partitions and clogs up to 2 % of sends (each lasting up to 2 s / 1 s, longer than the
/// example systems' timeouts), stream resets 1 % of segments.
const SWARM: FaultProfile = FaultProfile {
    loss_per_mille: 300,
    duplicate_per_mille: 200,
    reorder_per_mille: 300,
    reorder_ms_max: 50,
    partition_per_mille: 20,
    partition_ms_max: 2_000,
    clog_per_mille: 20,
    clog_ms_max: 1_000,
    stall_per_mille: 50,
    stall_ms_max: 500,
    reset_per_mille: 10,
    silent_per_mille: 50,
    refuse_per_mille: 100,
    blackhole_per_mille: 100,
};

/// Where a run's [`FaultProfile`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Faults {
    /// No faults (the default: the network only adds latency).
    #[default]
    Off,
    /// This profile, in every run.
    Fixed(FaultProfile),
    /// Drawn from the run's input at its start ([`FaultProfile::swarm`]).
    Swarm,
    /// Drawn from the run's input at its start, over these kinds only
    /// ([`FaultProfile::swarm_over`]); network kinds only are used.
    SwarmOver(FaultKinds),
}

impl Faults {
    /// Parses a command-line name: `off`, `swarm` (drawn per run) or `all` (every fault at the
    /// swarm maxima).
    pub fn parse(name: &str) -> Option<Faults> {
        match name {
            "off" => Some(Faults::Off),
            "swarm" => Some(Faults::Swarm),
            "all" => Some(Faults::Fixed(FaultProfile::EVERYTHING)),
            _ => None,
        }
    }

    /// The profile of one run; draws only for [`Faults::Swarm`].
    pub(crate) fn profile(self, source: &mut dyn Source) -> FaultProfile {
        match self {
            Faults::Off => FaultProfile::NONE,
            Faults::Fixed(p) => p,
            Faults::Swarm => FaultProfile::swarm(source),
            Faults::SwarmOver(kinds) => FaultProfile::swarm_over(source, kinds),
        }
    }
}
