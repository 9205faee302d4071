//! The node runtime: one current-thread tokio runtime per tokio node incarnation, driven by
//! sim-core's virtual time.
//!
//! Owns: the runtime, its `LocalSet`, the node's main task, and the one sim-core timer that
//! wakes the node at the next instant its runtime can act.
//!
//! Tokio does not say when its next timer is due, and a node must not be woken later than
//! that, nor let its clock pass an instant at which another node could still reach it. Two
//! ways to keep time, chosen per incarnation:
//!
//! * **Clocked** (the OS hooks of `sim-os` are linked, as in every simulation binary of this
//!   workspace, and the build has `--cfg tokio_unstable`, the documented default for
//!   simulation builds). Tokio's clock runs unpaused and reads `Instant::now`, which the hooks
//!   answer with virtual time: tokio's time *is* the world's, so it can never run ahead. The
//!   runtime is a `LocalRuntime`, whose own scheduler runs the node's `!Send` tasks, so tokio
//!   knows of every task and nothing else needs polling. A step runs tokio at the current
//!   instant until it has nothing left to run; tokio then waits on its I/O driver with a
//!   timeout that is the distance to its earliest timer, and the hooks' `epoll_wait` hands
//!   that timeout over instead of waiting (`sim_core::os::set_idle_waiter`). The node arms a
//!   sim-core timer there: one step per instant the node has work, and none in between. The
//!   runtime never blocks in the OS, so the event fd it wakes itself with is claimed
//!   (`sim_core::os::claim_wakeup_fds`): a write to it, tokio's "a task of mine was woken
//!   from outside me", skips the system call and wakes the node instead.
//! * **Fenced** (no hooks, or no `tokio_unstable`). Tokio's clock is paused; the node's
//!   `!Send` tasks live in a `LocalSet` polled by the step. Each poll of the node runs tokio
//!   at the current virtual instant until it is quiet, then lets tokio auto-advance at most
//!   to the next instant anything else can happen ([`sim_core::foreign::next_instant`], the
//!   fence). The first auto-advance stops the runtime *before* any task runs at the new
//!   instant (a hook on tokio's unpark sees the clock moved), and the node arms a sim-core
//!   timer there. A send (anything other nodes can see) stops the runtime at once; the node
//!   continues at the same instant after the scheduler has drawn who goes next, so a
//!   zero-latency reply is interleaved, never seen before its request. Two idle fenced nodes
//!   fence each other a millisecond at a time: on the comparison workload of
//!   `benches/compare` about 15 times the steps of a clocked run. A `tokio::spawn`ed task
//!   woken from outside its runtime reaches the node only through sim-tokio's network types.
//!
//! Either way, tokio's next timer becomes an ordinary event of the run, so ties with other
//! nodes are drawn like any other; tokio's timer wheel counts whole milliseconds from the
//! incarnation's start (it wakes the node at each 64 ms boundary where a farther timer moves
//! to a finer level of tokio's wheel); a crash drops the runtime with every task in it (and,
//! clocked, its epoll instance and event fd), and a restart builds a fresh one.

// Without `tokio_unstable` there is no clocked engine: only the fenced one is left to match.
#![cfg_attr(
    not(tokio_unstable),
    allow(irrefutable_let_patterns, dead_code, unused_imports)
)]

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::resume_unwind;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use rand_core::RngCore;
use sim_core::node::NodeCtx;
use sim_core::time::Instant as SimInstant;
#[cfg(tokio_unstable)]
use tokio::runtime::LocalRuntime;
use tokio::runtime::Runtime;
use tokio::task::{JoinHandle, LocalSet};

