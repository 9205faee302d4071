//! The one owner of a run's mutable state.
//!
//! A run's executor, clock, network, nodes, history and choice source live in one [`World`],
//! kept in a thread-local for the duration of [`crate::sim::Sim::run`]. Handles (sockets,
//! sleeps, join handles) are plain ids that reach it through [`with`]; nothing holds an `Rc`
//! to it, so a task that never finishes cannot keep a run alive (no cycles, flat memory).
//!
//! Every handle carries the run's *epoch*: a handle that outlives its run (say, a `Sleep`
//! stored in a model that a later run drops) finds a different epoch and does nothing.
//!
//! Determinism boundary: code inside a run reaches time, randomness and the network only
//! through this world. It never reads the wall clock or OS entropy; ordered collections
//! (`Vec`, `BTreeMap`, `VecDeque`) are used everywhere iteration order can reach a decision.
//! Code under test that reads the OS directly is the OS hooks' business ([`crate::os`]): they
//! ask this world for virtual time and input-drawn bytes.
//!
//! The parts own their state and keep their promises themselves: the executor its tasks and
//! ready set ([`crate::rt`]), the nodes their lifecycle ([`crate::node`]), the clock virtual
//! time and its queue ([`crate::time`]), the network its links and mailboxes ([`crate::net`]),
//! the disks their files ([`crate::disk`]). The world makes one move at a time (`World::step`
//! in [`crate::sim`]); the driver around it checks, budgets and ends the run. Their invariants
//! are `debug_assert!`s: checked in debug and test builds, compiled out of release builds.
//!
//! # Thread-locals
//!
//! State that lives outside the world, each with the reason it cannot be an argument:
//!
//! - `WORLD`, `EPOCH` (here): the world itself, reached by handles that are plain ids; the
//!   epoch counter outlives every run, so a stale handle finds a different one.
//! - `WAKES`, `WAKE_EPOCH`, `WOKEN` ([`crate::rt`]): a `Waker` can hold no reference to the
//!   world and may be woken while the world is borrowed (from a poll, or by a foreign
//!   runtime); its wake is queued here and drained by the executor.
//! - `IN_SIM`, `PANIC_AT` ([`crate::sim`]): the panic hook is process-wide and runs in the
//!   middle of whatever panicked, the world possibly borrowed; it learns here whether to keep
//!   quiet and leaves the panic for the driver.
//! - `PREV`, `FIRST_HITS` ([`crate::signal`]): the fuzz signal, fed by every history event
//!   and read by libFuzzer's counters between runs; libFuzzer calls the target with bytes
//!   and reads counters, with no place for a report.
//! - `LAST_TRACE`, `OBSERVED_EVENTS`, `DRAW_CLOCK` ([`crate::choice`]): what a byte input's
//!   run drew, for the mutator; libFuzzer calls the mutator with bytes only, so what the
//!   last run saw has to wait for it somewhere. The draw clock is read by the signal on
//!   every event, which has no path to the source without a cost per event.
//! - `HOOKS_ON`, `PRIMING_HASH_KEYS`, `ESCAPE`, `PROBE_ANSWERED`, `PROBING`, `IDLE_WAITER`,
//!   `CLAIMING`, `CLAIMED_FDS` ([`crate::os`]): the OS hooks are called by libc's symbols,
//!   from code that knows nothing of the simulation, possibly while the world is borrowed.
//! - In the tooling crate, the mutator's memory across libFuzzer's calls (`LAST_MUTANT`,
//!   `OBSERVED`), for the same reason.

use std::cell::{Cell, RefCell};
use std::mem::ManuallyDrop;
use std::task::Waker;

use crate::choice::{RunSource, Source};
use crate::net::Network;
use crate::node::Nodes;
use crate::rt::{Executor, RunScheduler, Scheduler};
use crate::time::Clock;
use crate::trace::{EventKind, History};

