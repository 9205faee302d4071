//! omnipaxos (crates.io, the release this package pins) driven under sim-core through its
//! public API: a replicated key-value store whose log is an omnipaxos log.
//!
//! | file | concept |
//! |---|---|
//! | [`storage`] | omnipaxos's `Storage` trait on a per-server durable record (the model, and why it is faithful) |
//! | [`server`] | one server: `OmniPaxos` fed from sim-core's net and virtual time, the KV state machine |
//! | [`client`] | the workload: get, put, compare-and-set through the log, retries, deadlines |
//! | [`invariants`] | decided prefixes agree, decided entries stay, AcceptSync within the follower's log, linearizability |
//!
//! **Scenario.** The first draw picks 3 servers (three runs in four) or 5 (pids 1..=n, node
//! names `s1`..`s5`). Three clients each run one to eight operations on three keys. Every
//! operation, a read included, is appended to the log as a command and answered when the
//! server that took it applies it from its decided log; a client that hears nothing within
//! 100 ms asks the next server (the same command again: the state machine applies a client's
//! command once), and gives up after one second (the outcome is then indeterminate).
//!
//! **Network.** omnipaxos assumes per-link FIFO sessions and is told of reconnections
//! (`OmniPaxos::reconnected`). Servers talk over [`sim_core::net::SessionSocket`]: in order
//! and exactly once within a session; loss, duplication, reordering, partitions and crashes
//! break the session, and both ends are told, which the server passes on as
//! `reconnected(peer)`. Messages are omnipaxos's own `Message<Cmd>`, sent wrapped in
//! [`sim_core::net::Foreign::by_debug`]. Clients use plain datagrams (every fault applies).
//!
//! **Time.** Each server calls `tick()` every 10 ms of virtual time; an election round is
//! 10 ticks and a resend timeout 20.
//!
//! **Faults (default `swarm:net,clock,lifecycle`, a profile drawn per run).** Network faults,
//! clock faults (late timers), and crashes, stops and pauses of servers by the run's
//! nemesis; a crashed server restarts on its durable record (see [`storage`]).
//!
//! No bug is planted: the bug is whatever the pinned release has.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use omnipaxos::storage::{Entry, NoSnapshot};
use sim_core::check::kv::KvInput;
use sim_core::choice::Choices;
use sim_core::faults::FaultSelection;
use sim_core::sim::Sim;
use sim_core::system::{RunOptions, SystemSpec};

pub mod client;
pub mod invariants;
pub mod server;
pub mod storage;

use invariants::{Observer, ACCEPT_SYNC_INVARIANT, LOG_INVARIANTS};
use storage::Durable;

/// The registration of this system.
pub const SPEC: SystemSpec = SystemSpec::new(
    "omnipaxos-kv",
    "omnipaxos replicated log as a KV store, 3 or 5 servers, crashes, every network fault; invariants: decided logs agree and stay, AcceptSync within the log, linearizable",
    build,
);

/// The same scenario with one invariant only, `accept-sync-within-log`: the signature of
/// omnipaxos#112 (AcceptSync past the end of a follower's log). It exists so that release
/// 0.2.1, which fixed #112 but still has the leader-sync bug that `decided-logs-agree`
/// catches, can be swept for #112 alone. Releases from 0.2.3 on have no such message field:
/// there this system checks nothing.
pub const SPEC_ACCEPT_SYNC: SystemSpec = SystemSpec::new(
    "omnipaxos-accsync",
    "omnipaxos-kv's scenario, one invariant: a follower accepts an AcceptSync only if it holds the prefix it extends (omnipaxos#112)",
    build_accept_sync,
);

/// The faults of a run unless `--faults` says otherwise.
pub const DEFAULT_FAULTS: &str = "swarm:net,clock,lifecycle";

/// Server node names; a run uses the first 3 or all 5. Server `sN` is omnipaxos pid `N`.
pub const SERVERS: [&str; 5] = ["s1", "s2", "s3", "s4", "s5"];
const CLIENTS: [&str; 3] = ["c1", "c2", "c3"];
/// Keys the clients touch.
pub const KEYS: u64 = 3;

/// A log index as the pinned release's API spells it (`u64` up to 0.2.2, `usize` from 0.2.3).
#[cfg(not(feature = "atomic-storage"))]
pub type Idx = u64;
/// A log index as the pinned release's API spells it (`u64` up to 0.2.2, `usize` from 0.2.3).
#[cfg(feature = "atomic-storage")]
pub type Idx = usize;

/// An index as a `usize`, whatever the release's index type.
#[allow(clippy::unnecessary_cast)]
pub fn ix(i: Idx) -> usize {
    i as usize
}

/// A `u64` (how the invariants count) as the release's index type.
#[allow(clippy::unnecessary_cast)]
pub fn idx(i: u64) -> Idx {
    i as Idx
}

/// An index of the release's type as a `u64`.
#[allow(clippy::unnecessary_cast)]
pub fn wide(i: Idx) -> u64 {
    i as u64
}

/// A log entry: one client command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cmd {
    /// The client (1, 2, 3).
    pub client: u32,
    /// The client's operation number (from 1, increasing).
    pub seq: u64,
    /// The operation.
    pub op: KvInput,
}

impl Entry for Cmd {
    type Snapshot = NoSnapshot;
}

fn build(opts: &RunOptions) -> Sim {
    scenario(opts, true)
}

fn build_accept_sync(opts: &RunOptions) -> Sim {
    scenario(opts, false)
}

/// The scenario; `all_invariants` false keeps `accept-sync-within-log` alone.
fn scenario(opts: &RunOptions, all_invariants: bool) -> Sim {
    let default_faults: FaultSelection = DEFAULT_FAULTS.parse().expect("a valid selection");
    let mut sim = Sim::new(opts.config_with_default_faults(default_faults));
    let observer = Rc::new(RefCell::new(Observer::new(CLIENTS.len())));
    let servers = Rc::new(Cell::new(3u64));

    let count = servers.clone();
    sim.setup(move |source| {
        if source.chance("omnipaxos.five_servers", 1, 4) {
            count.set(5);
        }
    });
    // Servers first: server `s{pid}` is node id `pid - 1`.
    for (i, name) in SERVERS.iter().enumerate() {
        let pid = i as u64 + 1;
        let durable = Rc::new(RefCell::new(Durable::<Cmd>::default()));
        let (observer, count) = (observer.clone(), servers.clone());
        sim.node(name, move |_| {
            let (durable, observer, count) = (durable.clone(), observer.clone(), count.get());
            async move {
                if pid <= count {
                    server::server(pid, count, durable, observer).await;
                }
            }
        });
    }
    sim.nemesis_targets(&SERVERS);
    for (id, name) in CLIENTS.iter().enumerate() {
        let (observer, count) = (observer.clone(), servers.clone());
        sim.client(name, move |_| {
            client::client(id as u32 + 1, name, count.get(), observer.clone())
        });
    }
    let o = observer.clone();
    sim.invariant(ACCEPT_SYNC_INVARIANT, move || {
        o.borrow().check(ACCEPT_SYNC_INVARIANT)
    });
    if all_invariants {
        for name in LOG_INVARIANTS {
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
    }
    sim
}
