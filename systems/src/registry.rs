//! A replicated name registry with group commit: three members, one leader, two clients.
//!
//! **Protocol.** A client calls any member (`register(name)` binds the name to the client,
//! `unregister(name)` removes any binding). A follower forwards the call to the leader. The
//! leader *group-commits*: every call queued while the previous commit was in flight goes
//! into the next batch, committed in one compare-and-set to the store, applied to the
//! leader's replica, broadcast to the followers as one `Batch { version, ops }`, and only then
//! answered. A follower applies a batch whose version is exactly one past its own; a batch
//! further ahead is a *version gap*, and the follower asks the leader for a resync (a
//! snapshot). A stale or duplicated batch is ignored. Every 500 ms the leader sends a
//! replication heartbeat carrying its version, so a follower that lost the last batch
//! notices the gap even when no traffic follows.
//!
//! **The store** stands for an external linearizable database (the role FoundationDB plays
//! for the registry this one is modelled on): it holds the committed version, the table and
//! the log of batches, and the leader lease. A call to it costs a drawn latency and then
//! takes effect at once; it never loses a call. Acknowledged operations are committed there
//! first, so they survive any member crash.
//!
//! **Failover** is a lease in the store with an ephemeral holder (as with a ZooKeeper or etcd
//! session): every follower watches the leader's node; when the watch fires, followers try
//! to take the lease in rank order (m1 first). The store grants it only if the epoch the
//! claimant saw is still current and the holder's session has ended (its node is down, or it
//! restarted since it took the lease); the grant bumps the epoch. The new leader loads the
//! snapshot from the store and carries on from the committed version; a follower learns the
//! new leader from the store or from any replication message with a higher epoch, and
//! re-forwards the calls it still holds. A commit carries the leader's epoch, and the store
//! refuses one from a superseded epoch (fencing). A watch that fires for a partition, with the
//! leader alive, is refused by the store and the follower watches again.
//!
//! **Fault model** (what this system's default injects, and why each can be healed):
//! * the *batch stream* (on a faultable port, like a multicast feed) suffers every datagram
//!   fault — loss, duplication, reordering, partitions and clogs — because the protocol
//!   repairs each by itself: a stale or duplicated batch is ignored by version, and a gap is
//!   seen on the next batch or heartbeat and resynced;
//! * the *replication control channel* (heartbeats, resync requests and snapshots) is an
//!   exempt socket, standing for a connection between members: its messages are lost only
//!   with a crashed member. Over a lossy channel the fuzzer can lose every heartbeat and
//!   resync for as long as it likes, and no bound on catching up could then hold;
//! * *calls, forwards and replies* use exempt sockets: they stand for a connection whose loss
//!   only comes with a connection event (dropping them silently, with both ends believing the
//!   link is up, is a state no real deployment reaches and that nothing could heal). They are
//!   lost only with the node that holds them: a crash, which the client sees through its
//!   watch on the member, and retries elsewhere;
//! * *members crash, stop and pause* (the run's lifecycle nemesis; a stop is a crash, since
//!   members do not handle the signal), and restart with an empty replica that syncs from
//!   the leader. Clients and the store never fail.
//!
//! The default ([`DEFAULT_FAULTS`]) draws a profile per run over the datagram faults and
//! crashes; `--faults` chooses otherwise (`off`; `all`, every network fault; or a list such
//! as `loss,dup,reorder,partition,clog,crash,stop,pause`, every kind this system supports).
//!
//! **Rest** is this system's own: no client waiting, no call held by a live member, nothing
//! queued or being committed at a leader, no election in progress, and the replication of
//! the last batch settled (its network delivery bound — latency, jitter, reordering and clog
//! maxima — has passed). "No task runnable" is not rest: a batch sent as several messages is
//! half-applied while the rest is on the wire.
//!
//! **Invariants** read the members' replicas and the store out of band (shared state, never a
//! call a member could refuse), and only at rest:
//! * `same-version-same-contents`: every live, synced member that is not resyncing holds
//!   exactly the store's table at its own applied version — so two replicas at one version
//!   agree;
//! * `acknowledged-visible`: every registration acknowledged to a client is visible at every
//!   such member that has applied its version (unless a later committed operation removed
//!   it), and after a quiet stretch of [`STALE_BOUND`] at rest every such member has applied
//!   the store's version: acknowledged registrations are visible everywhere.
//!
//! **Planted bugs**:
//! * `partial-batch`: a batch goes out as one message per operation sharing one version, and
//!   followers accept "another message of the batch being applied"; a lost (or duplicated)
//!   message leaves a same-version divergence no gap check can see;
//! * `no-heartbeat`: the leader sends no heartbeat, so a follower that lost the last batch
//!   stays stale until traffic resumes — visible only when the system is left quiet;
//! * `reply-reinsert`: a forwarding follower, answering its client's successful register,
//!   inserts the row into its replica if it has applied that version already — re-creating a
//!   name a later operation of the same batch removed.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use futures::channel::mpsc;
use futures::future::{select, Either};
use futures::StreamExt;
use sim_core::choice::Choices;
use sim_core::net::{self, Addr, Socket};
use sim_core::node::{self, NodeCtx, NodeId};
use sim_core::sim::{self, Sim};
use sim_core::system::{BugSpec, RunOptions, SystemSpec};
use sim_core::time::{now, sleep, timeout};
use sim_core::workload::{self, Quiet};

