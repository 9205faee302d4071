//! Per-node wall clocks and timer faults: what each node believes the time is.
//!
//! Global virtual time ([`super::now`], [`super::Instant`]) is the one truth: it orders every
//! event, and timers and the network run on it. Besides it, each node reads its own **wall
//! clock** with [`super::system_now`], a [`SystemTime`] that may be wrong the ways real
//! machines' clocks are:
//!
//! * **skew**: an offset from true time (either way) and a drift (parts per million, either
//!   way), drawn per node per run;
//! * **jumps**: a few forward or backward steps at drawn instants, as NTP or an operator
//!   sets a clock;
//! * **late timers**: a timer fires after its deadline, late by a drawn amount (a loaded
//!   machine, a coarse timer wheel).
//!
//! Fault model (what this module promises and what it may do): a node's monotonic clock
//! ([`super::now`]) is never wrong, and a timer never fires *early*. The wall clock may be
//! off by the offset, run fast or slow by the drift, and jump; two nodes may therefore
//! disagree about which of two events came first. Every reading is recorded in the history
//! ([`crate::trace::EventKind::ClockRead`]), with each node's skew at the start of the run
//! and every jump, so a trace shows what each node believed.
//!
//! All of it is off by default ([`ClockFaults::Off`]): a run then draws nothing for clocks,
//! every wall clock reads true time, and timers fire on time. Rates are integer ratios
//! ([`crate::choice::PER_MILLE`], parts per million); no decision uses a float.

use super::labels::{
    TIME_CLOCK_DRIFT_PPM, TIME_CLOCK_JUMPS, TIME_CLOCK_JUMP_AT_MS, TIME_CLOCK_JUMP_MS,
    TIME_CLOCK_OFFSET_MS, TIME_FAULT_LATE, TIME_FAULT_LATE_MS, TIME_SWARM_DRIFT_PPM,
    TIME_SWARM_JUMPS, TIME_SWARM_JUMP_MS, TIME_SWARM_JUMP_ON, TIME_SWARM_LATE, TIME_SWARM_LATE_ON,
    TIME_SWARM_OFFSET_MS, TIME_SWARM_SKEW_ON,
};
use crate::choice::PER_MILLE;
use crate::choice::{Choices, Source};
use crate::fault_kinds::{FaultKind, FaultKinds};
use crate::trace::EventKind;
use crate::world::World;

/// The wall-clock reading of a run's start: 2026-01-01T00:00:00Z, in nanoseconds since the
/// Unix epoch. Fixed, so readings are the same on every machine.
pub const START_UNIX_NS: u64 = 1_767_225_600 * 1_000_000_000;

/// A wall-clock reading: nanoseconds since the Unix epoch, as a node believed it.
///
/// Unlike [`super::Instant`], two readings on different nodes (or one node across a jump)
/// need not be ordered as the events they were taken at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SystemTime(u64);

impl SystemTime {
    /// The reading `nanos` after the Unix epoch.
    pub const fn from_unix_nanos(nanos: u64) -> Self {
        SystemTime(nanos)
    }
    /// Nanoseconds since the Unix epoch.
    pub const fn as_unix_nanos(self) -> u64 {
        self.0
    }
    /// Milliseconds since the Unix epoch (what many protocols put in a timestamp).
    pub const fn as_unix_millis(self) -> u64 {
        self.0 / 1_000_000
    }
    /// As a `std::time::SystemTime`, for code written against std's type.
    pub fn to_std(self) -> std::time::SystemTime {
        std::time::UNIX_EPOCH + std::time::Duration::from_nanos(self.0)
    }
}

impl std::fmt::Display for SystemTime {
    /// Seconds since the run's start on this clock's reckoning (`+12.000345s`, or negative):
    /// short enough to compare readings in a trace at a glance.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rel = i128::from(self.0) - i128::from(START_UNIX_NS);
        let sign = if rel < 0 { "-" } else { "+" };
        let abs = rel.unsigned_abs();
        write!(
            f,
            "{sign}{}.{:06}s",
            abs / 1_000_000_000,
            (abs / 1_000) % 1_000_000
        )
    }
}

