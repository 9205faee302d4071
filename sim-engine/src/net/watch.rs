//! Watches: a monitor-like notification that a node was lost.
//!
//! A [`Watch`] is held by a node (the one whose task created it) on a target node. It fires
//! once — with [`DownReason::NodeDown`] when the target crashes, or
//! [`DownReason::NoConnection`] when a partition cuts the link between them — and is then
//! retired; watch again (after a heal or restart) to keep watching. Watching a node that is
//! down or cut off fires at once, as monitoring an unreachable node does in Erlang. A watch
//! held by a node that crashes is retired silently with it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::NetError;
use crate::trace::EventKind;
use crate::world::{self, with_net, NetView};

/// Why a watched node was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DownReason {
    /// The node crashed (or was down when the watch was made).
    NodeDown,
    /// A partition cut the link between watcher and target.
    NoConnection,
}

pub(crate) struct WatchState {
    pub seq: u64,
    pub watcher: u32,
    pub target: u32,
    pub active: bool,
    pub fired: Option<DownReason>,
    pub waker: Option<Waker>,
}

/// A watch on a node; see [`watch`].
#[derive(Debug)]
pub struct Watch {
    id: u32,
    epoch: u32,
}

/// Watches the node called `name` from the current task's node. Must be called from a task
/// in a simulation.
///
/// ```
/// use std::time::Duration;
/// use sim_core::net::{watch, DownReason};
/// use sim_core::node::crash;
/// use sim_core::sim::{Config, Sim};
/// use sim_core::time::sleep;
///
/// let mut sim = Sim::new(Config::default());
/// sim.node("server", |_| async { sleep(Duration::from_secs(3600)).await });
/// sim.client("monitor", |_| async {
///     let w = watch("server").unwrap();
///     sim_core::rt::spawn(async {
///         sleep(Duration::from_secs(1)).await;
///         crash("server").unwrap();
///     });
///     assert_eq!(w.down().await, DownReason::NodeDown);
/// });
/// assert!(sim.run_seed(0).outcome.class.is_pass());
/// ```
pub fn watch(name: &str) -> Result<Watch, NetError> {
    with_net(|w| {
        let watcher = w
            .current_node()
            .expect("net::watch must be called from a task");
        let target = w
            .nodes
            .find(name)
            .ok_or_else(|| NetError::UnknownName(name.to_string()))?;
        let seq = w.net.next_seq();
        let id = w.net.watches.len() as u32;
        w.net.watches.push(WatchState {
            seq,
            watcher,
            target,
            active: true,
            fired: None,
            waker: None,
        });
        if watcher != target {
            if !w.nodes.is_up(target) {
                fire(w, id, DownReason::NodeDown);
            } else if w.net.pair_cut(watcher, target) {
                fire(w, id, DownReason::NoConnection);
            }
        }
        Ok(Watch { id, epoch: w.epoch })
    })
}

/// Fires watch `id` (once) and retires it.
pub(crate) fn fire(w: &mut NetView<'_>, id: u32, reason: DownReason) {
    let wa = &mut w.net.watches[id as usize];
    if !wa.active {
        return;
    }
    debug_assert!(wa.fired.is_none(), "watch {id} fires twice");
    wa.active = false;
    wa.fired = Some(reason);
    if let Some(waker) = wa.waker.take() {
        waker.wake();
    }
    let (watcher, target) = (wa.watcher, wa.target);
    let text = if w.history.is_recording() {
        format!("watch {id} on {}: {reason:?}", w.nodes.name(target))
    } else {
        String::new()
    };
    let reason_code = match reason {
        DownReason::NodeDown => 1,
        DownReason::NoConnection => 2,
    };
    w.record(
        Some(watcher),
        EventKind::NodeDown {
            watch: u64::from(id),
            target,
            reason: reason_code,
        },
        || text,
    );
}

impl Watch {
    /// Completes when the watched node is lost, with the reason.
    pub fn down(&self) -> Down<'_> {
        Down { watch: self }
    }

    /// The reason, if the watch has fired.
    pub fn fired(&self) -> Option<DownReason> {
        world::try_with_net(self.epoch, |w| w.net.watches[self.id as usize].fired).flatten()
    }
}

/// Future of [`Watch::down`].
#[derive(Debug)]
pub struct Down<'a> {
    watch: &'a Watch,
}

impl Future for Down<'_> {
    type Output = DownReason;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<DownReason> {
        let id = self.watch.id as usize;
        with_net(|w| {
            let wa = &mut w.net.watches[id];
            match wa.fired {
                Some(reason) => Poll::Ready(reason),
                None => {
                    if wa.active {
                        wa.waker = Some(cx.waker().clone());
                    }
                    Poll::Pending
                }
            }
        })
    }
}

/// Completes when the node called `name` is reachable from the current task's node: up, and
/// no partition cuts either direction between them (at once if it already is). The event to
/// await after a [`DownReason`] — a restart or a healed partition — instead of polling.
/// Must be called from a task in a simulation.
///
/// ```
/// use std::time::Duration;
/// use sim_core::net::reachable;
/// use sim_core::node::{crash, restart};
/// use sim_core::sim::{Config, Sim};
/// use sim_core::time::{now, sleep, Instant};
///
/// let mut sim = Sim::new(Config::default());
/// sim.node("server", |_| async { sleep(Duration::from_secs(3600)).await });
/// sim.client("client", |_| async {
///     crash("server").unwrap();
///     sim_core::rt::spawn(async {
///         sleep(Duration::from_secs(2)).await;
///         restart("server").unwrap();
///     });
///     reachable("server").unwrap().await;
///     assert_eq!(now(), Instant::from_nanos(2_000_000_000), "woken by the restart");
/// });
/// assert!(sim.run_seed(0).outcome.class.is_pass());
/// ```
pub fn reachable(name: &str) -> Result<Reachable, NetError> {
    with_net(|w| {
        let from = w
            .current_node()
            .expect("net::reachable must be called from a task");
        let target = w
            .nodes
            .find(name)
            .ok_or_else(|| NetError::UnknownName(name.to_string()))?;
        Ok(Reachable {
            from,
            target,
            epoch: w.epoch,
        })
    })
}

/// Future of [`reachable`].
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct Reachable {
    from: u32,
    target: u32,
    epoch: u32,
}

impl Future for Reachable {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        world::try_with_net(self.epoch, |w| {
            if w.nodes.is_up(self.target) && !w.net.pair_cut(self.from, self.target) {
                return Poll::Ready(());
            }
            if !w.net.reach_waiters.iter().any(|k| k.will_wake(cx.waker())) {
                w.net.reach_waiters.push(cx.waker().clone());
            }
            Poll::Pending
        })
        .unwrap_or(Poll::Pending)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        world::try_with_net(self.epoch, |w| {
            if let Some(wa) = w.net.watches.get_mut(self.id as usize) {
                wa.active = false;
                wa.waker = None;
            }
        });
    }
}
