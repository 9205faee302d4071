//! Stream connections with TCP's semantics.
//!
//! A connection has two sides (the connector, 0, and the acceptor, 1) and one ordered
//! segment queue per direction. What a program can observe, and where it comes from:
//!
//! * **Connect** sends a SYN. If the target node is up and a [`Listener`] is bound, the
//!   connection is *established in the backlog* when the SYN arrives, and the connect
//!   completes when the SYN-ACK comes back — whether or not anyone has called `accept` yet;
//!   bytes sent before the accept wait in the acceptor's buffer. No listener: the connect
//!   fails with `ConnectionRefused`. Target down, link cut, or the black-hole fault: the SYN
//!   vanishes and the connect never completes (wrap it in [`crate::time::timeout`]).
//! * **Bytes** arrive in order and exactly once, or the connection is reset. Writes never
//!   block (the send buffer is unbounded).
//! * **Half-close**: `close()` (`AsyncWriteExt::close`) sends a FIN; the peer reads to EOF
//!   and may keep writing, and this side keeps reading. When the peer has *closed* (dropped
//!   its stream) rather than half-closed, the first write after its FIN succeeds (the bytes
//!   reach a closed socket, which answers with a reset) and the next fails with `BrokenPipe`.
//! * **Close** (drop): with unread bytes in the receive buffer it sends a reset instead of a
//!   FIN, and the peer reads what had arrived, then gets `ConnectionReset`.
//! * **Faults only TCP can produce**: a *stall* holds a direction's bytes for a while (none
//!   lost); a *reset* kills the connection (both ends see `ConnectionReset`); a *silent peer*
//!   stops answering — nothing more arrives in either direction, no FIN, no reset; clogs
//!   stall, partitions reset. Never loss, duplication, reordering or corruption with the
//!   stream going on.
//! * **Crash**: the crashed side's streams are gone; the survivor's side is reset.

use std::collections::VecDeque;
use std::future::Future;
use std::io::{self, ErrorKind};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use futures::io::{AsyncRead, AsyncWrite};

use super::labels::{
    NET_FAULT_BLACKHOLE, NET_FAULT_REFUSE, NET_FAULT_RESET, NET_FAULT_SILENT,
    NET_FAULT_SILENT_AFTER, NET_FAULT_STALL, NET_FAULT_STALL_MS,
};
use super::{alive, draw_link_faults, incarnation, latency_ns, resolve, Addr, NetError, PER_MILLE};
use crate::choice::Choices;
use crate::node_id::NodeId;
use crate::trace::{stable_hash_bytes, EventKind};
use crate::world::DueEvent;
use crate::world::{self, with_net, NetView};

#[derive(Debug)]
enum SegKind {
    Syn,
    SynAck,
    Refuse,
    Data(Vec<u8>),
    Fin,
    Rst,
}

impl SegKind {
    fn digest(&self) -> u64 {
        match self {
            SegKind::Syn => 1,
            SegKind::SynAck => 2,
            SegKind::Refuse => 3,
            SegKind::Fin => 4,
            SegKind::Rst => 5,
            SegKind::Data(bytes) => stable_hash_bytes(bytes),
        }
    }
    fn name(&self) -> &'static str {
        match self {
            SegKind::Syn => "SYN",
            SegKind::SynAck => "SYN-ACK",
            SegKind::Refuse => "RST (refused)",
            SegKind::Data(_) => "data",
            SegKind::Fin => "FIN",
            SegKind::Rst => "RST",
        }
    }
}

struct Seg {
    id: u64,
    at_ns: u64,
    held: bool,
    kind: SegKind,
}

#[derive(Default)]
struct Dir {
    queue: VecDeque<Seg>,
    last_at_ns: u64,
    stalled_until_ns: u64,
}

pub(crate) struct Side {
    pub node: u32,
    inc: u32,
    port: u16,
    established: bool,
    refused: bool,
    reset: bool,
    fin_rcvd: bool,
    write_shut: bool,
    closed: bool,
    pub dead: bool,
    wrote_after_peer_close: bool,
    recv: VecDeque<u8>,
    waker: Option<Waker>,
}

