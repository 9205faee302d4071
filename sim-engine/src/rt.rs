//! The executor: a single-threaded async runtime whose every scheduling decision is a draw.
//!
//! Tasks belong to nodes. When several tasks are ready, a [`Scheduler`] picks which one is
//! polled next, drawing from the run's choice source. The ready set is kept in canonical
//! order — ascending task id, and task ids are handed out in spawn order — never in address
//! or hash order, so the same draws pick the same tasks on every machine.
//!
//! Wakers carry no pointer: a waker is the task id and the run's epoch packed in one word,
//! and waking pushes the id on a thread-local list that the executor drains before each
//! pick. Waking costs no allocation, a waker from an ended run is ignored, and a waker used
//! from another thread finds no run there and does nothing.
//!
//! ```
//! use sim_core::rt::spawn;
//! use sim_core::sim::{Config, Sim};
//!
//! let mut sim = Sim::new(Config::default());
//! sim.client("client", |_ctx| async {
//!     let child = spawn(async { 40 + 2 });
//!     assert_eq!(child.await.unwrap(), 42);
//! });
//! assert!(sim.run_seed(1).outcome.class.is_pass());
//! ```

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

use crate::choice::{Choices, Source};
use crate::world::{self, with};

use crate::choice::lanes::Label;

// The labels this part draws, each declared with its lane: a label whose text would read
// another lane does not compile.
const SCHED_PCT_CHANGE_IN: Label = Label::schedule("sched.pct.change_in");
const SCHED_PCT_PRIORITY: Label = Label::schedule("sched.pct.priority");
const SCHED_PICK: Label = Label::schedule("sched.pick");

#[cfg(not(target_pointer_width = "64"))]
compile_error!(
    "sim-core packs (epoch, task id) into a waker's data word and needs 64-bit pointers"
);

/// A task's id: its position in spawn order within the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(pub u32);

pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = ()>>>;

pub(crate) struct Task {
    node: u32,
    future: Option<BoxFuture>,
    queued: bool,
    wake_seq: u64,
}

/// Tasks and the ready set of one run.
///
/// Owns every task of the run (its node, its future while not being polled, whether it is in
/// the ready set) and the ready set itself. Promises, asserted in debug and test builds: the
/// ready set is ascending and duplicate-free; a task is in it exactly when it is `queued` and
/// its node is not paused; a task's future is out of its slot only while it is being polled
/// (it is then `current`).
pub(crate) struct Executor {
    tasks: Vec<Option<Task>>,
    /// Ready task ids, ascending.
    ready: Vec<u32>,
    current: Option<u32>,
    last_run: Option<u32>,
    /// How many tasks have ended (finished or dropped), plus how many lifecycle actions came
    /// due: the harness re-checks whether the workload is done, and applies lifecycle actions
    /// (outside the world), only when this moves — so the step loop tests one counter for
    /// both.
    ended: u64,
    wake_counter: u64,
    /// Paused nodes (indexed by node id; absent = not paused) and whether any is.
    paused: Vec<bool>,
    any_paused: bool,
    /// Tasks of paused nodes woken while paused: marked queued, held out of the ready set
    /// until their node resumes.
    frozen: Vec<u32>,
}

impl Executor {
    pub fn new() -> Self {
        Executor {
            tasks: Vec::new(),
            ready: Vec::new(),
            current: None,
            last_run: None,
            ended: 0,
            wake_counter: 0,
            paused: Vec::new(),
            any_paused: false,
            frozen: Vec::new(),
        }
    }

    /// The task being polled, if any.
    #[inline]
    pub fn current(&self) -> Option<u32> {
        self.current
    }

    /// True if some task is ready.
    #[inline]
    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// True if a task other than the one being polled is ready.
    pub fn others_ready(&self) -> bool {
        self.ready.iter().any(|&t| Some(t) != self.current)
    }

    /// The ending count (see the field): moves when a task ends or a lifecycle action is due.
    #[inline]
    pub fn ended(&self) -> u64 {
        self.ended
    }

