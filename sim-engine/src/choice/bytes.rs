//! [`Bytes`]: a byte input read through its lanes.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use super::lanes::{label_id, FaultGroup, Future, Lane, LaneBuffers, LANES, MAX_EVENT_ORDINAL};
use super::{bytes_for_bound, Seeded, Source};

/// A byte input (a fuzzer's, or a file's) read as one stream per [`Lane`], with fault events
/// as a sparse schedule. See the [lanes module](super::lanes) for the layout and the
/// [module docs](super) for why zero is always the default.
///
/// ```
/// use sim_core::choice::lanes::{label_id, Lane, LaneBuffers};
/// use sim_core::choice::{Bytes, Choices};
///
/// let mut lanes = LaneBuffers::default();
/// lanes.dense_mut(Lane::Workload).push(3);
/// lanes.push_event(label_id("net.fault.loss"), 1); // the second loss draw fires
/// let mut input = Bytes::new(lanes.to_bytes());
/// // Draws of other lanes do not move the workload's bytes.
/// assert_eq!(input.below("sched.pick", 4), 0);
/// assert_eq!(input.below("op", 10), 3);
/// assert!(!input.chance("net.fault.loss", 1, 10));
/// assert!(input.chance("net.fault.loss", 1, 10));
/// assert!(!input.chance("net.fault.loss", 1, 10));
/// ```
#[derive(Clone)]
pub struct Bytes {
    len: usize,
    lanes: LaneBuffers,
    cursors: [usize; LANES],
    /// Firing events, sorted and deduplicated.
    events: Vec<(u16, u32)>,
    /// Event draws so far per label id (a handful of labels: a sorted vector is fastest).
    event_counts: Vec<(u16, u32)>,
    /// Each label's lane and event id, memoised by the label's address: classifying a label
    /// compares its text against every lane's prefixes, and a fuzz build traces each of those
    /// byte comparisons. Only a cache: the value is a function of the label's text, and equal
    /// addresses of `&'static str`s of equal length are the same text, so no run's draws can
    /// depend on where a label lives.
    labels: BTreeMap<(usize, usize), LabelInfo>,
    exhausted: bool,
    /// The input's fresh futures, sorted by cut (see [`Lane::Futures`]).
    futures: Vec<Future>,
    /// How many of `futures` have begun.
    futures_begun: usize,
    /// The stream of the future in force, once the first cut is passed.
    stream: Option<Seeded>,
    /// The future in force, once the first cut is passed (its fault intensity and focus).
    in_force: Option<Future>,
    /// Draws so far and every event draw, for the mutator.
    trace: DrawTrace,
}

/// What a finished [`Bytes`] run drew, for a mutator ([`take_draw_trace`]): where its input
/// can be cut, and which fault decisions came when. No run reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DrawTrace {
    /// Draws the run made (those a recorder logs): the clock [`Lane::Futures`] cuts and
    /// [`draw_clock`] count in.
    pub draws: u32,
    /// Every event draw, in order (inside a future too): its label id and the draw clock
    /// when it was drawn.
    pub event_clocks: Vec<(u16, u32)>,
}

/// What a draw needs to know of its label.
#[derive(Clone, Copy, Debug)]
struct LabelInfo {
    lane: Lane,
    id: u16,
    group: Option<FaultGroup>,
}

impl Bytes {
    /// Reads draws from `data` (any bytes are a valid input).
    pub fn new(data: impl Into<Vec<u8>>) -> Self {
        let data = data.into();
        let lanes = LaneBuffers::parse(&data);
        let mut events = lanes.events();
        events.retain(|&(id, _)| id != 0);
        events.sort_unstable();
        events.dedup();
        let futures = lanes.futures();
        // A new run's clock starts at zero (the signal reads it on this thread).
        DRAW_CLOCK.with(|clock| clock.set(0));
        Bytes {
            len: data.len(),
            lanes,
            cursors: [0; LANES],
            events,
            event_counts: Vec::new(),
            labels: BTreeMap::new(),
            exhausted: false,
            futures,
            futures_begun: 0,
            stream: None,
            in_force: None,
            trace: DrawTrace::default(),
        }
    }