impl Side {
    fn new(node: u32, inc: u32, port: u16) -> Side {
        Side {
            node,
            inc,
            port,
            established: false,
            refused: false,
            reset: false,
            fin_rcvd: false,
            write_shut: false,
            closed: false,
            dead: false,
            wrote_after_peer_close: false,
            recv: VecDeque::new(),
            waker: None,
        }
    }
    fn wake(&mut self) {
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }
    fn is_live(&self) -> bool {
        !self.dead && !self.reset && !self.closed
    }
}

pub(crate) struct Conn {
    pub seq: u64,
    pub faultable: bool,
    silent_after: Option<u32>,
    silent: bool,
    pub sides: [Side; 2],
    dirs: [Dir; 2],
}

impl Conn {
    /// True while some side can still observe something.
    pub fn is_open(&self) -> bool {
        self.sides.iter().any(Side::is_live)
    }
}

pub(crate) struct ListenerState {
    bind_id: u64,
    faultable: bool,
    backlog: VecDeque<u32>,
    waiter: Option<Waker>,
}

fn io_err(kind: ErrorKind, what: &'static str) -> io::Error {
    io::Error::new(kind, what)
}

/// Queues a segment from side `dir` to the other side, after the link's latency (keeping
/// the direction's order), applying the stream faults to data and FIN segments.
fn push_seg(w: &mut NetView<'_>, c: u32, dir: usize, kind: SegKind) {
    let (from, to, faultable) = {
        let conn = &w.net.conns[c as usize];
        (
            conn.sides[dir].node,
            conn.sides[1 - dir].node,
            conn.faultable && conn.sides[0].node != conn.sides[1].node,
        )
    };
    let id = w.net.next_msg();
    let payload_seg = matches!(kind, SegKind::Data(_) | SegKind::Fin);
    if faultable && payload_seg {
        draw_link_faults(w, from, to);
        let side = &w.net.conns[c as usize].sides[dir];
        if side.reset || side.dead {
            // The drawn partition reset this very connection: the segment dies with it.
            w.record(Some(from), EventKind::Drop { msg: id }, || {
                format!("#{id}: connection reset before the segment left")
            });
            return;
        }
    }
    let latency = latency_ns(w, from, to);
    let now = w.clock.now_ns();
    let conn = &mut w.net.conns[c as usize];
    let d = &mut conn.dirs[dir];
    let at = (now + latency).max(d.last_at_ns + 1);
    d.last_at_ns = at;
    let digest = kind.digest();
    let detail = if w.history.is_recording() {
        let len = if let SegKind::Data(b) = &kind {
            format!(" {} bytes", b.len())
        } else {
            String::new()
        };
        format!("#{id} conn {c} {}{len}, due at {at}ns", kind.name())
    } else {
        String::new()
    };
    w.record(
        Some(from),
        EventKind::Send {
            msg: id,
            to,
            deliver_at_ns: at,
            digest,
        },
        || detail,
    );
    if faultable && payload_seg && !survives_stream_faults(w, c, dir, id, &kind, at) {
        return;
    }
    let queue = &mut w.net.conns[c as usize].dirs[dir].queue;
    // Segments are delivered from the front as they come due: the queue must be in the order
    // of their arrival times, or a later segment would wait behind an earlier one.
    debug_assert!(
        queue.back().is_none_or(|last| last.at_ns < at),
        "conn {c} dir {dir}: segment due at {at}ns queued behind a later one"
    );
    queue.push_back(Seg {
        id,
        at_ns: at,
        held: false,
        kind,
    });
    w.clock.schedule(
        at,
        DueEvent::Segments {
            conn: c,
            dir: dir as u8,
        },
    );
}

