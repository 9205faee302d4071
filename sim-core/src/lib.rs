//! # sim-core: deterministic simulation testing over choice sequences
//!
//! Run a whole distributed system — nodes, network, clocks, clients — in one OS thread, as a
//! pure function of one input: a `u64` seed for sweeps, or a byte buffer from a
//! coverage-guided fuzzer. Same input, same history hash, on any machine.
//!
//! Start here: [`sim::Sim`] builds a scenario and runs it; [`choice`] explains the input.
//!
//! Two crates: the engine (`sim-engine`: everything a run is made of) and this one, which
//! re-exports every engine module under the same path and adds the tooling around it (the
//! `sim` command line, campaigns, the shrinker, repro files, pictures, the fuzz harness and
//! the mutator). Depend on this crate; a system crate that only simulates may depend on
//! `sim-engine` alone and keep clap, indicatif and ctrlc out of its build.
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
//! | [`run_spec`] | the description of a run: system, bug, every flag, input — built once |
//! | [`render`] | pictures of a trace: space-time diagram (SVG), ShiViz log, the story |
//! | [`system`] | what the CLI, fuzz targets and tests know of a system under test |
//! | [`foreign`] | hooks for foreign runtimes driven by a node: the next instant the world acts |
//! | [`os`] | the OS boundary: what `sim-os`'s clock, entropy and escape hooks answer inside a run |
//! | [`prelude`] | the names most scenarios use, in one import (with `Choices` beside `Source`) |
//! | [`random`] | a random generator drawn from the input, for `rand` 0.8 and 0.9, in any task |
//! | [`workload`] | workload helpers: operation counts, think times, quiet periods |
//! | [`cli`] | the `sim` command-line builder systems register with |
//!
//! Hidden from these docs, public for this workspace's own crates: the machinery behind the
//! `sim` commands (`campaign`, `shrink`, `repro`, `determinism`), the fuzz harness and the
//! mutator (`fuzz`, `mutate`, `signal`), which `sim-fuzz` wraps for fuzz targets, and the
//! engine's shared vocabulary (`hash`, `fault_kinds`, `node_id`, re-exported by `trace`,
//! `faults` and `node`).
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

#[doc(hidden)]
pub mod campaign;
pub mod cli;
#[doc(hidden)]
pub mod determinism;
#[doc(hidden)]
pub mod fuzz;
#[doc(hidden)]
pub mod mutate;
pub mod prelude;
pub mod render;
#[doc(hidden)]
pub mod repro;
pub mod run_spec;
#[doc(hidden)]
pub mod shrink;
pub mod system;

// The engine, re-exported so every `sim_core::` path keeps working: a system that only
// simulates may depend on `sim-engine` alone, and its `sim` binary on this crate.
pub use sim_engine::{
    buggify, check, choice, cover, disk, faults, foreign, in_simulation, nemesis, net, node, os,
    random, report, rt, select, sim, time, trace, workload,
};
#[doc(hidden)]
pub use sim_engine::{fault_kinds, hash, node_id, signal};
