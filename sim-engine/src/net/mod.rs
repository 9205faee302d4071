//! The simulated network: named nodes, datagram endpoints, TCP-like streams, partitions,
//! clogs, and the events a failure delivers.
//!
//! # Pieces
//!
//! * **Addressing by name.** Nodes are reached by their names. A *routed name*
//!   ([`route`]) stands for a set of nodes; each connection (each [`Addr::named`] or
//!   [`Stream::connect`]) picks one, drawn from the input, and the set can change during a run.
//! * **Datagram endpoints** ([`Socket`]): typed messages, per-link latency and jitter drawn
//!   from the input, and loss, duplication and reordering as separate, independently
//!   switchable faults — all off unless the run's [`FaultProfile`] turns them on, so by default
//!   a link delivers every message exactly once, in order.
//! * **Sessions** ([`SessionSocket`]): datagram links with session semantics — in order and
//!   exactly once within a session; loss, duplication and reordering only across a break that
//!   both ends are told of ([`SessionEvent::Broken`]).
//! * **Streams** ([`Listener`], [`Stream`]): TCP's semantics, behind `futures::io::AsyncRead`
//!   and `AsyncWrite` so framing code written for real sockets runs on them. See
//!   [`Stream`] for the state machine.
//! * **Partitions and clogs** ([`partition`], [`clog`], [`at`], or drawn by the profile): a
//!   partition *drops* traffic on the links it cuts, a clog *holds* it and releases it later,
//!   in order. Two different faults.
//! * **Failure events** ([`watch`]): when a node crashes or a partition cuts a link, peers
//!   see what real systems see — their streams reset, their sessions break, and a [`Watch`]
//!   on the lost node fires. [`reachable`] is the way back: it completes when the node is up
//!   and the link uncut (a restart, a healed partition), without polling.
//!
//! # Fault model (this module's contract)
//!
//! What can go wrong, per kind of traffic. Only traffic between two *faultable* endpoints on
//! *different* nodes is ever faulted; an endpoint made with an `_exempt` constructor is
//! *located* (it lives and dies with its node and receives its link events) but its traffic
//! is never dropped, held, delayed past its latency or reset by a fault — the right model for
//! traffic that stands for a durable store, which commits or errors but never evaporates.
//!
//! | | datagrams | streams |
//! |---|---|---|
//! | latency | per link, drawn once: `latency_ms_min..=latency_ms_max`, plus per-message jitter `0..=` the link's drawn jitter bound | same |
//! | order | per-link FIFO, unless the reorder fault delays one (session sockets: the session breaks instead) | always in order |
//! | loss / duplication | only as faults (session sockets: only across a break both ends are told of) | never |
//! | partition | dropped (at send and on arrival) | every connection across the cut is reset; connects are black-holed |
//! | clog | held, released in order when the clog ends | stalled, released in order |
//! | stream-only faults | — | stall, reset, silent peer, refused or black-holed connect |
//! | destination down / port unbound | dropped on arrival | connect black-holed / refused; data answered with a reset |
//!
//! Things due at the same instant are delivered in an order drawn from the input (the
//! harness's tie-break); per-link order is kept by giving each later message on a link a
//! strictly later arrival time.
//!
//! **What survives a crash.** Nothing of the network: a crash (1) fires every [`Watch`] on
//! the node held by another node, (2) retires every watch with either end on it, (3) cancels
//! what was in flight to or from it (held traffic is dropped; traffic on the wire is dropped
//! on arrival, the trace says why), unbinds its sockets and listeners, (4) kills its tasks,
//! and (5) resets the surviving end of every stream connected to it. A socket or stream handle
//! of a crashed node that outlives it (a zombie) can no longer send. Links, routes and
//! partitions are the network's, not the node's: they survive.
//!
//! Every send, delivery, drop, duplicate, hold, release, reset and notification is an event
//! in the history; fan-outs (a partition's resets and notifications, a crash's) happen in
//! creation order of the connections and watches involved, never in table order.
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

mod datagram;
mod faults;
mod foreign_message;
mod labels;
mod partition;
mod ports;
pub mod rpc;
mod session;
mod stream;
mod watch;

use std::collections::{BTreeMap, VecDeque};
use std::fmt::{self, Debug};

