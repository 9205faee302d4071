//! Virtual time: a per-run clock that jumps to the next deadline when nothing is runnable.
//!
//! The clock never reads the wall clock. It starts at zero and moves only when every task is
//! blocked, straight to the earliest pending deadline (a sleep, or a message in flight), so
//! an hour of heartbeats costs what its events cost, not an hour.
//!
//! Several things due at the same instant are not ordered by insertion accident: the harness
//! draws their order from the run's input (zero = the order they were scheduled in).
//!
//! # Per-node wall clocks and timer faults
//!
//! Global virtual time ([`now`], [`Instant`]) is the one truth: it orders every event, and
//! timers and the network run on it. Besides it, each node reads its own **wall clock** with
//! [`system_now`], a [`SystemTime`] that may be wrong the ways real machines' clocks are, as
//! the run's [`ClockFaults`] decide:
//!
//! * **skew**: an offset from true time (either way) and a drift (parts per million, either
//!   way), drawn per node per run;
//! * **jumps**: a few forward or backward steps at drawn instants, as NTP or an operator
//!   sets a clock;
//! * **late timers**: a timer fires after its deadline, late by a drawn amount.
//!
//! Fault model: a node's monotonic clock ([`now`]) is never wrong and a timer never fires
//! *early*; the wall clock may be off by the offset, run fast or slow by the drift, and jump,
//! so two nodes may disagree about which of two events came first. Every reading, each node's
//! skew and every jump is in the history, so a trace shows what each node believed. All of it
//! is off by default: a run then draws nothing for clocks, every wall clock reads true time
//! (counted from [`START_UNIX_NS`]) and timers fire on time. Rates are integer ratios; no
//! decision uses a float. (A paused node's timers come due on time but are handled only when
//! it resumes: see [`crate::node::pause`].)
//!
//! ```
//! use std::time::Duration;
//! use sim_core::sim::{Config, Sim};
//! use sim_core::time::{now, sleep, timeout, Instant};
//!
//! let mut sim = Sim::new(Config::default());
//! sim.client("c", |_| async {
//!     sleep(Duration::from_secs(300)).await;
//!     assert_eq!(now(), Instant::from_nanos(300_000_000_000));
//!     let slow = sleep(Duration::from_secs(5));
//!     assert!(timeout(Duration::from_secs(1), slow).await.is_err());
//! });
//! assert!(sim.run_seed(0).outcome.class.is_pass());
//! ```

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::world::{self, with};

mod labels;
mod node_clock;
mod queue;
pub(crate) use node_clock::{jump, start_run, Jump, NodeClocks};
pub use node_clock::{ClockFaults, ClockProfile, SystemTime, START_UNIX_NS};
use queue::Queue;

/// A point in virtual time: nanoseconds since the run started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

impl Instant {
    /// The instant `nanos` after the run started.
    pub const fn from_nanos(nanos: u64) -> Self {
        Instant(nanos)
    }
    /// Nanoseconds since the run started.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Time since the run started.
    pub fn elapsed_since_start(self) -> Duration {
        Duration::from_nanos(self.0)
    }
    /// `self - earlier`, or zero.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
    /// `self - earlier`, or zero if `earlier` is later (as `std::time::Instant` does).
    pub fn duration_since(self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }
    /// `self - earlier`, or `None` if `earlier` is later.
    pub fn checked_duration_since(self, earlier: Instant) -> Option<Duration> {
        self.0.checked_sub(earlier.0).map(Duration::from_nanos)
    }
    /// `self + d`, or `None` past the end of time.
    pub fn checked_add(self, d: Duration) -> Option<Instant> {
        u64::try_from(d.as_nanos())
            .ok()
            .and_then(|ns| self.0.checked_add(ns))
            .map(Instant)
    }
    /// `self - d`, or `None` before the run started.
    pub fn checked_sub(self, d: Duration) -> Option<Instant> {
        u64::try_from(d.as_nanos())
            .ok()
            .and_then(|ns| self.0.checked_sub(ns))
            .map(Instant)
    }
    /// Virtual time since `self`. Must be called from within a simulation.
    pub fn elapsed(self) -> Duration {
        now().duration_since(self)
    }
}