/// The stream faults on a data or FIN segment of a faultable connection, sent at `at`: a
/// silent peer drops it, a reset fault drops it with the connection, a stall holds the
/// direction. False when the segment is lost (the drop recorded).
fn survives_stream_faults(
    w: &mut NetView<'_>,
    c: u32,
    dir: usize,
    id: u64,
    kind: &SegKind,
    at: u64,
) -> bool {
    let from = w.net.conns[c as usize].sides[dir].node;
    let p = w.net.profile;
    let silenced = {
        let conn = &mut w.net.conns[c as usize];
        if conn.silent {
            Some("the peer is silent")
        } else if let Some(left) = conn.silent_after.as_mut() {
            if *left == 0 {
                conn.silent = true;
                conn.silent_after = None;
                Some("the peer falls silent")
            } else {
                *left -= 1;
                None
            }
        } else {
            None
        }
    };
    if let Some(why) = silenced {
        w.record(Some(from), EventKind::Drop { msg: id }, || {
            format!("#{id}: {why}")
        });
        return false;
    }
    if matches!(kind, SegKind::Data(_))
        && p.reset_per_mille > 0
        && w.source.chance(
            NET_FAULT_RESET.name(),
            u64::from(p.reset_per_mille),
            PER_MILLE,
        )
    {
        w.record(Some(from), EventKind::Drop { msg: id }, || {
            format!("#{id}: lost with the connection")
        });
        reset_conn(w, c, "reset fault");
        return false;
    }
    if p.stall_per_mille > 0
        && w.source.chance(
            NET_FAULT_STALL.name(),
            u64::from(p.stall_per_mille),
            PER_MILLE,
        )
    {
        let ms = w
            .source
            .range_inclusive(NET_FAULT_STALL_MS.name(), 1, p.stall_ms_max.max(1));
        let d = &mut w.net.conns[c as usize].dirs[dir];
        d.stalled_until_ns = d.stalled_until_ns.max(at + ms * 1_000_000);
    }
    true
}

/// Delivers the segments of `conn`'s direction `dir` that are due, unless a clog or stall
/// holds them.
pub(crate) fn segments_due(w: &mut NetView<'_>, c: u32, dir: u8) {
    let dir = dir as usize;
    let now = w.clock.now_ns();
    loop {
        let conn = &w.net.conns[c as usize];
        let Some(front) = conn.dirs[dir].queue.front() else {
            return;
        };
        if front.at_ns > now {
            return;
        }
        let (from, to) = (conn.sides[dir].node, conn.sides[1 - dir].node);
        let faultable = conn.faultable && from != to;
        let stalled_until = conn.dirs[dir].stalled_until_ns;
        let clogged = faultable && w.net.link_ref(from, to).is_clogged();
        if faultable && (clogged || now < stalled_until) {
            let recording = w.history.is_recording();
            let mut held = Vec::new();
            for seg in w.net.conns[c as usize].dirs[dir].queue.iter_mut() {
                if seg.at_ns <= now && !seg.held {
                    seg.held = true;
                    held.push(seg.id);
                }
            }
            let why = if clogged { "clogged" } else { "stalled" };
            for id in held {
                let text = if recording {
                    format!("#{id} conn {c}: {why}, held")
                } else {
                    String::new()
                };
                w.record(Some(to), EventKind::Hold { msg: id }, || text);
            }
            if !clogged {
                w.clock.schedule(
                    stalled_until,
                    DueEvent::Segments {
                        conn: c,
                        dir: dir as u8,
                    },
                );
            }
            return;
        }
        let seg = w.net.conns[c as usize].dirs[dir]
            .queue
            .pop_front()
            .expect("front exists");
        if seg.held {
            let id = seg.id;
            w.record(Some(from), EventKind::Release { msg: id }, || {
                format!("#{id} conn {c}: released")
            });
        }
        arrive(w, c, dir, seg);
    }
}

/// A segment from side `dir` reached the other side.
fn arrive(w: &mut NetView<'_>, c: u32, dir: usize, seg: Seg) {
    let r = 1 - dir;
    let id = seg.id;
    let to = w.net.conns[c as usize].sides[r].node;
    let name = seg.kind.name();
    if w.net.conns[c as usize].sides[r].dead {
        w.record(Some(to), EventKind::Drop { msg: id }, || {
            format!("#{id} conn {c} {name}: the receiving side crashed")
        });
        return;
    }
    match seg.kind {
        SegKind::Syn => arrive_syn(w, c, r, id),
        SegKind::SynAck => {
            w.record(Some(to), EventKind::Deliver { msg: id }, || {
                format!("#{id} conn {c} SYN-ACK")
            });
            let side = &mut w.net.conns[c as usize].sides[r];
            side.established = true;
            side.wake();
            if side.closed {
                // The connect was abandoned: answer the acceptor with a reset.
                push_seg(w, c, r, SegKind::Rst);
            }
        }
        SegKind::Refuse => {
            w.record(Some(to), EventKind::Deliver { msg: id }, || {
                format!("#{id} conn {c} refused")
            });
            let side = &mut w.net.conns[c as usize].sides[r];
            side.refused = true;
            side.wake();
        }
        SegKind::Data(bytes) => arrive_data(w, c, r, id, bytes),
        SegKind::Fin => {
            let side = &mut w.net.conns[c as usize].sides[r];
            side.fin_rcvd = true;
            side.wake();
            w.record(Some(to), EventKind::Deliver { msg: id }, || {
                format!("#{id} conn {c} FIN")
            });
        }
        SegKind::Rst => {
            w.record(Some(to), EventKind::Deliver { msg: id }, || {
                format!("#{id} conn {c} RST")
            });
            let side = &mut w.net.conns[c as usize].sides[r];
            if !side.closed && !side.reset {
                side.reset = true;
                side.wake();
                w.record(Some(to), EventKind::Reset { conn: u64::from(c) }, || {
                    format!("conn {c}: reset by peer")
                });
            }
        }
    }
}

