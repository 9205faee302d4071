//! Nodes and their lifecycle: start, crash, restart, graceful stop, pause and resume.
//!
//! A node is a name plus a factory that builds its main future from a [`NodeCtx`] at every
//! start. A crash drops every task of the node at once (their futures are dropped, so a
//! killed node's leftover work cannot act), unbinds its sockets and loses the messages
//! queued in them; [`crate::net`] says what its peers see, and in which order. A restart
//! calls the factory again with the next incarnation number.
//!
//! * **Graceful stop** ([`stop`]): the node is sent a signal it may handle — every
//!   [`NodeCtx::shutdown`] future of its incarnation completes — and it stops when its main
//!   task returns ([`crate::trace::EventKind::Exit`]: down, like a crash, but by its own
//!   hand). If it has not stopped within the grace period it is crashed. A node that never
//!   asked for the signal (no `shutdown` future made in this incarnation) takes the default
//!   action of a process without a handler: it is crashed at once.
//! * **Pause** ([`pause`], [`resume`]): the process is frozen while time goes on. None of its
//!   tasks is polled; its timers still come due and messages still reach its sockets, but it
//!   handles them only after [`resume`] — late, as a stopped process does.
//!
//! The nemesis ([`crate::nemesis`]) draws the same actions per run; these functions are the
//! scripted form. Every lifecycle event is in the history.
//!
//! ```
//! use std::time::Duration;
//! use sim_core::node::{crash, restart};
//! use sim_core::sim::{Config, Sim};
//! use sim_core::time::sleep;
//!
//! let mut sim = Sim::new(Config::default());
//! sim.node("server", |ctx| async move {
//!     // Each start sees its incarnation: 0, then 1 after the restart below.
//!     assert!(ctx.incarnation() <= 1);
//!     sleep(Duration::from_secs(3600)).await;
//! });
//! sim.client("nemesis", |_| async {
//!     sleep(Duration::from_millis(5)).await;
//!     crash("server").unwrap();
//!     restart("server").unwrap();
//! });
//! assert!(sim.run_seed(0).outcome.class.is_pass());
//! ```

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::rt::BoxFuture;
use crate::trace::EventKind;
use crate::world::{self, with, World};

/// The id is vocabulary every part shares, so it is defined at the bottom of the crate; its
/// world-reading methods are here, with the nodes.
pub use crate::node_id::NodeId;

impl NodeId {
    /// The node's name (the inverse of [`lookup`]), or `None` for an id no node has. Must be
    /// called from within a simulation.
    ///
    /// ```
    /// use sim_core::node::{current, lookup};
    /// use sim_core::sim::{Config, Sim};
    ///
    /// let mut sim = Sim::new(Config::default());
    /// sim.client("c", |_| async {
    ///     assert_eq!(current().name().as_deref(), Some("c"));
    ///     assert_eq!(lookup("c"), Some(current()));
    /// });
    /// assert!(sim.run_seed(0).outcome.class.is_pass());
    /// ```
    pub fn name(self) -> Option<String> {
        with(|w| {
            w.nodes()
                .list
                .get(self.0 as usize)
                .map(|n| n.name.to_string())
        })
    }
}

/// What a node's factory gets at every start.
#[derive(Clone, Debug)]
pub struct NodeCtx {
    id: NodeId,
    name: Rc<str>,
    incarnation: u32,
}

impl NodeCtx {
    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }
    /// This node's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// 0 at the first start, then one more at each restart.
    pub fn incarnation(&self) -> u32 {
        self.incarnation
    }
    /// This node's randomness, drawn from the run's input (never from the OS).
    pub fn rng(&self) -> NodeRng {
        crate::random::rng()
    }

    /// Completes when this incarnation is asked to stop ([`stop`], or the nemesis): the
    /// signal a process may handle. Making one registers the node as handling the signal,
    /// so a stop gives it its grace period instead of crashing it at once. Must be called
    /// within a simulation.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sim_core::node::{is_up, stop};
    /// use sim_core::sim::{Config, Sim};
    /// use sim_core::time::sleep;
    ///
    /// let mut sim = Sim::new(Config::default());
    /// sim.node("server", |ctx| async move {
    ///     ctx.shutdown().await;
    ///     // Flush, say goodbye... then return: the node exits cleanly.
    ///     sleep(Duration::from_millis(5)).await;
    /// });
    /// sim.client("operator", |_| async {
    ///     sleep(Duration::from_millis(1)).await;
    ///     stop("server", Duration::from_secs(1)).unwrap();
    ///     sleep(Duration::from_millis(10)).await;
    ///     assert!(!is_up("server"), "it stopped within its grace period");
    /// });
    /// assert!(sim.run_seed(0).outcome.class.is_pass());
    /// ```
    pub fn shutdown(&self) -> Shutdown {
        let epoch = with(|w| {
            let n = &mut w.nodes_mut().list[self.id.0 as usize];
            if n.incarnation == self.incarnation {
                n.handles_shutdown = true;
            }
            w.epoch()
        });
        Shutdown {
            node: self.id.0,
            incarnation: self.incarnation,
            epoch,
        }
    }
}

