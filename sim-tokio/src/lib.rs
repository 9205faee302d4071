//! # sim-tokio: ordinary tokio code as sim-core nodes
//!
//! A tokio node runs its main future on its own current-thread tokio runtime, driven by
//! sim-core's virtual time: no fixed tick, no real time, a step only when the node has work
//! (see [`mod@runtime`] for how, with and without the OS hooks). Tokio's timers
//! (`sleep`, `timeout`, `interval`), `spawn`, `spawn_local`, `JoinSet`, `select!` and
//! `tokio::sync` work unmodified inside it; only the network types are switched, to
//! [`net::UdpSocket`], [`net::TcpListener`] and [`net::TcpStream`] (tokio's signatures and
//! `tokio::io` traits over sim-core's faulty network), with `use` under a cfg:
//!
//! ```ignore
//! #[cfg(not(simulation))]
//! use tokio::net::{TcpListener, TcpStream, UdpSocket};
//! #[cfg(simulation)]
//! use sim_tokio::net::{TcpListener, TcpStream, UdpSocket};
//! ```
//!
//! Reads of the OS that tokio code makes directly — `std::time::{Instant, SystemTime}::now`,
//! OS entropy — answer from the simulation when the binary links the OS hooks (`sim-os`, see
//! `sim_core::os`), and reach the OS otherwise, making the node no longer a pure function of
//! the input. `tokio::net`'s real sockets, `spawn_blocking` and OS threads are refused by the
//! hooks' `escapes` feature (the run fails naming `socket` or `pthread_create`); without that
//! feature they escape the simulation, and without the hooks at all a real socket fails
//! loudly (the runtime then has no I/O driver: tokio panics with "IO is disabled").
//!
//! | module | role |
//! |---|---|
//! | [`mod@runtime`] | one runtime per node incarnation, stepped at the instants its timers name (or, without the OS hooks, paused and advanced by fences) |
//! | [`net`] | `UdpSocket`, `TcpListener`, `TcpStream` with tokio's signatures, name resolution by node name |
//!
//! Determinism of what tokio hides: the order `select!` polls its branches (without
//! `biased;`) comes from tokio's internal RNG, which each runtime seeds from the run's input
//! through `Builder::rng_seed`. That builder method exists only under `--cfg tokio_unstable`,
//! which the workspace's `.cargo/config.toml` sets; a build without it still runs (fenced),
//! but then `select!`'s order is drawn by tokio from OS entropy and replays can differ.
//!
//! Features: `fenced` (default) builds the fallback for binaries without the OS hooks. It
//! turns on tokio's `test-util`, which puts a lock on every read of tokio's clock, so a
//! binary that links the hooks and builds with `tokio_unstable` runs its tokio nodes about 7%
//! faster with `default-features = false` (when nothing else in its build turns `test-util`
//! on). A tokio node that can keep time neither way fails its run, saying what to link.
//!
//! ```
//! use std::time::Duration;
//! use sim_core::sim::{Config, Sim};
//! use sim_tokio::TokioSim;
//!
//! let mut sim = Sim::new(Config::default());
//! sim.tokio_client("client", |_| async {
//!     let start = tokio::time::Instant::now();
//!     let mut tick = tokio::time::interval(Duration::from_millis(100));
//!     for _ in 0..3 {
//!         tick.tick().await;
//!     }
//!     tokio::task::spawn_local(async {}).await.unwrap();
//!     assert_eq!(start.elapsed(), Duration::from_millis(200));
//!     // Tokio's time is the simulation's.
//!     assert_eq!(sim_core::time::now().as_nanos(), 200_000_000);
//! });
//! assert!(sim.run_seed(0).outcome.class.is_pass());
//! ```
#![deny(missing_docs)]

use std::future::Future;
use std::rc::Rc;

use sim_core::node::{NodeCtx, NodeId};
use sim_core::sim::Sim;

pub mod net;
pub mod runtime;

/// Adds tokio nodes to a [`Sim`]: the counterparts of [`Sim::node`] and [`Sim::client`].
pub trait TokioSim {
    /// Adds a node whose main future runs on its own tokio runtime; `factory` builds
    /// it at every start. A crash drops the runtime and all its tasks; a restart builds a
    /// fresh one.
    fn tokio_node<F, Fut>(&mut self, name: &str, factory: F) -> NodeId
    where
        F: Fn(NodeCtx) -> Fut + 'static,
        Fut: Future<Output = ()> + 'static;

    /// Adds a client node (its main task is workload) that runs on tokio.
    fn tokio_client<F, Fut>(&mut self, name: &str, factory: F) -> NodeId
    where
        F: Fn(NodeCtx) -> Fut + 'static,
        Fut: Future<Output = ()> + 'static;
}

impl TokioSim for Sim {
    fn tokio_node<F, Fut>(&mut self, name: &str, factory: F) -> NodeId
    where
        F: Fn(NodeCtx) -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let factory = Rc::new(factory);
        self.node(name, move |ctx| runtime::node_future(factory.clone(), ctx))
    }

    fn tokio_client<F, Fut>(&mut self, name: &str, factory: F) -> NodeId
    where
        F: Fn(NodeCtx) -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let factory = Rc::new(factory);
        self.client(name, move |ctx| runtime::node_future(factory.clone(), ctx))
    }
}
