//! Datagram endpoints: typed messages with latency, and loss, duplication and reordering as
//! separate faults.

use std::any::{Any, TypeId};
use std::collections::VecDeque;
use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::labels::{NET_FAULT_DUPLICATE, NET_FAULT_LOSS, NET_FAULT_REORDER, NET_FAULT_REORDER_MS};
use super::{
    alive, draw_link_faults, fifo_at, incarnation, latency_ns, node_name, Addr, NetError, PER_MILLE,
};
use crate::choice::Choices;
use crate::node_id::NodeId;
use crate::trace::{stable_hash, EventKind};
use crate::world::DueEvent;
use crate::world::{self, with_net, NetView};

/// What a message must be: any `'static` value that can be printed in a trace, hashed into
/// the history, and cloned (a duplicated datagram is a clone).
///
/// A type from another crate that has no `Hash` (a third-party protocol's wire message, say)
/// goes on the wire wrapped: [`crate::net::Foreign::by_debug`] hashes it by its `Debug` text.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent over the simulated network: a message must be `Debug + Hash + Clone + 'static`",
    note = "for a type you cannot derive `Hash` on (another crate's message), send `sim_core::net::Foreign::by_debug(value)` instead: it hashes the value by its `Debug` text"
)]
pub trait Message: Any + Debug + Hash + Clone {}
impl<T: Any + Debug + Hash + Clone> Message for T {}

/// A message in a box of its own, type-erased while it is in flight or queued: a
/// `Box<Option<M>>` behind `dyn Any`. The `Option` lets the receiver move the message out and
/// keep the empty box, which goes back to the network's spare boxes for the next send (see
/// [`boxed`] and [`unbox`]): a request/response workload then allocates nothing per message.
pub(crate) type Payload = Box<dyn Any>;

/// Empty boxes kept for reuse at most; beyond this they are freed.
const SPARE_BOXES: usize = 64;

/// `msg` in a payload box: a spare one if the last spare holds this type, else a new one.
#[inline]
pub(super) fn boxed<M: Message>(spare: &mut Vec<Payload>, msg: M) -> Payload {
    if let Some(mut b) = spare.pop() {
        // `(*b)`: the `dyn Any` inside, not the box (itself an `Any`).
        if let Some(slot) = (*b).downcast_mut::<Option<M>>() {
            *slot = Some(msg);
            return b;
        }
        // A box of another message type: leave it for a sender of that type.
        spare.push(b);
    }
    Box::new(Some(msg))
}

/// Moves the message out of its payload box and keeps the empty box as a spare.
#[inline]
pub(super) fn unbox<M: Message>(
    spare: &mut Vec<Payload>,
    mut payload: Payload,
    bound_as: &'static str,
) -> M {
    let msg = (*payload)
        .downcast_mut::<Option<M>>()
        .and_then(Option::take)
        .unwrap_or_else(|| {
            panic!(
                "a message of another type arrived on a port bound for {bound_as}; \
                 senders and receivers of one port must agree on its message type"
            )
        });
    if spare.len() < SPARE_BOXES {
        spare.push(payload);
    }
    msg
}

/// A datagram in flight.
pub(crate) struct Datagram {
    pub id: u64,
    from: Addr,
    to: Addr,
    /// Incarnations of both ends when it was sent: a crash of either cancels it.
    from_inc: u32,
    to_inc: u32,
    faultable: bool,
    /// The session it was sent in ([`super::session`]); 0 for traffic without sessions.
    pub session: u32,
    payload: Payload,
}

pub(crate) struct Mailbox {
    /// Which bind created it, so a stale socket's drop cannot unbind a newer one.
    pub bind_id: u64,
    faultable: bool,
    /// Bound by a [`super::SessionSocket`]: it is told of session breaks.
    pub sessions: bool,
    type_id: TypeId,
    pub type_name: &'static str,
    pub queue: VecDeque<(Addr, Payload)>,
    pub waiter: Option<Waker>,
}

fn route_text(w: &NetView<'_>, id: u64, from: Addr, to: Addr) -> String {
    format!(
        "#{id} {}:{} -> {}:{}",
        node_name(w, from.node.0),
        from.port,
        node_name(w, to.node.0),
        to.port
    )
}