/// A SYN reached side `r`'s node: the listener accepts it (answering SYN-ACK) unless the
/// node is down, no one listens, or a refuse fault is drawn (answering a refusal).
fn arrive_syn(w: &mut NetView<'_>, c: u32, r: usize, id: u64) {
    let to = w.net.conns[c as usize].sides[r].node;
    if !w.nodes.is_up(to) {
        w.record(Some(to), EventKind::Drop { msg: id }, || {
            format!("#{id} conn {c} SYN: destination node is down")
        });
        return;
    }
    w.record(Some(to), EventKind::Deliver { msg: id }, || {
        format!("#{id} conn {c} SYN")
    });
    let inc = incarnation(w, to);
    let port = w.net.conns[c as usize].sides[r].port;
    let faultable = w.net.conns[c as usize].faultable;
    let p = w.net.profile;
    let accepted = match w.net.listeners.get(&(to, port)) {
        None => false,
        Some(l) => {
            let lf = l.faultable;
            !(faultable
                && lf
                && p.refuse_per_mille > 0
                && w.source.chance(
                    NET_FAULT_REFUSE.name(),
                    u64::from(p.refuse_per_mille),
                    PER_MILLE,
                ))
        }
    };
    if !accepted {
        push_seg(w, c, r, SegKind::Refuse);
        return;
    }
    let l = w.net.listeners.get_mut(&(to, port)).expect("checked above");
    l.backlog.push_back(c);
    if let Some(waker) = l.waiter.take() {
        waker.wake();
    }
    let lf = l.faultable;
    let conn = &mut w.net.conns[c as usize];
    conn.faultable &= lf;
    conn.sides[r].inc = inc;
    conn.sides[r].established = true;
    push_seg(w, c, r, SegKind::SynAck);
}

/// Data reached side `r`: into its receive buffer, or, for a side already closed or reset,
/// dropped (a closed side answers with a reset).
fn arrive_data(w: &mut NetView<'_>, c: u32, r: usize, id: u64, bytes: Vec<u8>) {
    let to = w.net.conns[c as usize].sides[r].node;
    let side = &mut w.net.conns[c as usize].sides[r];
    if side.closed || side.reset {
        let was_closed = side.closed;
        w.record(Some(to), EventKind::Drop { msg: id }, || {
            format!("#{id} conn {c}: data for a closed socket")
        });
        if was_closed {
            push_seg(w, c, r, SegKind::Rst);
        }
        return;
    }
    side.recv.extend(bytes);
    side.wake();
    w.record(Some(to), EventKind::Deliver { msg: id }, || {
        format!("#{id} conn {c} data")
    });
}

/// Resets both live sides of a connection at once (a reset fault, or a partition), dropping
/// whatever was in flight.
pub(crate) fn reset_conn(w: &mut NetView<'_>, c: u32, why: &'static str) {
    for dir in 0..2 {
        let queue = std::mem::take(&mut w.net.conns[c as usize].dirs[dir].queue);
        for seg in queue {
            let (id, node) = (seg.id, w.net.conns[c as usize].sides[1 - dir].node);
            w.record(Some(node), EventKind::Drop { msg: id }, || {
                format!("#{id} conn {c}: lost in a reset ({why})")
            });
        }
    }
    for r in 0..2 {
        let side = &mut w.net.conns[c as usize].sides[r];
        if side.is_live() && (side.established || r == 0) {
            side.reset = true;
            side.wake();
            let node = side.node;
            w.record(Some(node), EventKind::Reset { conn: u64::from(c) }, || {
                format!("conn {c}: {why}")
            });
        }
    }
}

