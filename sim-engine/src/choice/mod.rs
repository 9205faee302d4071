//! Choice sources: the one input every decision of a run is drawn from.
//!
//! Everything the simulator decides — which ready task runs, a message's latency, whether a
//! fault fires, which workload operation comes next — is a *draw* from a [`Source`]. A draw
//! asks for a value in `0..bound` and is labelled with what it decides. Zero is always the
//! simplest choice: the default schedule, the minimum latency, no fault.
//!
//! Three sources:
//!
//! * [`Bytes`] reads a byte buffer (a fuzzer's input) through its [lanes]: one stream
//!   per kind of decision, and fault events as a sparse schedule. Once a lane is exhausted
//!   every further draw from it returns zero, and [`Source::is_exhausted`] says so.
//! * [`Seeded`] expands a `u64` seed with a small PRNG of our own (xoshiro256** seeded by
//!   SplitMix64), so a seed's stream never changes with a crate upgrade.
//! * [`Recorder`] wraps either and logs each draw (label, bound, value); [`Recorder::to_bytes`]
//!   re-encodes the log as the buffer that replays the same run under [`Bytes`]. That is how a
//!   failing seed becomes a fuzz corpus entry that `cargo fuzz tmin` can minimise.
//!
//! [`FlatBytes`] reads the encoding byte inputs had before lanes, for old repro files.
//!
//! # The byte encoding, and why
//!
//! A draw with `bound <= 1` is not a choice and consumes nothing. Otherwise it reads, from the
//! lane of its label ([`lanes::Lane::of`]), the fewest bytes that can hold `bound - 1` (one
//! byte for a bound up to 256, two up to 65 536, and so on), big-endian, and returns
//! `raw % bound`. Bytes past the end of a lane read as zero. Bulk draws ([`Source::fill`],
//! used for `arbitrary` values) copy bytes one for one. A fault decision
//! ([`Choices::chance`] of a fault label, or any chance of 1 in 16 or less) is an *event*: it
//! fires when the events lane has an entry for its label and ordinal.
//!
//! * **Zero is default behaviour.** An all-zero (or empty) buffer is the plainest run: round
//!   robin scheduling, minimum latency, no faults, the simplest workload. Minimisers that zero
//!   or delete bytes therefore move towards plain runs, never towards stranger ones.
//! * **Decisions compose.** Each draw owns its own bytes in its own lane — nothing is hashed
//!   or chained — so flipping one byte changes one decision, and changing a decision of one
//!   kind does not move the bytes of any other kind. Turning a fault on or off is adding or
//!   removing one event entry: the fault's parameters come from the faults lane, so the
//!   latency, schedule and workload bytes stay where they were. (A flat stream, where a fired
//!   fault reads its duration from the same bytes as everything else, re-mapped most of the
//!   rest of the run on every toggle.)
//! * **A short buffer reaches far.** Draws with a single option cost nothing and the default
//!   for every draw keeps the system running normally; a fault late in a long run is one
//!   five-byte event entry naming its ordinal.
//!
//! ```
//! use sim_core::choice::{Bytes, Choices, Recorder, Seeded, Source};
//!
//! // A seeded run, recorded...
//! let mut recorder = Recorder::new(Seeded::new(7));
//! let a = recorder.below("latency", 10);
//! let b = recorder.chance("drop", 1, 4);
//! let c = recorder.chance("net.fault.loss", 1, 4);
//! // ...re-encoded as bytes, replays the same choices.
//! let mut replay = Bytes::new(recorder.to_bytes());
//! assert_eq!(replay.below("latency", 10), a);
//! assert_eq!(replay.chance("drop", 1, 4), b);
//! assert_eq!(replay.chance("net.fault.loss", 1, 4), c);
//! // Past the end, every draw is the default.
//! assert_eq!(replay.below("latency", 10), 0);
//! assert!(replay.is_exhausted());
//! ```

mod bytes;
mod flat;
pub mod intensity;
pub mod lanes;

pub use bytes::{draw_clock, observed_event_counts, take_draw_trace, Bytes, DrawTrace};
pub use flat::FlatBytes;

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use arbitrary::{Arbitrary, Unstructured};
use serde::{Deserialize, Serialize};

use intensity::Intensity;

/// The denominator of every rate a part draws against (`chance(label, n, PER_MILLE)`): a
/// rate of `n` fires `n` times in a thousand. Every part's fault rates, the nemesis' and the
/// workload's odds are written over it, so it lives with the draws themselves.
pub const PER_MILLE: u64 = 1000;