/// The registration of this system.
pub const SPEC: SystemSpec = SystemSpec::new(
    "registry",
    "replicated registry, leader group commit, 3 members + store; invariants: same-version-same-contents, acknowledged-visible",
    build,
)
.with_bugs(&[
    BugSpec {
        name: "partial-batch",
        about: "a batch goes out as one message per operation sharing one version",
    },
    BugSpec {
        name: "no-heartbeat",
        about: "no replication heartbeat: a gapped follower stays stale until traffic resumes",
    },
    BugSpec {
        name: "reply-reinsert",
        about: "a forwarding follower re-inserts on a yes reply a name a later op of the batch removed",
    },
])
.with_flags(&["quiet"]);

/// The members, in rank order (m1 leads first).
pub const MEMBERS: [&str; 3] = ["m1", "m2", "m3"];
/// Logical clients, each a socket of the client node (port 1, 2, 3).
const CLIENTS: usize = 3;
/// Names clients register: few, so operations of two clients meet on one name.
const NAMES: u64 = 2;
const RPC_PORT: u16 = 1;
const REPL_PORT: u16 = 2;
/// The replication control channel: heartbeats, resync requests and snapshots.
const CONTROL_PORT: u16 = 3;
const HEARTBEAT: Duration = Duration::from_millis(500);
/// After this long at rest, every live synced member must have applied the store's version.
/// Ten heartbeats: under the fault profiles here (partitions up to 2 s, loss up to 30 %)
/// a correct follower has heard one long before.
pub const STALE_BOUND: Duration = Duration::from_secs(5);
const CLIENT_TIMEOUT: Duration = Duration::from_secs(3);
const CLIENT_ATTEMPTS: u32 = 4;
const MAX_OPS: u64 = 16;
const THINK_MS_MAX: u64 = 10;
const STORE_MS_MAX: u64 = 40;
const ELECTION_STAGGER: Duration = Duration::from_millis(50);
/// The default fault choice: a profile drawn per run over every datagram fault and crashes.
pub const DEFAULT_FAULTS: &str = "swarm:loss,dup,reorder,partition,clog,crash";
const ELECTION_RETRY: Duration = Duration::from_millis(200);

/// A registry operation. Names are small numbers; the owner is the calling client.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Op {
    /// Bind `name` to `owner`: yes if it was free or already `owner`'s.
    Register {
        /// The name.
        name: u8,
        /// The client binding it.
        owner: u8,
    },
    /// Remove any binding of `name`: yes if there was one.
    Unregister {
        /// The name.
        name: u8,
    },
}

/// A replica's table: name → owner.
pub type Table = BTreeMap<u8, u8>;

/// Applies one operation; returns its answer.
pub fn apply(table: &mut Table, op: &Op) -> bool {
    match *op {
        Op::Register { name, owner } => match table.get(&name) {
            None => {
                table.insert(name, owner);
                true
            }
            Some(&held) => held == owner,
        },
        Op::Unregister { name } => table.remove(&name).is_some(),
    }
}

/// One client call, named by the client and its own sequence number.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Req {
    /// The client's index.
    pub client: u8,
    /// Its sequence number (every attempt gets a new one).
    pub seq: u32,
}

/// Calls, forwards and replies (exempt sockets: a reliable request channel).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Rpc {
    /// Client → member.
    Call {
        /// The call.
        req: Req,
        /// Its operation.
        op: Op,
    },
    /// Follower → leader: a call it holds for its client.
    Forward {
        /// The call.
        req: Req,
        /// Its operation.
        op: Op,
        /// The member that holds the client's call.
        origin: u8,
    },
    /// Leader → origin member, and member → client: the committed answer.
    Reply {
        /// The call.
        req: Req,
        /// The version of the batch that committed it.
        version: u64,
        /// Its position in the batch.
        index: u32,
        /// The answer.
        yes: bool,
    },
}

/// The replication stream (a faultable socket).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Repl {
    /// Leader → followers: a committed batch.
    Batch {
        /// The leader's epoch.
        epoch: u64,
        /// The batch's version.
        version: u64,
        /// Its operations, in commit order.
        ops: Vec<Op>,
    },
    /// Leader → followers: the current version.
    Heartbeat {
        /// The leader's epoch.
        epoch: u64,
        /// The leader's version.
        version: u64,
    },
    /// Follower → leader: send me a snapshot.
    ResyncReq {
        /// The asking member.
        from: u8,
    },
    /// Leader → follower: the whole table.
    Snapshot {
        /// The leader's epoch.
        epoch: u64,
        /// The table's version.
        version: u64,
        /// The table.
        table: Table,
    },
}

/// The store: committed state, the log of batches, and the leader lease.
#[derive(Debug, Clone)]
pub struct Store {
    /// The lease's epoch; bumped by every grant.
    pub epoch: u64,
    /// The lease holder: member index and the incarnation that took it.
    pub leader: (usize, u32),
    /// Each member's latest incarnation (a member says hello at every start).
    pub incarnations: [u32; 3],
    /// The committed version (number of batches).
    pub version: u64,
    /// The committed table.
    pub table: Table,
    /// Every committed batch, `log[v - 1]` being version `v`'s operations.
    pub log: Vec<Vec<Op>>,
}

