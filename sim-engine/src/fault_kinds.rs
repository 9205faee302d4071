//! Fault kinds: the names of every fault the simulator can inject, and sets of them.
//!
//! Pure vocabulary, importing nothing from the crate: the network, clocks, nemesis and disk
//! use these names, and [`crate::faults::FaultSelection`] (which knows each part's profiles)
//! builds on them. `crate::faults` re-exports everything here.
//!
//! ```
//! use sim_core::fault_kinds::{FaultKind, FaultKinds};
//!
//! let kinds: FaultKinds = "partition,clock".parse().unwrap();
//! assert!(kinds.contains(FaultKind::Partition) && kinds.contains(FaultKind::Jump));
//! assert_eq!(FaultKind::LateTimer.to_string(), "late-timer");
//! ```

use std::fmt;
use std::str::FromStr;

/// One kind of fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    /// Datagrams lost.
    Loss,
    /// Datagrams delivered twice.
    Duplicate,
    /// Datagrams delayed past later ones.
    Reorder,
    /// Links cut (drop), symmetric or one way.
    Partition,
    /// Links clogged (hold, then release in order).
    Clog,
    /// Stream directions stalled.
    Stall,
    /// Stream connections reset.
    Reset,
    /// Stream peers falling silent.
    Silent,
    /// Connects refused.
    Refuse,
    /// Connects black-holed.
    Blackhole,
    /// Node wall clocks offset from true time and drifting.
    Skew,
    /// Node wall clocks jumping forwards or backwards.
    Jump,
    /// Timers firing late.
    LateTimer,
    /// Nodes crashed, and restarted later.
    Crash,
    /// Nodes asked to stop (a signal they may handle), killed after a grace period,
    /// restarted later.
    Stop,
    /// Nodes paused (frozen while time goes on), resumed later.
    Pause,
    /// Disk faults: read and write errors, latent corruption, misdirected and lost writes,
    /// slow operations ([`crate::disk::DiskFaultProfile`]).
    Disk,
}

impl FaultKind {
    /// Every kind, in the order of their bits (and of [`FaultKinds`]' text).
    pub const ALL: [FaultKind; 17] = [
        FaultKind::Loss,
        FaultKind::Duplicate,
        FaultKind::Reorder,
        FaultKind::Partition,
        FaultKind::Clog,
        FaultKind::Stall,
        FaultKind::Reset,
        FaultKind::Silent,
        FaultKind::Refuse,
        FaultKind::Blackhole,
        FaultKind::Skew,
        FaultKind::Jump,
        FaultKind::LateTimer,
        FaultKind::Crash,
        FaultKind::Stop,
        FaultKind::Pause,
        FaultKind::Disk,
    ];

    /// The kind's name on command lines.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Loss => "loss",
            FaultKind::Duplicate => "dup",
            FaultKind::Reorder => "reorder",
            FaultKind::Partition => "partition",
            FaultKind::Clog => "clog",
            FaultKind::Stall => "stall",
            FaultKind::Reset => "reset",
            FaultKind::Silent => "silent",
            FaultKind::Refuse => "refuse",
            FaultKind::Blackhole => "blackhole",
            FaultKind::Skew => "skew",
            FaultKind::Jump => "jump",
            FaultKind::LateTimer => "late-timer",
            FaultKind::Crash => "crash",
            FaultKind::Stop => "stop",
            FaultKind::Pause => "pause",
            FaultKind::Disk => "disk",
        }
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`FaultKind`]s.
///
/// ```
/// use sim_core::faults::{FaultKind, FaultKinds};
///
/// let set = FaultKinds::NET.with(FaultKind::Crash);
/// assert!(set.contains(FaultKind::Loss) && set.contains(FaultKind::Crash));
/// assert!(!set.contains(FaultKind::Pause));
/// assert_eq!(FaultKinds::LIFECYCLE.to_string(), "crash,stop,pause");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FaultKinds(u32);

impl FaultKinds {
    /// No kind.
    pub const NONE: FaultKinds = FaultKinds(0);
    /// Every network kind (`net`).
    pub const NET: FaultKinds = FaultKinds((1 << 10) - 1);
    /// Every clock kind (`clock`): skew, jump, late-timer.
    pub const CLOCK: FaultKinds = FaultKinds(0b111 << 10);
    /// Every lifecycle kind (`lifecycle`): crash, stop, pause.
    pub const LIFECYCLE: FaultKinds = FaultKinds(0b111 << 13);
    /// Disk faults (`disk`).
    pub const DISK: FaultKinds = FaultKinds(1 << 16);
    /// Every kind.
    pub const ALL: FaultKinds = FaultKinds((1 << 17) - 1);

    /// True if `kind` is in the set.
    pub fn contains(self, kind: FaultKind) -> bool {
        self.0 & kind.bit() != 0
    }
    /// The set with `kind` added.
    pub fn with(self, kind: FaultKind) -> FaultKinds {
        FaultKinds(self.0 | kind.bit())
    }
    /// The kinds in both sets.
    pub fn intersect(self, other: FaultKinds) -> FaultKinds {
        FaultKinds(self.0 & other.0)
    }
    /// The kinds in either set.
    pub fn union(self, other: FaultKinds) -> FaultKinds {
        FaultKinds(self.0 | other.0)
    }
    /// True if no kind is in the set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The kinds in the set, in [`FaultKind::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = FaultKind> {
        FaultKind::ALL
            .into_iter()
            .filter(move |k| self.contains(*k))
    }
}

impl fmt::Display for FaultKinds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(FaultKind::name).collect();
        f.write_str(&names.join(","))
    }
}

/// Group names a selection may use for several kinds at once.
const GROUPS: [(&str, FaultKinds); 3] = [
    ("net", FaultKinds::NET),
    ("clock", FaultKinds::CLOCK),
    ("lifecycle", FaultKinds::LIFECYCLE),
];

impl FromStr for FaultKinds {
    type Err = FaultSelectionError;

    /// Parses a comma-separated list of kind and group names.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut set = FaultKinds::NONE;
        for word in text.split(',').map(str::trim) {
            if word.is_empty() {
                return Err(FaultSelectionError::EmptyKind {
                    text: text.to_string(),
                });
            }
            if let Some((_, group)) = GROUPS.iter().find(|(name, _)| *name == word) {
                set = set.union(*group);
                continue;
            }
            let kind = FaultKind::ALL
                .into_iter()
                .find(|k| k.name() == word)
                .ok_or_else(|| FaultSelectionError::UnknownKind {
                    kind: word.to_string(),
                    valid: valid_names(),
                })?;
            set = set.with(kind);
        }
        Ok(set)
    }
}

/// Every name a list may use, for error messages and help text.
pub fn valid_names() -> String {
    let kinds: Vec<&str> = FaultKind::ALL.iter().map(|k| k.name()).collect();
    let groups: Vec<&str> = GROUPS.iter().map(|(n, _)| *n).collect();
    format!("kinds {}; groups {}", kinds.join(", "), groups.join(", "))
}

/// A fault selection that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FaultSelectionError {
    /// A name that is neither a kind nor a group.
    #[error("unknown fault kind {kind:?}; use off, swarm, all, a list of kinds (partition,clog,crash) or swarm:<list>, where the list names {valid}")]
    UnknownKind {
        /// The name given.
        kind: String,
        /// Every valid name.
        valid: String,
    },
    /// An empty name in a list (`partition,,clog`, a trailing comma, or `swarm:` alone).
    #[error("empty fault kind in {text:?}; give a comma-separated list without empty entries, like partition,clog,crash")]
    EmptyKind {
        /// The text given.
        text: String,
    },
}