    /// Counts a lifecycle action that came due, so the driver leaves the world to apply it.
    pub fn note_lifecycle_due(&mut self) {
        self.ended += 1;
    }

    /// True once `task` finished or was dropped.
    pub fn is_gone(&self, task: u32) -> bool {
        self.tasks.get(task as usize).is_none_or(Option::is_none)
    }

    /// Ends the poll of `task`: no task is current any more, and a task still alive gets its
    /// future back. Returns the future when the task is gone (its node crashed during the
    /// poll), for the caller to drop outside the world's borrow.
    #[inline]
    pub fn put_back(&mut self, task: u32, future: BoxFuture) -> Option<BoxFuture> {
        debug_assert_eq!(self.current, Some(task), "only the polled task is put back");
        self.current = None;
        match self.tasks.get_mut(task as usize) {
            Some(Some(t)) => {
                debug_assert!(t.future.is_none(), "task {task} has two futures");
                t.future = Some(future);
                None
            }
            _ => Some(future),
        }
    }

    /// Ends the poll of a task that will not be put back (it finished, or panicked).
    pub fn end_poll(&mut self) {
        self.current = None;
    }

    /// Takes every task's future out, for teardown (dropped outside the world's borrow).
    pub fn take_all_futures(&mut self) -> Vec<BoxFuture> {
        self.tasks
            .iter_mut()
            .filter_map(|t| t.take()?.future)
            .collect()
    }

    /// Checks the promises in the type's docs (debug and test builds).
    #[inline]
    fn debug_check(&self) {
        if cfg!(debug_assertions) {
            debug_assert!(
                self.ready.windows(2).all(|w| w[0] < w[1]),
                "the ready set is ascending and duplicate-free"
            );
            debug_assert!(
                self.ready
                    .iter()
                    .all(|&t| self.tasks[t as usize].as_ref().is_some_and(|t| t.queued)),
                "every ready task is alive and queued"
            );
        }
    }

    /// Freezes `node`: its ready tasks leave the ready set, and its tasks woken from now on
    /// wait until [`Executor::resume`]. Returns how many ready tasks were frozen.
    pub fn pause(&mut self, node: u32) -> usize {
        let i = node as usize;
        if self.paused.len() <= i {
            self.paused.resize(i + 1, false);
        }
        self.paused[i] = true;
        self.any_paused = true;
        let mut moved = Vec::new();
        for &task in &self.ready {
            if self.node_of(task) == node {
                moved.push(task);
            }
        }
        self.ready.retain(|t| !moved.contains(t));
        let count = moved.len();
        // Still marked queued: a later wake is a no-op, as it would be for a ready task.
        self.frozen.extend(moved);
        count
    }

    /// Thaws `node`: every task of it woken while it was paused becomes ready, in task order.
    /// Returns how many.
    pub fn resume(&mut self, node: u32) -> usize {
        self.set_unpaused(node);
        let mut thawed: Vec<u32> = Vec::new();
        self.frozen.retain(|&t| {
            let mine = self.tasks[t as usize]
                .as_ref()
                .is_some_and(|task| task.node == node);
            if mine {
                thawed.push(t);
            }
            !mine
        });
        thawed.sort_unstable();
        for &task in &thawed {
            if let Some(Some(t)) = self.tasks.get_mut(task as usize) {
                t.queued = false;
            }
            self.make_ready(task);
        }
        thawed.len()
    }

    /// Forgets a pause of `node`, whose tasks were all removed (it crashed).
    pub fn forget_pause(&mut self, node: u32) {
        if !self.any_paused {
            return;
        }
        self.set_unpaused(node);
        let tasks = &self.tasks;
        self.frozen
            .retain(|&t| tasks[t as usize].as_ref().is_some_and(|x| x.node != node));
    }

    fn set_unpaused(&mut self, node: u32) {
        if let Some(p) = self.paused.get_mut(node as usize) {
            *p = false;
        }
        self.any_paused = self.paused.iter().any(|&p| p);
    }