/// How wrong the nodes' clocks may be, and how late timers may fire.
///
/// ```
/// use sim_core::time::ClockProfile;
///
/// assert!(ClockProfile::NONE.is_none());
/// let skewed = ClockProfile { offset_ms_max: 500, ..ClockProfile::NONE };
/// assert!(!skewed.is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ClockProfile {
    /// Largest offset of a node's wall clock from true time: each node's offset is drawn in
    /// `-max..=max` milliseconds.
    pub offset_ms_max: u64,
    /// Largest drift: each node's wall clock runs `1 + drift / 10^6` times as fast as true
    /// time, its drift drawn in `-max..=max` parts per million (below 10^6).
    pub drift_ppm_max: u32,
    /// Most jumps per node: each node's count is drawn in `0..=max`.
    pub jumps_max: u32,
    /// Largest jump, either way, in milliseconds (each jump is non-zero).
    pub jump_ms_max: u64,
    /// Jumps happen at instants drawn within this much virtual time of the start.
    pub jump_within_ms: u64,
    /// Per thousand timers: the timer fires late.
    pub late_timer_per_mille: u32,
    /// Longest lateness of a late timer, in milliseconds.
    pub late_timer_ms_max: u64,
}

impl ClockProfile {
    /// Every clock true, every timer on time.
    pub const NONE: ClockProfile = ClockProfile {
        offset_ms_max: 0,
        drift_ppm_max: 0,
        jumps_max: 0,
        jump_ms_max: 0,
        jump_within_ms: 0,
        late_timer_per_mille: 0,
        late_timer_ms_max: 0,
    };

    /// Every clock fault on, at the upper end of the swarm ranges.
    pub const EVERYTHING: ClockProfile = SWARM;

    /// True if no clock fault can happen.
    pub fn is_none(&self) -> bool {
        self.offset_ms_max == 0
            && self.drift_ppm_max == 0
            && (self.jumps_max == 0 || self.jump_ms_max == 0)
            && (self.late_timer_per_mille == 0 || self.late_timer_ms_max == 0)
    }

    /// This profile with every fault not in `kinds` switched off (`skew` covers offset and
    /// drift).
    pub fn only(mut self, kinds: FaultKinds) -> ClockProfile {
        if !kinds.contains(FaultKind::Skew) {
            self.offset_ms_max = 0;
            self.drift_ppm_max = 0;
        }
        if !kinds.contains(FaultKind::Jump) {
            self.jumps_max = 0;
        }
        if !kinds.contains(FaultKind::LateTimer) {
            self.late_timer_per_mille = 0;
        }
        self
    }

    /// Draws a profile over `kinds`: each clock kind in the set on with probability one half,
    /// its bound then drawn from `1..=` the swarm maximum. A kind left out costs no draw.
    pub fn swarm_over(source: &mut dyn Source, kinds: FaultKinds) -> ClockProfile {
        let s = &SWARM;
        let mut p = ClockProfile::NONE;
        if kinds.contains(FaultKind::Skew) && source.chance(TIME_SWARM_SKEW_ON.name(), 1, 2) {
            p.offset_ms_max =
                source.range_inclusive(TIME_SWARM_OFFSET_MS.name(), 1, s.offset_ms_max);
            p.drift_ppm_max =
                source.range_inclusive(TIME_SWARM_DRIFT_PPM.name(), 0, u64::from(s.drift_ppm_max))
                    as u32;
        }
        if kinds.contains(FaultKind::Jump) && source.chance(TIME_SWARM_JUMP_ON.name(), 1, 2) {
            p.jumps_max =
                source.range_inclusive(TIME_SWARM_JUMPS.name(), 1, u64::from(s.jumps_max)) as u32;
            p.jump_ms_max = source.range_inclusive(TIME_SWARM_JUMP_MS.name(), 1, s.jump_ms_max);
            p.jump_within_ms = s.jump_within_ms;
        }
        if kinds.contains(FaultKind::LateTimer) && source.chance(TIME_SWARM_LATE_ON.name(), 1, 2) {
            p.late_timer_per_mille = source.range_inclusive(
                TIME_SWARM_LATE.name(),
                1,
                u64::from(s.late_timer_per_mille),
            ) as u32;
            p.late_timer_ms_max = s.late_timer_ms_max;
        }
        p
    }
}

/// The upper ends of the swarm ranges: offsets up to a second, drift up to 0.1 %, up to three
/// jumps of up to two seconds in the first ten seconds, one timer in ten up to 50 ms late.
const SWARM: ClockProfile = ClockProfile {
    offset_ms_max: 1_000,
    drift_ppm_max: 1_000,
    jumps_max: 3,
    jump_ms_max: 2_000,
    jump_within_ms: 10_000,
    late_timer_per_mille: 100,
    late_timer_ms_max: 50,
};