pub use datagram::{Message, Recv, Socket};
pub use faults::{FaultProfile, Faults, PER_MILLE};
pub use foreign_message::Foreign;
// What the world dispatches due events to (see `World::deliver`).
pub(crate) use datagram::{arrive as arrive_datagram, Datagram};
pub use partition::{at, clog, heal, heal_all, partition, partition_oneway, unclog, Control};
pub(crate) use partition::{fire as fire_control, Resolved};
pub use session::{RecvEvent, SessionEvent, SessionSocket};
pub(crate) use stream::segments_due;
pub use stream::{Accept, Connect, Listener, Stream};
pub use watch::{reachable, watch, Down, DownReason, Reachable, Watch};

use crate::choice::Choices;
use crate::node_id::NodeId;
use crate::trace::{stable_hash, EventKind};
use crate::world::{self, with_net, NetView};
use labels::{
    NET_FAULT_CLOG, NET_FAULT_CLOG_MS, NET_FAULT_PARTITION, NET_FAULT_PARTITION_MS,
    NET_FAULT_PARTITION_SHAPE, NET_JITTER_MS, NET_LINK_JITTER_MS, NET_LINK_LATENCY_MS, NET_ROUTE,
};
use ports::PortMap;

/// A node and a port.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Addr {
    /// The node.
    pub node: NodeId,
    /// The port on it.
    pub port: u16,
}

impl Addr {
    /// `port` on the node called `name`, or — if `name` is a routed name — on one node of its
    /// set, drawn from the input.
    ///
    /// # Panics
    /// If nothing has that name (a scenario bug), or the route is empty. Must be called from
    /// within a simulation.
    pub fn named(name: &str, port: u16) -> Addr {
        let node = with_net(|w| resolve(w, name)).unwrap_or_else(|e| panic!("{e}"));
        Addr {
            node: NodeId(node),
            port,
        }
    }
}

impl Debug for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = world::try_with_net(crate::world::current_epoch(), |w| {
            w.nodes.name(self.node.0).to_string()
        });
        match name {
            Some(n) => write!(f, "{n}:{}", self.port),
            None => write!(f, "node{}:{}", self.node.0, self.port),
        }
    }
}

/// Latency settings and the fault profile.
///
/// The default: every link's latency drawn once in 1..=10 ms, a per-link jitter bound drawn in
/// 0..=5 ms, and no faults ([`Faults::Off`]).
///
/// ```
/// let net = sim_core::net::NetConfig::default();
/// assert_eq!((net.latency_ms_min, net.latency_ms_max, net.jitter_ms_max), (1, 10, 5));
/// assert_eq!(net.faults, sim_core::net::Faults::Off);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetConfig {
    /// Smallest one-way latency of a link.
    pub latency_ms_min: u64,
    /// Largest one-way latency of a link. Each link's latency is drawn once, in this range.
    pub latency_ms_max: u64,
    /// Largest jitter bound of a link. Each link's bound is drawn once in `0..=` this; each
    /// message then adds a jitter drawn in `0..=` the link's bound.
    pub jitter_ms_max: u64,
    /// Which faults the network injects.
    pub faults: Faults,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            latency_ms_min: 1,
            latency_ms_max: 10,
            jitter_ms_max: 5,
            faults: Faults::Off,
        }
    }
}

/// Errors of the network's set-up calls (binding, naming, controls). Errors a running
/// program could observe on a stream are `std::io::Error`s with real `ErrorKind`s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// Another endpoint on this node already has the port.
    #[error("port {0} is already bound on this node; pick another port or drop the old endpoint")]
    AddrInUse(u16),
    /// No node or routed name is called that.
    #[error("no node or routed name {0:?} in this simulation; names are the ones given to Sim::node/Sim::client or net::route")]
    UnknownName(String),
    /// A routed name may not shadow a node's name.
    #[error("{0:?} is a node's name; pick a different name for the route")]
    RouteShadowsNode(String),
    /// A routed name with no node behind it.
    #[error("route {0:?} has no nodes; give it at least one, or remove it with net::unroute")]
    EmptyRoute(String),
}

// ---------------------------------------------------------------------------------------
// The engine.
// ---------------------------------------------------------------------------------------

/// One directed link's state. Links exist for every ordered pair of nodes.
#[derive(Default)]
struct Link {
    /// Latency and jitter bound, drawn at the link's first use.
    drawn: bool,
    latency_ms: u64,
    jitter_ms: u64,
    /// Cut by a scripted partition / by drawn partitions still in force.
    cut_scripted: bool,
    cut_drawn: u32,
    /// Clogged by a scripted clog / by drawn clogs still in force.
    clog_scripted: bool,
    clog_drawn: u32,
    /// Latest arrival time given to in-order traffic on this link.
    last_at_ns: u64,
    /// Datagrams held by a clog, in arrival order.
    held: VecDeque<datagram::Datagram>,
}