/// Future of [`NodeCtx::shutdown`].
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct Shutdown {
    node: u32,
    incarnation: u32,
    epoch: u32,
}

impl Future for Shutdown {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        world::try_with(self.epoch, |w| {
            let n = &mut w.nodes_mut().list[self.node as usize];
            // A later incarnation's stop is not this one's signal.
            if n.incarnation != self.incarnation {
                return Poll::Pending;
            }
            if n.stopping {
                return Poll::Ready(());
            }
            if !n.shutdown_waiters.iter().any(|k| k.will_wake(cx.waker())) {
                n.shutdown_waiters.push(cx.waker().clone());
            }
            Poll::Pending
        })
        .unwrap_or(Poll::Pending)
    }
}

/// The generator a node's context hands out: [`crate::random::SimRng`].
pub type NodeRng = crate::random::SimRng;

pub(crate) type Factory = Rc<dyn Fn(NodeCtx) -> BoxFuture>;

/// Boxes a user factory.
pub(crate) fn factory<F, Fut>(f: F) -> Factory
where
    F: Fn(NodeCtx) -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    Rc::new(move |ctx| Box::pin(f(ctx)) as Pin<Box<dyn Future<Output = ()>>>)
}

pub(crate) struct NodeState {
    pub name: Rc<str>,
    pub factory: Factory,
    pub up: bool,
    pub incarnation: u32,
    /// A client's main task is workload: the run is not done until it finishes.
    pub client: bool,
    pub main_task: Option<u32>,
    /// Frozen: its tasks are not polled until it is resumed.
    pub paused: bool,
    /// Asked to stop: it exits when its main task returns, or is killed at the deadline.
    pub stopping: bool,
    /// This incarnation made a [`Shutdown`] future: a stop gives it its grace period.
    pub handles_shutdown: bool,
    pub shutdown_waiters: Vec<Waker>,
    /// The last abstract state the node named ([`abstract_state`]), or a start marker.
    pub abstract_state: u64,
    /// The epoch it named with it ([`abstract_state_at`]; 0 if none).
    pub abstract_epoch: u64,
}

/// The bits of an abstract state a node may use; the top two mark where a life began.
const ABSTRACT_STATE_MASK: u64 = (1 << 62) - 1;
/// "Started, named no state yet" (a first start or after a clean exit).
const ABSTRACT_FRESH: u64 = 1 << 62;
/// "Restarted after crashing in the state in the low bits".
const ABSTRACT_CRASHED_IN: u64 = 1 << 63;

impl NodeState {
    pub fn new(name: &str, factory: Factory, client: bool) -> Self {
        NodeState {
            name: name.into(),
            factory,
            up: false,
            incarnation: 0,
            client,
            main_task: None,
            paused: false,
            stopping: false,
            handles_shutdown: false,
            shutdown_waiters: Vec::new(),
            abstract_state: ABSTRACT_FRESH,
            abstract_epoch: 0,
        }
    }
}

/// All nodes of one run.
///
/// Owns each node's lifecycle state (up, incarnation, paused, stopping). Only this module
/// changes it — start, crash, restart, stop, pause and resume go through its functions — and
/// the rest of the crate reads it through [`Nodes::get`] and the accessors below.
pub(crate) struct Nodes {
    list: Vec<NodeState>,
}