/// Instant arithmetic as with `std::time::Instant`, except that it saturates instead of
/// panicking: time starts at zero in every run, so `now() - timeout` early in a run is the
/// start of the run, not an overflow.
///
/// ```
/// use std::time::Duration;
/// use sim_core::time::Instant;
///
/// let mut t = Instant::from_nanos(5_000);
/// t += Duration::from_nanos(1_000);
/// assert_eq!(t - Instant::from_nanos(2_000), Duration::from_nanos(4_000));
/// t -= Duration::from_nanos(500);
/// assert_eq!(t, Instant::from_nanos(5_500));
/// assert_eq!(t - Duration::from_secs(1), Instant::from_nanos(0));
/// assert_eq!(Instant::from_nanos(1) - Instant::from_nanos(2), Duration::ZERO);
/// ```
impl std::ops::Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(duration_ns(d)))
    }
}

impl std::ops::AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl std::ops::Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(duration_ns(d)))
    }
}

impl std::ops::SubAssign<Duration> for Instant {
    fn sub_assign(&mut self, d: Duration) {
        *self = *self - d;
    }
}

impl std::ops::Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}ms", self.0 / 1_000_000, self.0 % 1_000_000)
    }
}

pub(crate) fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The current virtual time. Must be called from within a simulation.
pub fn now() -> Instant {
    Instant(with(|w| w.now_ns()))
}

/// The current node's wall clock: what this node believes the date and time is.
///
/// Unlike [`now`], it may be wrong: offset from true time, drifting, and jumping forwards or
/// backwards, as the run's [`ClockFaults`] decide (see the [module docs](self)). With clock
/// faults off it reads true time, counted from [`START_UNIX_NS`]. Every reading is recorded in the history. Must be called from a task
/// in a simulation.
///
/// ```
/// use std::time::Duration;
/// use sim_core::sim::{Config, Sim};
/// use sim_core::time::{sleep, system_now, ClockFaults, ClockProfile, START_UNIX_NS};
///
/// let mut config = Config::default();
/// config.clock_faults = ClockFaults::Fixed(ClockProfile { offset_ms_max: 100, ..ClockProfile::NONE });
/// let mut sim = Sim::new(config);
/// sim.client("c", |_| async {
///     sleep(Duration::from_secs(1)).await;
///     let t = system_now().as_unix_nanos() as i128;
///     let truth = START_UNIX_NS as i128 + 1_000_000_000;
///     assert!((t - truth).abs() <= 100_000_000, "off by at most the offset bound");
/// });
/// assert!(sim.run_seed(4).outcome.class.is_pass());
/// ```
pub fn system_now() -> SystemTime {
    with(|w| {
        let node = w
            .current_node()
            .expect("time::system_now must be called from a task: a wall clock is a node's");
        let local_ns = w.clocks().read(node, w.now_ns());
        w.record(
            Some(node),
            crate::trace::EventKind::ClockRead { local_ns },
            || format!("wall clock reads {}", SystemTime::from_unix_nanos(local_ns)),
        );
        SystemTime::from_unix_nanos(local_ns)
    })
}

/// Identifies a registered timer; carries the run's epoch and the slot's generation so a
/// stale key (cancelled, or from another run) can never fire or cancel another timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerKey {
    pub slot: u32,
    pub generation: u32,
    pub epoch: u32,
}

struct TimerSlot {
    generation: u32,
    /// The task to wake; taken when the timer fires.
    waker: Option<Waker>,
    live: bool,
    /// The key of its queue entry while one is queued, else 0 (no key is 0: sequences start
    /// at 1). An entry whose key is not its timer's `queue_key` is dead.
    queue_key: u128,
}

/// Queue keys are one integer, so the queue compares and moves 16 bytes: the due time in the
/// high 64 bits, then the schedule sequence (40 bits), then what is due (24 bits: a timer
/// slot with [`TIMER_BIT`] set, or a payload slot). Ordering by key is ordering by
/// `(due, sequence)`; the last field never decides (sequences are unique).
///
/// Inline (here and below): called from `Clock`'s generic methods, which are compiled in the
/// crate that instantiates them, where a plain function of this crate is an out-of-line call.
#[inline]
fn pack_key(at_ns: u64, seq: u64, what: u32) -> u128 {
    assert!(seq < 1 << 40, "more than 2^40 things scheduled in one run");
    (u128::from(at_ns) << 64) | (u128::from(seq) << 24) | u128::from(what)
}

#[inline]
fn unpack_key(key: u128) -> (u64, u32) {
    ((key >> 64) as u64, (key as u32) & ((1 << 24) - 1))
}

/// Marks a key's last field as a timer slot.
const TIMER_BIT: u32 = 1 << 23;

/// The timer slot a queue key names, or `None` for a payload's key.
#[inline]
fn timer_slot(key: u128) -> Option<u32> {
    let what = unpack_key(key).1;
    (what & TIMER_BIT != 0).then_some(what & !TIMER_BIT)
}