impl Link {
    /// The arrival time for in-order traffic sent at `now` with `latency` (see [`fifo_at`]).
    #[inline]
    fn fifo_at(&mut self, now_ns: u64, latency_ns: u64) -> u64 {
        let at = (now_ns + latency_ns).max(self.last_at_ns + 1);
        self.last_at_ns = at;
        at
    }

    #[inline]
    fn is_cut(&self) -> bool {
        self.cut_scripted || self.cut_drawn > 0
    }
    #[inline]
    fn is_clogged(&self) -> bool {
        self.clog_scripted || self.clog_drawn > 0
    }
}

/// The network state of one run.
pub(crate) struct Network {
    pub config: NetConfig,
    profile: FaultProfile,
    /// Where each link lives in `links`, indexed `from * n + to`: 1 + its position, or 0 for
    /// a link no one has used. A run touches few of the `n * n` links (a 200-node cluster
    /// has 40,000), so the table is four zeroed bytes per pair and a [`Link`] exists only
    /// once used: a run costs what it uses, not the square of its cluster.
    link_slots: Vec<u32>,
    /// The links used so far, in order of first use.
    links: Vec<Link>,
    /// What an unused link reads as.
    unused_link: Link,
    n: usize,
    mailboxes: PortMap<datagram::Mailbox>,
    listeners: PortMap<stream::ListenerState>,
    /// Connections by id (creation order); never reused within a run.
    conns: Vec<stream::Conn>,
    /// Watches by id (creation order); never reused within a run.
    watches: Vec<watch::WatchState>,
    routes: BTreeMap<String, Vec<u32>>,
    next_msg: u64,
    next_bind: u64,
    /// Creation sequence shared by connections and watches: the order of every fan-out.
    next_seq: u64,
    next_ephemeral: u16,
    /// Emptied datagram payload boxes, reused by later sends.
    spare_payloads: Vec<datagram::Payload>,
    /// Current session number per pair of session endpoints (absent: 1).
    sessions: BTreeMap<(Addr, Addr), u32>,
    /// Tasks waiting for a node to become reachable ([`reachable`]): woken when a node
    /// starts or a cut heals, to look again.
    reach_waiters: Vec<std::task::Waker>,
}

impl Network {
    pub fn new(config: NetConfig) -> Self {
        Network {
            config,
            profile: FaultProfile::NONE,
            link_slots: Vec::new(),
            links: Vec::new(),
            unused_link: Link::default(),
            n: 0,
            mailboxes: PortMap::default(),
            listeners: PortMap::default(),
            conns: Vec::new(),
            watches: Vec::new(),
            routes: BTreeMap::new(),
            next_msg: 0,
            next_bind: 0,
            next_seq: 0,
            next_ephemeral: 0,
            spare_payloads: Vec::new(),
            sessions: BTreeMap::new(),
            reach_waiters: Vec::new(),
        }
    }

    // The small helpers of the datagram path are inline: `Socket<M>`'s generic code is
    // compiled in the crate that uses it, where a plain function of this crate cannot be
    // inlined.
    #[inline]
    fn link(&mut self, from: u32, to: u32) -> &mut Link {
        let (from, to) = (from as usize, to as usize);
        debug_assert!(
            from < self.n && to < self.n,
            "link {from}->{to} outside {} nodes",
            self.n
        );
        let index = from * self.n + to;
        let mut slot = self.link_slots[index];
        if slot == 0 {
            slot = self.first_use(index);
        }
        &mut self.links[slot as usize - 1]
    }

    /// Creates the link at `index` of the slot table; returns its slot.
    #[cold]
    #[inline(never)]
    fn first_use(&mut self, index: usize) -> u32 {
        self.links.push(Link::default());
        let slot = u32::try_from(self.links.len()).expect("fewer than 2^32 links");
        self.link_slots[index] = slot;
        slot
    }

    #[inline]
    fn link_ref(&self, from: u32, to: u32) -> &Link {
        match self.link_slots[from as usize * self.n + to as usize] {
            0 => &self.unused_link,
            slot => &self.links[slot as usize - 1],
        }
    }

    /// Lifts every scripted cut (drawn cuts end on their own schedule).
    fn heal_all_scripted(&mut self) {
        for link in &mut self.links {
            link.cut_scripted = false;
        }
    }