/// Step 3 of a crash for streams: the node's sides are gone and what was in flight to or
/// from them is cancelled. Returns how many segments were lost.
pub(crate) fn cancel_node(w: &mut NetView<'_>, node: u32) -> usize {
    let mut lost = 0;
    for c in 0..w.net.conns.len() as u32 {
        let conn = &mut w.net.conns[c as usize];
        if !conn.sides.iter().any(|s| s.node == node && !s.dead) {
            continue;
        }
        for side in conn.sides.iter_mut().filter(|s| s.node == node) {
            side.dead = true;
            side.recv.clear();
            side.waker = None;
        }
        for dir in 0..2 {
            let queue = std::mem::take(&mut w.net.conns[c as usize].dirs[dir].queue);
            for seg in queue {
                lost += 1;
                let id = seg.id;
                w.record(Some(node), EventKind::Drop { msg: id }, || {
                    format!("#{id} conn {c}: in flight to or from a crashed node, cancelled")
                });
            }
        }
    }
    lost
}

/// Step 5 of a crash for one connection: the survivor's side is reset.
pub(crate) fn reset_survivor(w: &mut NetView<'_>, c: u32, crashed: u32) {
    for r in 0..2 {
        let side = &mut w.net.conns[c as usize].sides[r];
        if side.node != crashed && side.is_live() && (side.established || r == 0) {
            side.reset = true;
            side.wake();
            let node = side.node;
            w.record(Some(node), EventKind::Reset { conn: u64::from(c) }, || {
                format!("conn {c}: the peer's node crashed")
            });
        }
    }
}

/// A clog on `from -> to` ended: every stream direction on it delivers what it held, now
/// and in order (a stall still in force keeps holding).
pub(crate) fn release_link(w: &mut NetView<'_>, from: u32, to: u32) {
    for c in 0..w.net.conns.len() as u32 {
        for dir in 0..2u8 {
            let conn = &w.net.conns[c as usize];
            let d = dir as usize;
            if conn.sides[d].node == from
                && conn.sides[1 - d].node == to
                && !conn.dirs[d].queue.is_empty()
            {
                segments_due(w, c, dir);
            }
        }
    }
}

/// Closes side `s` (its handle was dropped): a reset if unread bytes are in its buffer (or
/// `abort`), else a FIN if it had not half-closed already.
fn close_side(w: &mut NetView<'_>, c: u32, s: usize, abort: bool) {
    let side = &mut w.net.conns[c as usize].sides[s];
    if side.dead || side.closed {
        return;
    }
    side.closed = true;
    side.waker = None;
    let unread = !side.recv.is_empty();
    side.recv.clear();
    if side.reset || !side.established {
        return;
    }
    if unread || abort {
        let node = side.node;
        w.record(Some(node), EventKind::Reset { conn: u64::from(c) }, || {
            format!("conn {c}: closed with unread data, resetting the peer")
        });
        push_seg(w, c, s, SegKind::Rst);
    } else if !side.write_shut {
        side.write_shut = true;
        push_seg(w, c, s, SegKind::Fin);
    }
}

/// A listening stream endpoint. Dropping it resets the connections still in its backlog.
#[derive(Debug)]
pub struct Listener {
    node: u32,
    port: u16,
    bind_id: u64,
    epoch: u32,
}

impl Listener {
    /// Listens on `port` of the current task's node. Must be called from a task.
    pub fn bind(port: u16) -> Result<Listener, NetError> {
        Self::bind_with(port, true)
    }

    /// Listens on `port`, exempt from faults: its connections are located (they reset when
    /// a node crashes) but never stalled, reset by a fault or cut by a partition. See
    /// [`crate::net::Socket::bind_exempt`].
    pub fn bind_exempt(port: u16) -> Result<Listener, NetError> {
        Self::bind_with(port, false)
    }

