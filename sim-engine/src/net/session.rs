//! Datagram links with session semantics (owner of the session table and the break
//! notices): see [`SessionSocket`] for what a session promises and what it may do.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::datagram::{boxed, record_send, unbox, wire_id, Message, Sent, Socket};
use super::labels::{NET_FAULT_DUPLICATE, NET_FAULT_LOSS, NET_FAULT_REORDER};
use super::{draw_link_faults, fifo_at, incarnation, latency_ns, Addr, NetError, PER_MILLE};
use crate::choice::Choices;
use crate::trace::{stable_hash, EventKind};
use crate::world::{with_net, NetView};

/// What a [`SessionSocket`] receives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SessionEvent<M> {
    /// A message, in its session's order.
    Message {
        /// The sender.
        from: Addr,
        /// The message.
        msg: M,
    },
    /// The session with `peer` broke: messages sent before may be lost, and the next message
    /// either way starts a new session.
    Broken {
        /// The other end.
        peer: Addr,
    },
}

/// The marker a break leaves in a session socket's queue.
struct BreakNotice;

/// A datagram endpoint with session semantics: in order and exactly once, until the session
/// breaks — and then both ends are told. Dropping it unbinds the port.
///
/// Many protocols are written against per-link sessions (a TCP connection, a QUIC stream, an
/// RPC channel): within a session nothing is lost, duplicated or reordered, and when something
/// goes wrong the session breaks and both ends learn it. A [`SessionSocket`] gives that model
/// on datagram links, so a protocol designed for it is not failed by faults it was never meant
/// to survive (a message from an earlier session delivered late into a later one).
///
/// Fault model (what a session promises and what it may do): between two session sockets,
/// messages of one session arrive in send order, each exactly once. Loss, duplication and
/// reordering happen only *across a session break*: when the run's profile draws any of them
/// for a message, or a partition cuts the link, or either end's node crashes, or the far end
/// has no socket bound, the session breaks — that message and everything still in flight in
/// the old session are dropped, and each end that is still bound receives
/// [`SessionEvent::Broken`] in its queue, after everything that arrived before the break and
/// before anything of the next session. The next message starts the next session. Latency,
/// jitter and clogs (which hold and release in order) apply as on any link.
///
/// Every break is an event in the history ([`crate::trace::EventKind::SessionBroken`]).
///
/// ```
/// use sim_core::net::{partition, heal, reachable, Addr, SessionEvent, SessionSocket};
/// use sim_core::sim::{Config, Sim};
///
/// let mut sim = Sim::new(Config::default());
/// sim.node("b", |_| async {
///     let sock = SessionSocket::<u32>::bind(1).unwrap();
///     loop {
///         if let SessionEvent::Message { from, msg } = sock.recv().await {
///             sock.send(from, msg);
///         }
///     }
/// });
/// sim.client("a", |_| async {
///     let sock = SessionSocket::<u32>::bind(1).unwrap();
///     let b = Addr::named("b", 1);
///     sock.send(b, 1);
///     assert_eq!(sock.recv().await, SessionEvent::Message { from: b, msg: 1 });
///     partition(&["a"], &["b"]).unwrap();
///     assert_eq!(sock.recv().await, SessionEvent::Broken { peer: b }, "both ends are told");
///     sim_core::rt::spawn(async { heal(&["a"], &["b"]).unwrap() });
///     reachable("b").unwrap().await; // no polling: woken by the heal
///     sock.send(b, 2);
///     assert_eq!(sock.recv().await, SessionEvent::Message { from: b, msg: 2 });
/// });
/// assert!(sim.run_seed(0).outcome.class.is_pass());
/// ```
pub struct SessionSocket<M> {
    socket: Socket<M>,
}

impl<M: Message> SessionSocket<M> {
    /// Binds `port` on the current task's node. Must be called from a task in a simulation.
    pub fn bind(port: u16) -> Result<SessionSocket<M>, NetError> {
        Ok(SessionSocket {
            socket: Socket::bind_with(port, true, true)?,
        })
    }

    /// This socket's address.
    pub fn local_addr(&self) -> Addr {
        self.socket.local_addr()
    }

    /// Sends `msg` to `to` in the current session with it (starting one if the last broke).
    /// A socket whose node crashed sends nothing.
    pub fn send(&self, to: Addr, msg: M) {
        with_net(|w| {
            if let Some(id) = wire_id(w, &self.socket) {
                send(w, &self.socket, to, msg, id);
            }
        })
    }

    /// Receives the next message or session break.
    pub fn recv(&self) -> RecvEvent<'_, M> {
        RecvEvent { socket: self }
    }

    /// The number of the current session with `peer` (1 for the first; one more after each
    /// break). Must be called within a simulation.
    pub fn session(&self, peer: Addr) -> u32 {
        with_net(|w| current(w, self.socket.addr, peer))
    }
}

/// Future of [`SessionSocket::recv`].
pub struct RecvEvent<'a, M> {
    socket: &'a SessionSocket<M>,
}