    /// True if traffic from `from` to `to` is dropped by a partition.
    #[inline]
    fn is_cut(&self, from: u32, to: u32) -> bool {
        self.link_ref(from, to).is_cut()
    }

    /// True if the pair cannot talk both ways (either direction cut).
    fn pair_cut(&self, a: u32, b: u32) -> bool {
        a != b && (self.is_cut(a, b) || self.is_cut(b, a))
    }

    fn next_seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    #[inline]
    fn next_msg(&mut self) -> u64 {
        self.next_msg += 1;
        self.next_msg
    }
}

/// The heal phase, when the workload is done and liveness is being checked: no new fault is
/// drawn from then on. Drawn partitions, clogs and stalls already in force end on their own
/// schedule (each is bounded), and scripted controls stay the scenario's business.
pub(crate) fn stop_drawing_faults(w: &mut NetView<'_>) {
    w.net.profile = FaultProfile::NONE;
}

/// Called once when a run starts, before any setup: sizes the link table and draws the
/// fault profile (the first draws of a run, so they shape everything after).
pub(crate) fn start_run(w: &mut NetView<'_>) {
    let n = w.nodes.len();
    w.net.n = n;
    w.net.link_slots = vec![0; n * n];
    w.net.links.clear();
    let faults = w.net.config.faults;
    w.net.profile = faults.profile(w.source);
    if w.net.config.latency_ms_min > w.net.config.latency_ms_max {
        w.net.config.latency_ms_max = w.net.config.latency_ms_min;
    }
}

/// The profile this run drew. Must be called from within a simulation.
pub fn profile() -> FaultProfile {
    with_net(|w| w.net.profile)
}

/// `name` for trace details.
fn node_name<'a>(w: &'a NetView<'_>, id: u32) -> &'a str {
    w.nodes.name(id)
}

/// The incarnation a node is in now (it moves on at every crash).
#[inline]
fn incarnation(w: &NetView<'_>, node: u32) -> u32 {
    w.nodes.incarnation(node)
}

/// True if `node` is up and still in incarnation `inc`.
#[inline]
fn alive(w: &NetView<'_>, node: u32, inc: u32) -> bool {
    w.nodes.is_up(node) && incarnation(w, node) == inc
}

/// The one-way latency of a message from `from` to `to`, in nanoseconds: the link's drawn
/// latency plus a jitter drawn in its bound.
#[inline]
fn latency_ns(w: &mut NetView<'_>, from: u32, to: u32) -> u64 {
    let (min_ms, max_ms, jitter_max_ms) = (
        w.net.config.latency_ms_min,
        w.net.config.latency_ms_max,
        w.net.config.jitter_ms_max,
    );
    // The link borrows the network, the draws the source: two fields of the world.
    let link = w.net.link(from, to);
    if !link.drawn {
        link.drawn = true;
        link.latency_ms = w
            .source
            .range_inclusive(NET_LINK_LATENCY_MS.name(), min_ms, max_ms);
        link.jitter_ms = w
            .source
            .range_inclusive(NET_LINK_JITTER_MS.name(), 0, jitter_max_ms);
    }
    let jitter = if link.jitter_ms > 0 {
        w.source
            .range_inclusive(NET_JITTER_MS.name(), 0, link.jitter_ms)
    } else {
        0
    };
    (link.latency_ms + jitter) * 1_000_000
}

/// An arrival time after `latency` that keeps the link's FIFO order: strictly later than any
/// in-order arrival already given on the link (so a same-instant tie-break cannot swap two
/// messages of one link).
#[inline]
fn fifo_at(w: &mut NetView<'_>, from: u32, to: u32, latency: u64) -> u64 {
    let now = w.clock.now_ns();
    w.net.link(from, to).fifo_at(now, latency)
}

/// Resolves a node or routed name to one node (a routed name draws which).
fn resolve(w: &mut NetView<'_>, name: &str) -> Result<u32, NetError> {
    if let Some(set) = w.net.routes.get(name) {
        if set.is_empty() {
            return Err(NetError::EmptyRoute(name.to_string()));
        }
        let k = w.source.below(NET_ROUTE.name(), set.len() as u64) as usize;
        return Ok(w.net.routes[name][k]);
    }
    w.nodes
        .find(name)
        .ok_or_else(|| NetError::UnknownName(name.to_string()))
}