impl Nodes {
    /// The nodes of a scenario, in the order they were added (their ids).
    pub fn new(list: Vec<NodeState>) -> Nodes {
        Nodes { list }
    }
    /// How many nodes the run has.
    #[inline]
    pub fn len(&self) -> usize {
        self.list.len()
    }
    /// A node's state, read-only.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&NodeState> {
        self.list.get(id as usize)
    }
    /// A node's state, read-only; the id must exist.
    #[inline]
    pub fn node(&self, id: u32) -> &NodeState {
        &self.list[id as usize]
    }
    /// The current incarnation of `id` (0 before its first restart).
    #[inline]
    pub fn incarnation(&self, id: u32) -> u32 {
        self.node(id).incarnation
    }
    /// True if `id` is frozen by a pause.
    #[inline]
    pub fn is_paused(&self, id: u32) -> bool {
        self.get(id).is_some_and(|n| n.paused)
    }
    /// True if the scenario has a client node.
    pub fn any_client(&self) -> bool {
        self.list.iter().any(|n| n.client)
    }
    /// The client nodes.
    pub fn clients(&self) -> impl Iterator<Item = &NodeState> {
        self.list.iter().filter(|n| n.client)
    }
    // Inline (also `is_up`): on the per-message path of generic socket code.
    #[inline]
    pub fn name(&self, id: u32) -> &str {
        self.list.get(id as usize).map_or("?", |n| &n.name)
    }
    #[inline]
    pub fn is_up(&self, id: u32) -> bool {
        self.list.get(id as usize).is_some_and(|n| n.up)
    }
    pub fn find(&self, name: &str) -> Option<u32> {
        self.list
            .iter()
            .position(|n| &*n.name == name)
            .map(|i| i as u32)
    }
}

/// Errors of lifecycle controls.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LifecycleError {
    /// No node has that name.
    #[error("no node named {0:?}; names are the ones given to Sim::node/Sim::client")]
    UnknownNode(String),
    /// Crash, stop or pause of a node that is down.
    #[error("node {0:?} is already down; restart it first")]
    AlreadyDown(String),
    /// Restart of a node that is up.
    #[error("node {0:?} is up; crash it before restarting it")]
    AlreadyUp(String),
    /// Pause of a node that is paused.
    #[error("node {0:?} is already paused; resume it first")]
    AlreadyPaused(String),
    /// Resume of a node that is not paused.
    #[error("node {0:?} is not paused; pause it before resuming it")]
    NotPaused(String),
    /// Stop of a node that was already asked to stop.
    #[error("node {0:?} is already stopping; wait for it to exit or be killed")]
    AlreadyStopping(String),
}

/// The id of the node called `name`. Must be called from within a simulation.
pub fn lookup(name: &str) -> Option<NodeId> {
    with(|w| w.nodes().find(name)).map(NodeId)
}

/// The node of the running task. Must be called from a task in a simulation.
pub fn current() -> NodeId {
    NodeId(with(|w| w.current_node()).expect("node::current must be called from a task"))
}

/// True if the node is up. Must be called from within a simulation.
pub fn is_up(name: &str) -> bool {
    with(|w| w.nodes().find(name).is_some_and(|id| w.nodes().is_up(id)))
}

/// True if the node is paused. Must be called from within a simulation.
pub fn is_paused(name: &str) -> bool {
    with(|w| {
        w.nodes()
            .find(name)
            .is_some_and(|id| w.nodes().list[id as usize].paused)
    })
}

/// Starts node `id` (first start or restart): builds its main future and spawns it.
pub(crate) fn start(id: u32) {
    let (ctx, factory) = with(|w| {
        let n = &mut w.nodes_mut().list[id as usize];
        debug_assert!(!n.up, "starting node {} which is up", n.name);
        n.up = true;
        n.stopping = false;
        n.paused = false;
        n.handles_shutdown = false;
        let ctx = NodeCtx {
            id: NodeId(id),
            name: n.name.clone(),
            incarnation: n.incarnation,
        };
        let factory = n.factory.clone();
        let incarnation = n.incarnation;
        w.record(Some(id), EventKind::Start { incarnation }, || {
            format!("incarnation {incarnation}")
        });
        crate::net::reach_may_have_changed(&mut w.net_view());
        (ctx, factory)
    });
    // The factory runs outside the world borrow: it may bind sockets or read the clock.
    let future = factory(ctx);
    let handle = crate::rt::spawn_on(id, future);
    with(|w| w.nodes_mut().list[id as usize].main_task = Some(handle.id().0));
}

