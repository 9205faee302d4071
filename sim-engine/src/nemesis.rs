//! The lifecycle nemesis: crashes, graceful stops and pauses drawn per run, and the heal
//! phase that undoes them.
//!
//! Besides the scripted controls of [`crate::node`] (`crash`, `restart`, `stop`, `pause`,
//! `resume`), a run may carry a [`LifecycleProfile`]: every `tick_ms` of virtual time during
//! the fault phase the nemesis draws, per kind, whether to act, and on which node:
//!
//! * **crash** — the node goes down at once and restarts after a drawn downtime;
//! * **stop** — the node is asked to stop ([`crate::node::stop`]) with a drawn grace period,
//!   is crashed if it has not exited by then, and restarts after a drawn downtime;
//! * **pause** — the node is frozen for a drawn time, then resumed.
//!
//! Fault model (what the nemesis promises): it acts only on its *targets* — every node that is
//! not a client unless the scenario names them ([`crate::sim::Sim::nemesis_targets`]); a
//! client's main task is the workload and is never killed by it. At most `max_down` targets
//! are down, stopping or paused at once (counting what the scenario itself took down). Every
//! node it takes down comes back: the restart or resume is scheduled when it acts, and the
//! **heal phase** — once the workload is done and liveness is being judged (see
//! [`crate::sim`]) — stops drawing new actions and restarts or resumes at once every node the
//! nemesis still holds down. Safety invariants are checked after every event throughout.
//!
//! Everything is off by default ([`LifecycleFaults::Off`]): no tick is scheduled and nothing
//! is drawn, so a run without lifecycle faults is the run it always was. Rates are integer
//! ratios over [`crate::choice::PER_MILLE`].
//!
//! ```
//! use std::time::Duration;
//! use sim_core::nemesis::{LifecycleFaults, LifecycleProfile};
//! use sim_core::net::{Addr, Socket};
//! use sim_core::sim::{Config, Sim};
//! use sim_core::time::{sleep, timeout};
//!
//! let mut config = Config::default();
//! config.lifecycle = LifecycleFaults::Fixed(LifecycleProfile {
//!     crash_per_mille: 500,
//!     ..LifecycleProfile::EVERYTHING
//! });
//! let mut sim = Sim::new(config);
//! sim.node("server", |_| async {
//!     let sock = Socket::<u32>::bind(1).unwrap();
//!     loop {
//!         let (from, n) = sock.recv().await;
//!         sock.send(from, n);
//!     }
//! });
//! sim.client("client", |_| async {
//!     let sock = Socket::<u32>::bind(1).unwrap();
//!     for n in 0..20 {
//!         // The server may be down: retry until it answers.
//!         loop {
//!             sock.send(Addr::named("server", 1), n);
//!             if let Ok((_, m)) = timeout(Duration::from_millis(300), sock.recv()).await {
//!                 if m == n { break; }
//!             }
//!         }
//!         sleep(Duration::from_millis(100)).await;
//!     }
//! });
//! assert!(sim.run_seed(2).outcome.class.is_pass());
//! ```

use crate::choice::PER_MILLE;
use crate::choice::{Choices, Source};
use crate::fault_kinds::{FaultKind, FaultKinds};
use crate::node::{self, Down};
use crate::trace::{stable_hash, EventKind};
use crate::world::DueEvent;
pub(crate) use crate::world::LifecycleAction as Action;
use crate::world::{with, World};

use crate::choice::lanes::Label;

// The labels this part draws, each declared with its lane: a label whose text would read
// another lane does not compile.
const NEMESIS_CRASH: Label = Label::fault("nemesis.crash");
const NEMESIS_DOWN_MS: Label = Label::fault("nemesis.down_ms");
const NEMESIS_GRACE_MS: Label = Label::fault("nemesis.grace_ms");
const NEMESIS_NODE: Label = Label::fault("nemesis.node");
const NEMESIS_PAUSE: Label = Label::fault("nemesis.pause");
const NEMESIS_PAUSE_MS: Label = Label::fault("nemesis.pause_ms");
const NEMESIS_STOP: Label = Label::fault("nemesis.stop");
const NEMESIS_SWARM_CRASH: Label = Label::setup("nemesis.swarm.crash");
const NEMESIS_SWARM_CRASH_ON: Label = Label::setup("nemesis.swarm.crash.on");
const NEMESIS_SWARM_MAX_DOWN: Label = Label::setup("nemesis.swarm.max_down");
const NEMESIS_SWARM_PAUSE: Label = Label::setup("nemesis.swarm.pause");
const NEMESIS_SWARM_PAUSE_ON: Label = Label::setup("nemesis.swarm.pause.on");
const NEMESIS_SWARM_STOP: Label = Label::setup("nemesis.swarm.stop");
const NEMESIS_SWARM_STOP_ON: Label = Label::setup("nemesis.swarm.stop.on");