    /// The node a task belongs to; `u32::MAX` for none (a foreign waker names no task).
    pub fn node_of(&self, task: u32) -> u32 {
        self.tasks
            .get(task as usize)
            .and_then(Option::as_ref)
            .map_or(u32::MAX, |t| t.node)
    }

    pub fn spawn(&mut self, node: u32, future: BoxFuture) -> u32 {
        let id = u32::try_from(self.tasks.len()).expect("more than 2^32 tasks in one run");
        self.tasks.push(Some(Task {
            node,
            future: Some(future),
            queued: false,
            wake_seq: 0,
        }));
        self.make_ready(id);
        id
    }

    /// Marks `task` ready (idempotent; ignores finished tasks).
    pub fn make_ready(&mut self, task: u32) {
        let Some(Some(t)) = self.tasks.get_mut(task as usize) else {
            return;
        };
        if t.queued {
            return;
        }
        t.queued = true;
        if self.any_paused && self.paused.get(t.node as usize).copied().unwrap_or(false) {
            // Its node is frozen: the wake waits for the resume.
            self.frozen.push(task);
            return;
        }
        self.wake_counter += 1;
        t.wake_seq = self.wake_counter;
        // invariant: `ready` stays sorted and duplicate-free. A task after every ready one
        // (or an empty set) is pushed; `insert` would call memmove even with nothing to move.
        if self.ready.last().is_none_or(|&last| last < task) {
            self.ready.push(task);
            return;
        }
        match self.ready.binary_search(&task) {
            Ok(_) => unreachable!("task {task} queued twice"),
            Err(pos) => self.ready.insert(pos, task),
        }
    }

    /// Moves wakes recorded by wakers into the ready set.
    pub fn drain_wakes(&mut self) {
        // Most calls find nothing woken: a flag without drop glue answers that with one
        // thread-local load, where the list costs a registration check and a borrow.
        if !WOKEN.with(Cell::get) {
            return;
        }
        WOKEN.with(|f| f.set(false));
        WAKES.with(|w| {
            let mut w = w.borrow_mut();
            for task in w.drain(..) {
                self.make_ready(task);
            }
        });
    }

    /// Removes the ready task at `index` and takes its future out for polling.
    pub fn take(&mut self, index: usize) -> (u32, BoxFuture) {
        // The last (often the only) ready task is popped: `remove` would call memmove even
        // when nothing after it moves.
        let id = if index + 1 == self.ready.len() {
            self.ready.pop().expect("index is in the ready set")
        } else {
            self.ready.remove(index)
        };
        let task = self.tasks[id as usize].as_mut().expect("ready task exists");
        task.queued = false;
        let future = task.future.take().expect("ready task is not being polled");
        debug_assert!(self.current.is_none(), "one task is polled at a time");
        self.current = Some(id);
        self.last_run = Some(id);
        self.debug_check();
        (id, future)
    }

    /// Marks a task that finished (its future is with the caller) as gone.
    pub fn retire(&mut self, task: u32) {
        if let Some(slot) = self.tasks.get_mut(task as usize) {
            if slot.take().is_some() {
                self.ended += 1;
            }
        }
    }

    /// Removes a task for good, returning its future (to drop outside the world borrow).
    pub fn remove(&mut self, task: u32) -> Option<BoxFuture> {
        let slot = self.tasks.get_mut(task as usize)?;
        let t = slot.take()?;
        self.ended += 1;
        if t.queued {
            if let Ok(pos) = self.ready.binary_search(&task) {
                self.ready.remove(pos);
            }
        }
        t.future
    }

    /// Live task ids on `node`, ascending.
    pub fn tasks_of(&self, node: u32) -> Vec<u32> {
        self.tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.as_ref().is_some_and(|t| t.node == node))
            .map(|(i, _)| i as u32)
            .collect()
    }

    pub fn view(&self) -> ReadyView<'_> {
        ReadyView { exec: self }
    }
}

/// What a [`Scheduler`] sees: the ready set in canonical order.
pub struct ReadyView<'a> {
    exec: &'a Executor,
}