/// How a node goes down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Down {
    /// Crashed (scripted, or by the nemesis).
    Crash,
    /// Crashed because a stop's grace period ran out, or it had no shutdown handler.
    Killed(&'static str),
    /// Stopped by itself after a stop request.
    Exit,
}

fn find_up(w: &World, name: &str) -> Result<u32, LifecycleError> {
    let id = w
        .nodes()
        .find(name)
        .ok_or_else(|| LifecycleError::UnknownNode(name.to_string()))?;
    if !w.nodes().is_up(id) {
        return Err(LifecycleError::AlreadyDown(name.to_string()));
    }
    Ok(id)
}

/// Crashes the node called `name`: every task dropped, sockets unbound, queued messages lost.
/// Must be called from within a simulation. A task may crash its own node; it stops at once
/// at its next await.
pub fn crash(name: &str) -> Result<(), LifecycleError> {
    let id = with(|w| find_up(w, name))?;
    take_down(id, Down::Crash);
    Ok(())
}

/// Takes node `id` (which is up) down: crash semantics for every [`Down`], recorded as a
/// crash or an exit.
pub(crate) fn take_down(id: u32, how: Down) {
    let victims = with(|w| {
        let n = &mut w.nodes_mut().list[id as usize];
        debug_assert!(n.up, "taking down node {} which is down", n.name);
        n.up = false;
        n.incarnation += 1;
        n.stopping = false;
        n.paused = false;
        n.handles_shutdown = false;
        n.shutdown_waiters.clear();
        // Notify watchers, retire watches, cancel in-flight traffic (before the kill).
        let lost = crate::net::crash_before_kill(&mut w.net_view(), id);
        let tasks = w.exec().tasks_of(id);
        let count = tasks.len();
        let kind = if how == Down::Exit {
            EventKind::Exit
        } else {
            EventKind::Crash
        };
        w.record(Some(id), kind, || {
            let why = match how {
                Down::Crash => String::new(),
                Down::Killed(why) => format!("{why}: "),
                Down::Exit => "stopped after a stop request: ".to_string(),
            };
            format!("{why}{count} tasks dropped, {lost} queued messages lost")
        });
        // A crash loses unsynced disk state (drawn); a clean exit loses none.
        crate::disk::take_down(&mut w.disk_view(), id, how == Down::Exit);
        abstract_state_down(w.nodes_mut(), id, how == Down::Exit);
        let current = w.exec().current();
        let futures: Vec<BoxFuture> = tasks
            .into_iter()
            .filter(|&t| Some(t) != current)
            .filter_map(|t| w.exec_mut().remove(t))
            .collect();
        // The running task (if it crashed its own node) is dropped when its poll returns.
        if let Some(t) = current.filter(|&t| w.exec().node_of(t) == id) {
            w.exec_mut().retire(t);
        }
        w.exec_mut().forget_pause(id);
        // A node that is down runs nothing: a task left behind would go on acting for a node
        // whose state the crash just threw away.
        debug_assert!(
            w.exec().tasks_of(id).is_empty(),
            "node {id} is down but still has tasks {:?}",
            w.exec().tasks_of(id)
        );
        futures
    });
    // Dropping futures may touch the world (timers, sockets): do it outside the borrow.
    drop(victims);
    // Then signal the survivors: streams connected to the dead node are reset.
    crate::world::with_net(|w| crate::net::crash_after_kill(w, id));
}

/// Names the running node's abstract state: a small summary of what its protocol has done,
/// written by the system (an abstraction function, as model-guided fuzzers use). Must be
/// called from a task of a node; elsewhere it does nothing.
///
/// Only the fuzz signal reads it ([`crate::signal`], `labels`): each change of a node's state
/// is a feature *(old state, new state)*, and a crash is a feature *(the state it crashed
/// in)*, and the first state a restarted node names is a transition from "crashed in that
/// state". A fuzzer is then rewarded for an input that makes a transition no input made
/// before — such as a replica that restarts having lost something it had answered with —
/// without being told which transitions are bugs. It draws nothing and records nothing: a
/// run's behaviour and history are the same whether it is called or not. Use the low 62
/// bits; a handful of bits is plenty (every distinct pair is a feature).
///
/// ```
/// use sim_core::prelude::*;
///
/// let mut sim = Sim::new(Config::default());
/// sim.node("n", |_| async {
///     sim_core::node::abstract_state(1); // e.g. "follower, voted for nobody"
///     sleep(std::time::Duration::from_millis(5)).await;
///     sim_core::node::abstract_state(2); // "follower, voted"
/// });
/// assert!(sim.run_seed(0).outcome.class.is_pass());
/// ```
pub fn abstract_state(state: u64) {
    abstract_state_at(0, state);
}