impl Default for Store {
    fn default() -> Self {
        Store {
            epoch: 1,
            leader: (0, 0),
            incarnations: [0; 3],
            version: 0,
            table: Table::new(),
            log: Vec::new(),
        }
    }
}

impl Store {
    /// Takes the lease for `member` (in `incarnation`), if the epoch it saw is current and
    /// the holder's session ended. Returns the new epoch, or the current lease.
    fn claim(
        &mut self,
        member: usize,
        incarnation: u32,
        seen_epoch: u64,
    ) -> Result<u64, (u64, usize)> {
        let (holder, holder_inc) = self.leader;
        let holder_alive = node::is_up(MEMBERS[holder]) && self.incarnations[holder] == holder_inc;
        if self.epoch != seen_epoch
            || (holder_alive && (holder, holder_inc) != (member, incarnation))
        {
            return Err((self.epoch, holder));
        }
        self.epoch += 1;
        self.leader = (member, incarnation);
        Ok(self.epoch)
    }

    /// Commits a batch from the leader of `epoch`; returns the new version and the answers.
    fn commit(&mut self, epoch: u64, ops: &[Op]) -> Option<(u64, Vec<bool>)> {
        if epoch != self.epoch {
            return None;
        }
        let answers = ops.iter().map(|op| apply(&mut self.table, op)).collect();
        self.version += 1;
        self.log.push(ops.to_vec());
        Some((self.version, answers))
    }

    /// The table as of `version` (replayed from the log).
    pub fn table_at(&self, version: u64) -> Table {
        let mut table = Table::new();
        for ops in self.log.iter().take(version as usize) {
            for op in ops {
                apply(&mut table, op);
            }
        }
        table
    }
}

/// A member's replica, as the invariants read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replica {
    /// Applied version.
    pub version: u64,
    /// The table at that version.
    pub table: Table,
    /// False after a (re)start until the first snapshot arrives.
    pub synced: bool,
    /// Waiting for a snapshot it asked for (it knows it is behind).
    pub resyncing: bool,
}

/// What a member has in flight for operations (the system's own "not at rest").
#[derive(Debug, Clone, Default)]
pub struct Busy {
    /// Client calls it holds (not yet answered).
    pub held_calls: usize,
    /// Calls queued at it as leader, not yet in a commit.
    pub queued: usize,
    /// A commit in flight.
    pub committing: bool,
    /// An election in progress.
    pub electing: bool,
}

/// An acknowledged answer, as a client received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    /// The operation.
    pub op: Op,
    /// The version that committed it.
    pub version: u64,
    /// Its position in the batch.
    pub index: u32,
    /// The answer.
    pub yes: bool,
}

/// How often each at-rest check found something to compare (the vacuity guards read these).
#[derive(Debug, Clone, Default)]
pub struct CheckCounts {
    /// Rest states in which a replica at a version ≥ 1 was compared with the store.
    pub compared: u64,
    /// Acknowledged registrations checked at a replica.
    pub visible: u64,
    /// Rest states past [`STALE_BOUND`] in which replicas were checked for being current.
    pub caught_up: u64,
}

/// Everything the invariants read, and the members write.
#[derive(Debug, Default)]
pub struct Model {
    /// The store.
    pub store: Store,
    /// Per member.
    pub replicas: [Replica; 3],
    /// Per member.
    pub busy: [Busy; 3],
    /// Clients with a call outstanding.
    pub clients_waiting: u32,
    /// Every acknowledged answer.
    pub acks: Vec<Ack>,
    /// Last change of anything rest depends on (ns of virtual time).
    pub last_activity_ns: u64,
    /// When the replication of the last batch or snapshot sent has settled.
    pub repl_settles_at_ns: u64,
    /// The network's delivery bound for the replication stream in this run.
    pub delivery_bound_ns: u64,
    /// How often the checks had something to check.
    pub counts: CheckCounts,
}

fn now_ns() -> u64 {
    now().elapsed_since_start().as_nanos() as u64
}

impl Model {
    fn touch(&mut self) {
        self.last_activity_ns = now_ns();
    }

    /// Members the checks look at: up, not paused, synced, not resyncing.
    fn checked_members(&self) -> Vec<usize> {
        (0..MEMBERS.len())
            .filter(|&i| {
                let r = &self.replicas[i];
                node::is_up(MEMBERS[i]) && !node::is_paused(MEMBERS[i]) && r.synced && !r.resyncing
            })
            .collect()
    }

    /// Since when the system has been at rest (see the module docs), or `None`.
    pub fn rest_since_ns(&self) -> Option<u64> {
        if self.clients_waiting > 0 || now_ns() < self.repl_settles_at_ns {
            return None;
        }
        for (i, busy) in self.busy.iter().enumerate() {
            if !node::is_up(MEMBERS[i]) {
                continue;
            }
            if busy.held_calls > 0 || busy.queued > 0 || busy.committing || busy.electing {
                return None;
            }
        }
        Some(self.last_activity_ns.max(self.repl_settles_at_ns))
    }

