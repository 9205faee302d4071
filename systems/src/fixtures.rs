//! Fixtures for the fuzz harness itself, not example systems: they are not in [`crate::all`]
//! and `sim list` does not show them.
//!
//! * [`FLOOR`] — one node that sleeps once: the framework's per-run floor, for measuring
//!   executions per second against a real system.
//! * [`CANARY`] — deliberately nondeterministic: its one node sleeps for a time taken from a
//!   process-wide counter that survives between runs (the kind of leak the determinism rules
//!   forbid), and every run fails. The fuzz harness's self-check must report it as
//!   `diverged`, never as an ordinary failure.
//! * [`LOCK`] — a combination lock, the benchmark for fuzz signal: three senders each send
//!   eight messages to a lock; the planted bug `opens` opens the lock (an invariant violation)
//!   when fourteen consecutive arrivals come from the senders in one secret order. Branch
//!   coverage cannot see how far along the combination a run got; `cover!("lock depth", d)`
//!   can. Blind search needs about one run in a few hundred thousand (measured by seed
//!   sweep in `fuzz/README.md`).
//!
//! ```
//! use sim_core::fuzz::{Engine, Harness};
//! use sim_core::report::Class;
//!
//! let canary = Harness::new(&systems::fixtures::CANARY, None, "canary", Engine::Test).unwrap();
//! assert_eq!(canary.check(&[]).outcome.class, Class::Diverged);
//! let floor = Harness::new(&systems::fixtures::FLOOR, None, "floor", Engine::Test).unwrap();
//! assert_eq!(floor.check(&[]).outcome.class, Class::Pass);
//! ```

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sim_core::net::{Addr, Socket};
use sim_core::sim::Sim;
use sim_core::system::{BugSpec, RunOptions, SystemSpec};
use sim_core::time::sleep;

/// One node, one sleep: the cheapest run a system can have.
pub const FLOOR: SystemSpec = SystemSpec::new(
    "floor",
    "one node that sleeps once (fuzz harness floor)",
    build_floor,
);

/// A nondeterministic system whose every run fails: must be reported as diverged.
pub const CANARY: SystemSpec = SystemSpec::new(
    "canary",
    "reads a process-wide counter (must be reported as diverged)",
    build_canary,
);

/// The signal benchmark: a lock that opens (bug `opens`) on one secret arrival order.
pub const LOCK: SystemSpec = SystemSpec::new(
    "lock",
    "combination lock over message arrival order (fuzz signal benchmark)",
    build_lock,
)
.with_bugs(&[BugSpec {
    name: "opens",
    about: "the lock opens when 14 arrivals come in the secret order",
}]);

/// The fixtures, for tools that resolve a system by name (e.g. corpus replay).
pub fn all() -> Vec<SystemSpec> {
    vec![FLOOR, CANARY, LOCK]
}

/// Which sender each consecutive arrival must come from (each sender appears at most
/// [`LOCK_MESSAGES`] times, far from the default round-robin order 0, 1, 2, 0, ...).
pub const LOCK_SECRET: [u8; 14] = [2, 2, 0, 1, 1, 2, 0, 0, 2, 1, 0, 2, 1, 1];
/// Messages per sender.
pub const LOCK_MESSAGES: u32 = 8;
const LOCK_PORT: u16 = 1;

fn build_lock(opts: &RunOptions) -> Sim {
    let mut sim = Sim::new(opts.config.clone());
    let opens = opts.bug_is("opens");
    let open = Rc::new(Cell::new(false));
    let o = open.clone();
    sim.node("lock", move |_| lock(opens, o.clone()));
    for s in 0..3u8 {
        sim.node(&format!("s{s}"), move |_| async move {
            let sock = Socket::<(u8, u32)>::bind(LOCK_PORT).expect("sender port is free");
            for i in 0..LOCK_MESSAGES {
                sock.send(Addr::named("lock", LOCK_PORT), (s, i));
                sleep(Duration::from_millis(1)).await;
            }
        });
    }
    // Long enough for every message to arrive (8 ms of sending + at most 10 ms latency).
    sim.client("driver", |_| sleep(Duration::from_millis(50)));
    sim.invariant("stays-locked", move || {
        if open.get() {
            Err("the lock opened".into())
        } else {
            Ok(())
        }
    });
    sim
}

async fn lock(opens: bool, open: Rc<Cell<bool>>) {
    let sock = Socket::<(u8, u32)>::bind(LOCK_PORT).expect("lock port is free");
    let mut depth = 0usize;
    loop {
        let (from, (sender, _)) = sock.recv().await;
        if sender == LOCK_SECRET[depth] {
            depth += 1;
            sim_core::cover!("lock depth", depth);
            // A server answers accepted input only.
            sock.send(from, (depth as u8, 0));
            if depth == LOCK_SECRET.len() {
                open.set(opens);
                depth = 0;
            }
        } else {
            depth = usize::from(sender == LOCK_SECRET[0]);
        }
    }
}

fn build_floor(opts: &RunOptions) -> Sim {
    let mut sim = Sim::new(opts.config.clone());
    sim.client("n1", |_| sleep(Duration::from_millis(1)));
    sim
}

/// Deliberately outside the simulation: this is the bug the canary plants.
static RUNS: AtomicU64 = AtomicU64::new(0);

fn build_canary(opts: &RunOptions) -> Sim {
    let mut sim = Sim::new(opts.config.clone());
    let finished = Rc::new(Cell::new(false));
    let f = finished.clone();
    sim.client("n1", move |_| {
        let f = f.clone();
        async move {
            let leaked = RUNS.fetch_add(1, Ordering::Relaxed);
            sleep(Duration::from_millis(1 + leaked % 7)).await;
            f.set(true);
        }
    });
    sim.invariant("canary-never-finishes", move || {
        if finished.get() {
            Err("the canary finished".into())
        } else {
            Ok(())
        }
    });
    sim
}
