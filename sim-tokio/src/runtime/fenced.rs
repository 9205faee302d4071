//! Fenced nodes: tokio's clock is paused, and auto-advances no further than the world allows.
//!
//! Owns: a node's paused runtime, the `LocalSet` of its `!Send` tasks, its main task, and
//! the fence.
//!
//! Used when the OS hooks are not linked (or the build lacks `tokio_unstable`). Each poll of
//! the node runs tokio at the current virtual instant until it is quiet, then lets tokio
//! auto-advance at most to the next instant anything else can happen
//! ([`sim_core::foreign::next_instant`], the fence). The first auto-advance stops the
//! runtime *before* any task runs at the new instant (a hook on tokio's unpark sees the clock
//! moved), and the node arms a sim-core timer there. A send (anything other nodes can see)
//! stops the runtime at once; the node continues at the same instant after the scheduler has
//! drawn who goes next, so a zero-latency reply is interleaved, never seen before its
//! request. A `tokio::spawn`ed task woken from outside its runtime reaches the node only
//! through sim-tokio's network types ([`node_waker`]).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::resume_unwind;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use tokio::runtime::Runtime;
use tokio::task::{JoinHandle, LocalSet};

use super::{count_step, knobs, panic_of, seeded_builder, Wakeup};

/// How far a runtime may auto-advance when nothing at all is pending in the world.
const IDLE_FENCE: Duration = Duration::from_secs(3600);

thread_local! {
    /// The tokio instant the runtime held when it became quiet; set only while a fence is up.
    static HOLD: Cell<Option<tokio::time::Instant>> = const { Cell::new(None) };
    /// Set by the unpark hook when tokio's clock moved past `HOLD`.
    static ADVANCED: Cell<bool> = const { Cell::new(false) };
    /// Set by a send: the node did something others can see.
    static SENT: Cell<bool> = const { Cell::new(false) };
    /// While a fenced runtime runs: the waker of its `block_on` future, and of its sim task.
    static DRIVING: RefCell<Option<(Waker, Waker)>> = const { RefCell::new(None) };
}

/// Called by the network types just after a send: stops the runtime so the world moves.
pub(super) fn note_visible() {
    if !knobs::STOP_ON_SEND.with(Cell::get) {
        return;
    }
    DRIVING.with(|d| {
        if let Some((block_on, _)) = &*d.borrow() {
            SENT.with(|s| s.set(true));
            block_on.wake_by_ref();
        }
    });
}

/// The sim-core waker of the fenced node whose runtime is running, if any: network types
/// wake it with the tokio task's waker, so a delivery reaches the node even from
/// `tokio::spawn`ed tasks, whose wakes a fenced runtime keeps to itself.
pub(super) fn node_waker() -> Option<Waker> {
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

/// How one fenced step ended.
enum Step {
    /// The node's main task ended (a panic is carried out to the world).
    Done(Option<Box<dyn std::any::Any + Send>>),
    /// The node sent something: continue at this instant, after the scheduler's draw.
    Sent,
    /// Tokio's clock moved to this many ms after start; nothing has run there yet.
    Advanced(u64),
    /// Quiet, and the world acts again within this millisecond: wait for the next one.
    Blocked,
}

/// One fenced incarnation. Dropping it shuts the runtime down, the local tasks first, inside
/// it; the main task's handle goes after.
pub(super) struct Fenced {
    main: JoinHandle<()>,
    local: LocalSet,
    runtime: Option<Runtime>,
    /// Tokio's clock at the incarnation's start.
    base: tokio::time::Instant,
    /// Tokio's clock, in ms after start.
    clock_ms: u64,
    wakeup: Wakeup,
}

impl Drop for Fenced {
    fn drop(&mut self) {
        // A crash may come from inside another node's runtime: `shutdown_background` is the
        // drop that tokio allows there.
        if let Some(runtime) = self.runtime.take() {
            {
                let _guard = runtime.enter();
                drop(std::mem::take(&mut self.local));
            }
            runtime.shutdown_background();
        }
    }
}

impl Fenced {
    pub(super) fn new<Fut: Future<Output = ()> + 'static>(seed: u64, main: Fut) -> Fenced {
        // Paused, with only a timer driver: a real socket then fails loudly (no I/O driver).
        let mut builder = seeded_builder(seed);
        builder.start_paused(true).on_thread_unpark(on_unpark);
        let runtime = builder.build().expect("a current-thread runtime builds");
        let base = runtime.block_on(async { tokio::time::Instant::now() });
        let local = LocalSet::new();
        let main = local.spawn_local(main);
        Fenced {
            main,
            local,
            runtime: Some(runtime),
            base,
            clock_ms: 0,
            wakeup: Wakeup::new(),
        }
    }

    /// Runs tokio at the current instant, then at most to the fence, and wakes the node where
    /// tokio's clock stopped.
    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let now_ms = self.wakeup.now_ms();
        // Woken early (a wake inside the runtime reaches the node too): tokio's clock is
        // ahead, and nothing may run there before the world catches up.
        if now_ms < self.clock_ms && self.wakeup.is_pending(cx) {
            return Poll::Pending;
        }
        self.wakeup.disarm();
        match self.step(cx.waker().clone(), now_ms) {
            Step::Done(None) => Poll::Ready(()),
            Step::Done(Some(panic)) => resume_unwind(panic),
            Step::Sent => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Step::Advanced(at_ms) => {
                self.clock_ms = at_ms;
                self.wakeup.arm(cx, at_ms)
            }
            // The earliest tokio can act on its own is the next millisecond.
            Step::Blocked => self.wakeup.arm(cx, now_ms + 1),
        }
    }

    /// Runs tokio at the current instant until it is quiet, then up to the fence.
    fn step(&mut self, node: Waker, now_ms: u64) -> Step {
        let runtime = self.runtime.as_ref().expect("runtime lives until drop");
        let (main, local, base) = (&mut self.main, &mut self.local, self.base);
        let target = base + Duration::from_millis(now_ms);
        let fence_ms = match sim_core::foreign::next_instant() {
            Some(at) => self.wakeup.ms_at(at),
            None => now_ms + IDLE_FENCE.as_millis() as u64,
        };
        SENT.with(|s| s.set(false));
        ADVANCED.with(|a| a.set(false));
        count_step();
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
                return Poll::Ready(Step::Done(panic_of(result)));
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
        DRIVING.with(|d| *d.borrow_mut() = None);
        result
    }
}
