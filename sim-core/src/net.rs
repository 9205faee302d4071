//! The simulated network: typed message endpoints between named nodes.
//!
//! Fault model (this module's contract):
//! * A message sent on a [`Socket`] arrives after a latency drawn from the run's input,
//!   uniformly in `latency_ms_min..=latency_ms_max` of the [`NetConfig`] (zero = the minimum).
//! * Messages due at the same instant arrive in an order drawn from the input.
//! * A message to a node that is down, or to a port nobody has bound, is dropped on arrival
//!   (the trace says which). Nothing else is lost in this version.
//! * Every send, delivery and drop is an event in the history; payloads enter the hash through
//!   their `Hash` impl, via [`crate::trace::stable_hash`].
//!
//! ```
//! use sim_core::net::{Addr, Socket};
//! use sim_core::sim::{Config, Sim};
//!
//! let mut sim = Sim::new(Config::default());
//! sim.node("echo", |_| async {
//!     let sock = Socket::<String>::bind(7).unwrap();
//!     loop {
//!         let (from, text) = sock.recv().await;
//!         sock.send(from, text);
//!     }
//! });
//! sim.client("client", |_| async {
//!     let sock = Socket::<String>::bind(9).unwrap();
//!     sock.send(Addr::named("echo", 7), "hi".to_string());
//!     assert_eq!(sock.recv().await.1, "hi");
//! });
//! assert!(sim.run_seed(3).outcome.class.is_pass());
//! ```

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, VecDeque};
use std::fmt::{self, Debug};
use std::future::Future;
use std::hash::Hash;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::choice::Choices;
use crate::node::NodeId;
use crate::trace::{stable_hash, EventKind};
use crate::world::{self, with, Pending};

/// What a message must be: any `'static` value that can be printed in a trace and hashed
/// into the history.
pub trait Message: Any + Debug + Hash {}
impl<T: Any + Debug + Hash> Message for T {}

/// A node and a port.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Addr {
    /// The node.
    pub node: NodeId,
    /// The port on it.
    pub port: u16,
}

impl Addr {
    /// `port` on the node called `name`.
    ///
    /// # Panics
    /// If no node has that name (a scenario bug). Must be called from within a simulation.
    pub fn named(name: &str, port: u16) -> Addr {
        let node = crate::node::lookup(name)
            .unwrap_or_else(|| panic!("no node named {name:?} in this simulation"));
        Addr { node, port }
    }
}

impl Debug for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = world::try_with(crate::world::current_epoch(), |w| {
            w.nodes.name(self.node.0).to_string()
        });
        match name {
            Some(n) => write!(f, "{n}:{}", self.port),
            None => write!(f, "node{}:{}", self.node.0, self.port),
        }
    }
}

/// Latency settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetConfig {
    /// Smallest one-way latency.
    pub latency_ms_min: u64,
    /// Largest one-way latency.
    pub latency_ms_max: u64,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            latency_ms_min: 1,
            latency_ms_max: 10,
        }
    }
}

/// Errors a program could see from the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// Another socket on this node already has the port.
    #[error("port {0} is already bound on this node; pick another port or drop the old socket")]
    AddrInUse(u16),
}

trait Payload: Any + Debug {
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}
impl<T: Any + Debug> Payload for T {
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// A message in flight.
pub(crate) struct Packet {
    id: u64,
    from: Addr,
    to: Addr,
    payload: Box<dyn Payload>,
}

struct Mailbox {
    /// Which bind created it, so a stale socket's drop cannot unbind a newer one.
    bind_id: u64,
    type_id: TypeId,
    type_name: &'static str,
    queue: VecDeque<(Addr, Box<dyn Payload>)>,
    waiter: Option<Waker>,
}

/// The network state of one run.
pub(crate) struct Network {
    pub config: NetConfig,
    mailboxes: BTreeMap<(u32, u16), Mailbox>,
    next_msg: u64,
    next_bind: u64,
}

impl Network {
    pub fn new(config: NetConfig) -> Self {
        Network {
            config,
            mailboxes: BTreeMap::new(),
            next_msg: 0,
            next_bind: 0,
        }
    }