fn resolve_nodes(w: &NetView<'_>, names: &[&str]) -> Result<Vec<u32>, NetError> {
    names
        .iter()
        .map(|n| {
            w.nodes
                .find(n)
                .ok_or_else(|| NetError::UnknownName(n.to_string()))
        })
        .collect()
}

/// Makes `name` a routed name for the nodes `to` (replacing any earlier set): every later
/// connection to `name` picks one of them, drawn from the input. Must be called from within
/// a simulation.
///
/// ```
/// use sim_core::net::{route, Addr, Socket};
/// use sim_core::sim::{Config, Sim};
///
/// let mut sim = Sim::new(Config::default());
/// for name in ["a", "b"] {
///     sim.node(name, |_| async {
///         let sock = Socket::<u8>::bind(1).unwrap();
///         loop {
///             let (from, n) = sock.recv().await;
///             sock.send(from, n);
///         }
///     });
/// }
/// sim.client("client", |_| async {
///     route("service", &["a", "b"]).unwrap();
///     let sock = Socket::<u8>::bind(1).unwrap();
///     sock.send(Addr::named("service", 1), 7);
///     let (from, n) = sock.recv().await;
///     assert_eq!(n, 7);
///     assert!(from == Addr::named("a", 1) || from == Addr::named("b", 1));
/// });
/// assert!(sim.run_seed(1).outcome.class.is_pass());
/// ```
pub fn route(name: &str, to: &[&str]) -> Result<(), NetError> {
    with_net(|w| set_route(w, name, to))
}

fn set_route(w: &mut NetView<'_>, name: &str, to: &[&str]) -> Result<(), NetError> {
    if w.nodes.find(name).is_some() {
        return Err(NetError::RouteShadowsNode(name.to_string()));
    }
    if to.is_empty() {
        return Err(NetError::EmptyRoute(name.to_string()));
    }
    let nodes = resolve_nodes(w, to)?;
    let digest = stable_hash(&(name, &nodes));
    w.record(None, EventKind::Fault { digest }, || {
        format!("route {name} -> {to:?}")
    });
    w.net.routes.insert(name.to_string(), nodes);
    Ok(())
}

/// Removes a routed name. Must be called from within a simulation.
pub fn unroute(name: &str) {
    with_net(|w| {
        if w.net.routes.remove(name).is_some() {
            let digest = stable_hash(&(name, 0u8));
            w.record(None, EventKind::Fault { digest }, || {
                format!("unroute {name}")
            });
        }
    })
}

/// Draws the partition and clog faults a send between two nodes may trigger (only for
/// faultable traffic between different nodes).
#[inline]
fn draw_link_faults(w: &mut NetView<'_>, from: u32, to: u32) {
    // Most runs draw no link faults: check that without copying the whole profile.
    if w.net.profile.partition_per_mille == 0 && w.net.profile.clog_per_mille == 0 {
        return;
    }
    draw_link_faults_slow(w, from, to);
}

fn draw_link_faults_slow(w: &mut NetView<'_>, from: u32, to: u32) {
    let p = w.net.profile;
    if p.partition_per_mille > 0
        && !w.net.pair_cut(from, to)
        && w.source.chance(
            NET_FAULT_PARTITION.name(),
            u64::from(p.partition_per_mille),
            PER_MILLE,
        )
    {
        let shape = w.source.below(NET_FAULT_PARTITION_SHAPE.name(), 3);
        let ms =
            w.source
                .range_inclusive(NET_FAULT_PARTITION_MS.name(), 1, p.partition_ms_max.max(1));
        let links: &[(u32, u32)] = match shape {
            0 => &[(from, to), (to, from)],
            1 => &[(from, to)],
            _ => &[(to, from)],
        };
        partition::drawn_cut(w, links, ms);
    }
    if p.clog_per_mille > 0
        && !w.net.link(from, to).is_clogged()
        && w.source.chance(
            NET_FAULT_CLOG.name(),
            u64::from(p.clog_per_mille),
            PER_MILLE,
        )
    {
        let ms = w
            .source
            .range_inclusive(NET_FAULT_CLOG_MS.name(), 1, p.clog_ms_max.max(1));
        partition::drawn_clog(w, from, to, ms);
    }
}

/// Something a fan-out reaches: a connection or a watch, ordered by creation sequence.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Reached {
    Conn(u32),
    Watch(u32),
}

fn seq_of(w: &NetView<'_>, r: Reached) -> u64 {
    match r {
        Reached::Conn(c) => w.net.conns[c as usize].seq,
        Reached::Watch(k) => w.net.watches[k as usize].seq,
    }
}