    fn bind_with(port: u16, faultable: bool) -> Result<Listener, NetError> {
        with_net(|w| {
            let node = w
                .current_node()
                .expect("Listener::bind must be called from a task");
            if w.net.listeners.contains_key(&(node, port)) {
                return Err(NetError::AddrInUse(port));
            }
            w.net.next_bind += 1;
            let bind_id = w.net.next_bind;
            w.net.listeners.insert(
                (node, port),
                ListenerState {
                    bind_id,
                    faultable,
                    backlog: VecDeque::new(),
                    waiter: None,
                },
            );
            Ok(Listener {
                node,
                port,
                bind_id,
                epoch: w.epoch,
            })
        })
    }

    /// This listener's address.
    pub fn local_addr(&self) -> Addr {
        Addr {
            node: NodeId(self.node),
            port: self.port,
        }
    }

    /// Takes the next established connection from the backlog, with the peer's address.
    pub fn accept(&self) -> Accept<'_> {
        Accept { listener: self }
    }
}

/// Future of [`Listener::accept`].
#[derive(Debug)]
pub struct Accept<'a> {
    listener: &'a Listener,
}

impl Future for Accept<'_> {
    type Output = io::Result<(Stream, Addr)>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let l = self.listener;
        with_net(|w| {
            let Some(state) = w
                .net
                .listeners
                .get_mut(&(l.node, l.port))
                .filter(|s| s.bind_id == l.bind_id)
            else {
                return Poll::Ready(Err(io_err(
                    ErrorKind::NotConnected,
                    "the listener's node crashed",
                )));
            };
            match state.backlog.pop_front() {
                None => {
                    state.waiter = Some(cx.waker().clone());
                    Poll::Pending
                }
                Some(c) => {
                    let conn = &w.net.conns[c as usize];
                    let (me, peer) = (&conn.sides[1], &conn.sides[0]);
                    let peer_addr = Addr {
                        node: NodeId(peer.node),
                        port: peer.port,
                    };
                    let stream = Stream {
                        conn: c,
                        side: 1,
                        epoch: w.epoch,
                        node: me.node,
                        inc: me.inc,
                        local: Addr {
                            node: NodeId(me.node),
                            port: me.port,
                        },
                        peer: peer_addr,
                    };
                    Poll::Ready(Ok((stream, peer_addr)))
                }
            }
        })
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let key = (self.node, self.port);
        let bind_id = self.bind_id;
        world::try_with_net(self.epoch, |w| {
            if w.net
                .listeners
                .get(&key)
                .is_some_and(|l| l.bind_id == bind_id)
            {
                let state = w.net.listeners.remove(&key).expect("checked above");
                for c in state.backlog {
                    close_side(w, c, 1, true);
                }
            }
        });
    }
}

/// A stream connection: ordered, reliable bytes until reset, with TCP's half-close. Read and
/// write it through `futures::io::{AsyncReadExt, AsyncWriteExt}` (both `Stream` and
/// `&Stream` implement the traits, so one task may read while another writes).
///
/// ```
/// use futures::io::{AsyncReadExt, AsyncWriteExt};
/// use sim_core::net::{Listener, Stream};
/// use sim_core::sim::{Config, Sim};
///
/// let mut sim = Sim::new(Config::default());
/// sim.node("server", |_| async {
///     let listener = Listener::bind(80).unwrap();
///     loop {
///         let (mut s, _) = listener.accept().await.unwrap();
///         let mut request = Vec::new();
///         s.read_to_end(&mut request).await.unwrap(); // until the client half-closes
///         s.write_all(&request).await.unwrap(); // still allowed: only one half is closed
///     }
/// });
/// sim.client("client", |_| async {
///     let mut s = Stream::connect("server", 80).await.unwrap();
///     s.write_all(b"hello").await.unwrap();
///     s.close().await.unwrap(); // FIN: half-close
///     let mut reply = Vec::new();
///     s.read_to_end(&mut reply).await.unwrap();
///     assert_eq!(reply, b"hello");
/// });
/// assert!(sim.run_seed(0).outcome.class.is_pass());
/// ```
#[derive(Debug)]
pub struct Stream {
    conn: u32,
    side: u8,
    epoch: u32,
    node: u32,
    inc: u32,
    local: Addr,
    peer: Addr,
}