    /// Unbinds every port of `node` (it crashed); queued messages are lost with it.
    pub fn unbind_node(&mut self, node: u32) -> usize {
        let ports: Vec<_> = self
            .mailboxes
            .range((node, 0)..=(node, u16::MAX))
            .map(|(k, _)| *k)
            .collect();
        let mut lost = 0;
        for key in ports {
            lost += self.mailboxes.remove(&key).map_or(0, |m| m.queue.len());
        }
        lost
    }
}

/// `name:port`, for trace details (the world is borrowed, so `Debug for Addr` cannot look).
fn addr_text(w: &world::World, a: Addr) -> String {
    format!("{}:{}", w.nodes.name(a.node.0), a.port)
}

/// Delivers a packet that has arrived (called by the harness when it is due).
pub(crate) fn deliver(w: &mut world::World, packet: Packet) {
    let to = packet.to;
    let id = packet.id;
    let route = if w.history.is_recording() {
        format!(
            "#{id} {} -> {}",
            addr_text(w, packet.from),
            addr_text(w, to)
        )
    } else {
        String::new()
    };
    let up = w.nodes.is_up(to.node.0);
    match w.net.mailboxes.get_mut(&(to.node.0, to.port)) {
        Some(mb) if up => {
            mb.queue.push_back((packet.from, packet.payload));
            if let Some(waker) = mb.waiter.take() {
                waker.wake();
            }
            w.record(Some(to.node.0), EventKind::Deliver { msg: id }, || route);
        }
        _ => {
            let reason = if up {
                "no socket bound on port"
            } else {
                "destination node is down"
            };
            w.record(Some(to.node.0), EventKind::Drop { msg: id }, || {
                format!("{route}: {reason}")
            });
        }
    }
}

/// A bound, typed message endpoint on the current node. Dropping it unbinds the port.
pub struct Socket<M> {
    addr: Addr,
    bind_id: u64,
    epoch: u32,
    _message: PhantomData<fn() -> M>,
}

impl<M: Message> Socket<M> {
    /// Binds `port` on the current task's node. Must be called from a task in a simulation.
    pub fn bind(port: u16) -> Result<Socket<M>, NetError> {
        with(|w| {
            let node = w
                .current_node()
                .expect("Socket::bind must be called from a task");
            let key = (node, port);
            if w.net.mailboxes.contains_key(&key) {
                return Err(NetError::AddrInUse(port));
            }
            w.net.next_bind += 1;
            let bind_id = w.net.next_bind;
            w.net.mailboxes.insert(
                key,
                Mailbox {
                    bind_id,
                    type_id: TypeId::of::<M>(),
                    type_name: std::any::type_name::<M>(),
                    queue: VecDeque::new(),
                    waiter: None,
                },
            );
            Ok(Socket {
                addr: Addr {
                    node: NodeId(node),
                    port,
                },
                bind_id,
                epoch: w.epoch,
                _message: PhantomData,
            })
        })
    }

    /// This socket's address.
    pub fn local_addr(&self) -> Addr {
        self.addr
    }

    /// Sends `msg` to `to`; it arrives after a drawn latency, or is dropped (see module docs).
    pub fn send(&self, to: Addr, msg: M) {
        with(|w| {
            let from = self.addr;
            let latency_ms = w.source.range_inclusive(
                "net.latency_ms",
                w.net.config.latency_ms_min,
                w.net.config.latency_ms_max,
            );
            let deliver_at_ns = w.clock.now_ns + latency_ms * 1_000_000;
            w.net.next_msg += 1;
            let id = w.net.next_msg;
            let digest = stable_hash(&msg);
            let detail = if w.history.is_recording() {
                format!(
                    "#{id} {} -> {} +{latency_ms}ms {msg:?}",
                    addr_text(w, from),
                    addr_text(w, to)
                )
            } else {
                String::new()
            };
            w.record(
                Some(from.node.0),
                EventKind::Send {
                    msg: id,
                    to: to.node.0,
                    deliver_at_ns,
                    digest,
                },
                || detail,
            );
            w.clock.schedule(
                deliver_at_ns,
                Pending::Deliver(Packet {
                    id,
                    from,
                    to,
                    payload: Box::new(msg),
                }),
            );
        })
    }

    /// Receives the next message and its sender.
    pub fn recv(&self) -> Recv<'_, M> {
        Recv { socket: self }
    }

    /// A message if one is queued, without waiting.
    pub fn try_recv(&self) -> Option<(Addr, M)> {
        with(|w| {
            let mb = w
                .net
                .mailboxes
                .get_mut(&(self.addr.node.0, self.addr.port))?;
            if mb.bind_id != self.bind_id {
                return None;
            }
            let (from, payload) = mb.queue.pop_front()?;
            Some((from, downcast::<M>(payload, mb.type_name)))
        })
    }
}

fn downcast<M: Message>(payload: Box<dyn Payload>, bound_as: &'static str) -> M {
    match payload.into_any().downcast::<M>() {
        Ok(m) => *m,
        Err(_) => panic!(
            "a message of another type arrived on a port bound for {bound_as}; \
             senders and receivers of one port must agree on its message type"
        ),
    }
}

/// Future of [`Socket::recv`].
pub struct Recv<'a, M> {
    socket: &'a Socket<M>,
}

impl<M: Message> Future for Recv<'_, M> {
    type Output = (Addr, M);
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<(Addr, M)> {
        let addr = self.socket.addr;
        let bind_id = self.socket.bind_id;
        with(|w| {
            // A socket whose node crashed has no mailbox any more: it never receives again.
            let Some(mb) = w.net.mailboxes.get_mut(&(addr.node.0, addr.port)) else {
                return Poll::Pending;
            };
            if mb.bind_id != bind_id {
                return Poll::Pending;
            }
            debug_assert_eq!(mb.type_id, TypeId::of::<M>());
            match mb.queue.pop_front() {
                Some((from, payload)) => Poll::Ready((from, downcast::<M>(payload, mb.type_name))),
                None => {
                    mb.waiter = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
    }
}

impl<M> Drop for Socket<M> {
    fn drop(&mut self) {
        let key = (self.addr.node.0, self.addr.port);
        let bind_id = self.bind_id;
        world::try_with(self.epoch, |w| {
            if w.net
                .mailboxes
                .get(&key)
                .is_some_and(|m| m.bind_id == bind_id)
            {
                w.net.mailboxes.remove(&key);
            }
        });
    }
}