/// Where a run's [`ClockProfile`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClockFaults {
    /// Every clock true, every timer on time; no draw (the default).
    #[default]
    Off,
    /// This profile, in every run.
    Fixed(ClockProfile),
    /// Drawn from the run's input at its start, over these kinds
    /// ([`ClockProfile::swarm_over`]).
    Swarm(FaultKinds),
}

impl ClockFaults {
    fn profile(self, source: &mut dyn Source) -> ClockProfile {
        match self {
            ClockFaults::Off => ClockProfile::NONE,
            ClockFaults::Fixed(p) => p,
            ClockFaults::Swarm(kinds) => ClockProfile::swarm_over(source, kinds),
        }
    }
}

/// One node's wall clock.
#[derive(Clone, Copy, Default)]
struct NodeClock {
    offset_ns: i64,
    drift_ppm: i64,
    /// The sum of the jumps taken so far.
    jumped_ns: i64,
}

/// The wall clocks of one run, and its timer faults.
pub(crate) struct NodeClocks {
    profile: ClockProfile,
    nodes: Vec<NodeClock>,
    /// Timers may fire late: checked at every timer's registration, so kept as one flag.
    late_timers: bool,
}

/// Something the clocks have due at a virtual instant.
pub(crate) struct Jump {
    node: u32,
    delta_ns: i64,
}

/// A draw in `0..=2 * max` read as a signed value with zero first: 0, +1, -1, +2, -2, ...
/// (so an exhausted input, which reads zero, means "no skew").
fn signed(source: &mut dyn Source, label: &'static str, max: u64) -> i64 {
    let u = source.range_inclusive(label, 0, max.saturating_mul(2));
    let magnitude = u.div_ceil(2) as i64;
    if u % 2 == 1 {
        magnitude
    } else {
        -magnitude
    }
}

impl NodeClocks {
    pub fn new() -> Self {
        NodeClocks {
            profile: ClockProfile::NONE,
            nodes: Vec::new(),
            late_timers: false,
        }
    }

    /// Node `node`'s wall-clock reading at true time `now_ns`, in Unix nanoseconds.
    #[inline]
    pub fn read(&self, node: u32, now_ns: u64) -> u64 {
        let true_ns = i128::from(START_UNIX_NS) + i128::from(now_ns);
        let Some(c) = self.nodes.get(node as usize) else {
            return true_ns as u64;
        };
        // Drift accrues from the run's start: integer arithmetic, truncating towards zero.
        let drift = i128::from(now_ns) * i128::from(c.drift_ppm) / 1_000_000;
        let local = true_ns + drift + i128::from(c.offset_ns) + i128::from(c.jumped_ns);
        local.clamp(0, i128::from(u64::MAX)) as u64
    }

    /// True when timers may fire late (a draw per timer).
    #[inline]
    pub fn late_timers(&self) -> bool {
        self.late_timers
    }

    /// How late a new timer fires, in nanoseconds (zero: on time). Draws only when late
    /// timers are on.
    pub fn draw_late_ns(&self, source: &mut dyn Source) -> u64 {
        let p = &self.profile;
        if source.chance(
            TIME_FAULT_LATE.name(),
            u64::from(p.late_timer_per_mille),
            PER_MILLE,
        ) {
            source.range_inclusive(TIME_FAULT_LATE_MS.name(), 1, p.late_timer_ms_max) * 1_000_000
        } else {
            0
        }
    }
}