/// Something due at a virtual instant, scheduled on the clock: network traffic, or one of
/// the harness' own events. The world owns it, and dispatches it ([`World::deliver`]),
/// because it names every part that schedules one: the parts need not know each other's.
pub(crate) enum DueEvent {
    /// A datagram arriving.
    Datagram(crate::net::Datagram),
    /// Segments of a stream direction may be due.
    Segments { conn: u32, dir: u8 },
    /// A scheduled network control (scripted with `net::at`, or the end of a drawn fault).
    Control(Box<crate::net::Resolved>),
    /// A node's wall clock jumps.
    Jump(Box<crate::time::Jump>),
    /// A lifecycle action comes due (applied by the nemesis, outside the world).
    Lifecycle(Box<LifecycleAction>),
}

/// A lifecycle action due at a virtual instant. Applied outside the world (a crash drops
/// futures), by the harness.
#[derive(Debug)]
pub(crate) enum LifecycleAction {
    /// The nemesis decides.
    Tick,
    /// Restart `node` if it is still down in `incarnation` (the one after its fall).
    Restart { node: u32, incarnation: u32 },
    /// Resume `node` if it is still in the pause numbered `pause`.
    Resume { node: u32, pause: u64 },
    /// A stop's grace period is over: crash `node` if it is still up in `incarnation`.
    Kill { node: u32, incarnation: u32 },
}

/// The parts of a run, composed. The fields are private: the network and the disks get
/// their views ([`NetView`], [`DiskView`]), which say what each takes from the others; the
/// driver and the lifecycle glue above them reach the rest through the accessors below.
pub(crate) struct World {
    epoch: u32,
    source: RunSource,
    exec: Executor,
    sched: RunScheduler,
    clock: Clock<DueEvent>,
    net: Network,
    disks: crate::disk::Disks,
    nodes: Nodes,
    history: History,
    next_op: u64,
    /// Fault points reached so far, and whether each is enabled this run.
    buggify: std::collections::BTreeMap<&'static str, bool>,
    /// The nodes' wall clocks and timer faults.
    clocks: crate::time::NodeClocks,
    /// The lifecycle nemesis.
    nemesis: crate::nemesis::Nemesis,
    /// Lifecycle actions that came due, waiting to be applied outside the world.
    lifecycle_due: Vec<LifecycleAction>,
}

impl World {
    /// A world for run `epoch`, before any draw: the parts come configured, empty.
    pub fn new(
        epoch: u32,
        source: RunSource,
        sched: RunScheduler,
        net: Network,
        disks: crate::disk::Disks,
        nodes: Nodes,
        history: History,
    ) -> World {
        World {
            epoch,
            source,
            exec: Executor::new(),
            sched,
            clock: Clock::new(),
            net,
            disks,
            nodes,
            history,
            next_op: 0,
            buggify: Default::default(),
            clocks: crate::time::NodeClocks::new(),
            nemesis: crate::nemesis::Nemesis::new(),
            lifecycle_due: Vec::new(),
        }
    }

    /// This run's epoch (handles carry it: see the module docs).
    #[inline]
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// Virtual time now.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    /// The run's choice source: every part draws from it.
    #[inline]
    pub fn source(&mut self) -> &mut RunSource {
        &mut self.source
    }

    /// Swaps the run's source for `with` (setup code runs on the source taken out).
    pub fn replace_source(&mut self, with: RunSource) -> RunSource {
        std::mem::replace(&mut self.source, with)
    }

    #[inline]
    pub fn exec(&self) -> &Executor {
        &self.exec
    }

    #[inline]
    pub fn exec_mut(&mut self) -> &mut Executor {
        &mut self.exec
    }

    #[inline]
    pub fn clock(&self) -> &Clock<DueEvent> {
        &self.clock
    }

    #[inline]
    pub fn clock_mut(&mut self) -> &mut Clock<DueEvent> {
        &mut self.clock
    }

    #[inline]
    pub fn nodes(&self) -> &Nodes {
        &self.nodes
    }

    #[inline]
    pub fn nodes_mut(&mut self) -> &mut Nodes {
        &mut self.nodes
    }

    #[inline]
    pub fn history(&self) -> &History {
        &self.history
    }

    #[inline]
    pub fn history_mut(&mut self) -> &mut History {
        &mut self.history
    }

