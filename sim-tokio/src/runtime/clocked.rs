//! Clocked nodes: tokio's clock is the world's, read through the OS hooks.
//!
//! Owns: a node's `LocalRuntime`, its main task, and the forwarding of wake-ups from outside
//! the runtime to the node.
//!
//! Tokio's clock runs unpaused and reads `Instant::now`, which the hooks answer with virtual
//! time: tokio's time *is* the world's, so it can never run ahead. The runtime is a
//! `LocalRuntime` (`tokio_unstable`), whose own scheduler runs the node's `!Send` tasks, so
//! tokio knows of every task and nothing else needs polling. A step runs tokio at the current
//! instant until it has nothing left to run; tokio then waits on its I/O driver with a
//! timeout that is the distance to its earliest timer, and the hooks' `epoll_wait` hands that
//! timeout over instead of waiting (`sim_core::os::set_idle_waiter`). The node arms a
//! sim-core timer there: one step per instant the node has work, and none in between.
//!
//! The runtime never blocks in the OS, so the event fd it wakes itself with is claimed
//! (`sim_core::os::claim_wakeup_fds`): a write to it, tokio's "a task of mine was woken from
//! outside me" (by another node's task, a sim-core timer or a delivery), skips the system
//! call and wakes the node instead.

use std::cell::Cell;
use std::future::Future;
use std::panic::resume_unwind;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};

use tokio::runtime::LocalRuntime;
use tokio::task::JoinHandle;

use super::{count_step, panic_of, seeded_builder, Wakeup};

thread_local! {
    /// While a clocked runtime runs: its [`Forward`], by address (identity only: compared
    /// with the one a wake-up reaches, never ordered or hashed).
    static DRIVING: Cell<usize> = const { Cell::new(0) };
}

/// Where a clocked runtime's wake-ups go: a task of the node woken from outside its runtime
/// must reach the node's sim task, which is what the world polls. A wake-up from inside the
/// node's own step needs nothing: the step runs the task before it ends.
struct Forward {
    /// The node's sim-core waker, from its first step: the same for the whole incarnation
    /// (one sim task polls the engine).
    node: OnceLock<Waker>,
}

impl Forward {
    fn set_node(&self, waker: &Waker) {
        let node = self.node.get_or_init(|| waker.clone());
        debug_assert!(node.will_wake(waker), "one sim task drives an incarnation");
    }
}

impl Wake for Forward {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        if DRIVING.with(Cell::get) == Arc::as_ptr(self) as usize {
            // The node's own step: it runs the woken task before it ends.
            return;
        }
        // Not stepped yet (`None`): its first step comes anyway.
        if let Some(node) = self.node.get() {
            node.wake_by_ref();
        }
    }
}

/// One clocked incarnation. Dropping it shuts the runtime down; the main task's handle goes
/// after.
pub(super) struct Clocked {
    main: JoinHandle<()>,
    /// Set when the main task has ended (returned or panicked): only then is `main` polled,
    /// which would otherwise cost a poll of its handle at every turn of a step.
    ended: Rc<Cell<bool>>,
    runtime: Option<LocalRuntime>,
    forward: Arc<Forward>,
    wakeup: Wakeup,
}

impl Drop for Clocked {
    fn drop(&mut self) {
        // A crash may come from inside another node's runtime: `shutdown_background` is the
        // drop that tokio allows there.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// How one clocked step ended.
enum Step {
    /// The node's main task ended (a panic is carried out to the world).
    Done(Option<Box<dyn std::any::Any + Send>>),
    /// Nothing left to run now; tokio's earliest timer is this many ms away (`-1`: it has
    /// none).
    Idle(i32),
}

impl Clocked {
    pub(super) fn new<Fut: Future<Output = ()> + 'static>(seed: u64, main: Fut) -> Clocked {
        let forward = Arc::new(Forward {
            node: OnceLock::new(),
        });
        // Timer and I/O drivers: the I/O driver is there only so that tokio's idle wait
        // reaches `epoll_wait`, whose hook hands over the timeout.
        let mut builder = seeded_builder(seed);
        builder.enable_io();
        let runtime = sim_core::os::claim_wakeup_fds(Waker::from(forward.clone()), || {
            builder.build_local(tokio::runtime::LocalOptions::default())
        })
        .expect("a current-thread runtime builds");
        let ended = Rc::new(Cell::new(false));
        let on_end = OnDrop(ended.clone());
        let main = runtime.spawn_local(async move {
            let _on_end = on_end;
            main.await
        });
        Clocked {
            main,
            ended,
            runtime: Some(runtime),
            forward,
            wakeup: Wakeup::new(),
        }
    }

    /// Runs tokio at the current instant until it has nothing left to run, then sleeps on
    /// sim-core until tokio's earliest timer (a wake from outside, a delivery, may come
    /// first).
    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.forward.set_node(cx.waker());
        match self.step() {
            Step::Done(None) => Poll::Ready(()),
            Step::Done(Some(panic)) => resume_unwind(panic),
            Step::Idle(-1) => {
                self.wakeup.disarm();
                Poll::Pending
            }
            Step::Idle(timeout_ms) => {
                // Tokio counts whole milliseconds from its start, and its idle wait is the
                // distance from the current millisecond to the timer's.
                let at_ms = self.wakeup.now_ms() + u64::from(timeout_ms.unsigned_abs());
                if self.wakeup.is_armed_at(at_ms) {
                    // Still armed there (a delivery woke the node before its timer).
                    return Poll::Pending;
                }
                self.wakeup.arm(cx, at_ms)
            }
        }
    }

    /// One step: tokio runs every task the node has at this instant; the step ends when its
    /// idle wait is absorbed (nothing left to run) or the main task has ended.
    fn step(&mut self) -> Step {
        let runtime = self.runtime.as_ref().expect("runtime lives until drop");
        let (main, ended) = (&mut self.main, &self.ended);
        count_step();
        DRIVING.with(|d| d.set(Arc::as_ptr(&self.forward) as usize));
        let mut first = true;
        let result = runtime.block_on(std::future::poll_fn(|cx| {
            if std::mem::take(&mut first) {
                sim_core::os::set_idle_waiter(Some(cx.waker().clone()));
            }
            // Tokio waits with a timeout only when no task is left to run (its waits that
            // merely look for I/O between tasks have a zero timeout, and are not handed
            // over).
            let idle = sim_core::os::take_idle_timeout();
            if ended.get() {
                if let Poll::Ready(result) = Pin::new(&mut *main).poll(cx) {
                    return Poll::Ready(Step::Done(panic_of(result)));
                }
            }
            match idle {
                Some(timeout_ms) => Poll::Ready(Step::Idle(timeout_ms)),
                None => Poll::Pending,
            }
        }));
        sim_core::os::set_idle_waiter(None);
        DRIVING.with(|d| d.set(0));
        result
    }
}

/// Sets its flag when dropped: at the end of the future that owns it, or as a panic unwinds
/// through that future.
struct OnDrop(Rc<Cell<bool>>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.set(true);
    }
}
