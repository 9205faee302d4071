//! The names most scenarios use, in one import: `use sim_core::prelude::*;`.
//!
//! It brings [`Choices`] along with [`Source`]:
//! drawing methods (`below`, `chance`, `pick`, ...) are `Choices`'s, so code that draws from a
//! `&mut dyn Source` needs both in scope.
//!
//! ```
//! use sim_core::prelude::*;
//!
//! let mut sim = Sim::new(Config::default());
//! sim.client("c", |_| async {
//!     let ops = draw(|s| s.below("ops", 4));
//!     for _ in 0..ops {
//!         sleep(std::time::Duration::from_millis(1)).await;
//!     }
//!     assert!(now() < Instant::from_nanos(4_000_000));
//! });
//! assert!(sim.run_seed(0).outcome.class.is_pass());
//! ```

pub use crate::choice::{Choices, Input, Source};
pub use crate::net::{Addr, Faults, NetConfig, Socket};
pub use crate::node::{NodeCtx, NodeId};
pub use crate::rt::spawn;
pub use crate::sim::{draw, note, Config, Report, Sim};
pub use crate::system::{BugSpec, RunOptions, SystemSpec};
pub use crate::time::{now, sleep, sleep_until, timeout, timeout_at, Instant};