/// A datagram reached its destination's node: deliver, hold, or drop it.
#[inline]
pub(crate) fn arrive(w: &mut NetView<'_>, d: Datagram) {
    let (from, to) = (d.from.node.0, d.to.node.0);
    let reason = if incarnation(w, from) != d.from_inc {
        Some("sender crashed: its in-flight traffic is cancelled")
    } else if !w.nodes.is_up(to) {
        Some("destination node is down")
    } else if incarnation(w, to) != d.to_inc {
        Some("destination restarted: traffic to its old incarnation is cancelled")
    } else if d.session != 0 && !super::session::is_current(w, d.from, d.to, d.session) {
        Some("its session broke: traffic of an old session is dropped")
    } else if d.faultable && w.net.is_cut(from, to) {
        Some("partitioned")
    } else {
        None
    };
    // Only a recording run pays for the readable route.
    let route = if w.history.is_recording() {
        route_text(w, d.id, d.from, d.to)
    } else {
        String::new()
    };
    if let Some(reason) = reason {
        w.record(Some(to), EventKind::Drop { msg: d.id }, || {
            format!("{route}: {reason}")
        });
        return;
    }
    if d.faultable && w.net.link(from, to).is_clogged() {
        w.record(Some(to), EventKind::Hold { msg: d.id }, || {
            format!("{route}: clogged, held")
        });
        w.net.link(from, to).held.push_back(d);
        return;
    }
    let Some(mb) = w.net.mailboxes.get_mut(&(to, d.to.port)) else {
        w.record(Some(to), EventKind::Drop { msg: d.id }, || {
            format!("{route}: no socket bound on port")
        });
        if d.session != 0 {
            super::session::break_session(w, d.from, d.to, "no socket at the far end");
        }
        return;
    };
    mb.queue.push_back((d.from, d.payload));
    if let Some(waker) = mb.waiter.take() {
        w.wake(waker);
    }
    w.record(Some(to), EventKind::Deliver { msg: d.id }, || route);
}

/// Releases the datagrams a clog held on `from -> to`: they reach their sockets now, in the
/// order they arrived, ahead of anything still on the wire behind them (so the link stays
/// FIFO).
pub(crate) fn release_held(w: &mut NetView<'_>, from: u32, to: u32) {
    let held = std::mem::take(&mut w.net.link(from, to).held);
    for d in held {
        let id = d.id;
        w.record(Some(to), EventKind::Release { msg: id }, || {
            format!("#{id} released")
        });
        arrive(w, d);
    }
}

/// A bound, typed datagram endpoint on the current node. Dropping it unbinds the port.
pub struct Socket<M> {
    pub(super) addr: Addr,
    pub(super) bind_id: u64,
    epoch: u32,
    pub(super) inc: u32,
    faultable: bool,
    _message: PhantomData<fn() -> M>,
}

impl<M: Message> Socket<M> {
    /// Binds `port` on the current task's node; its traffic is faultable. Must be called
    /// from a task in a simulation.
    pub fn bind(port: u16) -> Result<Socket<M>, NetError> {
        Self::bind_with(port, true, false)
    }

    /// Binds `port` on the current task's node, *exempt from faults*: the socket is located
    /// (it dies with its node, and is gone after a crash) but no message to or from it is
    /// ever lost, duplicated, reordered, held or dropped by a partition. Use it for traffic
    /// that stands for something that cannot silently lose a message, like a durable store.
    ///
    /// ```
    /// use sim_core::net::{partition, Addr, Socket};
    /// use sim_core::sim::{Config, Sim};
    ///
    /// let mut sim = Sim::new(Config::default());
    /// sim.node("store", |_| async {
    ///     let sock = Socket::<u8>::bind_exempt(1).unwrap();
    ///     let (from, n) = sock.recv().await;
    ///     sock.send(from, n);
    /// });
    /// sim.client("app", |_| async {
    ///     partition(&["app"], &["store"]).unwrap();
    ///     let sock = Socket::<u8>::bind_exempt(1).unwrap();
    ///     sock.send(Addr::named("store", 1), 5);
    ///     assert_eq!(sock.recv().await.1, 5, "a partition does not cut exempt traffic");
    /// });
    /// assert!(sim.run_seed(0).outcome.class.is_pass());
    /// ```
    pub fn bind_exempt(port: u16) -> Result<Socket<M>, NetError> {
        Self::bind_with(port, false, false)
    }