/// Where every decision of a run comes from.
///
/// Implementations must be pure functions of their construction input: the same sequence of
/// calls returns the same values on every machine.
pub trait Source {
    /// A value in `0..bound`; `bound` 0 is treated as 1. Zero is the simplest choice.
    fn draw(&mut self, label: &'static str, bound: u64) -> u64;

    /// Fills `buf` with raw bytes (zeros once exhausted). Used for [`Choices::arbitrary`].
    fn fill(&mut self, label: &'static str, buf: &mut [u8]);

    /// A yes/no decision of `num` in `den` (never called with `num` 0). The default reads an
    /// event ([`Source::draw_event`]) when [`lanes::Lane::is_event`] says so, and otherwise a
    /// dense draw below `den`, firing on its top `num` values (so zero never fires).
    fn draw_chance(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        if lanes::Lane::is_event(label, num, den) {
            self.draw_event(label, num, den)
        } else {
            self.draw(label, den) >= den - num
        }
    }

    /// A fault event of `num` in `den`. The default is a dense draw, as for any chance; a
    /// source with an events lane ([`Bytes`]) answers from its schedule instead.
    fn draw_event(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        self.draw(label, den) >= den - num
    }

    /// True once a draw wanted input that was not there (always false for [`Seeded`]).
    fn is_exhausted(&self) -> bool;

    /// Told that a workload operation starts here (by [`crate::sim::op_start`]). It consumes
    /// nothing and changes no draw. A source that logs draws may note the position, so that a
    /// shrinker can treat one operation's draws as one block; the default does nothing.
    fn mark_op(&mut self) {}

    /// Told that virtual time moved on to `now_ns` (by the run loop, each time it advances
    /// the clock). It consumes nothing and changes no draw. A source that logs draws may note
    /// when each was made, so that a shrinker can match the draws of two runs by when they
    /// happened; the default does nothing.
    fn mark_time(&mut self, _now_ns: u64) {}

    /// Told which node the draws from here on are made for: `Some(id)` while a task of node
    /// `id` is polled, `None` for the run loop's own draws (scheduling, ties, firing timers
    /// and deliveries). It consumes nothing and changes no draw. A source that logs draws may
    /// note it, so that a shrinker can tell one client's decisions from another's; the
    /// default does nothing.
    fn mark_node(&mut self, _node: Option<u32>) {}
}

/// The typed draws every [`Source`] offers: integers, probabilities, picks, `Arbitrary` values.
pub trait Choices: Source {
    /// A value in `0..n`.
    fn below(&mut self, label: &'static str, n: u64) -> u64 {
        self.draw(label, n)
    }

    /// A value in `lo..=hi`, `lo` being the default.
    fn range_inclusive(&mut self, label: &'static str, lo: u64, hi: u64) -> u64 {
        debug_assert!(lo <= hi, "empty range {lo}..={hi} for {label}");
        lo + self.draw(label, (hi - lo).saturating_add(1))
    }

    /// True with probability `num / den` (integer ratios, never floats). The default — zero —
    /// is `false`, so exhausted input never fires a fault.
    fn chance(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        debug_assert!(
            den > 0 && num <= den,
            "bad probability {num}/{den} for {label}"
        );
        if num == 0 {
            return false;
        }
        self.draw_chance(label, num, den)
    }

    /// One element of a non-empty slice; the first is the default.
    fn pick<'a, T>(&mut self, label: &'static str, items: &'a [T]) -> &'a T {
        assert!(!items.is_empty(), "pick from an empty list for {label}");
        &items[self.draw(label, items.len() as u64) as usize]
    }

    /// Any [`Arbitrary`] value, built from `max_bytes` drawn bytes (or the type's own upper
    /// size bound, if smaller). All-zero bytes give the type's simplest value.
    fn arbitrary<T>(&mut self, label: &'static str, max_bytes: usize) -> arbitrary::Result<T>
    where
        T: for<'a> Arbitrary<'a>,
    {
        let (_, upper) = T::size_hint(0);
        let len = upper.map_or(max_bytes, |u| u.min(max_bytes));
        let mut buf = vec![0u8; len];
        self.fill(label, &mut buf);
        T::arbitrary_take_rest(Unstructured::new(&buf))
    }
}

impl<S: Source + ?Sized> Choices for S {}

/// How many big-endian bytes a draw below `bound` consumes under [`Bytes`].
pub fn bytes_for_bound(bound: u64) -> usize {
    if bound <= 1 {
        0
    } else {
        let max = bound - 1;
        (64 - max.leading_zeros() as usize).div_ceil(8)
    }
}

/// A PRNG expanded from a `u64` seed: xoshiro256** seeded through SplitMix64.
///
/// Our own generator, so a seed's stream is fixed forever and does not move with a
/// dependency's version. Implements [`rand_core::RngCore`] for code that wants one.
#[derive(Clone, Debug)]
pub struct Seeded {
    state: [u64; 4],
}

impl Seeded {
    /// The stream for `seed`.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let mut next = || {
            sm = sm.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = sm;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Seeded {
            state: [next(), next(), next(), next()],
        }
    }

    #[inline]
    fn next(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
}

impl Source for Seeded {
    #[inline]
    fn draw(&mut self, _label: &'static str, bound: u64) -> u64 {
        if bound <= 1 {
            return 0;
        }
        // Lemire's multiply-shift: uniform enough for scheduling, and branch-free.
        ((u128::from(self.next()) * u128::from(bound)) >> 64) as u64
    }

    #[inline]
    fn draw_chance(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        // Events and dense chances draw alike from a PRNG: skip classifying the label.
        self.draw(label, den) >= den - num
    }

    fn fill(&mut self, _label: &'static str, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let bytes = self.next().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }

    fn is_exhausted(&self) -> bool {
        false
    }
}

impl rand_core::RngCore for Seeded {
    fn next_u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.next()
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        Source::fill(self, "rng", dst)
    }
}

/// One logged draw.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draw {
    /// What the draw decided.
    pub label: String,
    /// The value and its bound.
    pub value: DrawValue,
}

/// The value of a logged draw.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DrawValue {
    /// An integer below `bound`.
    Int {
        /// The exclusive upper bound asked for.
        bound: u64,
        /// The value returned.
        value: u64,
    },
    /// Raw bytes from [`Source::fill`].
    Raw(Vec<u8>),
    /// A fault event ([`Source::draw_event`]): whether it fired.
    Event {
        /// True if the event fired.
        fired: bool,
    },
}

/// What a [`Recorder`] wrote: every draw, in order, where each workload operation's draws
/// start (the harness marks them; the shrinker deletes operations as whole blocks), and when
/// in virtual time the draws were made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DrawLog {
    /// Every draw with more than one option.
    pub draws: Vec<Draw>,
    /// Index into `draws` where each operation started.
    pub op_starts: Vec<usize>,
    /// The node that started each operation (as [`DrawLog::node_marks`] had it then), one
    /// per entry of `op_starts`: which client's operation it is, which the draws alone do
    /// not say.
    pub op_nodes: Vec<Option<u32>>,
    /// `(index, now_ns)`: the draws from `index` on were made at virtual time `now_ns` (until
    /// the next entry); one entry per advance of the clock, none before the first (time 0).
    pub time_marks: Vec<(usize, u64)>,
    /// `(index, node)`: the draws from `index` on were made for `node` (until the next entry;
    /// see [`Source::mark_node`]); none before the first (the run's set-up, no node).
    pub node_marks: Vec<(usize, Option<u32>)>,
}

