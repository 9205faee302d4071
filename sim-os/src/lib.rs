//! # sim-os: OS hooks for simulation builds
//!
//! Link this crate into a binary or test crate (`use sim_os as _;` at its root) and the C
//! calls below answer from the simulation whenever a sim-core run is in progress on the
//! calling thread — virtual time, the node's wall clock, bytes drawn from the run's input —
//! and from the OS otherwise. Code under test that reads `std::time::Instant::now()`,
//! `SystemTime::now()`, a std `HashMap`'s random keys or `getrandom` 0.3 (`rand` 0.9's
//! `OsRng`) then stays a pure function of the run's input without being changed.
//!
//! | C call | inside a run |
//! |---|---|
//! | `clock_gettime` (monotonic and boot clocks) | virtual time, from a simulated uptime of one day |
//! | `clock_gettime` (realtime and TAI clocks), `gettimeofday`, `time` | the current node's wall clock, with its clock faults |
//! | `getrandom`, `getentropy` | bytes drawn from the run's input |
//! | `epoll_wait` | while a tokio node's runtime runs (sim-tokio): returns at once, and its timeout (the distance to tokio's next timer) goes to the node's driver |
//! | `eventfd`, `write`, `close` | passed through, except that a write to the event fd a tokio node's runtime wakes itself with is skipped (that runtime never blocks in the OS) |
//! | `pthread_create`, `socket` (feature `escapes`, on by default) | refused (`EPERM`, `EACCES`); the run fails, naming the call |
//!
//! Everything else — CPU-time clocks, raw system calls (the `getrandom` crate 0.2 behind `rand`
//! 0.8 calls `SYS_getrandom` itself), files, `rdtsc` — is not interposed; see `sim_core::os`
//! for the whole boundary and for why sim-core then runs each run on a thread of its own.
//!
//! The symbols override the C library's for calls made from the executable (Rust's std and
//! every Rust crate call through them); calls the C library makes internally are not seen.
//! Linux only: elsewhere the crate is empty. With a sanitizer (AddressSanitizer builds of a
//! fuzz target), turn off the default feature `escapes`: the sanitizer's runtime must see
//! every `pthread_create` itself.
//!
//! ```
//! use sim_os as _;
//! use sim_core::sim::{Config, Sim};
//!
//! let report = sim_core::os::isolated(|| {
//!     let mut sim = Sim::new(Config::default());
//!     sim.client("c", |_| async {
//!         let before = std::time::Instant::now();
//!         sim_core::time::sleep(std::time::Duration::from_secs(2)).await;
//!         // std's clock is the simulation's: exactly the two virtual seconds slept.
//!         assert_eq!(before.elapsed(), std::time::Duration::from_secs(2));
//!     });
//!     sim.run_seed(0)
//! });
//! assert!(report.outcome.class.is_pass(), "{}", report.outcome.message);
//! assert!(sim_core::os::hooks_linked());
//! ```
#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks)]

#[cfg(target_os = "linux")]
mod linux;
