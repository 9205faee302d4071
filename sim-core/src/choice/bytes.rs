//! [`Bytes`]: a byte input read through its lanes.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use super::lanes::{label_id, Lane, LaneBuffers, LANES, MAX_EVENT_ORDINAL};
use super::{bytes_for_bound, Source};

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
}

/// What a draw needs to know of its label.
#[derive(Clone, Copy, Debug)]
struct LabelInfo {
    lane: Lane,
    id: u16,
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
        Bytes {
            len: data.len(),
            lanes,
            cursors: [0; LANES],
            events,
            event_counts: Vec::new(),
            labels: BTreeMap::new(),
            exhausted: false,
        }
    }

    fn label(&mut self, label: &'static str) -> LabelInfo {
        *self
            .labels
            .entry((label.as_ptr() as usize, label.len()))
            .or_insert_with(|| LabelInfo {
                lane: Lane::of(label),
                id: label_id(label),
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

    fn event(&mut self, id: u16, num: u64, den: u64) -> bool {
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
        let lane = self.label(label).lane;
        self.dense_draw(lane, bound)
    }

    fn fill(&mut self, label: &'static str, buf: &mut [u8]) {
        let lane = self.label(label).lane;
        for b in buf {
            *b = self.next_byte(lane);
        }
    }

    fn draw_chance(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        let info = self.label(label);
        if info.lane.chance_is_event(num, den) {
            self.event(info.id, num, den)
        } else {
            self.dense_draw(info.lane, den) >= den - num
        }
    }

    fn draw_event(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        let id = self.label(label).id;
        self.event(id, num, den)
    }

    fn is_exhausted(&self) -> bool {
        self.exhausted
    }
}

impl Drop for Bytes {
    fn drop(&mut self) {
        note_event_counts(&self.event_counts);
    }
}

thread_local! {
    /// The most event draws seen per label id in any run of this thread: where a mutator may
    /// place a new event so that it lands on a draw that happens. Written when a [`Bytes`] is
    /// dropped, read only by mutators: no run ever reads it, so it cannot change a run.
    static OBSERVED_EVENTS: RefCell<BTreeMap<u16, u32>> = const { RefCell::new(BTreeMap::new()) };
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