/// Which lifecycle faults a run draws, and how often.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct LifecycleProfile {
    /// Per thousand ticks: a target crashes.
    pub crash_per_mille: u32,
    /// Per thousand ticks: a target is asked to stop.
    pub stop_per_mille: u32,
    /// Per thousand ticks: a target is paused.
    pub pause_per_mille: u32,
    /// How often the nemesis decides, in milliseconds of virtual time.
    pub tick_ms: u64,
    /// Longest downtime of a crashed or stopped target before its restart (drawn in `1..=`).
    pub down_ms_max: u64,
    /// Longest pause (drawn in `1..=`).
    pub pause_ms_max: u64,
    /// Longest grace period of a stop (drawn in `1..=`).
    pub grace_ms_max: u64,
    /// At most this many targets down, stopping or paused at once; 0 = no limit but the
    /// number of targets. A swarm profile draws it.
    pub max_down: u32,
}

impl LifecycleProfile {
    /// No lifecycle faults.
    pub const NONE: LifecycleProfile = LifecycleProfile {
        crash_per_mille: 0,
        stop_per_mille: 0,
        pause_per_mille: 0,
        tick_ms: 0,
        down_ms_max: 0,
        pause_ms_max: 0,
        grace_ms_max: 0,
        max_down: 0,
    };

    /// Every lifecycle fault on, at the upper end of the swarm ranges.
    pub const EVERYTHING: LifecycleProfile = SWARM;

    /// True if the nemesis never acts.
    pub fn is_none(&self) -> bool {
        self.tick_ms == 0
            || (self.crash_per_mille == 0 && self.stop_per_mille == 0 && self.pause_per_mille == 0)
    }

    /// This profile with every kind not in `kinds` switched off.
    pub fn only(mut self, kinds: FaultKinds) -> LifecycleProfile {
        if !kinds.contains(FaultKind::Crash) {
            self.crash_per_mille = 0;
        }
        if !kinds.contains(FaultKind::Stop) {
            self.stop_per_mille = 0;
        }
        if !kinds.contains(FaultKind::Pause) {
            self.pause_per_mille = 0;
        }
        self
    }

    /// Draws a profile over `kinds`: each lifecycle kind in the set on with probability one
    /// half, its rate then drawn in `1..=` the swarm maximum. A kind left out costs no draw.
    /// `max_down` is drawn when the run's targets are known.
    pub fn swarm_over(source: &mut dyn Source, kinds: FaultKinds) -> LifecycleProfile {
        let s = &SWARM;
        let mut rate = |kind: FaultKind, on: &'static str, label: &'static str, max: u32| {
            if kinds.contains(kind) && source.chance(on, 1, 2) {
                source.range_inclusive(label, 1, u64::from(max)) as u32
            } else {
                0
            }
        };
        LifecycleProfile {
            crash_per_mille: rate(
                FaultKind::Crash,
                NEMESIS_SWARM_CRASH_ON.name(),
                NEMESIS_SWARM_CRASH.name(),
                s.crash_per_mille,
            ),
            stop_per_mille: rate(
                FaultKind::Stop,
                NEMESIS_SWARM_STOP_ON.name(),
                NEMESIS_SWARM_STOP.name(),
                s.stop_per_mille,
            ),
            pause_per_mille: rate(
                FaultKind::Pause,
                NEMESIS_SWARM_PAUSE_ON.name(),
                NEMESIS_SWARM_PAUSE.name(),
                s.pause_per_mille,
            ),
            ..*s
        }
    }
}

/// The upper ends of the swarm ranges: a tick every 100 ms; up to one crash, stop or pause
/// per second each; downtimes and pauses up to a second, grace periods up to half of one.
const SWARM: LifecycleProfile = LifecycleProfile {
    crash_per_mille: 100,
    stop_per_mille: 100,
    pause_per_mille: 100,
    tick_ms: 100,
    down_ms_max: 1_000,
    pause_ms_max: 1_000,
    grace_ms_max: 500,
    max_down: 0,
};

/// Where a run's [`LifecycleProfile`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LifecycleFaults {
    /// No lifecycle faults, no draw (the default).
    #[default]
    Off,
    /// This profile, in every run.
    Fixed(LifecycleProfile),
    /// Drawn from the run's input at its start, over these kinds
    /// ([`LifecycleProfile::swarm_over`]), with `max_down` drawn in `1..=` the targets.
    Swarm(FaultKinds),
}

/// The nemesis' state in one run.
pub(crate) struct Nemesis {
    profile: LifecycleProfile,
    /// Target node ids, ascending.
    targets: Vec<u32>,
    /// False once the heal phase began.
    drawing: bool,
    /// Per node: held down by the nemesis (it restarts it), and in which pause (it resumes
    /// it).
    held_down: Vec<bool>,
    held_pause: Vec<Option<u64>>,
    next_pause: u64,
}