impl ReadyView<'_> {
    /// Ready task ids, ascending.
    pub fn ids(&self) -> &[u32] {
        &self.exec.ready
    }
    /// The task polled last, if any.
    pub fn last_run(&self) -> Option<u32> {
        self.exec.last_run
    }
    /// When `task` was last woken (a run-wide counter).
    pub fn wake_seq(&self, task: u32) -> u64 {
        self.exec.tasks[task as usize]
            .as_ref()
            .map_or(0, |t| t.wake_seq)
    }
    /// Index of the first ready id after the task polled last: where round robin resumes.
    pub fn round_robin_start(&self) -> usize {
        let ids = self.ids();
        match self.exec.last_run {
            Some(last) => ids.partition_point(|&t| t <= last) % ids.len().max(1),
            None => 0,
        }
    }
}

/// Picks which ready task runs next. Strategies are small and draw only what they decide.
pub trait Scheduler {
    /// Returns an index into `ready.ids()` (non-empty).
    fn pick(&mut self, ready: &ReadyView<'_>, source: &mut dyn Source) -> usize;
    /// Told about every new task.
    fn on_spawn(&mut self, _task: u32, _source: &mut dyn Source) {}
}

/// Which [`Scheduler`] a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Each step, any ready task, uniformly; zero = round robin in task-id order.
    #[default]
    Uniform,
    /// PCT-style: priorities drawn at spawn, with change points drawn as distances, so input
    /// is spent only where the schedule deviates from the priority order.
    Pct,
    /// Plain FIFO in wake order; draws nothing.
    Fifo,
}

impl Strategy {
    pub(crate) fn build(self) -> RunScheduler {
        match self {
            Strategy::Uniform => RunScheduler::Uniform(Uniform),
            Strategy::Pct => RunScheduler::Pct(Pct::default()),
            Strategy::Fifo => RunScheduler::Fifo(Fifo),
        }
    }

    /// The command-line name: `uniform`, `pct` or `fifo`.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Uniform => "uniform",
            Strategy::Pct => "pct",
            Strategy::Fifo => "fifo",
        }
    }

    /// Parses `uniform`, `pct` or `fifo`.
    pub fn parse(name: &str) -> Option<Strategy> {
        match name {
            "uniform" => Some(Strategy::Uniform),
            "pct" => Some(Strategy::Pct),
            "fifo" => Some(Strategy::Fifo),
            _ => None,
        }
    }
}

/// A run's scheduler, by value: a pick happens on every step, and matching on the strategy
/// lets it inline where a `Box<dyn Scheduler>` costs an indirect call.
pub(crate) enum RunScheduler {
    Uniform(Uniform),
    Pct(Pct),
    Fifo(Fifo),
}

impl Scheduler for RunScheduler {
    #[inline]
    fn pick(&mut self, ready: &ReadyView<'_>, source: &mut dyn Source) -> usize {
        match self {
            RunScheduler::Uniform(s) => s.pick(ready, source),
            RunScheduler::Pct(s) => s.pick(ready, source),
            RunScheduler::Fifo(s) => s.pick(ready, source),
        }
    }

    fn on_spawn(&mut self, task: u32, source: &mut dyn Source) {
        match self {
            RunScheduler::Uniform(s) => s.on_spawn(task, source),
            RunScheduler::Pct(s) => s.on_spawn(task, source),
            RunScheduler::Fifo(s) => s.on_spawn(task, source),
        }
    }
}

pub(crate) struct Uniform;

impl Scheduler for Uniform {
    #[inline]
    fn pick(&mut self, ready: &ReadyView<'_>, source: &mut dyn Source) -> usize {
        let n = ready.ids().len();
        if n == 1 {
            // A draw below 1 reads nothing from any source: skip the call.
            return 0;
        }
        (ready.round_robin_start() + source.below(SCHED_PICK.name(), n as u64) as usize) % n
    }
}

pub(crate) struct Fifo;

impl Scheduler for Fifo {
    fn pick(&mut self, ready: &ReadyView<'_>, _source: &mut dyn Source) -> usize {
        let ids = ready.ids();
        (0..ids.len())
            .min_by_key(|&i| ready.wake_seq(ids[i]))
            .expect("ready set is non-empty")
    }
}

