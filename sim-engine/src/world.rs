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

use std::cell::{Cell, RefCell};
use std::mem::ManuallyDrop;
use std::task::Waker;

use crate::choice::RunSource;
use crate::net::Network;
use crate::node::Nodes;
use crate::rt::{Executor, RunScheduler};
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

pub(crate) struct World {
    pub epoch: u32,
    pub source: RunSource,
    pub exec: Executor,
    pub sched: RunScheduler,
    pub clock: Clock<DueEvent>,
    pub net: Network,
    pub disks: crate::disk::Disks,
    pub nodes: Nodes,
    pub history: History,
    pub next_op: u64,
    /// Fault points reached so far, and whether each is enabled this run.
    pub buggify: std::collections::BTreeMap<&'static str, bool>,
    /// The nodes' wall clocks and timer faults.
    pub clocks: crate::time::NodeClocks,
    /// The lifecycle nemesis.
    pub nemesis: crate::nemesis::Nemesis,
    /// Lifecycle actions that came due, waiting to be applied outside the world.
    pub lifecycle_due: Vec<LifecycleAction>,
}

impl World {
    /// Hands what came due now to the part it belongs to (called by the run loop).
    #[inline]
    pub fn deliver(&mut self, due: DueEvent) {
        match due {
            DueEvent::Datagram(d) => crate::net::arrive_datagram(self, d),
            DueEvent::Segments { conn, dir } => crate::net::segments_due(self, conn, dir),
            DueEvent::Control(c) => crate::net::fire_control(self, *c),
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
        // The name is only read when recording: skip the lookup otherwise.
        let recording = self.history.is_recording();
        let named = node.map(|id| (id, if recording { self.nodes.name(id) } else { "" }));
        self.history.push(self.clock.now_ns(), named, kind, detail);
    }

    /// Wakes `waker` from inside the world. A waker of this run's own tasks marks its task
    /// ready at once, after any wakes still queued (so the order of wakes is the order they
    /// happened, as if it had gone through the queue); any other waker is woken normally.
    #[inline]
    pub fn wake(&mut self, waker: Waker) {
        match crate::rt::task_of(&waker, self.epoch) {
            Some(task) => {
                self.exec.drain_wakes();
                self.exec.make_ready(task);
                // Dropping one of our wakers does nothing: skip the call through its vtable.
                std::mem::forget(waker);
            }
            None => waker.wake(),
        }
    }

    /// The node of the task being polled, if any.
    pub fn current_node(&self) -> Option<u32> {
        self.exec.current().map(|t| self.exec.node_of(t))
    }
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
