//! Raft key-value store: 3 or 5 replicas running Raft on sim-core's sockets, timers and a
//! disk that loses unsynced writes at a crash; clients doing get, put and compare-and-set.
//!
//! | file | concept |
//! |---|---|
//! | [`log`] | entries, their encoding, the paper's log comparisons |
//! | [`storage`] | term, vote and log on disk: synced, checksummed, recovered after a crash |
//! | [`node`] | the replica: election, replication, commitment, the state machine |
//! | [`client`] | the workload: redirects, retries, deadlines (indeterminate outcomes) |
//! | [`invariants`] | Raft's safety properties and linearizability of the client history |
//!
//! **Scenario.** The first draw picks 3 replicas (three runs in four) or 5; three clients
//! each run one to six operations on three keys, each operation against whichever replica
//! they believe leads, with a deadline of one second after which its outcome is
//! indeterminate. Reads go through the log like writes, so a correct leader never serves a
//! stale value.
//!
//! **Faults (on by default, drawn per run by the swarm).** Network: loss, duplication,
//! reordering, partitions and clogs of datagrams.
//! Lifecycle: the run's nemesis crashes, stops and pauses replicas and restarts them; a
//! crash loses or tears whatever a replica had not synced ([`storage`]). Clocks: skew, jumps
//! and late timers ([`DEFAULT_FAULTS`]; `--faults` replaces the whole choice). All are faults Raft is designed to survive: it never relies on a message
//! arriving, on timing, or on unsynced data; synced data is never corrupted (no replica's
//! disk lies, so no majority's copies are lost at once).
//!
//! **Invariants**: `election-safety`, `log-matching`, `leader-completeness`,
//! `state-machine-safety` (checked as they happen), and `linearizable` (the client history,
//! checked by [`sim_core::check`] once the workload is done; the message names the window).
//!
//! **Planted bugs**, each a mistake real implementations have shipped:
//! * `ack-before-fsync`: the leader counts its own appended entry toward a majority before
//!   it is synced; a leader crash can then lose a committed entry.
//! * `vote-not-persisted`: a vote is answered before it is durable; a voter that crashes and
//!   restarts in between can vote twice in one term (two leaders).
//! * `old-term-commit`: a leader commits an entry of an earlier term by counting replicas
//!   (the paper's Figure 8): a later leader may overwrite it.
//! * `stale-read`: a leader serves reads from its own state without confirming it still
//!   leads; a deposed leader returns stale values.
//! * `commit-past-request`: a follower advances its commit index to the leader's within its
//!   whole log, not only up to the last entry the request vouched for (Figure 2's
//!   `min(leaderCommit, index of last new entry)`); a suffix a deposed leader left behind is
//!   then applied although the new leader holds other entries there.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use sim_core::choice::Choices;
use sim_core::faults::FaultSelection;
use sim_core::sim::Sim;
use sim_core::system::{BugSpec, RunOptions, SystemSpec};

pub mod client;
pub mod invariants;
pub mod log;
pub mod node;
pub mod storage;

use invariants::{Observer, RAFT_INVARIANTS};

/// The registration of this system.
pub const SPEC: SystemSpec = SystemSpec::new(
    "raft-kv",
    "Raft key-value store, 3 or 5 replicas, crashes with disk loss, every network fault; invariants: Raft safety, linearizable",
    build,
)
.with_bugs(&[
    BugSpec {
        name: "ack-before-fsync",
        about: "the leader counts its own append toward a majority before it is synced",
    },
    BugSpec {
        name: "vote-not-persisted",
        about: "a vote is answered before it is durable: a restarted voter votes twice in a term",
    },
    BugSpec {
        name: "old-term-commit",
        about: "a leader commits an earlier term's entry by counting replicas (Figure 8)",
    },
    BugSpec {
        name: "stale-read",
        about: "a leader serves reads without confirming it still leads",
    },
    BugSpec {
        name: "commit-past-request",
        about: "a follower commits past the last entry the AppendEntries vouched for",
    },
]);

/// The faults of a run unless `--faults` says otherwise: every network, clock and lifecycle
/// fault, a profile drawn per run.
pub const DEFAULT_FAULTS: &str = "swarm:net,clock,lifecycle,disk";

/// The port every replica and client binds.
pub const PORT: u16 = 1;
/// Replica names; a run uses the first 3 or all 5.
pub const REPLICAS: [&str; 5] = ["r0", "r1", "r2", "r3", "r4"];
const CLIENTS: [&str; 3] = ["c1", "c2", "c3"];
/// Keys the clients touch.
pub const KEYS: u64 = 3;

/// Which planted bugs are on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bugs {
    /// See the module docs.
    pub ack_before_fsync: bool,
    /// See the module docs.
    pub vote_not_persisted: bool,
    /// See the module docs.
    pub old_term_commit: bool,
    /// See the module docs.
    pub stale_read: bool,
    /// See the module docs.
    pub commit_past_request: bool,
}

impl Bugs {
    fn of(opts: &RunOptions) -> Bugs {
        Bugs {
            ack_before_fsync: opts.bug_is("ack-before-fsync"),
            vote_not_persisted: opts.bug_is("vote-not-persisted"),
            old_term_commit: opts.bug_is("old-term-commit"),
            stale_read: opts.bug_is("stale-read"),
            commit_past_request: opts.bug_is("commit-past-request"),
        }
    }
}

fn build(opts: &RunOptions) -> Sim {
    let default_faults: FaultSelection = DEFAULT_FAULTS.parse().expect("a valid selection");
    let mut config = opts.config_with_default_faults(default_faults);
    // A disk whose syncs take a while (a spinning disk's 1-20 ms): the window between a
    // write reaching the cache and reaching the medium is what ack-before-fsync and
    // vote-not-persisted gamble on. The fault atlas stays at its default (no damage to
    // synced data: outside Raft's fault model, see `storage`).
    config.disk.sync_us_min = 1_000;
    config.disk.sync_us_max = 20_000;
    let mut sim = Sim::new(config);
    let bugs = Bugs::of(opts);
    let observer = Rc::new(RefCell::new(Observer::new(CLIENTS.len())));
    let replicas = Rc::new(Cell::new(3u32));

    let count = replicas.clone();
    sim.setup(move |source| {
        if source.chance("raft.five_replicas", 1, 4) {
            count.set(5);
        }
    });
    // Replicas first: a replica's number is its node id.
    for (me, name) in REPLICAS.iter().enumerate() {
        let (observer, count) = (observer.clone(), replicas.clone());
        sim.node(name, move |_| {
            let (observer, count) = (observer.clone(), count.get());
            async move {
                if (me as u32) < count {
                    node::replica(me as u32, count, observer, bugs).await;
                }
            }
        });
    }
    sim.nemesis_targets(&REPLICAS);
    for (id, name) in CLIENTS.iter().enumerate() {
        let (observer, count) = (observer.clone(), replicas.clone());
        sim.client(name, move |_| {
            client::client(id as u32 + 1, name, count.get(), observer.clone())
        });
    }
    for name in RAFT_INVARIANTS {
        let observer = observer.clone();
        sim.invariant(name, move || observer.borrow().check(name));
    }
    sim.invariant("linearizable", move || {
        observer
            .borrow_mut()
            .clients
            .linearizable()
            .map_err(|e| e.to_string())
    });
    sim
}