    pub(super) fn bind_with(
        port: u16,
        faultable: bool,
        sessions: bool,
    ) -> Result<Socket<M>, NetError> {
        with_net(|w| {
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
                    faultable,
                    sessions,
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
                inc: incarnation(w, node),
                faultable,
                _message: PhantomData,
            })
        })
    }

    /// Message `id` from this socket to `to` (in incarnation `to_inc`), ready for the wire.
    fn datagram(
        &self,
        id: u64,
        to: Addr,
        to_inc: u32,
        faultable: bool,
        payload: Payload,
    ) -> DueEvent {
        self.datagram_in(id, to, to_inc, faultable, 0, payload)
    }

    /// [`Socket::datagram`] in session `session` (0: none).
    pub(super) fn datagram_in(
        &self,
        id: u64,
        to: Addr,
        to_inc: u32,
        faultable: bool,
        session: u32,
        payload: Payload,
    ) -> DueEvent {
        DueEvent::Datagram(Datagram {
            id,
            from: self.addr,
            to,
            from_inc: self.inc,
            to_inc,
            faultable,
            session,
            payload,
        })
    }

    /// This socket's address.
    pub fn local_addr(&self) -> Addr {
        self.addr
    }

    /// Sends `msg` to `to`. It arrives after the link's latency — or is lost, duplicated,
    /// delayed past later messages, held or dropped, as the run's faults decide (see the
    /// module docs). A socket whose node crashed sends nothing.
    pub fn send(&self, to: Addr, msg: M) {
        with_net(|w| send(w, self, to, msg))
    }

    /// Receives the next message and its sender.
    ///
    /// Cancel-safe: a message leaves the socket's queue only in the poll that returns it, so
    /// dropping the future (the losing branch of a `select`, a timeout) loses nothing, and the
    /// next `recv` gets the message.
    pub fn recv(&self) -> Recv<'_, M> {
        Recv { socket: self }
    }

    /// A message if one is queued, without waiting.
    pub fn try_recv(&self) -> Option<(Addr, M)> {
        with_net(|w| {
            let mb = w
                .net
                .mailboxes
                .get_mut(&(self.addr.node.0, self.addr.port))?;
            if mb.bind_id != self.bind_id {
                return None;
            }
            let (from, payload) = mb.queue.pop_front()?;
            let type_name = mb.type_name;
            Some((
                from,
                unbox::<M>(&mut w.net.spare_payloads, payload, type_name),
            ))
        })
    }
}

fn send<M: Message>(w: &mut NetView<'_>, sock: &Socket<M>, to: Addr, payload: M) {
    let from = sock.addr;
    let (a, b) = (from.node.0, to.node.0);
    let Some(id) = wire_id(w, sock) else {
        return;
    };
    let digest = stable_hash(&payload);
    if (b as usize) >= w.net.n {
        w.record(Some(a), EventKind::Drop { msg: id }, || {
            format!("#{id}: no such node")
        });
        return;
    }
    let faultable = sock.faultable
        && a != b
        && w.net
            .mailboxes
            .get(&(b, to.port))
            .is_none_or(|m| m.faultable);
    if faultable && w.net.profile.faults_datagrams() {
        send_faulted(w, sock, to, payload, id, digest);
        return;
    }
    // No fault can be drawn for this message: latency, the send event, a scripted partition.
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
    if faultable && w.net.is_cut(a, b) {
        w.record(Some(a), EventKind::Drop { msg: id }, || {
            format!("#{id}: partitioned")
        });
        return;
    }
    let to_inc = incarnation(w, b);
    let payload = boxed(&mut w.net.spare_payloads, payload);
    w.clock
        .schedule(at, sock.datagram(id, to, to_inc, faultable, payload));
}

/// A new message id for a send from `sock`, or `None` (the drop recorded) if the socket is a
/// zombie: it outlived its node's incarnation and cannot reach the wire.
#[inline]
pub(super) fn wire_id<M>(w: &mut NetView<'_>, sock: &Socket<M>) -> Option<u64> {
    let a = sock.addr.node.0;
    let id = w.net.next_msg();
    if !alive(w, a, sock.inc) {
        w.record(Some(a), EventKind::Drop { msg: id }, || {
            format!("#{id}: sent by a socket whose node crashed")
        });
        return None;
    }
    Some(id)
}

/// A send as the history records it.
pub(super) struct Sent {
    pub id: u64,
    pub from: Addr,
    pub to: Addr,
    /// When it is due at `to` (virtual nanoseconds).
    pub deliver_at_ns: u64,
    /// Whether a reorder fault moved it behind later sends (said in the readable detail).
    pub reordered: bool,
    /// The payload's stable digest.
    pub digest: u64,
}

