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

mod client;
mod member;
mod model;
mod store;
mod wire;

use client::clients;
use member::member;
pub use model::{Ack, Busy, CheckCounts, Model, Replica};
pub use store::Store;
pub use wire::{apply, Op, Repl, Req, Rpc, Table};