/// How far a runtime may auto-advance when nothing at all is pending in the world.
const IDLE_FENCE: Duration = Duration::from_secs(3600);

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
    /// The tokio instant the runtime held when it became quiet; set only while a fence is up.
    static HOLD: Cell<Option<tokio::time::Instant>> = const { Cell::new(None) };
    /// Set by the unpark hook when tokio's clock moved past `HOLD`.
    static ADVANCED: Cell<bool> = const { Cell::new(false) };
    /// Set by a send: the node did something others can see.
    static SENT: Cell<bool> = const { Cell::new(false) };
    /// Runtime steps (entries into a node's runtime) on this thread, for cost figures.
    static STEPS: Cell<u64> = const { Cell::new(0) };
    /// While a node's runtime runs: the waker of its `block_on` future, and of its sim task.
    static DRIVING: RefCell<Option<(Waker, Waker)>> = const { RefCell::new(None) };
    /// While a clocked runtime runs: its [`Forward`], by address (identity only: compared
    /// with the one a wake-up reaches, never ordered or hashed).
    static DRIVING_CLOCKED: Cell<usize> = const { Cell::new(0) };
    /// True while a fenced runtime runs: only there does a send stop the runtime.
    static FENCED: Cell<bool> = const { Cell::new(false) };
}

/// How many runtime steps this thread has taken. A step is one entry into a node's tokio
/// runtime, running it at one instant until it has nothing left to run (clocked), or until
/// it is quiet, sends or its clock moves (fenced). Divide a run's wall time by it for the
/// cost of one tokio node step.
pub fn steps_taken() -> u64 {
    STEPS.with(Cell::get)
}

/// Called by the network types just after a send: stops the runtime so the world moves.
pub(crate) fn note_visible() {
    if !knobs::STOP_ON_SEND.with(Cell::get) || !FENCED.with(Cell::get) {
        return;
    }
    SENT.with(|s| s.set(true));
    DRIVING.with(|d| {
        if let Some((block_on, _)) = &*d.borrow() {
            block_on.wake_by_ref();
        }
    });
}

/// The sim-core waker of the fenced node whose runtime is running, if any: network types
/// wake it with the tokio task's waker, so a delivery reaches the node even from
/// `tokio::spawn`ed tasks, whose wakes a fenced runtime keeps to itself. A clocked runtime
/// hands every wake from outside to its node (see [`Mode::Clocked`]): nothing to add.
pub(crate) fn node_waker() -> Option<Waker> {
    if !FENCED.with(Cell::get) {
        return None;
    }
    DRIVING.with(|d| d.borrow().as_ref().map(|(_, sim)| sim.clone()))
}

/// Runs on tokio's unpark: if the clock moved while a fence was up, stop before any task
/// runs at the new instant (the `block_on` future is polled first after a wake).
fn on_unpark() {
    let Some(hold) = HOLD.with(Cell::get) else {
        return;
    };
    if tokio::time::Instant::now() > hold && knobs::STOP_AT_ADVANCE.with(Cell::get) {
        ADVANCED.with(|a| a.set(true));
        DRIVING.with(|d| {
            if let Some((block_on, _)) = &*d.borrow() {
                block_on.wake_by_ref();
            }
        });
    }
}

/// A waker that records that it was woken, then wakes the one it wraps.
struct Flag {
    woken: AtomicBool,
    inner: Waker,
    node: Waker,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        self.inner.wake_by_ref();
        // A wake from outside the runtime (say, a delivery to a local task) must reach the
        // node's sim task, which is what the world polls. A wake from inside the node's own
        // step needs nothing more: the step runs the task before it ends.
        let inside = DRIVING.with(|d| {
            d.borrow()
                .as_ref()
                .is_some_and(|(_, node)| node.will_wake(&self.node))
        });
        if !inside {
            self.node.wake_by_ref();
        }
    }
}

/// How a node's runtime keeps time: chosen once per incarnation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// The OS hooks are linked and tokio's `LocalRuntime` is there (`tokio_unstable`): tokio's
    /// clock runs unpaused and reads the OS clock, which the hooks answer with virtual time,
    /// so tokio's time *is* the world's and can never run ahead. The runtime has an I/O driver
    /// only so that its idle wait reaches `epoll_wait`, whose hook hands over the timeout: the
    /// distance to tokio's earliest timer.
    Clocked,
    /// Otherwise: tokio's clock is paused and auto-advances, fenced by the next instant
    /// anything else can happen (see the module docs).
    Fenced,
}