impl DrawLog {
    /// The virtual time each draw was made at, in nanoseconds (from [`DrawLog::time_marks`]).
    pub fn draw_times_ns(&self) -> Vec<u64> {
        let mut times = Vec::with_capacity(self.draws.len());
        let mut now_ns = 0;
        let mut marks = self.time_marks.iter().peekable();
        for i in 0..self.draws.len() {
            while let Some(&(_, at)) = marks.next_if(|&&(from, _)| from <= i) {
                now_ns = at;
            }
            times.push(now_ns);
        }
        times
    }

    /// The node each draw was made for (from [`DrawLog::node_marks`]).
    pub fn draw_nodes(&self) -> Vec<Option<u32>> {
        let mut nodes = Vec::with_capacity(self.draws.len());
        let mut node = None;
        let mut marks = self.node_marks.iter().peekable();
        for i in 0..self.draws.len() {
            while let Some(&(_, n)) = marks.next_if(|&&(from, _)| from <= i) {
                node = n;
            }
            nodes.push(node);
        }
        nodes
    }
}

/// Wraps a source and logs every draw, so the run can be re-encoded as [`Bytes`].
///
/// The log is shared: a run takes its source by value, so [`Recorder::log`] hands out the
/// handle to read it by after the run.
#[derive(Clone, Debug)]
pub struct Recorder<S> {
    inner: S,
    log: Rc<RefCell<DrawLog>>,
}

impl<S: Source> Recorder<S> {
    /// Records the draws of `inner`.
    pub fn new(inner: S) -> Self {
        Recorder {
            inner,
            log: Rc::default(),
        }
    }

    /// A handle on the log, readable after the recorder has been moved into a run.
    pub fn log(&self) -> Rc<RefCell<DrawLog>> {
        self.log.clone()
    }

    /// Every draw so far, in order.
    pub fn draws(&self) -> Vec<Draw> {
        self.log.borrow().draws.clone()
    }

    /// The byte buffer that makes [`Bytes`] return the same values for the same draws.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(&self.log.borrow().draws)
    }
}

