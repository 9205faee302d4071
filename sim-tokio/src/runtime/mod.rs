//! The node runtime: one current-thread tokio runtime per tokio node incarnation, driven by
//! sim-core's virtual time.
//!
//! Owns: choosing how an incarnation keeps time, the node's main future on sim-core, and the
//! one sim-core timer (`Wakeup`) that wakes the node at the next instant its runtime can
//! act. The two ways of keeping time are modules of their own.
//!
//! Tokio does not say when its next timer is due, and a node must not be woken later than
//! that, nor let its clock pass an instant at which another node could still reach it. Two
//! ways to keep time, chosen per incarnation:
//!
//! * **Clocked** (`clocked`; the OS hooks of `sim-os` are linked, as in every simulation
//!   binary of this workspace, and the build has `--cfg tokio_unstable`, the documented
//!   default for simulation builds). Tokio's clock runs unpaused and reads `Instant::now`,
//!   which the hooks answer with virtual time: tokio's time *is* the world's, so it can never
//!   run ahead. A step runs tokio at the current instant until it has nothing left to run,
//!   and its idle wait names its earliest timer: one step per instant the node has work.
//! * **Fenced** (`fenced`, built with the crate's default feature of that name; used without
//!   the hooks or without `tokio_unstable`). Tokio's clock is paused and auto-advances, at most to the
//!   next instant anything else can happen. Idle fenced nodes fence each other a millisecond
//!   at a time: on the comparison workload of `benches/compare` about 15 times the steps of
//!   a clocked run. It needs tokio's `test-util` feature, which puts a lock on every read of
//!   tokio's clock, clocked runtimes included: a binary that links the hooks can turn
//!   `fenced` off (`default-features = false`), and a tokio node then fails its run if it
//!   cannot run clocked.
//!
//! Either way, tokio's next timer becomes an ordinary event of the run, so ties with other
//! nodes are drawn like any other; tokio's timer wheel counts whole milliseconds from the
//! incarnation's start (it wakes the node at each 64 ms boundary where a farther timer moves
//! to a finer level of tokio's wheel); a crash drops the runtime with every task in it (and,
//! clocked, its epoll instance and event fd), and a restart builds a fresh one.

// A build with one engine (or none) leaves the other's share of the helpers here unused.
#![cfg_attr(
    not(all(tokio_unstable, feature = "fenced")),
    allow(dead_code, unused_variables, unused_mut)
)]

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use rand_core::RngCore;
use sim_core::node::NodeCtx;
use sim_core::time::Instant as SimInstant;

#[cfg(tokio_unstable)]
mod clocked;
#[cfg(feature = "fenced")]
mod fenced;

/// Switches for tests that break the driver on purpose, to see the tests that guard it fail.
#[doc(hidden)]
pub mod knobs {
    use std::cell::Cell;
    thread_local! {
        /// When false, tokio may auto-advance past the fence's first stop (run ahead).
        pub static STOP_AT_ADVANCE: Cell<bool> = const { Cell::new(true) };
        /// When false, a send does not stop the runtime.
        pub static STOP_ON_SEND: Cell<bool> = const { Cell::new(true) };
        /// When false, tokio's internal RNG is not seeded from the run's input.
        pub static SEED_TOKIO_RNG: Cell<bool> = const { Cell::new(true) };
        /// When false, nodes keep time with fences even when the OS hooks are linked.
        pub static CLOCKED: Cell<bool> = const { Cell::new(true) };
    }
}

thread_local! {
    /// Runtime steps (entries into a node's runtime) on this thread, for cost figures.
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

/// How many runtime steps this thread has taken. A step is one entry into a node's tokio
/// runtime, running it at one instant until it has nothing left to run (clocked), or until
/// it is quiet, sends or its clock moves (fenced). Divide a run's wall time by it for the
/// cost of one tokio node step.
pub fn steps_taken() -> u64 {
    STEPS.with(Cell::get)
}

fn count_step() {
    STEPS.with(|s| s.set(s.get() + 1));
}

/// Called by the network types just after a send: a fenced runtime stops so the world moves.
pub(crate) fn note_visible() {
    #[cfg(feature = "fenced")]
    fenced::note_visible();
}

/// The sim-core waker the network types must wake beside a tokio task's, if any (a fenced
/// node's; see `fenced::node_waker`).
pub(crate) fn node_waker() -> Option<Waker> {
    #[cfg(feature = "fenced")]
    return fenced::node_waker();
    #[cfg(not(feature = "fenced"))]
    None
}

/// How a node's runtime keeps time: chosen once per incarnation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Clocked,
    Fenced,
}

impl Mode {
    /// Clocked when it can be (hooks linked and answering, `tokio_unstable`), else fenced;
    /// `None` when neither is built in.
    fn for_this_run() -> Option<Mode> {
        let hooked = cfg!(tokio_unstable)
            && sim_core::os::hooks_linked()
            && sim_core::os::clock_reading_ns(sim_core::os::OsClock::Monotonic).is_some();
        if hooked && knobs::CLOCKED.with(Cell::get) {
            Some(Mode::Clocked)
        } else if cfg!(feature = "fenced") {
            Some(Mode::Fenced)
        } else {
            None
        }
    }
}