    /// The wall clocks' state, and the source their faults draw from.
    #[inline]
    pub fn clocks_and_source(&mut self) -> (&mut crate::time::NodeClocks, &mut RunSource) {
        (&mut self.clocks, &mut self.source)
    }

    #[inline]
    pub fn clocks(&self) -> &crate::time::NodeClocks {
        &self.clocks
    }

    #[inline]
    pub fn clocks_mut(&mut self) -> &mut crate::time::NodeClocks {
        &mut self.clocks
    }

    #[inline]
    pub fn nemesis(&self) -> &crate::nemesis::Nemesis {
        &self.nemesis
    }

    #[inline]
    pub fn nemesis_mut(&mut self) -> &mut crate::nemesis::Nemesis {
        &mut self.nemesis
    }

    /// Adds `future` to the executor as a task of `node`, and tells the scheduler.
    pub fn spawn(&mut self, node: u32, future: crate::rt::BoxFuture) -> u32 {
        let id = self.exec.spawn(node, future);
        self.sched.on_spawn(id, &mut self.source);
        id
    }

    /// The scheduler picks one of the ready tasks (by its index among them).
    #[inline]
    pub fn pick_ready(&mut self) -> usize {
        self.sched.pick(&self.exec.view(), &mut self.source)
    }

    /// Whether the fault point `site` is enabled this run; `None` before it is first reached.
    pub fn buggify_site(&self, site: &'static str) -> Option<bool> {
        self.buggify.get(site).copied()
    }

    /// Remembers whether the fault point `site` is enabled this run.
    pub fn set_buggify_site(&mut self, site: &'static str, on: bool) {
        self.buggify.insert(site, on);
    }

    /// The next workload operation's id (marking the draws that follow as that operation's).
    pub fn next_op(&mut self) -> u64 {
        self.source.mark_op();
        let id = self.next_op;
        self.next_op += 1;
        id
    }

    /// The lifecycle actions that came due, for the driver to apply outside the world.
    pub fn take_lifecycle_due(&mut self) -> Vec<LifecycleAction> {
        std::mem::take(&mut self.lifecycle_due)
    }

    /// What is left of the world at the end of a run: its history.
    pub fn into_history(self) -> History {
        self.history
    }

    /// Hands what came due now to the part it belongs to (called by the run loop).
    #[inline]
    pub fn deliver(&mut self, due: DueEvent) {
        match due {
            DueEvent::Datagram(d) => crate::net::arrive_datagram(&mut self.net_view(), d),
            DueEvent::Segments { conn, dir } => {
                crate::net::segments_due(&mut self.net_view(), conn, dir);
            }
            DueEvent::Control(c) => crate::net::fire_control(&mut self.net_view(), *c),
            DueEvent::Jump(j) => crate::time::jump(self, *j),
            DueEvent::Lifecycle(a) => {
                self.lifecycle_due.push(*a);
                // Brings the driver out of its world borrow to apply it (see `Executor::ended`).
                self.exec.note_lifecycle_due();
            }
        }
    }

    /// Appends an event on `node` (or the harness, for `None`) at the current instant.
    #[inline]
    pub fn record(&mut self, node: Option<u32>, kind: EventKind, detail: impl FnOnce() -> String) {
        record(
            &mut self.history,
            &self.clock,
            &self.nodes,
            node,
            kind,
            detail,
        );
    }

    /// Wakes `waker` from inside the world. A waker of this run's own tasks marks its task
    /// ready at once, after any wakes still queued (so the order of wakes is the order they
    /// happened, as if it had gone through the queue); any other waker is woken normally.
    #[inline]
    pub fn wake(&mut self, waker: Waker) {
        wake(&mut self.exec, self.epoch, waker);
    }

