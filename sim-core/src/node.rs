//! Nodes and their lifecycle: start, crash, restart.
//!
//! A node is a name plus a factory that builds its main future from a [`NodeCtx`] at every
//! start. A crash drops every task of the node at once (their futures are dropped, so a
//! killed node's leftover work cannot act), unbinds its sockets and loses the messages
//! queued in them; [`crate::net`] says what its peers see, and in which order. A restart
//! calls the factory again with the next incarnation number.
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

use crate::choice::Source;
use crate::rt::BoxFuture;
use crate::trace::EventKind;
use crate::world::with;

/// A node's id: its position in the order nodes were added to the scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

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
        NodeRng { _private: () }
    }
}

/// A `rand_core::RngCore` whose bits come from the run's choice source.
///
/// Use it wherever a node would use randomness (election timeouts, jitter, ids): every bit is
/// then part of the input, replayed and minimised with the rest.
#[derive(Debug)]
pub struct NodeRng {
    _private: (),
}

impl rand_core::RngCore for NodeRng {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        with(|w| w.source.fill("node.rng", dst))
    }
}

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
}

/// All nodes of one run.
pub(crate) struct Nodes {
    pub list: Vec<NodeState>,
}

impl Nodes {
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
    /// Crash of a node that is already down.
    #[error("node {0:?} is already down; restart it first")]
    AlreadyDown(String),
    /// Restart of a node that is up.
    #[error("node {0:?} is up; crash it before restarting it")]
    AlreadyUp(String),
}

/// The id of the node called `name`. Must be called from within a simulation.
pub fn lookup(name: &str) -> Option<NodeId> {
    with(|w| w.nodes.find(name)).map(NodeId)
}

/// The node of the running task. Must be called from a task in a simulation.
pub fn current() -> NodeId {
    NodeId(with(|w| w.current_node()).expect("node::current must be called from a task"))
}

/// True if the node is up. Must be called from within a simulation.
pub fn is_up(name: &str) -> bool {
    with(|w| w.nodes.find(name).is_some_and(|id| w.nodes.is_up(id)))
}

/// Starts node `id` (first start or restart): builds its main future and spawns it.
pub(crate) fn start(id: u32) {
    let (ctx, factory) = with(|w| {
        let n = &mut w.nodes.list[id as usize];
        debug_assert!(!n.up, "starting node {} which is up", n.name);
        n.up = true;
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
        (ctx, factory)
    });
    // The factory runs outside the world borrow: it may bind sockets or read the clock.
    let future = factory(ctx);
    let handle = crate::rt::spawn_on(id, future);
    with(|w| w.nodes.list[id as usize].main_task = Some(handle.id().0));
}

/// Crashes the node called `name`: every task dropped, sockets unbound, queued messages lost.
/// Must be called from within a simulation. A task may crash its own node; it stops at once
/// at its next await.
pub fn crash(name: &str) -> Result<(), LifecycleError> {
    let victims = with(|w| {
        let id = w
            .nodes
            .find(name)
            .ok_or_else(|| LifecycleError::UnknownNode(name.to_string()))?;
        if !w.nodes.is_up(id) {
            return Err(LifecycleError::AlreadyDown(name.to_string()));
        }
        w.nodes.list[id as usize].up = false;
        w.nodes.list[id as usize].incarnation += 1;
        // Notify watchers, retire watches, cancel in-flight traffic (before the kill).
        let lost = crate::net::crash_before_kill(w, id);
        let tasks = w.exec.tasks_of(id);
        let n = tasks.len();
        w.record(Some(id), EventKind::Crash, || {
            format!("{n} tasks dropped, {lost} queued messages lost")
        });
        let current = w.exec.current;
        let futures: Vec<BoxFuture> = tasks
            .into_iter()
            .filter(|&t| Some(t) != current)
            .filter_map(|t| w.exec.remove(t))
            .collect();
        // The running task (if it crashed its own node) is dropped when its poll returns.
        if let Some(t) = current.filter(|&t| w.exec.node_of(t) == id) {
            w.exec.retire(t);
        }
        Ok(futures)
    })?;
    // Dropping futures may touch the world (timers, sockets): do it outside the borrow.
    drop(victims);
    // Then signal the survivors: streams connected to the dead node are reset.
    with(|w| {
        let id = w.nodes.find(name).expect("crashed above");
        crate::net::crash_after_kill(w, id)
    });
    Ok(())
}

/// Restarts a crashed node with the same durable state. Must be called within a simulation.
pub fn restart(name: &str) -> Result<(), LifecycleError> {
    let id = with(|w| {
        let id = w
            .nodes
            .find(name)
            .ok_or_else(|| LifecycleError::UnknownNode(name.to_string()))?;
        if w.nodes.is_up(id) {
            return Err(LifecycleError::AlreadyUp(name.to_string()));
        }
        Ok(id)
    })?;
    start(id);
    Ok(())
}