    /// A run drawn wholly from `stream`, as from a future with a cut of zero: at `profile`'s
    /// [fault scale](Future::fault_scale) and [workload](Future::longest_workload) (its cut
    /// and the seed bits that name no profile are not read). What `sim_core::mutate::fresh_run`
    /// runs, with a stream a `u64` seed names ([`crate::faults::Intensity::Swarm`]).
    pub(crate) fn profiled(stream: Seeded, profile: Future) -> Self {
        let mut bytes = Bytes::new(Vec::new());
        bytes.stream = Some(stream);
        bytes.in_force = Some(profile);
        bytes
    }

    /// Counts one draw and returns the stream of the future in force for it, if any: the
    /// future with the largest cut not past this draw's index.
    #[inline]
    fn future(&mut self) -> Option<&mut Seeded> {
        let index = self.trace.draws;
        self.trace.draws = index.saturating_add(1);
        DRAW_CLOCK.with(|clock| clock.set(self.trace.draws));
        while let Some(&next) = self.futures.get(self.futures_begun) {
            if next.cut > index {
                break;
            }
            self.stream = Some(next.stream());
            self.in_force = Some(next);
            self.futures_begun += 1;
        }
        self.stream.as_mut()
    }

    fn label(&mut self, label: &'static str) -> LabelInfo {
        *self
            .labels
            .entry((label.as_ptr() as usize, label.len()))
            .or_insert_with(|| LabelInfo {
                lane: Lane::of(label),
                id: label_id(label),
                group: FaultGroup::of(label),
            })
    }

    fn dense_draw(&mut self, lane: Lane, bound: u64) -> u64 {
        let width = bytes_for_bound(bound);
        let mut raw = 0u64;
        for _ in 0..width {
            raw = (raw << 8) | u64::from(self.next_byte(lane));
        }
        raw % bound
    }

    /// An event draw: it fires when the events lane has its entry, or when the future in
    /// force, if any, draws it (at the future's [scale](Future::fault_scale) for the label's
    /// group). The future's draw is made either way, so adding or removing an entry inside a
    /// future changes that one decision and leaves the future's later draws where they were.
    fn event_draw(&mut self, info: LabelInfo, label: &'static str, num: u64, den: u64) -> bool {
        let in_future = self.future().is_some();
        let listed = self.event(info.id, num, den);
        if !in_future {
            return listed;
        }
        let future = self.in_force.expect("a future is in force");
        let num = num.saturating_mul(future.fault_scale(info.group)).min(den);
        let stream = self.stream.as_mut().expect("a future is in force");
        let drawn = stream.draw(label, den) >= den - num;
        listed || drawn
    }

    fn event(&mut self, id: u16, num: u64, den: u64) -> bool {
        self.trace.event_clocks.push((id, self.trace.draws));
        let ordinal = self.next_ordinal(id);
        // A certainty fires without an entry, as a dense draw would on any value.
        num >= den || self.events.binary_search(&(id, ordinal)).is_ok()
    }

    /// Dense bytes consumed so far, over every lane.
    pub fn consumed(&self) -> usize {
        Lane::ALL
            .iter()
            .map(|&lane| self.cursors[lane.index()].min(self.lanes.dense(lane).len()))
            .sum()
    }

    fn next_byte(&mut self, lane: Lane) -> u8 {
        let cursor = &mut self.cursors[lane.index()];
        // Past its end a lane reads zeros without moving: `consumed` and the shrinker's cuts
        // count only bytes that were there.
        debug_assert!(
            *cursor <= self.lanes.dense(lane).len(),
            "lane {lane:?} read past its {} bytes",
            self.lanes.dense(lane).len()
        );
        match self.lanes.dense(lane).get(*cursor) {
            Some(&b) => {
                *cursor += 1;
                b
            }
            None => {
                self.exhausted = true;
                0
            }
        }
    }

    fn next_ordinal(&mut self, id: u16) -> u32 {
        match self.event_counts.binary_search_by_key(&id, |&(k, _)| k) {
            Ok(i) => {
                let slot = &mut self.event_counts[i].1;
                let ordinal = *slot;
                *slot = slot.saturating_add(1).min(MAX_EVENT_ORDINAL);
                ordinal
            }
            Err(i) => {
                self.event_counts.insert(i, (id, 1));
                0
            }
        }
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Bytes({} bytes, {} consumed, {} events)",
            self.len,
            self.consumed(),
            self.events.len()
        )
    }
}

