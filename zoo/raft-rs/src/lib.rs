//! TiKV's `raft` crate (a pure Raft state machine: `RawNode`, `Storage`, `Ready`) driven under
//! simulation through its public API.
//!
//! | file | concept |
//! |---|---|
//! | [`wal`] | a node's durable state: one write-ahead log on sim-core's disk |
//! | [`store`] | raft's `Storage` trait: an in-memory image of the WAL, rebuilt at every start |
//! | [`compat`] | the two `Ready` APIs (0.6.0-alpha, 0.6.0) behind one shape |
//! | [`node`] | a peer: ticks from virtual time, messages, persistence, the state machine |
//! | [`client`] | the workload: redirects, retries, deadlines (indeterminate outcomes) |
//! | [`observer`] | Raft's safety properties and linearizability of the client history |
//!
//! **Scenario** (system `raftrs-kv`). The first draws pick 3 peers (three runs in four) or
//! 5, whether raft runs with `pre_vote` and with `check_quorum`, and whether reads go through
//! the log or through raft's ReadIndex (`read_only_option = Safe`). Three clients each run
//! one to six get, put and compare-and-set operations on three keys against the node they
//! believe leads, with a deadline of one second, after which the outcome is indeterminate.
//!
//! **Persistence model.** Each peer writes raft's entries and hard state to a WAL on its
//! simulated disk before it sends the messages of the same `Ready` (raft 0.6.0's
//! `messages()` excepted: the library says they may go out before persistence), and syncs
//! exactly when `Ready::must_sync()` says so. A crash keeps, loses or tears each unsynced
//! write; recovery keeps the longest valid prefix ([`wal`]). Nothing else survives a crash:
//! the state machine is rebuilt by applying the committed log again.
//!
//! **Faults** (default `swarm:net,clock,lifecycle,disk`, a profile drawn per run): loss,
//! duplication, reordering, partitions and clogs of datagrams; crashes, stops and pauses of
//! peers; clock skew, jumps and late timers; transient disk errors and slow operations. Each
//! is a fault Raft is meant to survive. Synced data is never damaged (the disk's fault atlas
//! stays at its default).
//!
//! **Invariants**: `election-safety`, `leader-completeness`, `state-machine-safety` (checked
//! as they happen, [`observer`]) and `linearizable` (the client history, once the workload
//! is done, by `sim_core::check`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use sim_core::choice::Choices;
use sim_core::faults::FaultSelection;
use sim_core::sim::Sim;
use sim_core::system::{RunOptions, SystemSpec};

pub mod client;
pub mod compat;
pub mod node;
pub mod observer;
pub mod store;
pub mod wal;

use observer::{Observer, RAFT_INVARIANTS};

/// The registration of this system.
pub const SPEC: SystemSpec = SystemSpec::new(
    "raftrs-kv",
    "TiKV's raft (RawNode) as a key-value store, 3 or 5 peers on a simulated disk, crashes and every network fault; invariants: Raft safety, linearizable",
    build,
);

/// The faults of a run unless `--faults` says otherwise.
pub const DEFAULT_FAULTS: &str = "swarm:net,clock,lifecycle,disk";

/// The port raft messages travel on.
pub const RAFT_PORT: u16 = 1;
/// The port clients and nodes talk on.
pub const CLIENT_PORT: u16 = 2;
/// Peer names; peer `NODES[i]` has raft id `i + 1`. A run uses the first 3 or all 5.
pub const NODES: [&str; 5] = ["n1", "n2", "n3", "n4", "n5"];
const CLIENTS: [&str; 3] = ["c1", "c2", "c3"];
/// Keys the clients touch.
pub const KEYS: u64 = 3;

/// A run's shape, drawn once and shared by every node.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    /// How many peers.
    pub nodes: u32,
    /// raft's `pre_vote`.
    pub pre_vote: bool,
    /// raft's `check_quorum`.
    pub check_quorum: bool,
    /// Reads through ReadIndex (else through the log).
    pub read_index: bool,
}

fn build(opts: &RunOptions) -> Sim {
    let default_faults: FaultSelection = DEFAULT_FAULTS.parse().expect("a valid selection");
    let mut config = opts.config_with_default_faults(default_faults);
    // A disk whose syncs take a while (1-20 ms), as raft-kv's.
    config.disk.sync_us_min = 1_000;
    config.disk.sync_us_max = 20_000;
    let mut sim = Sim::new(config);
    let observer = Rc::new(RefCell::new(Observer::new(CLIENTS.len())));
    let setup = Rc::new(Cell::new(Setup {
        nodes: 3,
        pre_vote: false,
        check_quorum: false,
        read_index: false,
    }));
    let shared = setup.clone();
    sim.setup(move |source| {
        shared.set(Setup {
            nodes: if source.chance("raftrs.five_nodes", 1, 4) {
                5
            } else {
                3
            },
            pre_vote: source.chance("raftrs.pre_vote", 1, 2),
            check_quorum: source.chance("raftrs.check_quorum", 1, 2),
            read_index: source.chance("raftrs.read_index", 1, 2),
        });
    });
    for (i, name) in NODES.iter().enumerate() {
        let (observer, setup) = (observer.clone(), setup.clone());
        sim.node(name, move |_| {
            let (observer, setup) = (observer.clone(), setup.get());
            async move {
                if (i as u32) < setup.nodes {
                    node::peer(i as u64 + 1, setup, observer).await;
                }
            }
        });
    }
    sim.nemesis_targets(&NODES);
    for (i, name) in CLIENTS.iter().enumerate() {
        let (observer, setup) = (observer.clone(), setup.clone());
        sim.client(name, move |_| {
            client::client(i as u32 + 1, name, setup.get().nodes, observer.clone())
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