impl Nemesis {
    pub fn new() -> Self {
        Nemesis {
            profile: LifecycleProfile::NONE,
            targets: Vec::new(),
            drawing: false,
            held_down: Vec::new(),
            held_pause: Vec::new(),
            next_pause: 0,
        }
    }
}

/// Draws the run's lifecycle profile (only when on) and schedules the first tick. `targets`
/// are node ids (already resolved); called once at the start of a run, after the clocks.
pub(crate) fn start_run(w: &mut World, faults: LifecycleFaults, targets: Vec<u32>) {
    let mut profile = match faults {
        LifecycleFaults::Off => return,
        LifecycleFaults::Fixed(p) => p,
        LifecycleFaults::Swarm(kinds) => LifecycleProfile::swarm_over(w.source(), kinds),
    };
    if profile.is_none() || targets.is_empty() {
        return;
    }
    let n = targets.len() as u64;
    if matches!(faults, LifecycleFaults::Swarm(_)) {
        // Zero (an exhausted input) = every target may be down at once.
        profile.max_down = (n - w.source().below(NEMESIS_SWARM_MAX_DOWN.name(), n)) as u32;
    }
    if profile.max_down == 0 || u64::from(profile.max_down) > n {
        profile.max_down = n as u32;
    }
    let nodes = w.nodes().len();
    let m = w.nemesis_mut();
    m.profile = profile;
    m.targets = targets;
    m.drawing = true;
    m.held_down = vec![false; nodes];
    m.held_pause = vec![None; nodes];
    let digest = stable_hash(&(5u8, &profile, &m.targets));
    let text = if w.history().is_recording() {
        let names: Vec<&str> = w
            .nemesis()
            .targets
            .iter()
            .map(|&t| w.nodes().name(t))
            .collect();
        format!(
            "nemesis on {names:?}: crash {}‰ stop {}‰ pause {}‰ per {}ms tick, at most {} down",
            profile.crash_per_mille,
            profile.stop_per_mille,
            profile.pause_per_mille,
            profile.tick_ms,
            profile.max_down
        )
    } else {
        String::new()
    };
    w.record(None, EventKind::Fault { digest }, || text);
    schedule(w, profile.tick_ms, Action::Tick);
}

fn schedule(w: &mut World, after_ms: u64, action: Action) {
    let at = w
        .now_ns()
        .saturating_add(after_ms.saturating_mul(1_000_000));
    w.clock_mut()
        .schedule(at, DueEvent::Lifecycle(Box::new(action)));
}

/// What a tick decided that must happen outside the world.
enum Act {
    Crash(u32),
    Stop(u32),
}

/// Applies lifecycle actions that came due (outside the world: a crash drops futures).
pub(crate) fn apply(actions: Vec<Action>) {
    for action in actions {
        match action {
            Action::Tick => {
                for act in with(tick) {
                    match act {
                        Act::Crash(node) => node::take_down(node, Down::Crash),
                        Act::Stop(node) => node::take_down(
                            node,
                            Down::Killed("stopped without a shutdown handler"),
                        ),
                    }
                }
            }
            Action::Restart { node, incarnation } => {
                let due = with(|w| {
                    let n = w.nodes().node(node);
                    let due = !n.up && n.incarnation == incarnation;
                    if due {
                        w.nemesis_mut().held_down[node as usize] = false;
                    }
                    due
                });
                if due {
                    node::start(node);
                }
            }
            Action::Resume { node, pause } => with(|w| {
                if w.nemesis().held_pause[node as usize] == Some(pause) {
                    w.nemesis_mut().held_pause[node as usize] = None;
                    if w.nodes().is_paused(node) {
                        node::resume_node(w, node);
                    }
                }
            }),
            Action::Kill { node, incarnation } => {
                let due = with(|w| {
                    let n = w.nodes().node(node);
                    n.up && n.incarnation == incarnation && n.stopping
                });
                if due {
                    node::take_down(node, Down::Killed("grace period over"));
                }
            }
        }
    }
}