/// How many cancelled timers may wait in the queue before it is compacted (see
/// [`Clock::next_due`]).
const COMPACT_AFTER: usize = 2;

/// Something due, as the clock hands it out.
pub(crate) enum Due<P> {
    /// A timer's queue entry (it wakes its task if it is still live when applied:
    /// [`Clock::fire`]).
    Timer(u128),
    /// A payload someone scheduled.
    Payload(P),
}

/// The clock and its queue of pending things, ordered by `(due time, schedule sequence)`.
///
/// The queue holds small `(due, seq, what)` keys (see [`queue`]): a timer's key names its
/// slot, and any other payload waits in a slab beside the queue, so ordering moves 16 bytes,
/// not a message. A timer released before it fires is removed from a small queue at once; a
/// large queue deletes it lazily (the stale entry no longer matches its timer's key and is
/// skipped when it reaches the front). Only timer entries are ever dead.
///
/// Promises: virtual time never goes back ([`Clock::advance_to`] asserts it), and nothing is
/// scheduled in the past (`schedule` asserts it).
pub(crate) struct Clock<P> {
    now_ns: u64,
    queue: Queue,
    payloads: Vec<Option<P>>,
    free_payloads: Vec<u32>,
    seq: u64,
    timers: Vec<TimerSlot>,
    free: Vec<u32>,
    /// Timers cancelled while queued and left in the queue (an upper bound on its dead
    /// entries): zero means every queued entry is live.
    cancelled: usize,
}

impl<P> Clock<P> {
    /// Virtual time, in nanoseconds since the run started.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Moves virtual time forward to `at_ns` (the next deadline).
    #[inline]
    pub fn advance_to(&mut self, at_ns: u64) {
        debug_assert!(at_ns >= self.now_ns, "virtual time never goes back");
        self.now_ns = at_ns;
    }

    pub fn new() -> Self {
        Clock {
            now_ns: 0,
            // Sized for a typical run, so a run does not spend its first events growing them.
            queue: Queue::with_capacity(64),
            payloads: Vec::with_capacity(64),
            free_payloads: Vec::with_capacity(64),
            seq: 0,
            timers: Vec::with_capacity(16),
            free: Vec::with_capacity(16),
            cancelled: 0,
        }
    }

    #[inline]
    fn next_key(&mut self, at_ns: u64, what: u32) -> u128 {
        debug_assert!(
            at_ns >= self.now_ns,
            "scheduled in the past: {at_ns} < {}",
            self.now_ns
        );
        self.seq += 1;
        pack_key(at_ns.max(self.now_ns), self.seq, what)
    }

    /// Schedules `what` at `at_ns` (not before now).
    pub fn schedule(&mut self, at_ns: u64, what: P) {
        debug_assert!(at_ns >= self.now_ns, "nothing is scheduled in the past");
        let slot = match self.free_payloads.pop() {
            Some(slot) => {
                let entry = &mut self.payloads[slot as usize];
                // Checked first so the store below needs no drop of an old payload.
                assert!(entry.is_none(), "invariant: a free payload slot is empty");
                *entry = Some(what);
                slot
            }
            None => {
                assert!(
                    self.payloads.len() < TIMER_BIT as usize,
                    "more than 2^23 payloads pending at once"
                );
                self.payloads.push(Some(what));
                (self.payloads.len() - 1) as u32
            }
        };
        let key = self.next_key(at_ns, slot);
        self.queue.push(key);
    }

    /// The due time at the front of the queue, which may belong to a cancelled timer: a cheap
    /// lower bound on [`Clock::next_due`].
    #[inline]
    pub fn peek_due(&self) -> Option<u64> {
        self.queue.peek().map(|k| unpack_key(k).0)
    }

    /// True when some queued entry may be a cancelled timer.
    #[inline]
    pub fn may_hold_dead(&self) -> bool {
        self.cancelled > 0
    }

    /// True unless `entry` is a timer entry its timer no longer has queued.
    #[inline]
    fn entry_is_live(&self, entry: u128) -> bool {
        timer_slot(entry).is_none_or(|slot| self.timers[slot as usize].queue_key == entry)
    }

    /// True unless `due` is a dead timer entry.
    pub fn is_live(&self, due: &Due<P>) -> bool {
        match due {
            Due::Timer(entry) => self.entry_is_live(*entry),
            Due::Payload(_) => true,
        }
    }

