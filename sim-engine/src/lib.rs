//! # sim-engine: the deterministic simulation engine
//!
//! Run a whole distributed system — nodes, network, clocks, disks, clients — in one OS
//! thread, as a pure function of one input: a `u64` seed for sweeps, or a byte buffer from a
//! coverage-guided fuzzer. Same input, same history hash, on any machine.
//!
//! This crate is the engine alone. `sim-core` re-exports every module here under the same
//! paths (`sim_core::net`, `sim_core::sim`, ...) and adds the tooling around it: the `sim`
//! command line, campaigns, the shrinker, repro files, pictures, the fuzz harness and the
//! mutator. A system that only simulates can depend on this crate alone; its `sim` binary,
//! fuzz target and tests depend on `sim-core`. The examples below use `sim_core::` paths, as
//! users write them.
//!
//! Start here: [`sim::Sim`] builds a scenario and runs it; [`choice`] explains the input.
//!
//! | module | role |
//! |---|---|
//! | [`choice`] | the input: lanes (one byte stream per kind of decision), seeds, recording |
//! | [`rt`] | single-threaded executor; the scheduler picks the next task by drawing |
//! | [`select`] | a deterministic select: the first ready of several futures, in a fixed order |
//! | [`time`] | virtual time: `Instant`, `sleep`, `timeout`, `interval`; per-node wall clocks |
//! | [`net`] | the network: datagrams, TCP-like streams, partitions, clogs, node-down watches |
//! | [`disk`] | per-node durable storage: files, fsync, crash losses, disk faults, fault atlas; a crash-safe record file |
//! | [`node`] | nodes and their lifecycle: start, crash, restart, graceful stop, pause |
//! | [`nemesis`] | lifecycle faults drawn per run, and the heal phase that undoes them |
//! | [`faults`] | choosing faults: kinds, `off`/`swarm`/`all`, lists and swarms over a subset |
//! | [`mod@buggify`] | `buggify!` fault points in system code, enabled per site per run by the input |
//! | [`check`] | checks: a linearizability checker over client histories (models as a trait); Raft's safety properties |
//! | [`sim`] | the harness: scenario, invariants, budgets, the run loop |
//! | [`report`] | outcome classes |
//! | [`trace`] | the history, its stable hash, readable traces |
//! | [`foreign`] | hooks for foreign runtimes driven by a node: the next instant the world acts |
//! | [`os`] | the OS boundary: what `sim-os`'s clock, entropy and escape hooks answer inside a run |
//! | [`random`] | a random generator drawn from the input, for `rand` 0.8 and 0.9, in any task |
//! | [`workload`] | workload helpers: operation counts, think times, quiet periods |
//!
//! Not listed, and hidden from these docs: the shared vocabulary at the bottom (`hash`,
//! `fault_kinds`, `node_id`, whose names [`trace`], [`faults`] and [`node`] re-export) and the
//! fuzz signal (`signal`, read by the fuzz harness; [`cover!`] is its one name for users).
//! They stay public for the tooling crate and the fuzz glue.
//!
//! The engine's modules import one another only through the world hub (`world` and the
//! parts it composes); the vocabulary modules import nothing from the crate.
//!
//! ```
//! use sim_core::net::{Addr, Socket};
//! use sim_core::sim::{Config, Sim};
//!
//! fn scenario() -> Sim {
//!     let mut sim = Sim::new(Config::default());
//!     sim.node("server", |_| async {
//!         let sock = Socket::<u32>::bind(1).unwrap();
//!         loop {
//!             let (from, n) = sock.recv().await;
//!             sock.send(from, n + 1);
//!         }
//!     });
//!     sim.client("client", |_| async {
//!         let sock = Socket::<u32>::bind(1).unwrap();
//!         sock.send(Addr::named("server", 1), 41);
//!         assert_eq!(sock.recv().await.1, 42);
//!     });
//!     sim
//! }
//! // A run is a pure function of its input.
//! assert_eq!(scenario().run_seed(9).outcome, scenario().run_seed(9).outcome);
//! ```
#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod buggify;
pub mod check;
pub mod choice;
pub mod disk;
#[doc(hidden)]
pub mod fault_kinds;
pub mod faults;
pub mod foreign;
#[doc(hidden)]
pub mod hash;
pub mod nemesis;
pub mod net;
pub mod node;
#[doc(hidden)]
pub mod node_id;
pub mod os;
pub mod random;
pub mod report;
pub mod rt;
pub mod select;
#[doc(hidden)]
pub mod signal;
pub mod sim;
pub mod time;
pub mod trace;
pub mod workload;
mod world;

pub use world::in_simulation;