/// Future of [`Stream::connect`].
#[derive(Debug)]
pub struct Connect {
    state: Option<io::Result<Stream>>,
}

impl Stream {
    /// Connects to `port` on the node called `name` (a routed name picks one node of its set,
    /// drawn from the input). Must be called from a task in a simulation.
    ///
    /// Errors: `NotFound` for an unknown name, `ConnectionRefused` when nothing listens
    /// there, `ConnectionReset` if the connection is reset while connecting. A black-holed
    /// connect never completes: wrap it in [`crate::time::timeout`].
    pub fn connect(name: &str, port: u16) -> Connect {
        Self::connect_with(name, port, true)
    }

    /// Like [`Stream::connect`], exempt from faults (see [`Listener::bind_exempt`]); the
    /// connection is faultable only if both ends are.
    pub fn connect_exempt(name: &str, port: u16) -> Connect {
        Self::connect_with(name, port, false)
    }

    fn connect_with(name: &str, port: u16, faultable: bool) -> Connect {
        let state = with_net(|w| {
            let node = w
                .current_node()
                .expect("Stream::connect must be called from a task");
            let target = resolve(w, name).map_err(|e| io::Error::new(ErrorKind::NotFound, e))?;
            let seq = w.net.next_seq();
            let c =
                u32::try_from(w.net.conns.len()).expect("more than 2^32 connections in one run");
            w.net.next_ephemeral = w.net.next_ephemeral.wrapping_add(1);
            let local_port = 49152 + w.net.next_ephemeral % 16384;
            let inc = incarnation(w, node);
            // Faultable only if both ends are: an exempt listener already bound makes the
            // SYN exempt too (one bound later is checked when the SYN arrives).
            let listener_exempt = w
                .net
                .listeners
                .get(&(target, port))
                .is_some_and(|l| !l.faultable);
            let faultable = faultable && !listener_exempt && node != target;
            let p = w.net.profile;
            let silent_after = (faultable
                && p.silent_per_mille > 0
                && w.source.chance(
                    NET_FAULT_SILENT.name(),
                    u64::from(p.silent_per_mille),
                    PER_MILLE,
                ))
            .then(|| {
                w.source
                    .range_inclusive(NET_FAULT_SILENT_AFTER.name(), 0, 8) as u32
            });
            w.net.conns.push(Conn {
                seq,
                faultable,
                silent_after,
                silent: false,
                sides: [Side::new(node, inc, local_port), Side::new(target, 0, port)],
                dirs: [Dir::default(), Dir::default()],
            });
            let black_holed = faultable && {
                draw_link_faults(w, node, target);
                w.net.pair_cut(node, target)
                    || (p.blackhole_per_mille > 0
                        && w.source.chance(
                            NET_FAULT_BLACKHOLE.name(),
                            u64::from(p.blackhole_per_mille),
                            PER_MILLE,
                        ))
            };
            if black_holed {
                let id = w.net.next_msg();
                w.record(Some(node), EventKind::Drop { msg: id }, || {
                    format!("#{id} conn {c} SYN: black-holed")
                });
            } else {
                push_seg(w, c, 0, SegKind::Syn);
            }
            Ok(Stream {
                conn: c,
                side: 0,
                epoch: w.epoch,
                node,
                inc,
                local: Addr {
                    node: NodeId(node),
                    port: local_port,
                },
                peer: Addr {
                    node: NodeId(target),
                    port,
                },
            })
        });
        Connect { state: Some(state) }
    }

    /// This end's address.
    pub fn local_addr(&self) -> Addr {
        self.local
    }

    /// The other end's address.
    pub fn peer_addr(&self) -> Addr {
        self.peer
    }

    /// Half-closes: sends a FIN after the bytes already written. Reading goes on. (What
    /// `AsyncWriteExt::close` does.)
    pub fn shutdown(&self) -> io::Result<()> {
        with_net(|w| {
            let side = self.check_alive(w)?;
            if side.reset {
                return Err(io_err(
                    ErrorKind::ConnectionReset,
                    "connection reset by peer",
                ));
            }
            if side.write_shut {
                return Ok(());
            }
            side.write_shut = true;
            push_seg(w, self.conn, self.side as usize, SegKind::Fin);
            Ok(())
        })
    }