#[derive(Default)]
pub(crate) struct Pct {
    /// Priority per task id (higher runs first); demoted tasks go negative.
    priority: Vec<i64>,
    steps_to_change: u64,
    demotions: i64,
}

impl Scheduler for Pct {
    fn on_spawn(&mut self, task: u32, source: &mut dyn Source) {
        let p = source.below(SCHED_PCT_PRIORITY.name(), 256) as i64;
        let i = task as usize;
        if self.priority.len() <= i {
            self.priority.resize(i + 1, 0);
        }
        self.priority[i] = p;
        if self.steps_to_change == 0 && task == 0 {
            self.steps_to_change = source.below(SCHED_PCT_CHANGE_IN.name(), 256);
        }
    }

    fn pick(&mut self, ready: &ReadyView<'_>, source: &mut dyn Source) -> usize {
        let ids = ready.ids();
        let start = ready.round_robin_start();
        // Highest priority wins; equal priorities go round robin from the last task run.
        let best = (0..ids.len())
            .map(|k| (start + k) % ids.len())
            .max_by_key(|&i| {
                (
                    self.priority.get(ids[i] as usize).copied().unwrap_or(0),
                    usize::MAX - ((i + ids.len() - start) % ids.len()),
                )
            })
            .expect("ready set is non-empty");
        if self.steps_to_change > 0 {
            self.steps_to_change -= 1;
            if self.steps_to_change == 0 {
                // A change point: the chosen task drops below every other, and the next
                // change point's distance is drawn (zero: no more change points).
                self.demotions += 1;
                if let Some(p) = self.priority.get_mut(ids[best] as usize) {
                    *p = -self.demotions;
                }
                self.steps_to_change = source.below(SCHED_PCT_CHANGE_IN.name(), 256);
            }
        }
        best
    }
}

thread_local! {
    static WAKES: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    static WAKE_EPOCH: Cell<u32> = const { Cell::new(0) };
    /// True when `WAKES` may be non-empty.
    static WOKEN: Cell<bool> = const { Cell::new(false) };
}

pub(crate) fn set_wake_epoch(epoch: u32) {
    WAKE_EPOCH.with(|e| e.set(epoch));
    WAKES.with(|w| w.borrow_mut().clear());
    WOKEN.with(|f| f.set(false));
}

fn pack(epoch: u32, task: u32) -> *const () {
    ((u64::from(epoch) << 32) | u64::from(task)) as usize as *const ()
}

fn wake_packed(data: *const ()) {
    let word = data as usize as u64;
    let (epoch, task) = ((word >> 32) as u32, word as u32);
    if WAKE_EPOCH.with(Cell::get) == epoch {
        WAKES.with(|w| w.borrow_mut().push(task));
        WOKEN.with(|f| f.set(true));
    }
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(
    |data| RawWaker::new(data, &VTABLE),
    wake_packed,
    wake_packed,
    |_| {},
);

/// The task a waker of run `epoch` wakes, or `None` for a foreign waker (or one of another
/// run).
#[inline]
pub(crate) fn task_of(waker: &Waker, epoch: u32) -> Option<u32> {
    if !std::ptr::eq(waker.vtable(), &VTABLE) {
        return None;
    }
    let word = waker.data() as usize as u64;
    ((word >> 32) as u32 == epoch).then_some(word as u32)
}

pub(crate) fn waker_for(epoch: u32, task: u32) -> Waker {
    // SAFETY: the data word is a plain integer, never dereferenced; every vtable function is
    // sound for any value, on any thread.
    unsafe { Waker::from_raw(RawWaker::new(pack(epoch, task), &VTABLE)) }
}

/// Why a [`JoinHandle`] has no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JoinError {
    /// The task was dropped before finishing: aborted, or its node crashed.
    #[error("task was cancelled (aborted, or its node crashed) before it finished")]
    Cancelled,
}