impl Mode {
    fn for_this_run() -> Mode {
        let hooked = cfg!(tokio_unstable)
            && sim_core::os::hooks_linked()
            && sim_core::os::clock_reading_ns(sim_core::os::OsClock::Monotonic).is_some();
        if hooked && knobs::CLOCKED.with(Cell::get) {
            Mode::Clocked
        } else {
            Mode::Fenced
        }
    }
}

/// A current-thread runtime builder with the internal RNG seeded from the run's input.
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

/// A fenced node's runtime: paused, with only a timer driver (a real socket then fails
/// loudly: no I/O driver).
fn build_fenced_runtime(seed: u64) -> Runtime {
    let mut builder = seeded_builder(seed);
    builder.start_paused(true).on_thread_unpark(on_unpark);
    builder.build().expect("a current-thread runtime builds")
}

/// A clocked node's runtime: unpaused, with timer and I/O drivers. It never blocks in the OS
/// (its idle waits are absorbed): its wake-up signal is claimed, so waking it costs no system
/// call, and a wake from outside reaches `forward` instead.
#[cfg(tokio_unstable)]
fn build_clocked_runtime(seed: u64, forward: &Arc<Forward>) -> LocalRuntime {
    let mut builder = seeded_builder(seed);
    builder.enable_io();
    sim_core::os::claim_wakeup_fds(Waker::from(forward.clone()), || {
        builder.build_local(tokio::runtime::LocalOptions::default())
    })
    .expect("a current-thread runtime builds")
}

/// Where a clocked runtime's wake-ups go (see `sim_core::os::claim_wakeup_fds`): a task of
/// the node woken from outside its runtime — by another node's task, a sim-core timer or a
/// delivery — must reach the node's sim task, which is what the world polls. A wake-up from
/// inside the node's own step needs nothing: the step runs the task before it ends.
#[cfg(tokio_unstable)]
struct Forward {
    /// The node's sim-core waker, from its first step: the same for the whole incarnation
    /// (one sim task polls the driver).
    node: OnceLock<Waker>,
}

#[cfg(tokio_unstable)]
impl Forward {
    fn set_node(&self, waker: &Waker) {
        let node = self.node.get_or_init(|| waker.clone());
        debug_assert!(node.will_wake(waker), "one sim task drives an incarnation");
    }
}

#[cfg(tokio_unstable)]
impl Wake for Forward {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        if DRIVING_CLOCKED.with(Cell::get) == Arc::as_ptr(self) as usize {
            // The node's own step: it runs the woken task before it ends.
            return;
        }
        // Not stepped yet (`None`): its first step comes anyway.
        if let Some(node) = self.node.get() {
            node.wake_by_ref();
        }
    }
}

/// How one step of the runtime ended.
enum Step {
    /// The node's main task ended (a panic is carried out to the world).
    Done(Option<Box<dyn std::any::Any + Send>>),
    /// The node sent something: continue at this instant, after the scheduler's draw.
    Sent,
    /// Tokio's clock moved to this many ms after start; nothing has run there yet.
    Advanced(u64),
    /// Quiet, and the world acts again within this millisecond: wait for the next one.
    Blocked,
    /// Clocked: nothing left to run now; tokio's earliest timer is this many ms away (`-1`:
    /// it has none).
    Idle(i32),
}

/// The tokio side of one incarnation. Dropping it shuts the runtime down (a fenced one's local
/// tasks first, inside it); the main task's handle goes after.
enum Engine {
    /// See [`Mode::Fenced`].
    Fenced {
        main: JoinHandle<()>,
        local: LocalSet,
        runtime: Option<Runtime>,
        /// Tokio's clock at the incarnation's start.
        base: tokio::time::Instant,
        /// Tokio's clock, in ms after start.
        clock_ms: u64,
    },
    /// See [`Mode::Clocked`].
    #[cfg(tokio_unstable)]
    Clocked {
        main: JoinHandle<()>,
        /// Set when the main task has ended (returned or panicked): only then is `main`
        /// polled, which would otherwise cost a poll of its handle at every turn of a step.
        ended: Rc<Cell<bool>>,
        runtime: Option<LocalRuntime>,
        forward: Arc<Forward>,
        /// Where `wake` is armed, in ms after start.
        armed_ms: u64,
    },
}