    fn check_alive<'w>(&self, w: &'w mut NetView<'_>) -> io::Result<&'w mut Side> {
        if !alive(w, self.node, self.inc) {
            return Err(io_err(ErrorKind::NotConnected, "the stream's node crashed"));
        }
        let side = &mut w.net.conns[self.conn as usize].sides[self.side as usize];
        if side.dead {
            return Err(io_err(ErrorKind::NotConnected, "the stream's node crashed"));
        }
        Ok(side)
    }

    fn poll_read_impl(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        with_net(|w| {
            let side = match self.check_alive(w) {
                Ok(s) => s,
                Err(e) => return Poll::Ready(Err(e)),
            };
            if buf.is_empty() {
                return Poll::Ready(Ok(0));
            }
            if !side.recv.is_empty() {
                let n = buf.len().min(side.recv.len());
                for (dst, src) in buf.iter_mut().zip(side.recv.drain(..n)) {
                    *dst = src;
                }
                return Poll::Ready(Ok(n));
            }
            if side.reset {
                return Poll::Ready(Err(io_err(
                    ErrorKind::ConnectionReset,
                    "connection reset by peer",
                )));
            }
            if side.fin_rcvd {
                return Poll::Ready(Ok(0));
            }
            side.waker = Some(cx.waker().clone());
            Poll::Pending
        })
    }

    fn write_impl(&self, buf: &[u8]) -> io::Result<usize> {
        with_net(|w| {
            let s = self.side as usize;
            let peer_closed = w.net.conns[self.conn as usize].sides[1 - s].closed;
            let side = self.check_alive(w)?;
            if side.reset {
                return Err(io_err(
                    ErrorKind::ConnectionReset,
                    "connection reset by peer",
                ));
            }
            if side.write_shut {
                return Err(io_err(ErrorKind::BrokenPipe, "write after shutdown"));
            }
            if side.wrote_after_peer_close {
                return Err(io_err(
                    ErrorKind::BrokenPipe,
                    "broken pipe: the peer closed the connection",
                ));
            }
            if buf.is_empty() {
                return Ok(0);
            }
            if side.fin_rcvd && peer_closed {
                // The first write after a closed peer's FIN succeeds; the peer answers it
                // with a reset, and the next write fails.
                side.wrote_after_peer_close = true;
            }
            push_seg(w, self.conn, s, SegKind::Data(buf.to_vec()));
            Ok(buf.len())
        })
    }

    fn poll_close_impl(&self) -> Poll<io::Result<()>> {
        Poll::Ready(self.shutdown())
    }
}

impl Future for Connect {
    type Output = io::Result<Stream>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(state) = self.state.as_ref() else {
            panic!("Connect polled after it completed");
        };
        let (c, s) = match state {
            Err(_) => return Poll::Ready(self.state.take().expect("checked")),
            Ok(stream) => (stream.conn, stream.side as usize),
        };
        let verdict = with_net(|w| {
            let side = &mut w.net.conns[c as usize].sides[s];
            if side.refused {
                Some(Err(io_err(
                    ErrorKind::ConnectionRefused,
                    "connection refused",
                )))
            } else if side.reset || side.dead {
                Some(Err(io_err(
                    ErrorKind::ConnectionReset,
                    "connection reset while connecting",
                )))
            } else if side.established {
                Some(Ok(()))
            } else {
                side.waker = Some(cx.waker().clone());
                None
            }
        });
        match verdict {
            None => Poll::Pending,
            Some(Ok(())) => Poll::Ready(self.state.take().expect("checked")),
            Some(Err(e)) => {
                drop(self.state.take());
                Poll::Ready(Err(e))
            }
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let (c, s) = (self.conn, self.side as usize);
        world::try_with_net(self.epoch, |w| close_side(w, c, s, false));
    }
}

// The owned stream behaves exactly as a shared reference to it (as tokio's `TcpStream` and
// `&TcpStream` do): the impls for `Stream` delegate to the ones for `&Stream`.
impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut &*self).poll_read(cx, buf)
    }
}

impl AsyncRead for &Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_read_impl(cx, buf)
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut &*self).poll_write(cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut &*self).poll_flush(cx)
    }
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut &*self).poll_close(cx)
    }
}

impl AsyncWrite for &Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.write_impl(buf))
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_close_impl()
    }
}