    /// The disks' view of this world (see [`DiskView`]).
    #[inline]
    pub fn disk_view(&mut self) -> DiskView<'_> {
        DiskView {
            disks: &mut self.disks,
            source: &mut self.source,
            clock: &self.clock,
            nodes: &self.nodes,
            history: &mut self.history,
            epoch: self.epoch,
        }
    }

    /// The network's view of this world (see [`NetView`]).
    #[inline]
    pub fn net_view(&mut self) -> NetView<'_> {
        NetView {
            net: &mut self.net,
            source: &mut self.source,
            clock: &mut self.clock,
            nodes: &self.nodes,
            history: &mut self.history,
            exec: &mut self.exec,
            epoch: self.epoch,
        }
    }

    /// The node of the task being polled, if any.
    pub fn current_node(&self) -> Option<u32> {
        self.exec.current().map(|t| self.exec.node_of(t))
    }
}

#[inline]
fn record(
    history: &mut History,
    clock: &Clock<DueEvent>,
    nodes: &Nodes,
    node: Option<u32>,
    kind: EventKind,
    detail: impl FnOnce() -> String,
) {
    // The name is only read when recording: skip the lookup otherwise.
    let recording = history.is_recording();
    let named = node.map(|id| (id, if recording { nodes.name(id) } else { "" }));
    history.push(clock.now_ns(), named, kind, detail);
}

#[inline]
fn wake(exec: &mut Executor, epoch: u32, waker: Waker) {
    match crate::rt::task_of(&waker, epoch) {
        Some(task) => {
            exec.drain_wakes();
            exec.make_ready(task);
            // Dropping one of our wakers does nothing: skip the call through its vtable.
            std::mem::forget(waker);
        }
        None => waker.wake(),
    }
}

/// What the network may touch: its own state, and from the other parts only what it takes
/// from them. It draws from the source, schedules on the clock, records in the history and
/// wakes tasks; it reads the nodes (up or down, names) but never changes them, and never
/// sees the disks, the nemesis or the wall clocks. The world hands it out ([`World::net_view`],
/// [`with_net`]): the fields are disjoint borrows, so network code reads as if it held the
/// world, at no cost per event (the view is a few pointers, built where it is used).
pub(crate) struct NetView<'a> {
    pub net: &'a mut Network,
    pub source: &'a mut RunSource,
    pub clock: &'a mut Clock<DueEvent>,
    pub nodes: &'a Nodes,
    pub history: &'a mut History,
    exec: &'a mut Executor,
    pub epoch: u32,
}

impl NetView<'_> {
    /// As [`World::record`].
    #[inline]
    pub fn record(&mut self, node: Option<u32>, kind: EventKind, detail: impl FnOnce() -> String) {
        record(self.history, self.clock, self.nodes, node, kind, detail);
    }

    /// As [`World::wake`].
    #[inline]
    pub fn wake(&mut self, waker: Waker) {
        wake(self.exec, self.epoch, waker);
    }

    /// As [`World::current_node`].
    pub fn current_node(&self) -> Option<u32> {
        self.exec.current().map(|t| self.exec.node_of(t))
    }
}

/// What the disks may touch: their own stores, the source (fault draws), the history, and,
/// read only, the clock (the instant an event is recorded at) and the nodes (incarnations,
/// names). A disk operation's latency is a sleep its handle awaits, so the disks schedule
/// nothing themselves.
pub(crate) struct DiskView<'a> {
    pub disks: &'a mut crate::disk::Disks,
    pub source: &'a mut RunSource,
    clock: &'a Clock<DueEvent>,
    pub nodes: &'a Nodes,
    history: &'a mut History,
    pub epoch: u32,
}

impl DiskView<'_> {
    /// As [`World::record`].
    #[inline]
    pub fn record(&mut self, node: Option<u32>, kind: EventKind, detail: impl FnOnce() -> String) {
        record(self.history, self.clock, self.nodes, node, kind, detail);
    }
}