/// [`abstract_state`] with an **epoch**: the protocol's logical generation at this node (a
/// Raft term, a Paxos ballot, a view number). Besides the node's own transitions, every
/// change feeds the **cluster's** abstract state: the multiset of all nodes' states, each
/// with its epoch relative to the newest epoch among nodes that are up (the same, one behind,
/// further behind), and the state each down node crashed in. "A leader and a candidate of
/// the same term, and a restarted voter one term behind" is then one feature, whichever
/// nodes play the parts — the kind of state a bug needs and random runs rarely reach.
pub fn abstract_state_at(epoch: u64, state: u64) {
    // Only the label signal reads abstract states: a sweep pays one relaxed load here.
    if !crate::signal::labels_on() {
        return;
    }
    with(|w| {
        let Some(id) = w.current_node() else {
            return;
        };
        let n = &mut w.nodes_mut().list[id as usize];
        let state = state & ABSTRACT_STATE_MASK;
        if n.abstract_state == state && n.abstract_epoch == epoch {
            return;
        }
        if n.abstract_state != state {
            crate::signal::cover_transition(n.abstract_state, state);
        }
        n.abstract_state = state;
        n.abstract_epoch = epoch;
        cover_cluster(w.nodes());
    })
}

/// Node `id` went down: a crash is a feature (the state it crashed in), and its next life
/// starts from "crashed in that state" (or fresh, after a clean exit).
fn abstract_state_down(nodes: &mut Nodes, id: u32, exit: bool) {
    // Only the label signal reads abstract states (see `abstract_state_at`).
    if !crate::signal::labels_on() {
        return;
    }
    let n = &mut nodes.list[id as usize];
    n.abstract_state = if exit {
        ABSTRACT_FRESH
    } else {
        crate::signal::cover_crash_in(n.abstract_state);
        ABSTRACT_CRASHED_IN | (n.abstract_state & ABSTRACT_STATE_MASK)
    };
    cover_cluster(nodes);
}

/// Feeds the cluster's abstract state (see [`abstract_state_at`]), when labels are collected.
fn cover_cluster(nodes: &Nodes) {
    let newest = nodes
        .list
        .iter()
        .filter(|n| n.up)
        .map(|n| n.abstract_epoch)
        .max()
        .unwrap_or(0);
    let mut parts: Vec<u64> = nodes
        .list
        .iter()
        .filter(|n| !n.client)
        .map(|n| {
            if n.up {
                let behind = newest.saturating_sub(n.abstract_epoch).min(2);
                n.abstract_state | behind << 56
            } else {
                n.abstract_state | 1 << 58
            }
        })
        .collect();
    parts.sort_unstable();
    let digest = parts.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &p| {
        (h ^ p).wrapping_mul(0x0100_0000_01b3)
    });
    crate::signal::cover_cluster(digest);
}

/// Restarts a crashed node with the same durable state. Must be called within a simulation.
pub fn restart(name: &str) -> Result<(), LifecycleError> {
    let id = with(|w| {
        let id = w
            .nodes()
            .find(name)
            .ok_or_else(|| LifecycleError::UnknownNode(name.to_string()))?;
        if w.nodes().is_up(id) {
            return Err(LifecycleError::AlreadyUp(name.to_string()));
        }
        Ok(id)
    })?;
    start(id);
    Ok(())
}

/// Asks the node called `name` to stop, giving it `grace` of virtual time: every
/// [`NodeCtx::shutdown`] future of its incarnation completes, it is down once its main task
/// returns, and it is crashed if it is still up when `grace` has passed. A node with no
/// shutdown handler is crashed at once. See the [module docs](self). Must be called within a
/// simulation.
pub fn stop(name: &str, grace: Duration) -> Result<(), LifecycleError> {
    let kill_now = with(|w| {
        let id = find_up(w, name)?;
        if w.nodes().list[id as usize].stopping {
            return Err(LifecycleError::AlreadyStopping(name.to_string()));
        }
        Ok(request_stop(w, id, crate::time::duration_ns(grace)).then_some(id))
    })?;
    if let Some(id) = kill_now {
        take_down(id, Down::Killed("stopped without a shutdown handler"));
    }
    Ok(())
}