/// Encodes a draw log as the [`Bytes`] input that replays it: each draw's bytes in its
/// label's lane, each fired event as an entry naming its label and ordinal (trailing zeros of
/// each lane trimmed: they are what an exhausted lane reads anyway).
pub fn encode(draws: &[Draw]) -> Vec<u8> {
    let mut lanes = lanes::LaneBuffers::default();
    let mut event_counts: std::collections::BTreeMap<u16, u32> = Default::default();
    for draw in draws {
        let lane = lanes::Lane::of(&draw.label);
        match &draw.value {
            DrawValue::Int { bound, value } => {
                debug_assert!(
                    *value < (*bound).max(1),
                    "logged value out of bound: {draw:?}"
                );
                let width = bytes_for_bound(*bound);
                lanes
                    .dense_mut(lane)
                    .extend_from_slice(&value.to_be_bytes()[8 - width..]);
            }
            DrawValue::Raw(bytes) => lanes.dense_mut(lane).extend_from_slice(bytes),
            DrawValue::Event { fired } => {
                let id = lanes::label_id(&draw.label);
                let count = event_counts.entry(id).or_insert(0);
                let ordinal = *count;
                *count = count.saturating_add(1).min(lanes::MAX_EVENT_ORDINAL);
                if *fired {
                    lanes.push_event(id, ordinal);
                }
            }
        }
    }
    lanes.to_bytes()
}

impl<S: Source> Source for Recorder<S> {
    fn draw(&mut self, label: &'static str, bound: u64) -> u64 {
        let value = self.inner.draw(label, bound);
        if bound > 1 {
            self.log.borrow_mut().draws.push(Draw {
                label: label.to_string(),
                value: DrawValue::Int { bound, value },
            });
        }
        value
    }

    fn fill(&mut self, label: &'static str, buf: &mut [u8]) {
        self.inner.fill(label, buf);
        self.log.borrow_mut().draws.push(Draw {
            label: label.to_string(),
            value: DrawValue::Raw(buf.to_vec()),
        });
    }

    fn draw_chance(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        if lanes::Lane::is_event(label, num, den) {
            self.draw_event(label, num, den)
        } else {
            self.draw(label, den) >= den - num
        }
    }

    fn draw_event(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        let fired = self.inner.draw_event(label, num, den);
        self.log.borrow_mut().draws.push(Draw {
            label: label.to_string(),
            value: DrawValue::Event { fired },
        });
        fired
    }

    fn is_exhausted(&self) -> bool {
        self.inner.is_exhausted()
    }

    fn mark_op(&mut self) {
        let mut log = self.log.borrow_mut();
        let at = log.draws.len();
        log.op_starts.push(at);
        // The newest mark is always the node now running (marks are kept on change).
        let node = log.node_marks.last().and_then(|&(_, n)| n);
        log.op_nodes.push(node);
        drop(log);
        self.inner.mark_op()
    }

    fn mark_time(&mut self, now_ns: u64) {
        let mut log = self.log.borrow_mut();
        let at = log.draws.len();
        // Several advances between two draws: only the last one dates a draw.
        match log.time_marks.last_mut() {
            Some(last) if last.0 == at => last.1 = now_ns,
            _ => log.time_marks.push((at, now_ns)),
        }
        drop(log);
        self.inner.mark_time(now_ns)
    }

    fn mark_node(&mut self, node: Option<u32>) {
        let mut log = self.log.borrow_mut();
        let at = log.draws.len();
        // Only a change is noted, and of several between two draws only the last.
        let current = log.node_marks.last().and_then(|&(_, n)| n);
        if current != node {
            match log.node_marks.last_mut() {
                Some(last) if last.0 == at => last.1 = node,
                _ => log.node_marks.push((at, node)),
            }
        }
        drop(log);
        self.inner.mark_node(node)
    }
}

impl<S: Source + ?Sized> Source for Box<S> {
    fn draw(&mut self, label: &'static str, bound: u64) -> u64 {
        (**self).draw(label, bound)
    }
    fn fill(&mut self, label: &'static str, buf: &mut [u8]) {
        (**self).fill(label, buf)
    }
    fn draw_chance(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        (**self).draw_chance(label, num, den)
    }
    fn draw_event(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        (**self).draw_event(label, num, den)
    }
    fn is_exhausted(&self) -> bool {
        (**self).is_exhausted()
    }
    fn mark_op(&mut self) {
        (**self).mark_op()
    }
    fn mark_time(&mut self, now_ns: u64) {
        (**self).mark_time(now_ns)
    }
    fn mark_node(&mut self, node: Option<u32>) {
        (**self).mark_node(node)
    }
}

/// The byte encoding of inputs this build writes and reads as [`Input::Bytes`]: the
/// [lane encoding](lanes). Bumped whenever the meaning of a byte input changes.
///
/// Every byte string is a valid input in every encoding (a fuzzer may hand any bytes to a
/// run), so no byte input can say which encoding wrote it: a file that keeps an input keeps
/// the number beside it (a repro file's `version`, a corpus entry's `encoding`), and a reader
/// refuses or converts one written in another, instead of silently running another run.
pub const ENCODING: u32 = 2;

/// The [flat encoding](FlatBytes), the encoding of byte inputs before [`ENCODING`]:
/// still read, as [`Input::FlatBytes`], so that inputs recorded then replay their run.
pub const FLAT_ENCODING: u32 = 1;