    /// The earliest due time of a live entry; dead entries in front are discarded.
    pub fn next_due(&mut self) -> Option<u64> {
        if self.cancelled == 0 {
            // Nothing queued is dead: the front is the answer.
            return self.peek_due();
        }
        // Cancelled timers (a timeout whose operation finished first) would otherwise stay in
        // a large queue until their deadline and make every operation pay for a deeper heap.
        // When they could be half of it, drop them all at once: O(n) now and then, amortised
        // O(1).
        if self.cancelled > COMPACT_AFTER && self.cancelled * 2 > self.queue.len() {
            let mut queue = std::mem::replace(&mut self.queue, Queue::with_capacity(0));
            queue.retain(|key| self.entry_is_live(key));
            self.queue = queue;
            self.cancelled = 0;
        }
        loop {
            let key = self.queue.peek()?;
            if self.entry_is_live(key) {
                return Some(unpack_key(key).0);
            }
            self.queue.pop();
            self.cancelled = self.cancelled.saturating_sub(1);
        }
    }

    #[inline]
    fn take(&mut self, key: u128) -> Due<P> {
        if timer_slot(key).is_some() {
            return Due::Timer(key);
        }
        let what = unpack_key(key).1;
        self.free_payloads.push(what);
        Due::Payload(
            self.payloads[what as usize]
                .take()
                .expect("invariant: a queued slot holds its payload"),
        )
    }

    /// Pops the first entry (in schedule order) if it is due at exactly `at_ns`.
    #[inline]
    pub fn pop_one_due_at(&mut self, at_ns: u64) -> Option<Due<P>> {
        let key = self.queue.peek()?;
        if unpack_key(key).0 != at_ns {
            return None;
        }
        self.queue.pop();
        Some(self.take(key))
    }

    /// Pops every entry due at exactly `at_ns` into `out`, in schedule order.
    pub fn pop_due_at(&mut self, at_ns: u64, out: &mut Vec<Due<P>>) {
        while let Some(key) = self.queue.peek() {
            if unpack_key(key).0 != at_ns {
                break;
            }
            self.queue.pop();
            let due = self.take(key);
            out.push(due);
        }
    }

    /// Registers a timer due at `at_ns` that wakes `waker`, and queues its entry.
    pub fn add_timer(&mut self, epoch: u32, at_ns: u64, waker: Waker) -> TimerKey {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                assert!(
                    self.timers.len() < TIMER_BIT as usize,
                    "more than 2^23 timers at once"
                );
                self.timers.push(TimerSlot {
                    generation: 0,
                    waker: None,
                    live: false,
                    queue_key: 0,
                });
                (self.timers.len() - 1) as u32
            }
        };
        let queue_key = self.next_key(at_ns, slot | TIMER_BIT);
        self.queue.push(queue_key);
        let t = &mut self.timers[slot as usize];
        debug_assert!(!t.live, "reusing a live timer slot {slot}");
        t.live = true;
        t.waker = Some(waker);
        t.queue_key = queue_key;
        TimerKey {
            slot,
            generation: t.generation,
            epoch,
        }
    }

    pub fn timer_is_live(&self, key: TimerKey) -> bool {
        self.timers
            .get(key.slot as usize)
            .is_some_and(|t| t.live && t.generation == key.generation)
    }

    pub fn update_waker(&mut self, key: TimerKey, waker: &Waker) {
        if self.timer_is_live(key) {
            let t = &mut self.timers[key.slot as usize];
            if !t.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
                t.waker = Some(waker.clone());
            }
        }
    }

    /// Fires a due timer entry: its timer's slot and its task's waker, if the entry was still
    /// live.
    pub fn fire(&mut self, entry: u128) -> Option<(u32, Waker)> {
        let slot = timer_slot(entry).expect("a timer entry");
        let t = &mut self.timers[slot as usize];
        if t.queue_key != entry {
            return None;
        }
        t.queue_key = 0;
        Some((slot, t.waker.take()?))
    }

    /// Frees a timer's slot (fired and observed, or cancelled).
    pub fn release(&mut self, key: TimerKey) {
        if !self.timer_is_live(key) {
            return;
        }
        let t = &mut self.timers[key.slot as usize];
        let queue_key = std::mem::take(&mut t.queue_key);
        t.live = false;
        t.waker = None;
        t.generation = t.generation.wrapping_add(1);
        self.free.push(key.slot);
        // Released before it fired: remove its queue entry, or leave it dead.
        if queue_key != 0 && !self.queue.remove(queue_key) {
            self.cancelled += 1;
        }
    }
}