/// One tick: draws each kind's action, applies pauses at once, returns crashes and stops.
fn tick(w: &mut World) -> Vec<Act> {
    let mut acts = Vec::new();
    if !w.nemesis().drawing {
        return acts;
    }
    let p = w.nemesis().profile;
    let kinds = [
        (p.crash_per_mille, NEMESIS_CRASH.name()),
        (p.stop_per_mille, NEMESIS_STOP.name()),
        (p.pause_per_mille, NEMESIS_PAUSE.name()),
    ];
    for (k, (rate, label)) in kinds.into_iter().enumerate() {
        if rate == 0 || !w.source().chance(label, u64::from(rate), PER_MILLE) {
            continue;
        }
        let taken: Vec<u32> = acts
            .iter()
            .map(|a| match *a {
                Act::Crash(n) | Act::Stop(n) => n,
            })
            .collect();
        let is_well = |w: &World, t: u32| {
            let n = w.nodes().node(t);
            n.up && !n.paused && !n.stopping && !taken.contains(&t)
        };
        let targets = w.nemesis().targets.clone();
        let down = targets.iter().filter(|&&t| !is_well(w, t)).count();
        if down >= p.max_down as usize {
            continue;
        }
        let well: Vec<u32> = targets.into_iter().filter(|&t| is_well(w, t)).collect();
        if well.is_empty() {
            continue;
        }
        let node = well[w.source().below(NEMESIS_NODE.name(), well.len() as u64) as usize];
        match k {
            0 => {
                let down_ms =
                    w.source()
                        .range_inclusive(NEMESIS_DOWN_MS.name(), 1, p.down_ms_max.max(1));
                note(w, node, format!("crash, restart in {down_ms}ms"));
                held_down(w, node, down_ms);
                acts.push(Act::Crash(node));
            }
            1 => {
                let grace_ms =
                    w.source()
                        .range_inclusive(NEMESIS_GRACE_MS.name(), 1, p.grace_ms_max.max(1));
                let down_ms =
                    w.source()
                        .range_inclusive(NEMESIS_DOWN_MS.name(), 1, p.down_ms_max.max(1));
                note(
                    w,
                    node,
                    format!("stop with {grace_ms}ms grace, restart {down_ms}ms after"),
                );
                held_down(w, node, grace_ms + down_ms);
                if node::request_stop(w, node, grace_ms * 1_000_000) {
                    acts.push(Act::Stop(node));
                }
            }
            _ => {
                let pause_ms =
                    w.source()
                        .range_inclusive(NEMESIS_PAUSE_MS.name(), 1, p.pause_ms_max.max(1));
                note(w, node, format!("pause for {pause_ms}ms"));
                w.nemesis_mut().next_pause += 1;
                let pause = w.nemesis().next_pause;
                w.nemesis_mut().held_pause[node as usize] = Some(pause);
                node::pause_node(w, node);
                schedule(w, pause_ms, Action::Resume { node, pause });
            }
        }
    }
    // Tick again only while something else can happen: a system with nothing ready and
    // nothing scheduled is stuck, and the nemesis must not hide that (a deadlock stays one).
    let busy = !acts.is_empty() || w.exec().has_ready() || w.clock_mut().next_due().is_some();
    if busy {
        schedule(w, p.tick_ms, Action::Tick);
    }
    acts
}

/// Marks `node` held down by the nemesis and schedules its restart `after_ms` from now (in
/// the incarnation its fall will start).
fn held_down(w: &mut World, node: u32, after_ms: u64) {
    // Its restart is already scheduled: a second fall would schedule another, and the node
    // would come back twice.
    debug_assert!(
        !w.nemesis().held_down[node as usize],
        "the nemesis takes down node {node}, which it already holds down"
    );
    w.nemesis_mut().held_down[node as usize] = true;
    let incarnation = w.nodes().incarnation(node) + 1;
    schedule(w, after_ms, Action::Restart { node, incarnation });
}

fn note(w: &mut World, node: u32, what: String) {
    let digest = stable_hash(&(6u8, node, &what));
    w.record(Some(node), EventKind::Fault { digest }, || {
        format!("nemesis: {what}")
    });
}

/// The heal phase begins: no new action is drawn, and every node the nemesis holds down or
/// paused comes back now (in node order). Nodes the scenario took down itself stay its
/// business.
pub(crate) fn heal() {
    let (restart, resumed) = with(|w| {
        if !w.nemesis().drawing {
            return (Vec::new(), 0);
        }
        w.nemesis_mut().drawing = false;
        let mut resumed = 0;
        for node in 0..w.nemesis().held_pause.len() as u32 {
            if w.nemesis_mut().held_pause[node as usize].take().is_some()
                && w.nodes().is_paused(node)
            {
                node::resume_node(w, node);
                resumed += 1;
            }
        }
        let restart: Vec<u32> = (0..w.nemesis().held_down.len() as u32)
            .filter(|&n| w.nemesis().held_down[n as usize] && !w.nodes().is_up(n))
            .collect();
        for &n in &restart {
            w.nemesis_mut().held_down[n as usize] = false;
        }
        let digest = stable_hash(&(7u8, &restart, resumed));
        w.record(None, EventKind::Fault { digest }, || {
            format!(
                "heal: nemesis stops; {} restarted, {resumed} resumed",
                restart.len()
            )
        });
        (restart, resumed)
    });
    let _ = resumed;
    for node in restart {
        node::start(node);
    }
}