/// The send event, with its readable detail when recording.
#[inline]
pub(super) fn record_send<M: Message>(w: &mut NetView<'_>, sent: Sent, payload: &M) {
    let kind = EventKind::Send {
        msg: sent.id,
        to: sent.to.node.0,
        deliver_at_ns: sent.deliver_at_ns,
        digest: sent.digest,
    };
    if w.history.is_recording() {
        let detail = send_detail(w, &sent, payload);
        w.record(Some(sent.from.node.0), kind, || detail);
    } else {
        w.record(Some(sent.from.node.0), kind, String::new);
    }
}

/// The readable detail of a send event (recording runs only).
#[cold]
#[inline(never)]
fn send_detail<M: Message>(w: &NetView<'_>, sent: &Sent, payload: &M) -> String {
    format!(
        "{} +{}ms{} {payload:?}",
        route_text(w, sent.id, sent.from, sent.to),
        (sent.deliver_at_ns - w.clock.now_ns()) / 1_000_000,
        if sent.reordered { " (reordered)" } else { "" }
    )
}

/// A faultable send in a run whose profile may fault datagrams: partitions and clogs,
/// reordering, loss and duplication are drawn, in that order.
fn send_faulted<M: Message>(
    w: &mut NetView<'_>,
    sock: &Socket<M>,
    to: Addr,
    payload: M,
    id: u64,
    digest: u64,
) {
    let from = sock.addr;
    let (a, b) = (from.node.0, to.node.0);
    let p = w.net.profile;
    draw_link_faults(w, a, b);
    let latency = latency_ns(w, a, b);
    let reordered = p.reorder_per_mille > 0
        && w.source.chance(
            NET_FAULT_REORDER.name(),
            u64::from(p.reorder_per_mille),
            PER_MILLE,
        );
    let at = if reordered {
        let extra_ms =
            w.source
                .range_inclusive(NET_FAULT_REORDER_MS.name(), 1, p.reorder_ms_max.max(1));
        w.clock.now_ns() + latency + extra_ms * 1_000_000
    } else {
        fifo_at(w, a, b, latency)
    };
    record_send(
        w,
        Sent {
            id,
            from,
            to,
            deliver_at_ns: at,
            reordered,
            digest,
        },
        &payload,
    );
    if w.net.is_cut(a, b) {
        w.record(Some(a), EventKind::Drop { msg: id }, || {
            format!("#{id}: partitioned")
        });
        return;
    }
    if p.loss_per_mille > 0
        && w.source.chance(
            NET_FAULT_LOSS.name(),
            u64::from(p.loss_per_mille),
            PER_MILLE,
        )
    {
        w.record(Some(a), EventKind::Drop { msg: id }, || {
            format!("#{id}: lost")
        });
        return;
    }
    let to_inc = incarnation(w, b);
    let copy = (p.duplicate_per_mille > 0
        && w.source.chance(
            NET_FAULT_DUPLICATE.name(),
            u64::from(p.duplicate_per_mille),
            PER_MILLE,
        ))
    .then(|| payload.clone());
    let payload = boxed(&mut w.net.spare_payloads, payload);
    w.clock
        .schedule(at, sock.datagram(id, to, to_inc, true, payload));
    if let Some(copy) = copy {
        let payload = boxed(&mut w.net.spare_payloads, copy);
        let copy_id = w.net.next_msg();
        let latency = latency_ns(w, a, b);
        let at = fifo_at(w, a, b, latency);
        w.record(
            Some(a),
            EventKind::Duplicate {
                msg: id,
                copy: copy_id,
            },
            || format!("#{id} duplicated as #{copy_id}, due at {at}ns"),
        );
        w.clock
            .schedule(at, sock.datagram(copy_id, to, to_inc, true, payload));
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
        with_net(|w| {
            // A socket whose node crashed has no mailbox any more: it never receives again.
            let Some(mb) = w.net.mailboxes.get_mut(&(addr.node.0, addr.port)) else {
                return Poll::Pending;
            };
            if mb.bind_id != bind_id {
                return Poll::Pending;
            }
            debug_assert_eq!(mb.type_id, TypeId::of::<M>());
            match mb.queue.pop_front() {
                Some((from, payload)) => {
                    let type_name = mb.type_name;
                    let msg = unbox::<M>(&mut w.net.spare_payloads, payload, type_name);
                    Poll::Ready((from, msg))
                }
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
        world::try_with_net(self.epoch, |w| {
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