/// Waits until a deadline in virtual time. See [`sleep`].
#[must_use = "futures do nothing unless awaited"]
pub struct Sleep {
    deadline_ns: u64,
    /// When it completes: the deadline, or later if a timer fault made its timer late
    /// (decided when its timer is registered).
    due_ns: u64,
    key: Option<TimerKey>,
}

/// Completes after `duration` of virtual time. Must be polled within a simulation.
pub fn sleep(duration: Duration) -> Sleep {
    let now = with(|w| w.now_ns());
    let deadline_ns = now.saturating_add(duration_ns(duration));
    Sleep {
        deadline_ns,
        due_ns: deadline_ns,
        key: None,
    }
}

/// Completes at `deadline` (at once if it has passed).
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline_ns: deadline.0,
        due_ns: deadline.0,
        key: None,
    }
}

impl Sleep {
    /// When this sleep completes.
    pub fn deadline(&self) -> Instant {
        Instant(self.deadline_ns)
    }
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut due = self.due_ns;
        let key = self.key;
        let (ready, key) = with(|w| {
            if w.now_ns() >= due {
                if let Some(k) = key {
                    w.clock_mut().release(k);
                }
                return (true, None);
            }
            match key {
                Some(k) if w.clock().timer_is_live(k) => {
                    w.clock_mut().update_waker(k, cx.waker());
                    (false, Some(k))
                }
                _ => {
                    // A timer fault is decided once, when the timer is first registered.
                    let late_ns = if key.is_none() && w.clocks().late_timers() {
                        let (clocks, source) = w.clocks_and_source();
                        clocks.draw_late_ns(source)
                    } else {
                        0
                    };
                    due = due.saturating_add(late_ns);
                    let epoch = w.epoch();
                    let k = w.clock_mut().add_timer(epoch, due, cx.waker().clone());
                    if late_ns > 0 {
                        record_late(w, k.slot, late_ns);
                    }
                    (false, Some(k))
                }
            }
        });
        self.due_ns = due;
        self.key = key;
        if ready {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Records that timer `slot` was set to fire late.
#[cold]
fn record_late(w: &mut world::World, slot: u32, late_ns: u64) {
    let node = w.current_node();
    w.record(
        node,
        crate::trace::EventKind::TimerLate {
            timer: slot,
            late_ns,
        },
        || format!("timer {slot} will fire {}ms late", late_ns / 1_000_000),
    );
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(k) = self.key {
            world::try_with(k.epoch, |w| w.clock_mut().release(k));
        }
    }
}

/// The error of a [`timeout`] whose deadline passed first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("deadline elapsed")]
pub struct Elapsed;

/// Runs `future` for at most `duration` of virtual time.
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    Timeout {
        future,
        sleep: sleep(duration),
    }
}

/// Runs `future` until the virtual instant `deadline` at most (tokio's `timeout_at`).
///
/// ```
/// use std::time::Duration;
/// use sim_core::sim::{Config, Sim};
/// use sim_core::time::{now, sleep, timeout_at};
///
/// let mut sim = Sim::new(Config::default());
/// sim.client("c", |_| async {
///     let deadline = now() + Duration::from_millis(10);
///     assert!(timeout_at(deadline, sleep(Duration::from_millis(3))).await.is_ok());
///     assert!(timeout_at(deadline, sleep(Duration::from_millis(30))).await.is_err());
///     assert_eq!(now(), deadline);
/// });
/// assert!(sim.run_seed(0).outcome.class.is_pass());
/// ```
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout {
        future,
        sleep: sleep_until(deadline),
    }
}

pin_project_lite::pin_project! {
    /// See [`timeout`].
    #[must_use = "futures do nothing unless awaited"]
    pub struct Timeout<F> {
        #[pin]
        future: F,
        // `Sleep` is `Unpin`: polled through `Pin::new`, no projection needed.
        sleep: Sleep,
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(v) = this.future.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        match Pin::new(this.sleep).poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Ticks every `period`, the first tick at once. Missed ticks are delivered in a burst.
pub fn interval(period: Duration) -> Interval {
    assert!(!period.is_zero(), "interval period must be non-zero");
    Interval {
        next: now(),
        period,
    }
}

/// See [`interval`].
#[derive(Debug)]
pub struct Interval {
    next: Instant,
    period: Duration,
}

impl Interval {
    /// Waits for the next tick and returns its scheduled instant.
    pub async fn tick(&mut self) -> Instant {
        let at = self.next;
        sleep_until(at).await;
        self.next = at + self.period;
        at
    }
}