/// [`with`], for the disks: `f` on their view of the world.
#[track_caller]
#[inline]
pub(crate) fn with_disks<R>(f: impl FnOnce(&mut DiskView<'_>) -> R) -> R {
    with(|w| f(&mut w.disk_view()))
}

/// [`with`], for the network: `f` on its view of the world.
#[track_caller]
#[inline]
pub(crate) fn with_net<R>(f: impl FnOnce(&mut NetView<'_>) -> R) -> R {
    with(|w| f(&mut w.net_view()))
}

/// [`try_with`], for the network.
#[inline]
pub(crate) fn try_with_net<R>(epoch: u32, f: impl FnOnce(&mut NetView<'_>) -> R) -> Option<R> {
    try_with(epoch, |w| f(&mut w.net_view()))
}

thread_local! {
    // `ManuallyDrop` makes the slot a type without drop glue, so every access is a plain
    // thread-local load: a slot with a destructor costs a registration check on each of the
    // hundreds of accesses per run. The slot is empty whenever no run is in progress
    // (`Sim::run` uninstalls its world), so at thread exit there is nothing to drop; a world
    // left behind by a run that unwound past its teardown is leaked, never used again.
    static WORLD: ManuallyDrop<RefCell<Option<World>>> =
        const { ManuallyDrop::new(RefCell::new(None)) };
    static EPOCH: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f` on the current run's world.
///
/// # Panics
/// Outside a simulation — every caller documents "must be called from within a simulation".
#[track_caller]
#[inline]
pub(crate) fn with<R>(f: impl FnOnce(&mut World) -> R) -> R {
    let mut guard = slot().borrow_mut();
    let world = guard
        .as_mut()
        .expect("must be called from within a simulation (sim_core::sim::Sim::run)");
    f(world)
}

/// Like [`with`], but `None` outside a run, inside another access, or for a stale `epoch`.
/// For drop paths, which may run after the run that created the handle has ended.
#[inline]
pub(crate) fn try_with<R>(epoch: u32, f: impl FnOnce(&mut World) -> R) -> Option<R> {
    let mut guard = slot().try_borrow_mut().ok()?;
    let world = guard.as_mut()?;
    (world.epoch == epoch).then(|| f(world))
}

/// For the OS hooks ([`crate::os`]): `f` on the installed world; `None` outside a run, or
/// while the world is borrowed (a hook reached from inside the engine).
#[inline]
pub(crate) fn try_with_installed<R>(f: impl FnOnce(&mut World) -> R) -> Option<R> {
    let mut guard = slot().try_borrow_mut().ok()?;
    guard.as_mut().map(f)
}

/// This thread's world slot.
///
/// The slot's address is taken in a closure small enough for `LocalKey::with` to be inlined:
/// handed the whole access, `with` stays an out-of-line call that reaches the slot through a
/// function pointer, hundreds of times per run. Measured (engine bench, the comparison
/// workload, three alternating rounds in one session): the safe form, `WORLD.with(|cell|
/// f(cell.borrow_mut()...))`, costs 10-17% more per run (ratio to the bare loop 3.63-4.46
/// against 3.29-3.82 with this slot).
#[inline(always)]
fn slot() -> &'static RefCell<Option<World>> {
    let cell: *const RefCell<Option<World>> = WORLD.with(|cell| &**cell as *const _);
    // SAFETY: the slot is const-initialised and has no destructor (`ManuallyDrop`), so its
    // storage is valid for as long as this thread runs; `RefCell` is not `Sync`, so the
    // reference cannot leave the thread; and every access still goes through the `RefCell`'s
    // borrow flag.
    unsafe { &*cell }
}

/// The epoch of the run on this thread (0 when none has started).
pub(crate) fn current_epoch() -> u32 {
    EPOCH.with(Cell::get)
}

/// True while a run is installed on this thread.
pub fn in_simulation() -> bool {
    slot().try_borrow().map(|w| w.is_some()).unwrap_or(true)
}

/// A fresh epoch for the next run.
pub(crate) fn next_epoch() -> u32 {
    EPOCH.with(|e| {
        let next = e.get().wrapping_add(1).max(1);
        e.set(next);
        next
    })
}

/// Installs `world` for this thread. Runs do not nest.
pub(crate) fn install(world: World) {
    WORLD.with(|cell| {
        let mut slot = cell.borrow_mut();
        assert!(
            slot.is_none(),
            "a simulation is already running on this thread; runs do not nest"
        );
        *slot = Some(world);
    });
}

/// Removes and returns this thread's world.
pub(crate) fn uninstall() -> Option<World> {
    WORLD.with(|cell| cell.borrow_mut().take())
}