/// Draws the run's clock profile and every node's skew and jumps (only what is on: a run with
/// clock faults off draws nothing). Called once at the start of a run, after the network's
/// draws.
pub(crate) fn start_run(w: &mut World, faults: ClockFaults) {
    let mut p = faults.profile(w.source());
    debug_assert!(
        p.drift_ppm_max < 1_000_000,
        "drift of {} ppm would stop or reverse a clock",
        p.drift_ppm_max
    );
    p.drift_ppm_max = p.drift_ppm_max.min(999_999);
    let n = w.nodes().len();
    w.clocks_mut().profile = p;
    w.clocks_mut().late_timers = p.late_timer_per_mille > 0 && p.late_timer_ms_max > 0;
    if p.offset_ms_max == 0 && p.drift_ppm_max == 0 && (p.jumps_max == 0 || p.jump_ms_max == 0) {
        // Every wall clock true: no per-node state (a node without one reads true time).
        return;
    }
    w.clocks_mut().nodes = vec![NodeClock::default(); n];
    for node in 0..n as u32 {
        let offset_ns =
            signed(w.source(), TIME_CLOCK_OFFSET_MS.name(), p.offset_ms_max) * 1_000_000;
        let drift_ppm = signed(
            w.source(),
            TIME_CLOCK_DRIFT_PPM.name(),
            u64::from(p.drift_ppm_max),
        );
        w.clocks_mut().nodes[node as usize].offset_ns = offset_ns;
        w.clocks_mut().nodes[node as usize].drift_ppm = drift_ppm;
        if offset_ns != 0 || drift_ppm != 0 {
            w.record(
                Some(node),
                EventKind::ClockSkew {
                    offset_ns,
                    drift_ppm,
                },
                || {
                    format!(
                        "wall clock {:+}ms off true time, drifting {drift_ppm:+}ppm",
                        offset_ns / 1_000_000
                    )
                },
            );
        }
        if p.jumps_max == 0 || p.jump_ms_max == 0 {
            continue;
        }
        let jumps = w
            .source()
            .range_inclusive(TIME_CLOCK_JUMPS.name(), 0, u64::from(p.jumps_max));
        for _ in 0..jumps {
            let at_ms = w.source().range_inclusive(
                TIME_CLOCK_JUMP_AT_MS.name(),
                1,
                p.jump_within_ms.max(1),
            );
            // Never zero: a draw in 0..2*max read as +1, -1, +2, -2, ...
            let u = w
                .source()
                .below(TIME_CLOCK_JUMP_MS.name(), p.jump_ms_max.saturating_mul(2));
            let magnitude = (u / 2 + 1) as i64;
            let delta_ms = if u % 2 == 0 { magnitude } else { -magnitude };
            w.clock_mut().schedule(
                at_ms * 1_000_000,
                crate::world::DueEvent::Jump(Box::new(Jump {
                    node,
                    delta_ns: delta_ms * 1_000_000,
                })),
            );
        }
    }
}

/// A scheduled jump is due: the node's wall clock steps.
pub(crate) fn jump(w: &mut World, jump: Jump) {
    let Jump { node, delta_ns } = jump;
    let c = &mut w.clocks_mut().nodes[node as usize];
    c.jumped_ns = c.jumped_ns.saturating_add(delta_ns);
    let reads = w.clocks().read(node, w.now_ns());
    w.record(Some(node), EventKind::ClockJump { delta_ns }, || {
        format!(
            "wall clock jumps {:+}ms, now reads {}",
            delta_ns / 1_000_000,
            SystemTime(reads)
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::Seeded;

    #[test]
    fn signed_draws_start_at_zero_and_alternate() {
        struct Fixed(u64);
        impl Source for Fixed {
            fn draw(&mut self, _label: &'static str, n: u64) -> u64 {
                self.0.min(n - 1)
            }
            fn fill(&mut self, _label: &'static str, dst: &mut [u8]) {
                dst.fill(0)
            }
            fn is_exhausted(&self) -> bool {
                false
            }
        }
        let got: Vec<i64> = (0..5).map(|u| signed(&mut Fixed(u), "x", 10)).collect();
        assert_eq!(got, [0, 1, -1, 2, -2]);
        let mut s = Seeded::new(3);
        for _ in 0..100 {
            assert!(signed(&mut s, "x", 7).abs() <= 7);
        }
    }

    #[test]
    fn a_clock_reads_true_time_plus_offset_drift_and_jumps() {
        let mut clocks = NodeClocks::new();
        clocks.nodes = vec![
            NodeClock::default(),
            NodeClock {
                offset_ns: -5_000_000,
                drift_ppm: 1_000,
                jumped_ns: 2_000_000,
            },
        ];
        assert_eq!(clocks.read(0, 7), START_UNIX_NS + 7);
        // 1 s of true time: +1 ms of drift, -5 ms offset, +2 ms of jumps.
        assert_eq!(
            clocks.read(1, 1_000_000_000),
            START_UNIX_NS + 1_000_000_000 + 1_000_000 - 5_000_000 + 2_000_000
        );
        assert_eq!(
            clocks.read(9, 1),
            START_UNIX_NS + 1,
            "an unknown node reads true time"
        );
    }
}