/// The one input of a run: a seed for sweeps, or bytes from a fuzzer or a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// Expanded by [`Seeded`].
    Seed(u64),
    /// Read by [`Bytes`].
    Bytes(Vec<u8>),
    /// Read by [`FlatBytes`]: a byte input in the encoding before lanes (a version-1 repro
    /// file's input).
    FlatBytes(Vec<u8>),
}

impl Input {
    /// A fresh source positioned at the start of this input.
    pub fn source(&self) -> Box<dyn Source> {
        self.source_at(Intensity::Configured)
    }

    /// A fresh source positioned at the start of this input, a seed's drawn at `intensity`
    /// (bytes say every decision themselves: `intensity` does not change them).
    pub fn source_at(&self, intensity: Intensity) -> Box<dyn Source> {
        match (self, intensity) {
            (Input::Seed(seed), Intensity::Configured) => Box::new(Seeded::new(*seed)),
            (Input::Seed(seed), Intensity::Swarm) => Box::new(swarm_source(*seed)),
            (Input::Bytes(data), _) => Box::new(Bytes::new(data.clone())),
            (Input::FlatBytes(data), _) => Box::new(FlatBytes::new(data.clone())),
        }
    }
}

/// The source of a seed's run at [`Intensity::Swarm`]: its profile and stream
/// ([`Intensity::swarm_profile`]) read as a fresh future from the first draw on.
fn swarm_source(seed: u64) -> Bytes {
    let (profile, stream) = Intensity::swarm_profile(seed);
    Bytes::profiled(stream, profile)
}

/// The source a run draws from: the two built-in sources by value, anything else boxed.
///
/// A run draws on every send and on most scheduling steps; matching on the two common kinds
/// lets those draws be inlined where a `Box<dyn Source>` costs an indirect call each.
pub(crate) enum RunSource {
    Seeded(Seeded),
    Bytes(Box<Bytes>),
    Other(Box<dyn Source>),
}

impl RunSource {
    pub fn from_input(input: &Input, intensity: Intensity) -> Self {
        match input {
            Input::Seed(seed) => match intensity {
                Intensity::Configured => RunSource::Seeded(Seeded::new(*seed)),
                Intensity::Swarm => RunSource::Bytes(Box::new(swarm_source(*seed))),
            },
            Input::Bytes(data) => RunSource::Bytes(Box::new(Bytes::new(data.clone()))),
            Input::FlatBytes(data) => RunSource::Other(Box::new(FlatBytes::new(data.clone()))),
        }
    }
}

impl Source for RunSource {
    #[inline]
    fn draw(&mut self, label: &'static str, bound: u64) -> u64 {
        match self {
            RunSource::Seeded(s) => s.draw(label, bound),
            RunSource::Bytes(s) => s.draw(label, bound),
            RunSource::Other(s) => s.draw(label, bound),
        }
    }

    fn fill(&mut self, label: &'static str, buf: &mut [u8]) {
        match self {
            RunSource::Seeded(s) => s.fill(label, buf),
            RunSource::Bytes(s) => s.fill(label, buf),
            RunSource::Other(s) => s.fill(label, buf),
        }
    }

    #[inline]
    fn draw_chance(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        match self {
            RunSource::Seeded(s) => s.draw_chance(label, num, den),
            RunSource::Bytes(s) => s.draw_chance(label, num, den),
            RunSource::Other(s) => s.draw_chance(label, num, den),
        }
    }

    fn draw_event(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        match self {
            RunSource::Seeded(s) => s.draw_event(label, num, den),
            RunSource::Bytes(s) => s.draw_event(label, num, den),
            RunSource::Other(s) => s.draw_event(label, num, den),
        }
    }

    fn is_exhausted(&self) -> bool {
        match self {
            RunSource::Seeded(s) => s.is_exhausted(),
            RunSource::Bytes(s) => s.is_exhausted(),
            RunSource::Other(s) => s.is_exhausted(),
        }
    }

    fn mark_op(&mut self) {
        match self {
            RunSource::Seeded(s) => s.mark_op(),
            RunSource::Bytes(s) => s.mark_op(),
            RunSource::Other(s) => s.mark_op(),
        }
    }

    #[inline]
    fn mark_time(&mut self, now_ns: u64) {
        // Only a logging source notes the time: the built-in ones do nothing.
        if let RunSource::Other(s) = self {
            s.mark_time(now_ns)
        }
    }