impl<M: Message> Future for RecvEvent<'_, M> {
    type Output = SessionEvent<M>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<SessionEvent<M>> {
        let sock = &self.socket.socket;
        let (addr, bind_id) = (sock.addr, sock.bind_id);
        with_net(|w| {
            let Some(mb) = w.net.mailboxes.get_mut(&(addr.node.0, addr.port)) else {
                return Poll::Pending;
            };
            if mb.bind_id != bind_id {
                return Poll::Pending;
            }
            match mb.queue.pop_front() {
                Some((peer, payload)) if payload.is::<BreakNotice>() => {
                    Poll::Ready(SessionEvent::Broken { peer })
                }
                Some((from, payload)) => {
                    let type_name = mb.type_name;
                    let msg = unbox::<M>(&mut w.net.spare_payloads, payload, type_name);
                    Poll::Ready(SessionEvent::Message { from, msg })
                }
                None => {
                    mb.waiter = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
    }
}

/// The sessions table's key: the two ends, in order (a session is one for both directions).
fn key(a: Addr, b: Addr) -> (Addr, Addr) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// The current session number between `a` and `b`.
fn current(w: &NetView<'_>, a: Addr, b: Addr) -> u32 {
    w.net.sessions.get(&key(a, b)).copied().unwrap_or(1)
}

/// True if `session` is still the current one between `from` and `to`.
#[cold]
pub(super) fn is_current(w: &NetView<'_>, from: Addr, to: Addr, session: u32) -> bool {
    current(w, from, to) == session
}

/// Breaks the session between `a` and `b`: the next message starts a new one, traffic of the
/// old one is dropped on arrival, and each bound session end is told.
#[cold]
pub(super) fn break_session(w: &mut NetView<'_>, a: Addr, b: Addr, why: &str) {
    let k = key(a, b);
    let old = current(w, a, b);
    w.net.sessions.insert(k, old + 1);
    for (end, peer) in [(k.0, k.1), (k.1, k.0)] {
        let Some(mb) = w.net.mailboxes.get_mut(&(end.node.0, end.port)) else {
            continue;
        };
        if !mb.sessions {
            continue;
        }
        mb.queue.push_back((peer, Box::new(BreakNotice)));
        let waiter = mb.waiter.take();
        let detail = if w.history.is_recording() {
            let name = w.nodes.name(peer.node.0);
            format!("session {old} with {name}:{} broken: {why}", peer.port)
        } else {
            String::new()
        };
        w.record(
            Some(end.node.0),
            EventKind::SessionBroken {
                session: u64::from(old),
                digest: stable_hash(&(peer.node.0, peer.port)),
            },
            || detail,
        );
        if let Some(waker) = waiter {
            w.wake(waker);
        }
    }
}

/// Breaks every session between nodes of `pairs` (a partition cut them).
pub(super) fn break_cut(w: &mut NetView<'_>, pairs: &[(u32, u32)]) {
    let cut: Vec<(Addr, Addr)> = w
        .net
        .sessions
        .keys()
        .filter(|(x, y)| {
            pairs
                .iter()
                .any(|&(a, b)| (x.node.0, y.node.0) == (a, b) || (x.node.0, y.node.0) == (b, a))
        })
        .copied()
        .collect();
    for (x, y) in cut {
        break_session(w, x, y, "partition cut the link");
    }
}

/// Breaks every session with an end on `node` (it crashed).
pub(super) fn break_node(w: &mut NetView<'_>, node: u32) {
    let gone: Vec<(Addr, Addr)> = w
        .net
        .sessions
        .keys()
        .filter(|(x, y)| x.node.0 == node || y.node.0 == node)
        .copied()
        .collect();
    for (x, y) in gone {
        break_session(w, x, y, "node crashed");
    }
}

/// Sends `payload` from session socket `sock` to `to`: in order in the current session, or —
/// if the profile draws a datagram fault for it, or the link is cut — not at all, and the
/// session breaks.
pub(super) fn send<M: Message>(
    w: &mut NetView<'_>,
    sock: &Socket<M>,
    to: Addr,
    payload: M,
    id: u64,
) {
    let from = sock.addr;
    let (a, b) = (from.node.0, to.node.0);
    let digest = stable_hash(&payload);
    if (b as usize) >= w.net.n {
        w.record(Some(a), EventKind::Drop { msg: id }, || {
            format!("#{id}: no such node")
        });
        return;
    }
    // Sessions open lazily: the first message between two ends is in session 1.
    let session = *w.net.sessions.entry(key(from, to)).or_insert(1);
    let faultable = a != b;
    let p = w.net.profile;
    if faultable && p.faults_datagrams() {
        draw_link_faults(w, a, b);
    }
    let latency = latency_ns(w, a, b);
    let at = fifo_at(w, a, b, latency);
    record_send(
        w,
        Sent {
            id,
            from,
            to,
            deliver_at_ns: at,
            reordered: false,
            digest,
        },
        &payload,
    );
    let fault = if !faultable {
        None
    } else if w.net.is_cut(a, b) {
        Some("partitioned")
    } else if p.reorder_per_mille > 0
        && w.source.chance(
            NET_FAULT_REORDER.name(),
            u64::from(p.reorder_per_mille),
            PER_MILLE,
        )
    {
        Some("reordered")
    } else if p.loss_per_mille > 0
        && w.source.chance(
            NET_FAULT_LOSS.name(),
            u64::from(p.loss_per_mille),
            PER_MILLE,
        )
    {
        Some("lost")
    } else if p.duplicate_per_mille > 0
        && w.source.chance(
            NET_FAULT_DUPLICATE.name(),
            u64::from(p.duplicate_per_mille),
            PER_MILLE,
        )
    {
        Some("duplicated")
    } else {
        None
    };
    if let Some(fault) = fault {
        w.record(Some(a), EventKind::Drop { msg: id }, || {
            format!("#{id}: {fault} in session {session}, so the session breaks")
        });
        break_session(w, from, to, fault);
        return;
    }
    let to_inc = incarnation(w, b);
    let payload = boxed(&mut w.net.spare_payloads, payload);
    w.clock.schedule(
        at,
        sock.datagram_in(id, to, to_inc, faultable, session, payload),
    );
}