struct JoinSlot<T> {
    output: Option<T>,
    done: bool,
    waiter: Option<Waker>,
}

/// Awaits a spawned task's output.
///
/// `Send` and `Sync` when the output is `Send` (the slot is shared through an `Arc<Mutex>`), so
/// it fits crates whose runtime abstraction demands a `Send + Sync` handle; it is still only
/// meaningful on the simulation's thread, where the task runs.
///
/// ```
/// fn send_sync<T: Send + Sync>() {}
/// send_sync::<sim_core::rt::JoinHandle<u64>>();
/// ```
pub struct JoinHandle<T> {
    slot: Arc<Mutex<JoinSlot<T>>>,
    task: TaskId,
    epoch: u32,
}

impl<T> JoinHandle<T> {
    /// The task's id.
    pub fn id(&self) -> TaskId {
        self.task
    }

    /// Drops the task now; awaiting the handle gives [`JoinError::Cancelled`].
    pub fn abort(&self) {
        let future = world::try_with(self.epoch, |w| w.exec_mut().remove(self.task.0)).flatten();
        drop(future);
    }

    /// True once the task finished or was dropped.
    pub fn is_finished(&self) -> bool {
        lock(&self.slot).done
    }
}

/// The join slot, locked. Nothing runs user code while holding it, so it is never poisoned
/// in a way that matters; a poisoned lock is used as it is.
fn lock<T>(slot: &Mutex<JoinSlot<T>>) -> std::sync::MutexGuard<'_, JoinSlot<T>> {
    slot.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Marks the slot done (with `output`, if the task finished) and wakes its waiter, outside
/// the lock (a foreign waker may do anything).
fn complete<T>(slot: &Mutex<JoinSlot<T>>, output: Option<T>) {
    let waiter = {
        let mut slot = lock(slot);
        if slot.done {
            return;
        }
        slot.output = output;
        slot.done = true;
        slot.waiter.take()
    };
    if let Some(w) = waiter {
        w.wake();
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut slot = lock(&self.slot);
        if let Some(v) = slot.output.take() {
            return Poll::Ready(Ok(v));
        }
        if slot.done {
            return Poll::Ready(Err(JoinError::Cancelled));
        }
        slot.waiter = Some(cx.waker().clone());
        Poll::Pending
    }
}

pin_project_lite::pin_project! {
    /// Completes the join slot on output, or marks it cancelled when dropped unfinished.
    struct Tracked<F: Future> {
        #[pin]
        future: F,
        slot: Arc<Mutex<JoinSlot<F::Output>>>,
    }

    impl<F: Future> PinnedDrop for Tracked<F> {
        fn drop(this: Pin<&mut Self>) {
            // Unfinished: the handle will read `Cancelled`.
            complete(this.project().slot, None);
        }
    }
}

impl<F: Future> Future for Tracked<F> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        match this.future.poll(cx) {
            Poll::Ready(v) => {
                complete(this.slot, Some(v));
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Spawns `future` on the current task's node; it dies with that node.
///
/// Must be called from within a simulation.
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let node =
        with(|w| w.current_node()).expect("spawn must be called from a task inside a simulation");
    spawn_on(node, future)
}

pub(crate) fn spawn_on<F>(node: u32, future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let slot = Arc::new(Mutex::new(JoinSlot {
        output: None,
        done: false,
        waiter: None,
    }));
    let tracked = Tracked {
        future,
        slot: slot.clone(),
    };
    let (task, epoch) = with(|w| {
        let id = w.spawn(node, Box::pin(tracked));
        w.record(
            Some(node),
            crate::trace::EventKind::Spawn { task: id },
            || format!("task {id}"),
        );
        (id, w.epoch())
    });
    JoinHandle {
        slot,
        task: TaskId(task),
        epoch,
    }
}

/// Lets every other ready task have a turn (as the scheduler decides) before continuing.
pub async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(move |cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await
}

/// The id of the task being polled. Must be called from within a simulation.
pub fn current_task() -> TaskId {
    TaskId(with(|w| w.exec().current).expect("current_task must be called from a task"))
}