/// Orders a fan-out by creation sequence: the order the run itself decided, never the order
/// a table happens to hold things in. (A test removes this sort and watches the trace change.)
fn sort_fan_out(w: &NetView<'_>, reached: &mut [Reached]) {
    reached.sort_by_key(|&r| seq_of(w, r));
}

/// The link events of a cut between `a` and `b`: every faultable connection between them is
/// reset, and every watch between them fires with [`DownReason::NoConnection`].
fn cut_events(w: &mut NetView<'_>, pairs: &[(u32, u32)]) {
    let mut reached = Vec::new();
    for (i, c) in w.net.conns.iter().enumerate() {
        let (x, y) = (c.sides[0].node, c.sides[1].node);
        if c.faultable
            && x != y
            && pairs
                .iter()
                .any(|&(a, b)| (a, b) == (x, y) || (b, a) == (x, y))
            && c.is_open()
        {
            reached.push(Reached::Conn(i as u32));
        }
    }
    for (i, wa) in w.net.watches.iter().enumerate() {
        let (x, y) = (wa.watcher, wa.target);
        if wa.active
            && pairs
                .iter()
                .any(|&(a, b)| (a, b) == (x, y) || (b, a) == (x, y))
        {
            reached.push(Reached::Watch(i as u32));
        }
    }
    sort_fan_out(w, &mut reached);
    for r in reached {
        match r {
            Reached::Conn(c) => stream::reset_conn(w, c, "partition cut the link"),
            Reached::Watch(k) => watch::fire(w, k, DownReason::NoConnection),
        }
    }
    if !w.net.sessions.is_empty() {
        session::break_cut(w, pairs);
    }
}

/// A node started or a cut healed: every task waiting in [`reachable`] looks again.
pub(crate) fn reach_may_have_changed(w: &mut NetView<'_>) {
    for waker in std::mem::take(&mut w.net.reach_waiters) {
        w.wake(waker);
    }
}

/// Steps 1–3 of a crash of `node` (see the module docs): notify, retire, cancel. Returns
/// how many queued or held messages were lost. Called by [`crate::node::crash`] with the
/// node already marked down and its incarnation moved on.
pub(crate) fn crash_before_kill(w: &mut NetView<'_>, node: u32) -> usize {
    // 1. Notify every watch on the node held from another node.
    let mut reached: Vec<Reached> = (0..w.net.watches.len() as u32)
        .filter(|&k| {
            let wa = &w.net.watches[k as usize];
            wa.active && wa.target == node && wa.watcher != node
        })
        .map(Reached::Watch)
        .collect();
    sort_fan_out(w, &mut reached);
    for r in reached {
        if let Reached::Watch(k) = r {
            watch::fire(w, k, DownReason::NodeDown);
        }
    }
    // 2. Retire every watch with either end on the node.
    for wa in w.net.watches.iter_mut() {
        if wa.active && (wa.watcher == node || wa.target == node) {
            wa.active = false;
            wa.waker = None;
        }
    }
    // 3. Break its sessions (the survivors are told), cancel what was in flight to or from
    // it, and unbind its endpoints.
    if !w.net.sessions.is_empty() {
        session::break_node(w, node);
    }
    let mut lost = 0;
    lost += stream::cancel_node(w, node);
    for other in 0..w.net.n as u32 {
        for (from, to) in [(node, other), (other, node)] {
            let held = std::mem::take(&mut w.net.link(from, to).held);
            for d in held {
                lost += 1;
                let id = d.id;
                w.record(Some(to), EventKind::Drop { msg: id }, || {
                    format!("#{id}: held traffic of a crashed node cancelled")
                });
            }
        }
    }
    for (_, mailbox) in w.net.mailboxes.remove_node(node) {
        lost += mailbox.queue.len();
    }
    w.net.listeners.remove_node(node);
    lost
}

/// Step 5 of a crash: signal the survivors — the far end of every stream connected to the
/// crashed node is reset, in connection order.
pub(crate) fn crash_after_kill(w: &mut NetView<'_>, node: u32) {
    let survivors: Vec<u32> = (0..w.net.conns.len() as u32)
        .filter(|&c| {
            let conn = &w.net.conns[c as usize];
            conn.sides.iter().any(|s| s.node == node && s.dead)
                && conn.sides.iter().any(|s| s.node != node && !s.dead)
        })
        .collect();
    for c in survivors {
        stream::reset_survivor(w, c, node);
    }
}