/// A current-thread runtime builder with the internal RNG (`select!`'s branch order) seeded
/// from the run's input.
fn seeded_builder(seed: u64) -> tokio::runtime::Builder {
    let mut builder = tokio::runtime::Builder::new_current_thread();
    builder.enable_time();
    #[cfg(tokio_unstable)]
    if knobs::SEED_TOKIO_RNG.with(Cell::get) {
        builder.rng_seed(tokio::runtime::RngSeed::from_bytes(&seed.to_le_bytes()));
    }
    #[cfg(not(tokio_unstable))]
    let _ = seed;
    builder
}

/// The sim-core timer that wakes a node at the next instant its runtime can act: an event of
/// the run like any other.
struct Wakeup {
    /// When the incarnation started, in virtual ns: tokio counts milliseconds from there.
    start_ns: u64,
    sleep: Option<sim_core::time::Sleep>,
}

impl Wakeup {
    fn new() -> Wakeup {
        Wakeup {
            start_ns: sim_core::time::now().as_nanos(),
            sleep: None,
        }
    }

    /// Milliseconds from the incarnation's start to `at`.
    fn ms_at(&self, at: SimInstant) -> u64 {
        at.as_nanos().saturating_sub(self.start_ns) / 1_000_000
    }

    /// Milliseconds from the incarnation's start to now.
    fn now_ms(&self) -> u64 {
        self.ms_at(sim_core::time::now())
    }

    /// The instant `at_ms` after the incarnation's start.
    fn instant_at(&self, at_ms: u64) -> SimInstant {
        SimInstant::from_nanos(self.start_ns + at_ms * 1_000_000)
    }

    /// Wakes the node at `at_ms` after its start (at once if that has passed).
    fn arm(&mut self, cx: &mut Context<'_>, at_ms: u64) -> Poll<()> {
        let at = self.instant_at(at_ms);
        let mut sleep = sim_core::time::sleep_until(at);
        if Pin::new(&mut sleep).poll(cx).is_ready() {
            cx.waker().wake_by_ref();
        } else {
            self.sleep = Some(sleep);
        }
        Poll::Pending
    }

    /// True while armed to wake the node at `at_ms` after its start.
    fn is_armed_at(&self, at_ms: u64) -> bool {
        let at = self.instant_at(at_ms);
        self.sleep
            .as_ref()
            .is_some_and(|sleep| sleep.deadline() == at)
    }

    /// True while armed and not yet due.
    fn is_pending(&mut self, cx: &mut Context<'_>) -> bool {
        self.sleep
            .as_mut()
            .is_some_and(|sleep| Pin::new(sleep).poll(cx).is_pending())
    }

    fn disarm(&mut self) {
        self.sleep = None;
    }
}

/// The panic a node's main task ended with, if it ended by panicking.
fn panic_of(result: Result<(), tokio::task::JoinError>) -> Option<Box<dyn std::any::Any + Send>> {
    result.err().and_then(|e| e.try_into_panic().ok())
}

/// One incarnation's runtime, whichever way it keeps time.
enum Engine {
    #[cfg(tokio_unstable)]
    Clocked(clocked::Clocked),
    #[cfg(feature = "fenced")]
    Fenced(fenced::Fenced),
}

/// Why a tokio node cannot run in this build.
const NO_ENGINE: &str = "a tokio node cannot keep time in this build: link the OS hooks \
    (`use sim_os as _;` in the binary's crate root) and build with `--cfg tokio_unstable`, \
    or turn on sim-tokio's `fenced` feature";

impl Engine {
    fn new<Fut: Future<Output = ()> + 'static>(ctx: &NodeCtx, main: Fut) -> Engine {
        let seed = ctx.rng().next_u64();
        match Mode::for_this_run() {
            #[cfg(tokio_unstable)]
            Some(Mode::Clocked) => Engine::Clocked(clocked::Clocked::new(seed, main)),
            #[cfg(feature = "fenced")]
            Some(Mode::Fenced) => Engine::Fenced(fenced::Fenced::new(seed, main)),
            _ => {
                let _ = (seed, main);
                panic!("{NO_ENGINE}")
            }
        }
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match self {
            #[cfg(tokio_unstable)]
            Engine::Clocked(clocked) => clocked.poll(cx),
            #[cfg(feature = "fenced")]
            Engine::Fenced(fenced) => fenced.poll(cx),
            #[cfg(not(any(tokio_unstable, feature = "fenced")))]
            _ => unreachable!("{NO_ENGINE}"),
        }
    }
}

/// The node's main future on sim-core: owns the engine; dropping it (crash) drops the
/// runtime and every task in it.
pub(crate) async fn node_future<F, Fut>(factory: Rc<F>, ctx: NodeCtx)
where
    F: Fn(NodeCtx) -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    let main = factory(ctx.clone());
    let mut engine = Engine::new(&ctx, main);
    std::future::poll_fn(move |cx| engine.poll(cx)).await
}