/// Sends node `id` the stop signal and schedules its kill. Returns true when the node has no
/// handler and must be crashed at once (by the caller, outside the world).
pub(crate) fn request_stop(w: &mut World, id: u32, grace_ns: u64) -> bool {
    let handles = w.nodes().list[id as usize].handles_shutdown;
    w.record(Some(id), EventKind::Stop { grace_ns }, || {
        if handles {
            format!(
                "stop requested; crashed in {}ms unless it exits",
                grace_ns / 1_000_000
            )
        } else {
            "stop requested; no shutdown handler, so the default action kills it".to_string()
        }
    });
    if !handles {
        return true;
    }
    let n = &mut w.nodes_mut().list[id as usize];
    n.stopping = true;
    let incarnation = n.incarnation;
    let waiters = std::mem::take(&mut n.shutdown_waiters);
    for waker in waiters {
        w.wake(waker);
    }
    let at = w.now_ns().saturating_add(grace_ns);
    w.clock_mut().schedule(
        at,
        crate::world::DueEvent::Lifecycle(Box::new(crate::world::LifecycleAction::Kill {
            node: id,
            incarnation,
        })),
    );
    false
}

/// Pauses the node called `name`: none of its tasks runs until [`resume`]; its timers and
/// sockets go on receiving, and it handles what came only then. A task may pause its own
/// node; it stops at its next await. Must be called from within a simulation.
///
/// ```
/// use std::cell::Cell;
/// use std::rc::Rc;
/// use std::time::Duration;
/// use sim_core::node::{pause, resume};
/// use sim_core::sim::{Config, Sim};
/// use sim_core::time::{now, sleep, Instant};
///
/// let mut sim = Sim::new(Config::default());
/// let woke = Rc::new(Cell::new(None));
/// let w = woke.clone();
/// sim.node("server", move |_| {
///     let w = w.clone();
///     async move {
///         sleep(Duration::from_millis(10)).await;
///         w.set(Some(now()));
///     }
/// });
/// sim.client("operator", move |_| {
///     let woke = woke.clone();
///     async move {
///         sleep(Duration::from_millis(5)).await;
///         pause("server").unwrap();
///         sleep(Duration::from_millis(45)).await;
///         assert_eq!(woke.get(), None, "due at 10 ms, but frozen");
///         resume("server").unwrap();
///         sleep(Duration::from_millis(1)).await;
///         assert_eq!(woke.get(), Some(Instant::from_nanos(50_000_000)), "ran at the resume");
///     }
/// });
/// assert!(sim.run_seed(0).outcome.class.is_pass());
/// ```
pub fn pause(name: &str) -> Result<(), LifecycleError> {
    with(|w| {
        let id = find_up(w, name)?;
        if w.nodes().list[id as usize].paused {
            return Err(LifecycleError::AlreadyPaused(name.to_string()));
        }
        pause_node(w, id);
        Ok(())
    })
}

/// Resumes a paused node: what woke while it was paused runs now. Must be called from within
/// a simulation.
pub fn resume(name: &str) -> Result<(), LifecycleError> {
    with(|w| {
        let id = w
            .nodes()
            .find(name)
            .ok_or_else(|| LifecycleError::UnknownNode(name.to_string()))?;
        if !w.nodes().list[id as usize].paused {
            return Err(LifecycleError::NotPaused(name.to_string()));
        }
        resume_node(w, id);
        Ok(())
    })
}

pub(crate) fn pause_node(w: &mut World, id: u32) {
    debug_assert!(w.nodes().is_up(id) && !w.nodes().list[id as usize].paused);
    w.nodes_mut().list[id as usize].paused = true;
    let frozen = w.exec_mut().pause(id);
    w.record(Some(id), EventKind::Pause, || {
        format!("paused: {frozen} ready tasks frozen, timers and sockets go on")
    });
}

pub(crate) fn resume_node(w: &mut World, id: u32) {
    debug_assert!(w.nodes().list[id as usize].paused);
    w.nodes_mut().list[id as usize].paused = false;
    let woken = w.exec_mut().resume(id);
    w.record(Some(id), EventKind::Resume, || {
        format!("resumed: {woken} tasks woken while paused run now")
    });
}