    #[inline]
    fn mark_node(&mut self, node: Option<u32>) {
        // Only a logging source notes the node: the built-in ones do nothing.
        if let RunSource::Other(s) = self {
            s.mark_node(node)
        }
    }
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Seed(seed) => write!(f, "seed {seed}"),
            Input::Bytes(data) | Input::FlatBytes(data) => {
                write!(
                    f,
                    "{} bytes (fnv {:016x})",
                    data.len(),
                    crate::hash::stable_hash_bytes(data)
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_the_bound() {
        for (bound, width) in [
            (0, 0),
            (1, 0),
            (2, 1),
            (256, 1),
            (257, 2),
            (65_536, 2),
            (65_537, 3),
        ] {
            assert_eq!(bytes_for_bound(bound), width, "bound {bound}");
        }
        assert_eq!(bytes_for_bound(u64::MAX), 8);
    }

    /// One section of the workload lane (tag 2) holding `bytes`.
    fn workload(bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![lanes::Lane::Workload as u8, bytes.len() as u8];
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn exhausted_bytes_give_defaults() {
        let mut b = Bytes::new(workload(&[3]));
        assert!(!b.is_exhausted());
        assert_eq!(b.below("x", 10), 3);
        assert_eq!(b.below("x", 10), 0);
        assert!(!b.chance("fault", 1, 2));
        assert!(b.is_exhausted());
    }

    #[test]
    fn chance_zero_is_no_fault_and_max_is_fault() {
        assert!(!Bytes::new(workload(&[0])).chance("f", 1, 4));
        assert!(Bytes::new(workload(&[3])).chance("f", 1, 4));
        assert!(!Bytes::new(workload(&[255])).chance("f", 0, 4));
    }

    #[test]
    fn recorder_round_trips_through_bytes() {
        let mut rec = Recorder::new(Seeded::new(42));
        let mut want = Vec::new();
        for i in 0..500u64 {
            want.push(rec.below("n", 1 + i * 977));
        }
        let mut raw = [0u8; 13];
        rec.fill("raw", &mut raw);
        let mut replay = Bytes::new(rec.to_bytes());
        for (i, w) in want.iter().enumerate() {
            assert_eq!(replay.below("n", 1 + i as u64 * 977), *w, "draw {i}");
        }
        let mut again = [0u8; 13];
        replay.fill("raw", &mut again);
        assert_eq!(raw, again);
    }

    #[test]
    fn a_recorder_dates_each_draw_and_changes_none() {
        let mut plain = Seeded::new(9);
        let mut recorder = Recorder::new(Seeded::new(9));
        let log = recorder.log();
        let mut drawn = vec![recorder.below("x", 100), recorder.below("x", 100)];
        recorder.mark_time(5);
        drawn.push(recorder.below("x", 100));
        // Two advances with no draw between: the later one dates the next draw.
        recorder.mark_time(7);
        recorder.mark_time(8);
        drawn.push(recorder.below("x", 100));
        drawn.push(recorder.below("x", 100));
        let want: Vec<u64> = (0..5).map(|_| plain.below("x", 100)).collect();
        assert_eq!(drawn, want, "marking time draws nothing");
        assert_eq!(log.borrow().draw_times_ns(), [0, 0, 5, 8, 8]);
        assert_eq!(log.borrow().time_marks, [(2, 5), (3, 8)]);
    }

    #[test]
    fn recorder_names_the_node_of_each_draw() {
        let mut recorder = Recorder::new(Seeded::new(3));
        let mut plain = Seeded::new(3);
        let log = recorder.log();
        let mut drawn = vec![recorder.below("x", 100)];
        recorder.mark_node(Some(2));
        drawn.push(recorder.below("x", 100));
        // The same node again is no change; two changes with no draw between: the later.
        recorder.mark_node(Some(2));
        recorder.mark_node(None);
        recorder.mark_node(Some(1));
        drawn.push(recorder.below("x", 100));
        recorder.mark_node(None);
        drawn.push(recorder.below("x", 100));
        let want: Vec<u64> = (0..4).map(|_| plain.below("x", 100)).collect();
        assert_eq!(drawn, want, "marking the node draws nothing");
        assert_eq!(log.borrow().draw_nodes(), [None, Some(2), Some(1), None]);
        assert_eq!(
            log.borrow().node_marks,
            [(1, Some(2)), (2, Some(1)), (3, None)]
        );
    }

    #[test]
    fn seeded_streams_are_pinned() {
        // Pinned so that a change to the generator (which would silently re-map every seed in
        // every corpus and bug report) fails here first.
        let mut s = Seeded::new(0);
        let first: Vec<u64> = (0..3).map(|_| s.next()).collect();
        assert_eq!(
            first,
            [0x99ec5f36cb75f2b4, 0xbf6e1f784956452a, 0x1a5f849d4933e6e0]
        );
    }

    #[test]
    fn arbitrary_from_empty_input_is_simplest() {
        let mut b = Bytes::new(Vec::new());
        let v: (u8, bool) = b.arbitrary("op", 16).unwrap();
        assert_eq!(v, (0, false));
    }

    #[test]
    fn flat_bytes_read_the_old_encoding() {
        // Version-1 inputs: one stream, chances read a draw below their denominator.
        let mut b = FlatBytes::new(vec![3, 0, 200, 5]);
        assert_eq!(b.below("op", 10), 3);
        assert!(
            !b.chance("net.fault.loss", 1, 1000),
            "two bytes, value 200 of 1000"
        );
        assert_eq!(b.below("sched.pick", 7), 5);
        assert!(!b.is_exhausted());
    }

    /// The property lanes exist for: turning one fault event on or off leaves every other
    /// decision of every kind exactly where it was.
    #[test]
    fn toggling_an_event_moves_no_other_draw() {
        let run = |source: &mut dyn Source| -> Vec<u64> {
            let mut seen = Vec::new();
            for i in 0..200u64 {
                seen.push(source.below("sched.pick", 3));
                seen.push(source.below("net.jitter_ms", 20));
                let lost = source.chance("net.fault.loss", 1, 100);
                seen.push(u64::from(lost));
                if lost {
                    // A fired fault reads its own parameter...
                    seen.push(source.below("net.fault.partition_ms", 1000));
                }
                if i % 10 == 0 {
                    seen.push(source.below("op", 5));
                }
            }
            seen
        };
        let mut recorder = Recorder::new(Seeded::new(11));
        let original = run(&mut recorder);
        let draws = recorder.draws();
        let fired: Vec<usize> = draws
            .iter()
            .enumerate()
            .filter(|(_, d)| d.value == DrawValue::Event { fired: true })
            .map(|(i, _)| i)
            .collect();
        assert!(!fired.is_empty(), "seed 11 fires some loss");
        // ...and turning the first one off changes that decision and its parameter only.
        let mut edited = draws.clone();
        edited[fired[0]].value = DrawValue::Event { fired: false };
        edited.remove(fired[0] + 1);
        let replayed = run(&mut Bytes::new(encode(&edited)));
        let differing = original
            .iter()
            .zip(&replayed)
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(replayed.len(), original.len() - 1);
        // The toggled event differs; after the dropped parameter everything lines up again.
        let skip = original
            .iter()
            .zip(&replayed)
            .position(|(a, b)| a != b)
            .unwrap();
        assert_eq!(original[skip + 2..], replayed[skip + 1..]);
        assert!(differing >= 1);
    }

    /// A fresh future keeps every draw before its cut, draws the rest from its stream (fault
    /// events the input lists still fire), and a recording of the run replays it without the
    /// future.
    #[test]
    fn a_future_keeps_the_past_and_records_as_plain_lanes() {
        let draw = |source: &mut dyn Source, i: u64| -> u64 {
            match i % 4 {
                0 => source.below("sched.pick", 3),
                1 => source.below("net.jitter_ms", 20),
                2 => u64::from(source.chance("net.fault.loss", 1, 10)),
                _ => source.below("op", 5),
            }
        };
        let run =
            |source: &mut dyn Source| -> Vec<u64> { (0..300).map(|i| draw(source, i)).collect() };
        let mut recorder = Recorder::new(Seeded::new(5));
        let original = run(&mut recorder);
        let mut with_future = lanes::LaneBuffers::parse(&recorder.to_bytes());
        let future = lanes::Future { cut: 120, seed: 9 };
        with_future.set_futures(&[future]);
        let mut recorder = Recorder::new(Bytes::new(with_future.to_bytes()));
        let forked = run(&mut recorder);
        assert_eq!(forked[..120], original[..120], "the past is kept");
        assert_ne!(forked[120..], original[120..], "the future is new");
        let mut stream = future.stream();
        let tail: Vec<u64> = (120..300).map(|i| draw(&mut stream, i)).collect();
        for (i, &from_stream) in (120..300).zip(&tail) {
            if i % 4 == 2 && original[i] == 1 {
                // A loss the recording lists (an events-lane entry) fires inside the future too.
                assert_eq!(forked[i], 1, "draw {i}: the listed event fires");
            } else {
                assert_eq!(forked[i], from_stream, "draw {i}: the stream decides");
            }
        }
        let recorded = recorder.to_bytes();
        assert!(lanes::LaneBuffers::parse(&recorded).futures().is_empty());
        assert_eq!(run(&mut Bytes::new(recorded)), forked);
        // A future at cut 0 is a whole seeded run.
        let whole = lanes::Future { cut: 0, seed: 9 };
        let mut only = lanes::LaneBuffers::default();
        only.set_futures(&[whole]);
        assert_eq!(
            run(&mut Bytes::new(only.to_bytes())),
            run(&mut whole.stream())
        );
    }

    /// A future's seed names how much likelier its fault events are, and an entry of the
    /// events lane fires inside a future without moving the future's other draws.
    #[test]
    fn a_future_scales_its_fault_odds_and_keeps_listed_events() {
        let losses = |bytes: Vec<u8>| -> Vec<bool> {
            let mut source = Bytes::new(bytes);
            (0..20_000)
                .map(|_| source.chance("net.fault.loss", 1, 100))
                .collect()
        };
        let with_future = |seed: u32, events: &[(u16, u32)]| {
            let mut lanes = lanes::LaneBuffers::default();
            lanes.set_futures(&[lanes::Future { cut: 0, seed }]);
            for &(id, ordinal) in events {
                lanes.push_event(id, ordinal);
            }
            lanes.to_bytes()
        };
        let fired = |draws: &[bool]| draws.iter().filter(|&&f| f).count();
        let plain = fired(&losses(with_future(7, &[])));
        let eight_times = fired(&losses(with_future(7 | 3 << 30, &[])));
        assert_eq!(
            lanes::Future {
                cut: 0,
                seed: 7 | 3 << 30
            }
            .fault_intensity(),
            8
        );
        assert!((150..250).contains(&plain), "1 in 100 of 20,000: {plain}");
        assert!(
            (1_400..1_800).contains(&eight_times),
            "8 in 100 of 20,000: {eight_times}"
        );
        let before = losses(with_future(7, &[]));
        let quiet = before.iter().position(|&f| !f).unwrap() as u32;
        let after = losses(with_future(
            7,
            &[(lanes::label_id("net.fault.loss"), quiet)],
        ));
        assert!(after[quiet as usize], "the listed event fires");
        let differing = before.iter().zip(&after).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 1, "and nothing else moves");
    }

    /// A future focused on one fault group makes that group's events 8 times likelier than
    /// its intensity says, and leaves every other group's at their odds.
    #[test]
    fn a_focused_future_scales_only_its_group() {
        let fired = |seed: u32, label: &'static str| {
            let mut lanes = lanes::LaneBuffers::default();
            lanes.set_futures(&[lanes::Future { cut: 0, seed }]);
            let mut source = Bytes::new(lanes.to_bytes());
            (0..20_000).filter(|_| source.chance(label, 1, 200)).count()
        };
        let lifecycle_x1 = 7 | 5 << 27;
        let focus = lanes::Future {
            cut: 0,
            seed: lifecycle_x1,
        };
        assert_eq!(focus.fault_focus(), Some(lanes::FaultGroup::Lifecycle));
        assert_eq!(focus.fault_scale(Some(lanes::FaultGroup::Lifecycle)), 8);
        assert_eq!(focus.fault_scale(Some(lanes::FaultGroup::Network)), 1);
        assert_eq!(focus.fault_scale(None), 1);
        let crashes = fired(lifecycle_x1, "nemesis.crash");
        let losses = fired(lifecycle_x1, "net.fault.loss");
        assert!(
            (700..900).contains(&crashes),
            "8 in 200 of 20,000: {crashes}"
        );
        assert!((70..130).contains(&losses), "1 in 200 of 20,000: {losses}");
        // Without a focus (bits 27-29 below 4) every group scales alike.
        let unfocused = 7 | 3 << 27 | 1 << 30;
        assert_eq!(
            lanes::Future {
                cut: 0,
                seed: unfocused
            }
            .fault_focus(),
            None
        );
        let losses_x2 = fired(unfocused, "net.fault.loss");
        assert!(
            (170..230).contains(&losses_x2),
            "2 in 200 of 20,000: {losses_x2}"
        );
        assert_eq!(lanes::FaultGroup::of("buggify.fire"), None);
        assert_eq!(
            lanes::FaultGroup::of("disk.lost_write"),
            Some(lanes::FaultGroup::Disk)
        );
    }

    /// A future with the longest workload draws every operation count at its largest and
    /// every other draw as the same future without it does.
    #[test]
    fn a_longest_workload_future_draws_only_its_operation_counts_at_their_largest() {
        let draws = |seed: u32| -> Vec<u64> {
            let mut lanes = lanes::LaneBuffers::default();
            lanes.set_futures(&[lanes::Future { cut: 0, seed }]);
            let mut source = Bytes::new(lanes.to_bytes());
            (0..300)
                .map(|i| match i % 3 {
                    0 => source.below("raft.client_ops", 6),
                    1 => source.below("raft.key", 6),
                    _ => source.below("workload.ops", 9),
                })
                .collect()
        };
        let plain = draws(11);
        let longest = draws(11 | lanes::LONGEST_WORKLOAD_BIT);
        assert!(lanes::Future {
            cut: 0,
            seed: 11 | lanes::LONGEST_WORKLOAD_BIT
        }
        .longest_workload());
        assert!(!lanes::Future { cut: 0, seed: 11 }.longest_workload());
        for (i, (&p, &l)) in plain.iter().zip(&longest).enumerate() {
            match i % 3 {
                0 => assert_eq!(l, 5),
                1 => assert_eq!(l, p, "a key is drawn as without the profile"),
                _ => assert_eq!(l, 8),
            }
        }
        assert!(plain.iter().step_by(3).any(|&ops| ops < 5), "{plain:?}");
    }
}
