//! openraft (crates.io `openraft`, 0.9) under simulation, through its public API only: its
//! pluggable runtime ([`runtime`]), its storage traits on the simulated disk ([`store`]), its
//! network trait on the simulated datagrams ([`network`]), a key-value workload through the
//! leader ([`client`], [`node`]), and Raft's safety properties and linearizability as
//! invariants ([`invariants`]).
//!
//! The same source is built against several openraft releases (`v0_9_*/`, one package and
//! lockfile each); nothing is planted: a release with a known bug fails, the release that
//! fixed it passes.
//!
//! **Scenario.** Five replicas `n1`..`n5` (all voters) and three clients, each running one to
//! six operations (get, put, compare-and-set) on three keys against the replica it believes
//! leads, with a deadline of two seconds after which the outcome is indeterminate.
//!
//! **Faults** (unless `--faults` says otherwise: [`DEFAULT_FAULTS`], a profile drawn per
//! run): network loss, duplication, reordering, partitions, clogs, stalls, resets, silent
//! peers, refused and black-holed connects; clock skew, jumps and late timers; crashes (a
//! crash loses or tears what a replica had not synced), graceful stops and pauses of the
//! replicas; transient disk read and write errors and slow disk operations.

pub mod client;
pub mod invariants;
pub mod network;
pub mod node;
/// openraft's runtime on sim-core, from the adapter crate users depend on.
pub use openraft_runtime as runtime;
pub mod store;
pub mod types;

use std::cell::RefCell;
use std::rc::Rc;

use sim_core::faults::FaultSelection;
use sim_core::sim::Sim;
use sim_core::system::{RunOptions, SystemSpec};

use invariants::{Observer, RAFT_INVARIANTS};
use store::Readers;
use types::NodeId;

/// The registration the `sim` binary, the tests and the fuzz target share: log readers that
/// keep what they could read ([`Readers::Stable`]).
pub const SPEC: SystemSpec = SystemSpec::new(
    "openraft-kv",
    "openraft key-value store, 5 voters on the simulated disk and network, crashes with disk loss, every fault; invariants: Raft safety, linearizable",
    build_stable,
);

/// The same with log readers that read the live log ([`Readers::Live`]), as openraft's own
/// example stores do.
pub const SPEC_LIVE_READER: SystemSpec = SystemSpec::new(
    "openraft-kv-live-reader",
    "openraft-kv with log readers that see a truncation at once (as openraft's example stores)",
    build_live,
);

/// Every system this crate registers.
pub const SYSTEMS: [SystemSpec; 2] = [SPEC, SPEC_LIVE_READER];

/// The faults of a run unless `--faults` says otherwise.
pub const DEFAULT_FAULTS: &str = "swarm:net,clock,lifecycle,disk";

/// The replicas; `n{id}` is openraft node id `id`.
pub const REPLICAS: [&str; 5] = ["n1", "n2", "n3", "n4", "n5"];
const CLIENTS: [&str; 3] = ["c1", "c2", "c3"];
/// Keys the clients touch.
pub const KEYS: u64 = 3;
/// Where a replica answers Raft RPCs.
pub const RAFT_PORT: u16 = 1;
/// Where a replica's Raft RPCs leave from: this port plus the node's incarnation. An
/// `RpcClient` numbers its calls from 0 at every bind, so a reply to a call of an earlier
/// incarnation would otherwise answer the call that reuses its number after a restart; on a
/// port of its own, the new incarnation never receives it.
pub const RAFT_OUT_PORT_BASE: u16 = 100;
/// Where a replica answers clients (and where clients send from).
pub const CLIENT_PORT: u16 = 3;

/// The node name of openraft node `id`.
pub fn node_name(id: NodeId) -> String {
    format!("n{id}")
}

fn build_stable(opts: &RunOptions) -> Sim {
    build(opts, Readers::Stable)
}

fn build_live(opts: &RunOptions) -> Sim {
    build(opts, Readers::Live)
}

fn build(opts: &RunOptions, readers: Readers) -> Sim {
    let default_faults: FaultSelection = DEFAULT_FAULTS.parse().expect("a valid selection");
    let mut config = opts.config_with_default_faults(default_faults);
    // A disk whose syncs take a while (1-20 ms), as raft-kv's.
    config.disk.sync_us_min = 1_000;
    config.disk.sync_us_max = 20_000;
    let mut sim = Sim::new(config);
    let observer = Rc::new(RefCell::new(Observer::new(CLIENTS.len())));
    for (i, name) in REPLICAS.iter().enumerate() {
        let observer = observer.clone();
        sim.node(name, move |ctx| {
            let port = RAFT_OUT_PORT_BASE + (ctx.incarnation() % 60_000) as u16;
            node::replica(i as NodeId + 1, port, readers, observer.clone())
        });
    }
    sim.nemesis_targets(&REPLICAS);
    for (i, name) in CLIENTS.iter().enumerate() {
        let observer = observer.clone();
        sim.client(name, move |_| {
            client::client(i as u32 + 1, name, observer.clone())
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