    /// `same-version-same-contents`.
    pub fn check_same_version(&mut self) -> Result<(), String> {
        if self.rest_since_ns().is_none() {
            return Ok(());
        }
        let mut tables: BTreeMap<u64, Table> = BTreeMap::new();
        for i in self.checked_members() {
            let r = &self.replicas[i];
            if r.version > self.store.version {
                return Err(format!(
                    "{} is at version {} beyond the store's {}",
                    MEMBERS[i], r.version, self.store.version
                ));
            }
            let expected = tables
                .entry(r.version)
                .or_insert_with(|| self.store.table_at(r.version));
            if r.version > 0 {
                self.counts.compared += 1;
            }
            if r.table != *expected {
                let peers: Vec<String> = self
                    .checked_members()
                    .into_iter()
                    .filter(|&j| j != i && self.replicas[j].version == r.version)
                    .map(|j| format!("{} holds {:?}", MEMBERS[j], self.replicas[j].table))
                    .collect();
                return Err(format!(
                    "at rest, {} at version {} holds {:?}, but version {} is {:?}{}",
                    MEMBERS[i],
                    r.version,
                    r.table,
                    r.version,
                    expected,
                    if peers.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", peers.join(", "))
                    }
                ));
            }
        }
        Ok(())
    }

    /// `acknowledged-visible`.
    pub fn check_acknowledged_visible(&mut self) -> Result<(), String> {
        let Some(since) = self.rest_since_ns() else {
            return Ok(());
        };
        let members = self.checked_members();
        for ack in &self.acks {
            let Op::Register { name, owner } = ack.op else {
                continue;
            };
            if !ack.yes {
                continue;
            }
            for &i in &members {
                let r = &self.replicas[i];
                if r.version < ack.version {
                    continue;
                }
                // Was the name touched by a later committed operation, up to this replica's
                // version?
                let later = (ack.version..=r.version).any(|v| {
                    let ops = &self.store.log[v as usize - 1];
                    let from = if v == ack.version {
                        ack.index as usize + 1
                    } else {
                        0
                    };
                    ops.iter().skip(from).any(|op| match *op {
                        Op::Register { name: n, .. } | Op::Unregister { name: n } => n == name,
                    })
                });
                if later {
                    continue;
                }
                self.counts.visible += 1;
                if r.table.get(&name) != Some(&owner) {
                    return Err(format!(
                        "at rest, name {name} registered by c{} (acknowledged at version {}) is not visible at {} (version {}, {:?})",
                        owner + 1,
                        ack.version,
                        MEMBERS[i],
                        r.version,
                        r.table
                    ));
                }
            }
        }
        let rested = Duration::from_nanos(now_ns().saturating_sub(since));
        if rested >= STALE_BOUND {
            self.counts.caught_up += 1;
            for &i in &members {
                let r = &self.replicas[i];
                if r.version != self.store.version {
                    return Err(format!(
                        "after {rested:?} at rest, {} is still at version {} while the store is at {}: what was acknowledged since is not visible there",
                        MEMBERS[i], r.version, self.store.version
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Planted bugs of one run.
#[derive(Clone, Copy, Debug, Default)]
struct Bugs {
    partial_batch: bool,
    no_heartbeat: bool,
    reply_reinsert: bool,
}

/// A deliberate corruption, for the tests that show each check can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corruption {
    /// Followers apply every batch but drop its first operation: replicas diverge.
    FollowersSkipFirstOp,
    /// m3 ignores every replication message after the first batch: it goes stale.
    M3IgnoresReplication,
}

/// Test-only knobs of a scenario.
#[derive(Clone, Copy, Debug, Default)]
pub struct Hooks {
    /// A corruption to plant.
    pub corruption: Option<Corruption>,
}

fn build(opts: &RunOptions) -> Sim {
    scenario(opts, Hooks::default()).0
}

/// The scenario, and the model its checks read (tests look at it after the run).
pub fn scenario(opts: &RunOptions, hooks: Hooks) -> (Sim, Rc<RefCell<Model>>) {
    let config = opts.config_with_default_faults(
        DEFAULT_FAULTS
            .parse()
            .expect("the registry's default fault selection parses"),
    );
    let latency_ms = config.net.latency_ms_max + config.net.jitter_ms_max;
    let mut sim = Sim::new(config);
    let model = Rc::new(RefCell::new(Model::default()));
    let bugs = Bugs {
        partial_batch: opts.bug_is("partial-batch"),
        no_heartbeat: opts.bug_is("no-heartbeat"),
        reply_reinsert: opts.bug_is("reply-reinsert"),
    };
    let m = model.clone();
    sim.setup(move |_| {
        let p = net::profile();
        let mut bound_ms = latency_ms + 1;
        if p.reorder_per_mille > 0 {
            bound_ms += p.reorder_ms_max;
        }
        if p.clog_per_mille > 0 {
            bound_ms += p.clog_ms_max;
        }
        m.borrow_mut().delivery_bound_ns = bound_ms * 1_000_000;
    });
    for (i, name) in MEMBERS.iter().enumerate() {
        let m = model.clone();
        sim.node(name, move |ctx| member(i, ctx, m.clone(), bugs, hooks));
    }
    sim.nemesis_targets(&MEMBERS);
    let quiet = Quiet {
        enabled: opts.quiet,
        per_mille: 500,
        longest: STALE_BOUND * 2,
    };
    let m = model.clone();
    sim.client("client", move |_| clients(m.clone(), quiet));
    let m = model.clone();
    sim.invariant("same-version-same-contents", move || {
        m.borrow_mut().check_same_version()
    });
    let m = model.clone();
    sim.invariant("acknowledged-visible", move || {
        m.borrow_mut().check_acknowledged_visible()
    });
    (sim, model)
}

// ---------------------------------------------------------------------------------------
// Clients.
// ---------------------------------------------------------------------------------------

/// The workload: a drawn number of calls, each from a free logical client. Each call draws
/// whether it joins the calls in flight (so they meet in the leader's group commit) or
/// waits for them to finish first — and then, after a short think time, draws a quiet period
/// in which no client says anything. Every call draws the same shape of choices, right
/// before it starts, so deleting one call's draws leaves the others intact.
async fn clients(model: Rc<RefCell<Model>>, quiet: Quiet) {
    let socks: Vec<Rc<Socket<Rpc>>> = (0..CLIENTS)
        .map(|c| Rc::new(Socket::bind_exempt(RPC_PORT + c as u16).expect("client ports are free")))
        .collect();
    let mut seqs = [0u32; CLIENTS];
    let mut in_flight: Vec<(usize, sim_core::rt::JoinHandle<()>)> = Vec::new();
    for _ in 0..workload::op_count(MAX_OPS) {
        let join =
            in_flight.len() < CLIENTS && sim::draw(|s| s.chance("registry.join_in_flight", 1, 2));
        if !join {
            for (_, call) in in_flight.drain(..) {
                let _ = call.await;
            }
            workload::think(THINK_MS_MAX).await;
            quiet.after_op().await;
        }
        let c = (0..CLIENTS)
            .find(|c| in_flight.iter().all(|(busy, _)| busy != c))
            .expect("fewer calls in flight than clients");
        let name = sim::draw(|s| s.below("registry.name", NAMES)) as u8;
        let op = if sim::draw(|s| s.chance("registry.unregister", 1, 2)) {
            Op::Unregister { name }
        } else {
            Op::Register {
                name,
                owner: c as u8,
            }
        };
        let member = sim::draw(|s| s.below("registry.member", MEMBERS.len() as u64)) as usize;
        let id = sim::op_start(&(c, op));
        let first_seq = seqs[c];
        seqs[c] += CLIENT_ATTEMPTS;
        let (sock, m) = (socks[c].clone(), model.clone());
        {
            let mut m = model.borrow_mut();
            m.clients_waiting += 1;
            m.touch();
        }
        let handle =
            sim_core::rt::spawn(
                async move { call(id, c as u8, &sock, first_seq, op, member, m).await },
            );
        in_flight.push((c, handle));
    }
    for (_, call) in in_flight.drain(..) {
        let _ = call.await;
    }
    // The end of a run is at rest too: let the last batch's replication settle, so the
    // checks see it (far shorter than STALE_BOUND: this is not a quiet period).
    let settle = Duration::from_nanos(model.borrow().delivery_bound_ns) + HEARTBEAT;
    sleep(settle).await;
}

/// One client call: to `member`, then (if that member goes down or nothing comes back in
/// time) to the next ones, each attempt with its own sequence number.
async fn call(
    id: sim::OpId,
    c: u8,
    sock: &Socket<Rpc>,
    first_seq: u32,
    op: Op,
    mut member: usize,
    model: Rc<RefCell<Model>>,
) {
    let mut answer = None;
    for attempt in 0..CLIENT_ATTEMPTS {
        let req = Req {
            client: c,
            seq: first_seq + attempt,
        };
        sock.send(
            Addr::named(MEMBERS[member], RPC_PORT),
            Rpc::Call { req, op },
        );
        let watch = net::watch(MEMBERS[member]).expect("members exist");
        let reply = async {
            loop {
                if let (
                    _,
                    Rpc::Reply {
                        req: r,
                        version,
                        index,
                        yes,
                    },
                ) = sock.recv().await
                {
                    if r == req {
                        return (version, index, yes);
                    }
                }
            }
        };
        let lost = watch.down();
        futures::pin_mut!(reply, lost);
        if let Ok(Either::Left((got, _))) = timeout(CLIENT_TIMEOUT, select(reply, lost)).await {
            answer = Some(got);
            break;
        }
        // The member went down, or nothing came back in time: try the next one.
        member = (member + 1) % MEMBERS.len();
    }
    {
        let mut m = model.borrow_mut();
        m.clients_waiting -= 1;
        m.touch();
        if let Some((version, index, yes)) = answer {
            m.acks.push(Ack {
                op,
                version,
                index,
                yes,
            });
        }
    }
    sim::op_result(id, &answer.map(|(_, _, yes)| yes));
}

// ---------------------------------------------------------------------------------------
// Members.
// ---------------------------------------------------------------------------------------

struct Queued {
    req: Req,
    op: Op,
    origin: usize,
}

struct State {
    /// The leader this member follows (or is), with its epoch.
    leader: Option<(u64, usize)>,
    /// Client calls held here: who to answer, and the operation.
    held: BTreeMap<Req, (Addr, Op)>,
}

struct Member {
    me: usize,
    incarnation: u32,
    ids: [NodeId; 3],
    model: Rc<RefCell<Model>>,
    bugs: Bugs,
    hooks: Hooks,
    rpc: Socket<Rpc>,
    repl: Socket<Repl>,
    control: Socket<Repl>,
    /// Batches received on either socket (for the test-only corruption hooks).
    batches_seen: Cell<u64>,
    state: RefCell<State>,
    queue: mpsc::UnboundedSender<Queued>,
    changed: mpsc::UnboundedSender<()>,
}

async fn store_latency() {
    let ms = sim::draw(|s| s.range_inclusive("registry.store_ms", 1, STORE_MS_MAX));
    sleep(Duration::from_millis(ms)).await;
}

async fn member(me: usize, ctx: NodeCtx, model: Rc<RefCell<Model>>, bugs: Bugs, hooks: Hooks) {
    let rpc = Socket::<Rpc>::bind_exempt(RPC_PORT).expect("rpc port is free");
    let repl = Socket::<Repl>::bind(REPL_PORT).expect("replication port is free");
    let control = Socket::<Repl>::bind_exempt(CONTROL_PORT).expect("control port is free");
    {
        // A (re)start begins with an empty replica that must sync from the leader.
        // (At the very first start every replica is the empty table at version 0, as the
        // store is.)
        let mut m = model.borrow_mut();
        m.replicas[me] = Replica {
            synced: ctx.incarnation() == 0,
            ..Replica::default()
        };
        m.busy[me] = Busy::default();
        m.touch();
    }
    let ids = MEMBERS.map(|n| node::lookup(n).expect("members exist"));
    let (queue, queued) = mpsc::unbounded();
    let (changed, mut changes) = mpsc::unbounded();
    let this = Rc::new(Member {
        me,
        incarnation: ctx.incarnation(),
        ids,
        model,
        bugs,
        hooks,
        rpc,
        repl,
        control,
        batches_seen: Cell::new(0),
        state: RefCell::new(State {
            leader: None,
            held: BTreeMap::new(),
        }),
        queue,
        changed,
    });
    // Say hello to the store and learn the lease.
    store_latency().await;
    let (epoch, holder) = {
        let mut m = this.model.borrow_mut();
        m.store.incarnations[me] = this.incarnation;
        (m.store.epoch, m.store.leader)
    };
    let t = this.clone();
    sim_core::rt::spawn(async move { t.serve_rpc().await });
    let t = this.clone();
    sim_core::rt::spawn(async move { t.serve_repl(&t.repl).await });
    let t = this.clone();
    sim_core::rt::spawn(async move { t.serve_repl(&t.control).await });
    let t = this.clone();
    sim_core::rt::spawn(async move { t.commit_loop(queued).await });
    if holder == (me, this.incarnation) {
        this.become_leader(epoch).await;
    } else if holder.0 == me {
        // An earlier incarnation of this member held the lease: its session is over.
        this.elect(epoch).await;
    } else {
        this.adopt(epoch, holder.0);
    }
    // Watch the leader; when it is lost, elect.
    loop {
        let leader = this.state.borrow().leader;
        match leader {
            Some((_, l)) if l == me => std::future::pending::<()>().await,
            Some((epoch, l)) => {
                let watch = net::watch(MEMBERS[l]).expect("members exist");
                let lost = watch.down();
                futures::pin_mut!(lost);
                if let Either::Left(_) = select(lost, changes.next()).await {
                    this.elect(epoch).await;
                }
            }
            None => unreachable!("a member always knows a leader after its start"),
        }
    }
}

impl Member {
    fn leader(&self) -> Option<(u64, usize)> {
        self.state.borrow().leader
    }

    fn is_leader(&self) -> bool {
        self.leader().is_some_and(|(_, l)| l == self.me)
    }

    fn rpc_addr(&self, i: usize) -> Addr {
        Addr {
            node: self.ids[i],
            port: RPC_PORT,
        }
    }

    fn repl_addr(&self, i: usize) -> Addr {
        Addr {
            node: self.ids[i],
            port: REPL_PORT,
        }
    }

    fn control_addr(&self, i: usize) -> Addr {
        Addr {
            node: self.ids[i],
            port: CONTROL_PORT,
        }
    }

    fn member_of(&self, addr: Addr) -> Option<usize> {
        self.ids.iter().position(|&id| id == addr.node)
    }

    /// Follows `leader` of `epoch` if that is newer than what this member knows; re-forwards
    /// the calls it holds.
    fn adopt(&self, epoch: u64, leader: usize) {
        {
            let mut st = self.state.borrow_mut();
            if st.leader.is_some_and(|(e, _)| e >= epoch) {
                return;
            }
            st.leader = Some((epoch, leader));
        }
        let _ = self.changed.unbounded_send(());
        if leader == self.me {
            return;
        }
        let held: Vec<(Req, Op)> = self
            .state
            .borrow()
            .held
            .iter()
            .map(|(req, (_, op))| (*req, *op))
            .collect();
        for (req, op) in held {
            self.rpc.send(
                self.rpc_addr(leader),
                Rpc::Forward {
                    req,
                    op,
                    origin: self.me as u8,
                },
            );
        }
    }

    async fn elect(self: &Rc<Self>, seen_epoch: u64) {
        self.set_electing(true);
        sleep(ELECTION_STAGGER * self.me as u32).await;
        store_latency().await;
        let claimed = {
            let mut m = self.model.borrow_mut();
            m.store.claim(self.me, self.incarnation, seen_epoch)
        };
        match claimed {
            Ok(epoch) => self.become_leader(epoch).await,
            Err((epoch, holder)) if epoch > seen_epoch || self.leader().is_none() => {
                self.adopt(epoch, holder)
            }
            // The holder is alive (a partition fired the watch): watch it again, later.
            Err(_) => sleep(ELECTION_RETRY).await,
        }
        self.set_electing(false);
    }

    fn set_electing(&self, on: bool) {
        let mut m = self.model.borrow_mut();
        m.busy[self.me].electing = on;
        m.touch();
    }

    async fn become_leader(self: &Rc<Self>, epoch: u64) {
        store_latency().await;
        {
            let mut m = self.model.borrow_mut();
            let (version, table) = (m.store.version, m.store.table.clone());
            m.replicas[self.me] = Replica {
                version,
                table,
                synced: true,
                resyncing: false,
            };
            m.touch();
        }
        self.adopt(epoch, self.me);
        if !self.bugs.no_heartbeat {
            let t = self.clone();
            sim_core::rt::spawn(async move { t.heartbeat_loop().await });
        }
        let held: Vec<(Req, Op)> = self
            .state
            .borrow()
            .held
            .iter()
            .map(|(req, (_, op))| (*req, *op))
            .collect();
        for (req, op) in held {
            self.enqueue(req, op, self.me);
        }
    }

    fn enqueue(&self, req: Req, op: Op, origin: usize) {
        let mut m = self.model.borrow_mut();
        m.busy[self.me].queued += 1;
        m.touch();
        let _ = self.queue.unbounded_send(Queued { req, op, origin });
    }

    async fn heartbeat_loop(&self) {
        loop {
            sleep(HEARTBEAT).await;
            let (epoch, version) = {
                let m = self.model.borrow();
                (
                    self.leader().expect("a leader knows its epoch").0,
                    m.replicas[self.me].version,
                )
            };
            for i in (0..MEMBERS.len()).filter(|&i| i != self.me) {
                self.control
                    .send(self.control_addr(i), Repl::Heartbeat { epoch, version });
            }
        }
    }

    async fn serve_rpc(&self) {
        loop {
            let (from, msg) = self.rpc.recv().await;
            match msg {
                Rpc::Call { req, op } => {
                    {
                        let mut st = self.state.borrow_mut();
                        if st.held.insert(req, (from, op)).is_none() {
                            let mut m = self.model.borrow_mut();
                            m.busy[self.me].held_calls += 1;
                            m.touch();
                        }
                    }
                    match self.leader() {
                        Some((_, l)) if l == self.me => self.enqueue(req, op, self.me),
                        Some((_, l)) => self.rpc.send(
                            self.rpc_addr(l),
                            Rpc::Forward {
                                req,
                                op,
                                origin: self.me as u8,
                            },
                        ),
                        None => {}
                    }
                }
                Rpc::Forward { req, op, origin } => match self.leader() {
                    Some((_, l)) if l == self.me => self.enqueue(req, op, origin as usize),
                    // Not the leader (any more): pass it on to the one this member follows.
                    Some((_, l)) => {
                        self.rpc
                            .send(self.rpc_addr(l), Rpc::Forward { req, op, origin });
                    }
                    None => {}
                },
                Rpc::Reply {
                    req,
                    version,
                    index,
                    yes,
                } => self.answer(req, version, index, yes, true),
            }
        }
    }

    /// Answers a held call (if still held) with its committed result.
    fn answer(&self, req: Req, version: u64, index: u32, yes: bool, forwarded: bool) {
        let Some((client, op)) = self.state.borrow_mut().held.remove(&req) else {
            return;
        };
        {
            let mut m = self.model.borrow_mut();
            m.busy[self.me].held_calls -= 1;
            m.touch();
            if let (true, true, Op::Register { name, owner }) =
                (self.bugs.reply_reinsert, forwarded && yes, op)
            {
                // Planted bug: "my client's register succeeded; make sure my replica shows
                // it" — once the batch is applied, a later op of the batch may have removed it.
                let r = &mut m.replicas[self.me];
                if r.version >= version {
                    r.table.insert(name, owner);
                }
            }
        }
        self.rpc.send(
            client,
            Rpc::Reply {
                req,
                version,
                index,
                yes,
            },
        );
    }

    async fn commit_loop(&self, mut queued: mpsc::UnboundedReceiver<Queued>) {
        while let Some(first) = queued.next().await {
            // Group commit: everything queued by now goes into this batch.
            let mut batch = vec![first];
            while let Ok(q) = queued.try_recv() {
                batch.push(q);
            }
            {
                let mut m = self.model.borrow_mut();
                m.busy[self.me].queued -= batch.len();
                m.busy[self.me].committing = true;
                m.touch();
            }
            store_latency().await;
            let epoch = self.leader().expect("a leader knows its epoch").0;
            let ops: Vec<Op> = batch.iter().map(|q| q.op).collect();
            let committed = self.model.borrow_mut().store.commit(epoch, &ops);
            let Some((version, answers)) = committed else {
                // Fenced: a newer leader holds the lease. Never answer what was not
                // committed; the origins re-forward to the new leader.
                let mut m = self.model.borrow_mut();
                m.busy[self.me].committing = false;
                m.touch();
                continue;
            };
            {
                let mut m = self.model.borrow_mut();
                let r = &mut m.replicas[self.me];
                debug_assert_eq!(r.version + 1, version, "leader replica behind the store");
                for op in &ops {
                    apply(&mut r.table, op);
                }
                r.version = version;
            }
            let followers: Vec<usize> = (0..MEMBERS.len()).filter(|&i| i != self.me).collect();
            for &i in &followers {
                if self.bugs.partial_batch {
                    // Planted bug: one message per operation, all sharing the version.
                    for op in &ops {
                        self.repl.send(
                            self.repl_addr(i),
                            Repl::Batch {
                                epoch,
                                version,
                                ops: vec![*op],
                            },
                        );
                    }
                } else {
                    self.repl.send(
                        self.repl_addr(i),
                        Repl::Batch {
                            epoch,
                            version,
                            ops: ops.clone(),
                        },
                    );
                }
            }
            self.replication_sent();
            for (index, (q, yes)) in batch.iter().zip(answers).enumerate() {
                if q.origin == self.me {
                    self.answer(q.req, version, index as u32, yes, false);
                } else {
                    self.rpc.send(
                        self.rpc_addr(q.origin),
                        Rpc::Reply {
                            req: q.req,
                            version,
                            index: index as u32,
                            yes,
                        },
                    );
                }
            }
            let mut m = self.model.borrow_mut();
            m.busy[self.me].committing = false;
            m.touch();
        }
    }

    /// Replication of an operation is in flight until the network's delivery bound passes.
    fn replication_sent(&self) {
        let mut m = self.model.borrow_mut();
        let settles = now_ns() + m.delivery_bound_ns;
        m.repl_settles_at_ns = m.repl_settles_at_ns.max(settles);
    }

    fn request_resync(&self) {
        let Some((_, l)) = self.leader() else {
            return;
        };
        if l == self.me {
            return;
        }
        self.model.borrow_mut().replicas[self.me].resyncing = true;
        self.control.send(
            self.control_addr(l),
            Repl::ResyncReq {
                from: self.me as u8,
            },
        );
    }

    /// Serves one replication socket: the batch stream or the control channel.
    async fn serve_repl(&self, socket: &Socket<Repl>) {
        loop {
            let (from, msg) = socket.recv().await;
            let sender = self.member_of(from);
            if self.hooks.corruption == Some(Corruption::M3IgnoresReplication)
                && self.me == 2
                && self.batches_seen.get() > 0
            {
                continue;
            }
            match msg {
                Repl::Batch {
                    epoch,
                    version,
                    ops,
                } => {
                    self.batches_seen.set(self.batches_seen.get() + 1);
                    if let Some(s) = sender {
                        self.adopt(epoch, s);
                    }
                    if self.is_leader() {
                        continue;
                    }
                    let (synced, applied) = {
                        let m = self.model.borrow();
                        (m.replicas[self.me].synced, m.replicas[self.me].version)
                    };
                    let skip_first =
                        self.hooks.corruption == Some(Corruption::FollowersSkipFirstOp);
                    if synced
                        && (version == applied + 1
                            || (self.bugs.partial_batch && version == applied))
                    {
                        // (With the planted bug, a message at the applied version is taken
                        // for "another message of the batch being applied".)
                        let mut m = self.model.borrow_mut();
                        let r = &mut m.replicas[self.me];
                        for op in ops.iter().skip(usize::from(skip_first)) {
                            apply(&mut r.table, op);
                        }
                        r.version = version;
                    } else if !synced || version > applied + 1 {
                        self.request_resync();
                    }
                }
                Repl::Heartbeat { epoch, version } => {
                    if let Some(s) = sender {
                        self.adopt(epoch, s);
                    }
                    let m = self.model.borrow();
                    let r = &m.replicas[self.me];
                    let behind = !r.synced || version > r.version;
                    drop(m);
                    if behind && !self.is_leader() {
                        self.request_resync();
                    }
                }
                Repl::ResyncReq { from: asker } => {
                    if !self.is_leader() {
                        continue;
                    }
                    let epoch = self.leader().expect("leader").0;
                    let (version, table) = {
                        let m = self.model.borrow();
                        (
                            m.replicas[self.me].version,
                            m.replicas[self.me].table.clone(),
                        )
                    };
                    self.control.send(
                        self.control_addr(asker as usize),
                        Repl::Snapshot {
                            epoch,
                            version,
                            table,
                        },
                    );
                    self.replication_sent();
                }
                Repl::Snapshot {
                    epoch,
                    version,
                    table,
                } => {
                    if let Some(s) = sender {
                        self.adopt(epoch, s);
                    }
                    if self.is_leader() {
                        continue;
                    }
                    let mut m = self.model.borrow_mut();
                    let r = &mut m.replicas[self.me];
                    if !r.synced || version >= r.version {
                        *r = Replica {
                            version,
                            table,
                            synced: true,
                            resyncing: false,
                        };
                    }
                }
            }
        }
    }
}