impl Source for Bytes {
    fn draw(&mut self, label: &'static str, bound: u64) -> u64 {
        if bound <= 1 {
            return 0;
        }
        if self.future().is_some() {
            let longest = self.in_force.is_some_and(Future::longest_workload)
                && super::lanes::is_op_count_label(label)
                && self.label(label).lane == Lane::Workload;
            // Drawn either way: a future with and without the longest workload reads one
            // stream (`Future::stream`), so they differ in the operation counts and what
            // follows from them, not in the draws' values.
            let value = self
                .stream
                .as_mut()
                .expect("a future is in force")
                .draw(label, bound);
            return if longest { bound - 1 } else { value };
        }
        let lane = self.label(label).lane;
        self.dense_draw(lane, bound)
    }

    fn fill(&mut self, label: &'static str, buf: &mut [u8]) {
        if let Some(stream) = self.future() {
            return stream.fill(label, buf);
        }
        let lane = self.label(label).lane;
        for b in buf {
            *b = self.next_byte(lane);
        }
    }

    fn draw_chance(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        let info = self.label(label);
        if info.lane.chance_is_event(num, den) {
            self.event_draw(info, label, num, den)
        } else {
            if den <= 1 {
                // Not a choice (a certainty): nothing is read, nothing is logged.
                return true;
            }
            if let Some(stream) = self.future() {
                return stream.draw(label, den) >= den - num;
            }
            self.dense_draw(info.lane, den) >= den - num
        }
    }

    fn draw_event(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        let info = self.label(label);
        self.event_draw(info, label, num, den)
    }

    fn is_exhausted(&self) -> bool {
        self.exhausted
    }
}

impl Drop for Bytes {
    fn drop(&mut self) {
        note_event_counts(&self.event_counts);
        LAST_TRACE.with(|last| *last.borrow_mut() = std::mem::take(&mut self.trace));
    }
}

thread_local! {
    /// What this thread's last finished [`Bytes`] run drew (see [`take_draw_trace`]).
    static LAST_TRACE: RefCell<DrawTrace> = RefCell::new(DrawTrace::default());
}

/// What the last finished [`Bytes`] run of this thread drew: how many draws, and each event
/// draw read from the events lane with its clock. The fuzz harness hands it to the mutator
/// (`sim_core::mutate::observe_run`), which maps "just after this state was reached" to the
/// fault decisions drawn then. Empties the record; no run reads it.
pub fn take_draw_trace() -> DrawTrace {
    LAST_TRACE.with(|last| std::mem::take(&mut *last.borrow_mut()))
}

thread_local! {
    /// The most event draws seen per label id in any run of this thread: where a mutator may
    /// place a new event so that it lands on a draw that happens. Written when a [`Bytes`] is
    /// dropped, read only by mutators: no run ever reads it, so it cannot change a run.
    static OBSERVED_EVENTS: RefCell<BTreeMap<u16, u32>> = const { RefCell::new(BTreeMap::new()) };
}

thread_local! {
    /// Draws the newest [`Bytes`] of this thread has made: a run's clock in the units of
    /// [`Lane::Futures`] cuts. Read only by the fuzz signal, to tell a mutator where a state
    /// was reached; no run reads it.
    static DRAW_CLOCK: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// How many draws the newest byte input of this thread has made (see [`Lane::Futures`]).
#[inline]
pub fn draw_clock() -> u32 {
    DRAW_CLOCK.with(|clock| clock.get())
}

fn note_event_counts(counts: &[(u16, u32)]) {
    if counts.is_empty() {
        return;
    }
    OBSERVED_EVENTS.with(|seen| {
        let mut seen = seen.borrow_mut();
        for &(id, n) in counts {
            let slot = seen.entry(id).or_insert(0);
            *slot = (*slot).max(n);
        }
    });
}

/// Per label id, the most event draws any [`Bytes`] run of this thread has made so far
/// (sorted by id). A mutator uses it to put new events where draws happen; runs never read it.
pub fn observed_event_counts() -> Vec<(u16, u32)> {
    OBSERVED_EVENTS.with(|seen| seen.borrow().iter().map(|(&k, &v)| (k, v)).collect())
}