impl Drop for Engine {
    fn drop(&mut self) {
        // A crash may come from inside another node's runtime: `shutdown_background` is the
        // drop that tokio allows there.
        match self {
            Engine::Fenced { local, runtime, .. } => {
                if let Some(runtime) = runtime.take() {
                    // Local tasks go first, inside their runtime.
                    {
                        let _guard = runtime.enter();
                        drop(std::mem::take(local));
                    }
                    runtime.shutdown_background();
                }
            }
            #[cfg(tokio_unstable)]
            Engine::Clocked { runtime, .. } => {
                if let Some(runtime) = runtime.take() {
                    runtime.shutdown_background();
                }
            }
        }
    }
}

/// One incarnation of a tokio node.
struct Driver {
    engine: Engine,
    start_ns: u64,
    wake: Option<sim_core::time::Sleep>,
}

fn ms_since(start_ns: u64, at: SimInstant) -> u64 {
    at.as_nanos().saturating_sub(start_ns) / 1_000_000
}

impl Driver {
    fn new<Fut: Future<Output = ()> + 'static>(ctx: &NodeCtx, main: Fut) -> Driver {
        let seed = ctx.rng().next_u64();
        let start_ns = sim_core::time::now().as_nanos();
        #[cfg(tokio_unstable)]
        if Mode::for_this_run() == Mode::Clocked {
            let forward = Arc::new(Forward {
                node: OnceLock::new(),
            });
            let runtime = build_clocked_runtime(seed, &forward);
            let ended = Rc::new(Cell::new(false));
            let on_end = OnDrop(ended.clone());
            let main = runtime.spawn_local(async move {
                let _on_end = on_end;
                main.await
            });
            return Driver {
                engine: Engine::Clocked {
                    main,
                    ended,
                    runtime: Some(runtime),
                    forward,
                    armed_ms: 0,
                },
                start_ns,
                wake: None,
            };
        }
        let runtime = build_fenced_runtime(seed);
        let base = runtime.block_on(async { tokio::time::Instant::now() });
        let local = LocalSet::new();
        let main = local.spawn_local(main);
        Driver {
            engine: Engine::Fenced {
                main,
                local,
                runtime: Some(runtime),
                base,
                clock_ms: 0,
            },
            start_ns,
            wake: None,
        }
    }

    fn poll_node(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match self.engine {
            Engine::Fenced { .. } => self.poll_fenced(cx),
            #[cfg(tokio_unstable)]
            Engine::Clocked { .. } => self.poll_clocked(cx),
        }
    }

    /// Clocked: runs tokio at the current instant until it has nothing left to run, then
    /// sleeps on sim-core until tokio's earliest timer (a wake from outside, a delivery, may
    /// come first).
    #[cfg(tokio_unstable)]
    fn poll_clocked(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Engine::Clocked {
            main,
            ended,
            runtime,
            forward,
            armed_ms,
        } = &mut self.engine
        else {
            unreachable!("polled as clocked")
        };
        forward.set_node(cx.waker());
        let runtime = runtime.as_ref().expect("runtime lives until drop");
        match step_clocked(runtime, main, ended, forward) {
            Step::Done(None) => Poll::Ready(()),
            Step::Done(Some(panic)) => resume_unwind(panic),
            Step::Idle(-1) => {
                self.wake = None;
                Poll::Pending
            }
            Step::Idle(timeout_ms) => {
                // Tokio counts whole milliseconds from its start, and its idle wait is the
                // distance from the current millisecond to the timer's.
                let now_ms = ms_since(self.start_ns, sim_core::time::now());
                let at_ms = now_ms + u64::from(timeout_ms.unsigned_abs());
                if self.wake.is_some() && *armed_ms == at_ms {
                    // Still armed there (a delivery woke the node before its timer).
                    return Poll::Pending;
                }
                *armed_ms = at_ms;
                self.arm(cx, at_ms)
            }
            Step::Sent | Step::Advanced(_) | Step::Blocked => {
                unreachable!("a clocked runtime only ends a step done or idle")
            }
        }
    }

    /// Wakes the node at `at_ms` after its start (a sim-core timer: an event of the run).
    fn arm(&mut self, cx: &mut Context<'_>, at_ms: u64) -> Poll<()> {
        let at = SimInstant::from_nanos(self.start_ns + at_ms * 1_000_000);
        let mut sleep = sim_core::time::sleep_until(at);
        if Pin::new(&mut sleep).poll(cx).is_ready() {
            cx.waker().wake_by_ref();
        } else {
            self.wake = Some(sleep);
        }
        Poll::Pending
    }

    /// Fenced: runs tokio at the current instant, then at most to the fence (see
    /// [`Mode::Fenced`]), and wakes the node where tokio's clock stopped.
    fn poll_fenced(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let now_ms = ms_since(self.start_ns, sim_core::time::now());
        let Engine::Fenced { clock_ms, .. } = &self.engine else {
            unreachable!("polled as fenced")
        };
        if now_ms < *clock_ms {
            // Woken early (a wake inside the runtime reaches the node too): tokio's clock is
            // ahead, and nothing may run there before the world catches up.
            if let Some(sleep) = self.wake.as_mut() {
                if Pin::new(sleep).poll(cx).is_pending() {
                    return Poll::Pending;
                }
            }
        }
        self.wake = None;
        let step = self.step_fenced(cx.waker().clone(), now_ms);
        match step {
            Step::Done(None) => Poll::Ready(()),
            Step::Done(Some(panic)) => resume_unwind(panic),
            Step::Sent => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Step::Advanced(at_ms) => {
                if let Engine::Fenced { clock_ms, .. } = &mut self.engine {
                    *clock_ms = at_ms;
                }
                self.arm(cx, at_ms)
            }
            // The earliest tokio can act on its own is the next millisecond.
            Step::Blocked => self.arm(cx, now_ms + 1),
            Step::Idle(_) => unreachable!("only a clocked runtime idles"),
        }
    }

    /// Runs tokio at the current instant until it is quiet, then up to the fence.
    fn step_fenced(&mut self, node: Waker, now_ms: u64) -> Step {
        let Engine::Fenced {
            main,
            local,
            runtime,
            base,
            ..
        } = &mut self.engine
        else {
            unreachable!("stepped as fenced")
        };
        let (base, runtime) = (*base, runtime.as_ref().expect("runtime lives until drop"));
        let target = base + Duration::from_millis(now_ms);
        let fence_ms = match sim_core::foreign::next_instant() {
            Some(at) => ms_since(self.start_ns, at),
            None => now_ms + IDLE_FENCE.as_millis() as u64,
        };
        SENT.with(|s| s.set(false));
        ADVANCED.with(|a| a.set(false));
        FENCED.with(|f| f.set(true));
        STEPS.with(|s| s.set(s.get() + 1));
        let mut first = true;
        let mut fence: Option<Pin<Box<tokio::time::Sleep>>> = None;
        let result = runtime.block_on(std::future::poll_fn(|cx| {
            // First: after the clock moved, nothing may run before the world catches up.
            if ADVANCED.with(Cell::take) {
                let at = tokio::time::Instant::now().duration_since(base).as_millis() as u64;
                return Poll::Ready(Step::Advanced(at));
            }
            let flag = Arc::new(Flag {
                woken: AtomicBool::new(false),
                inner: cx.waker().clone(),
                node: node.clone(),
            });
            DRIVING.with(|d| *d.borrow_mut() = Some((cx.waker().clone(), node.clone())));
            let tokio_now = tokio::time::Instant::now();
            if tokio_now < target {
                // Never expected (the node is woken at every instant tokio can act), but a
                // lagging clock is caught up rather than left behind.
                let mut catch_up = std::pin::pin!(tokio::time::advance(target - tokio_now));
                let _ = catch_up.as_mut().poll(cx);
            }
            let flag_waker = Waker::from(flag.clone());
            let mut flag_cx = Context::from_waker(&flag_waker);
            let _ = Pin::new(&mut *local).poll(&mut flag_cx);
            if let Poll::Ready(result) = Pin::new(&mut *main).poll(&mut flag_cx) {
                return Poll::Ready(Step::Done(
                    result.err().and_then(|e| e.try_into_panic().ok()),
                ));
            }
            if SENT.with(Cell::take) {
                return Poll::Ready(Step::Sent);
            }
            if std::mem::take(&mut first) || flag.woken.load(Ordering::SeqCst) {
                // Go round tokio's loop once more at this instant: its own tasks run and due
                // timers fire, without moving the clock (a woken runtime does not advance).
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            // Quiet at this instant.
            if fence_ms <= now_ms {
                return Poll::Ready(Step::Blocked);
            }
            HOLD.with(|h| h.set(Some(tokio::time::Instant::now())));
            let fence = fence.get_or_insert_with(|| {
                Box::pin(tokio::time::sleep_until(
                    base + Duration::from_millis(fence_ms),
                ))
            });
            if fence.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Step::Advanced(fence_ms));
            }
            Poll::Pending
        }));
        HOLD.with(|h| h.set(None));
        FENCED.with(|f| f.set(false));
        DRIVING.with(|d| *d.borrow_mut() = None);
        result
    }
}

/// One clocked step: see [`Mode::Clocked`]. Tokio runs every task the node has at this
/// instant; the step ends when its idle wait is absorbed (nothing left to run) or the main
/// task ends.
#[cfg(tokio_unstable)]
fn step_clocked(
    runtime: &LocalRuntime,
    main: &mut JoinHandle<()>,
    ended: &Cell<bool>,
    forward: &Arc<Forward>,
) -> Step {
    STEPS.with(|s| s.set(s.get() + 1));
    DRIVING_CLOCKED.with(|d| d.set(Arc::as_ptr(forward) as usize));
    let mut first = true;
    let result = runtime.block_on(std::future::poll_fn(|cx| {
        if std::mem::take(&mut first) {
            sim_core::os::set_idle_waiter(Some(cx.waker().clone()));
        }
        // Tokio waits with a timeout only when no task is left to run (its waits that merely
        // look for I/O between tasks have a zero timeout, and are not handed over).
        let idle = sim_core::os::take_idle_timeout();
        if ended.get() {
            if let Poll::Ready(result) = Pin::new(&mut *main).poll(cx) {
                return Poll::Ready(Step::Done(
                    result.err().and_then(|e| e.try_into_panic().ok()),
                ));
            }
        }
        match idle {
            Some(timeout_ms) => Poll::Ready(Step::Idle(timeout_ms)),
            None => Poll::Pending,
        }
    }));
    sim_core::os::set_idle_waiter(None);
    DRIVING_CLOCKED.with(|d| d.set(0));
    result
}

/// Sets its flag when dropped: at the end of the future that owns it, or as a panic unwinds
/// through that future.
struct OnDrop(Rc<Cell<bool>>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

/// The node's main future on sim-core: owns the driver; dropping it (crash) drops the
/// runtime and every task in it.
pub(crate) async fn node_future<F, Fut>(factory: Rc<F>, ctx: NodeCtx)
where
    F: Fn(NodeCtx) -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    let main = factory(ctx.clone());
    let mut driver = Driver::new(&ctx, main);
    std::future::poll_fn(move |cx| driver.poll_node(cx)).await
}
