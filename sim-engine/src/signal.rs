//! Fuzz signal: what a run tells a coverage-guided fuzzer beyond the branches it executed.
//!
//! Branch coverage sees which lines of the system ran, not in which order events happened or
//! which protocol state was reached — a state held in data (a vote count, a term) takes the
//! same branches in every state. Three extra signals, each switched on separately:
//!
//! * **`edges`** — abstract event-sequence features: for every history event, the pair
//!   *(previous event kind on this node, this event kind)*, per node (16 node slots). Counts
//!   are kept, so "three sends in a row" differs from "one send".
//! * **`labels`** — user labels: [`cover!`](crate::cover) marks a protocol state worth reaching
//!   (`cover!("vote arrived after decision")`); each label is one feature. Nodes that name
//!   their abstract state ([`crate::node::abstract_state`]) add a feature per transition
//!   between two states and per state a node crashed in.
//! * **`hash`** — the history hash as a feature: each run bumps one of 2048 buckets picked by
//!   its history hash, so inputs that produce new histories look new to the fuzzer.
//! * **`reject`** — the history hash as a filter: an input whose history was already seen is
//!   not added to the fuzzer's corpus (libFuzzer's `Corpus::Reject`), keeping the corpus to
//!   one input per distinct run.
//!
//! On Linux the features are bytes in the `__libfuzzer_extra_counters` link section, which
//! libFuzzer reads as extra coverage counters (and clears before every input) when it is
//! linked in; in any other binary the section is inert data. AFL++ neither reads that
//! section nor takes a corpus verdict, so none of these signals reaches it.
//!
//! **No feedback.** Collection only writes these counters: it draws nothing, records nothing,
//! and nothing in a run reads them, so a run's behaviour and history hash are the same with
//! every signal on or off (a test checks it). When every signal is off the cost is one relaxed
//! atomic load and a branch per event.
//!
//! Switch them with the `SIM_SIGNAL` environment variable: a comma list of `edges`, `labels`,
//! `hash`, `reject`, or `all`, or `none` (see [`Signals::parse`]); unset gives
//! [`Signals::default`]; set but empty is an error (write `none` for no signal).
//!
//! ```
//! use sim_core::signal::Signals;
//!
//! let s = Signals::parse("edges,reject").unwrap();
//! assert!(s.edges && s.reject && !s.labels && !s.hash);
//! assert!(Signals::parse("edgse").is_err());
//! assert_eq!(Signals::parse("none").unwrap(), Signals::NONE);
//! ```

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::Relaxed};

/// Which extra signals a fuzz run feeds the fuzzer. See the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signals {
    /// Event-kind edges per node.
    pub edges: bool,
    /// `cover!` labels.
    pub labels: bool,
    /// History-hash buckets as features.
    pub hash: bool,
    /// Reject inputs whose history was already seen.
    pub reject: bool,
}

impl Signals {
    /// Every signal off: the fuzzer sees branch coverage only.
    pub const NONE: Signals = Signals {
        edges: false,
        labels: false,
        hash: false,
        reject: false,
    };
    /// Every signal on.
    pub const ALL: Signals = Signals {
        edges: true,
        labels: true,
        hash: true,
        reject: true,
    };

    /// Parses `SIM_SIGNAL`'s syntax: `none`, `all`, or a comma list of `edges`, `labels`,
    /// `hash`, `reject`.
    pub fn parse(text: &str) -> Result<Signals, SignalError> {
        let text = text.trim();
        match text {
            // Set but empty is a mistake (an unset variable in a script), not a choice: the
            // way to turn every signal off is `none`.
            "" => return Err(SignalError::Empty),
            "none" => return Ok(Signals::NONE),
            "all" => return Ok(Signals::ALL),
            _ => {}
        }
        let mut s = Signals::NONE;
        for word in text.split(',').map(str::trim) {
            match word {
                "edges" => s.edges = true,
                "labels" => s.labels = true,
                "hash" => s.hash = true,
                "reject" => s.reject = true,
                other => return Err(SignalError::Unknown(other.to_string())),
            }
        }
        Ok(s)
    }

    /// `SIM_SIGNAL` from the environment, or [`Signals::default`] when unset.
    pub fn from_env() -> Result<Signals, SignalError> {
        match std::env::var("SIM_SIGNAL") {
            Ok(v) => Signals::parse(&v),
            Err(std::env::VarError::NotPresent) => Ok(Signals::default()),
            Err(std::env::VarError::NotUnicode(v)) => {
                Err(SignalError::Unknown(v.to_string_lossy().into_owned()))
            }
        }
    }

    /// Makes these signals the ones collected in this process (the switches are process-wide;
    /// per-run state is per thread).
    pub fn install(self) {
        EDGES_ON.store(self.edges, Relaxed);
        LABELS_ON.store(self.labels, Relaxed);
    }
}

impl Default for Signals {
    /// `edges`, `labels` and `reject` (measurements in `fuzz/README.md`): `reject` found the
    /// two-pc bug in fewer runs in every measurement, `edges` shortened the worst cases on
    /// the lock benchmark (its median gain did not reproduce across builds), and `labels`
    /// cost nothing where no `cover!` is written. `hash` made every measured bug slower to
    /// find and is off.
    fn default() -> Self {
        Signals {
            edges: true,
            labels: true,
            hash: false,
            reject: true,
        }
    }
}

impl std::fmt::Display for Signals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = [
            (self.edges, "edges"),
            (self.labels, "labels"),
            (self.hash, "hash"),
            (self.reject, "reject"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        if names.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&names.join(","))
        }
    }
}

/// A bad `SIM_SIGNAL` value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignalError {
    /// Not one of the known signal names.
    #[error("SIM_SIGNAL: unknown signal {0:?}; use a comma list of edges, labels, hash, reject, or all, or none")]
    Unknown(String),
    /// Set, but to nothing.
    #[error("SIM_SIGNAL is set but empty; unset it for the default signals (edges,labels,reject), or write SIM_SIGNAL=none to turn every signal off")]
    Empty,
}

/// Node slots for edge features (node ids are folded into these).
const NODE_SLOTS: usize = 16;
/// Event kinds are numbered 1..=15 (0 = no previous event on the node).
const KIND_SLOTS: usize = 16;
const EDGE_BASE: usize = 0;
const EDGE_LEN: usize = NODE_SLOTS * KIND_SLOTS * KIND_SLOTS;
const LABEL_BASE: usize = EDGE_BASE + EDGE_LEN;
/// Label counters. Abstract states make many features: 20,000 random raft-kv runs reach
/// about 5,000 distinct ones, still growing. A map of 2,048 had most of them share a
/// counter with a commoner feature, so the rare state a hunt should follow looked common,
/// or was not seen at all. At 65,536 few collide. libFuzzer's work per run grows with the
/// counters a run touches, not with the map's size (its feature callback was 8% of a raft-kv
/// hunt's time in perf, with code coverage off).
const LABEL_LEN: usize = 1 << 16;
const HASH_BASE: usize = LABEL_BASE + LABEL_LEN;
const HASH_LEN: usize = 2048;
/// Bytes of extra counters.
pub const COUNTERS_LEN: usize = HASH_BASE + HASH_LEN;

static EDGES_ON: AtomicBool = AtomicBool::new(false);
static LABELS_ON: AtomicBool = AtomicBool::new(false);

/// The counters libFuzzer reads (Linux: by its link section). Interior mutability puts the
/// static in a writable section; `#[used]` keeps the linker from dropping it.
#[cfg_attr(target_os = "linux", link_section = "__libfuzzer_extra_counters")]
#[used]
static COUNTERS: [AtomicU8; COUNTERS_LEN] = [const { AtomicU8::new(0) }; COUNTERS_LEN];

thread_local! {
    /// Per node slot: the kind of its previous event in this run (0 = none yet).
    static PREV: Cell<[u8; NODE_SLOTS]> = const { Cell::new([0; NODE_SLOTS]) };
    /// The label features this run reached, each with the input's draw clock
    /// ([`crate::choice::draw_clock`]) when it was first reached: where a mutator can cut
    /// the input to explore new futures from that state (`sim_core::mutate`).
    static FIRST_HITS: RefCell<Vec<(u32, u32)>> = const { RefCell::new(Vec::new()) };
}

#[inline]
fn bump(index: usize) {
    let c = &COUNTERS[index];
    c.store(c.load(Relaxed).saturating_add(1), Relaxed);
}

/// [`bump`] for a label feature: also notes the draw clock the first time this run reaches
/// it (a counter at zero; the engine clears the counters before every input).
#[inline]
fn bump_label(index: usize) {
    let c = &COUNTERS[index];
    let old = c.load(Relaxed);
    c.store(old.saturating_add(1), Relaxed);
    if old == 0 {
        let clock = crate::choice::draw_clock();
        FIRST_HITS.with(|hits| hits.borrow_mut().push((index as u32, clock)));
    }
}

/// The label features this thread's run has reached since [`begin_run`], each with the draw
/// clock when it was first reached, in that order; empties the list. Read by the fuzz harness
/// for the mutator; nothing in a run reads it.
pub fn take_first_hits() -> Vec<(u32, u32)> {
    FIRST_HITS.with(|hits| std::mem::take(&mut *hits.borrow_mut()))
}

/// True when event features are collected (the one branch on the history's push path).
#[inline(always)]
pub fn edges_on() -> bool {
    EDGES_ON.load(Relaxed)
}

/// Starts a run's per-thread signal state (the previous event of every node is forgotten).
pub fn begin_run() {
    PREV.with(|p| p.set([0; NODE_SLOTS]));
    FIRST_HITS.with(|hits| hits.borrow_mut().clear());
}

/// Feeds one history event: `node` is the node id (`u64::MAX` for the harness), `kind` the
/// event kind's number. Called from the history's push path when [`edges_on`]; kept out of
/// line so that path stays one load and a branch when the signal is off.
#[inline(never)]
pub fn on_event(node: u64, kind: u64) {
    let slot = (node as usize) % NODE_SLOTS;
    let kind = (kind as usize) % KIND_SLOTS;
    let prev = PREV.with(|p| {
        let mut all = p.get();
        let prev = all[slot] as usize;
        all[slot] = kind as u8;
        p.set(all);
        prev
    });
    bump(EDGE_BASE + (slot * KIND_SLOTS + prev) * KIND_SLOTS + kind);
}

/// FNV-1a over a label, at compile time when the label is a literal (see [`cover!`](crate::cover)).
pub const fn label_hash(label: &str) -> u64 {
    let bytes = label.as_bytes();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    h
}

/// Marks a label as reached; use [`cover!`](crate::cover), which hashes the label at compile time.
#[inline]
pub fn cover_hash(hash: u64) {
    if LABELS_ON.load(Relaxed) {
        bump_label(LABEL_BASE + (hash % LABEL_LEN as u64) as usize);
    }
}

/// Marks a labelled value as reached (`cover!("term", term)`): each distinct value of the
/// label is its own feature, so the fuzzer is rewarded for reaching a new one.
#[inline]
pub fn cover_value(hash: u64, value: u64) {
    if LABELS_ON.load(Relaxed) {
        bump_label(LABEL_BASE + label_slot(hash, value));
    }
}

/// The label counter a *(label, value)* pair bumps.
fn label_slot(hash: u64, value: u64) -> usize {
    let h = (hash ^ value.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    ((h >> 32) % LABEL_LEN as u64) as usize
}

/// Feeds a change of a node's abstract state ([`crate::node::abstract_state`]) as a label
/// feature: each distinct *(from, to)* pair is its own feature, whichever node made it.
#[inline]
pub fn cover_transition(from: u64, to: u64) {
    const HASH: u64 = label_hash("abstract.transition");
    cover_value(
        HASH,
        from.wrapping_mul(0x0100_0000_01b3).rotate_left(29) ^ to,
    );
}

/// True when label features are collected: callers skip work that only feeds them.
#[inline(always)]
pub fn labels_on() -> bool {
    LABELS_ON.load(Relaxed)
}

/// Feeds the abstract state of the whole cluster (a digest of every node's abstract state,
/// see [`crate::node::abstract_state_at`]) as a label feature.
#[inline]
pub fn cover_cluster(digest: u64) {
    const HASH: u64 = label_hash("abstract.cluster");
    cover_value(HASH, digest);
}

/// Feeds "a node went down in this abstract state" as a label feature.
#[inline]
pub fn cover_crash_in(state: u64) {
    const HASH: u64 = label_hash("abstract.crash");
    cover_value(HASH, state);
}

/// Feeds a finished run's history hash as a feature (the `hash` signal).
pub fn on_history(hash: u64) {
    bump(HASH_BASE + (hash % HASH_LEN as u64) as usize);
}

/// Zeroes every counter (libFuzzer does this itself before each input; tests and other
/// engines call it).
pub fn clear() {
    for c in &COUNTERS {
        c.store(0, Relaxed);
    }
}

/// A copy of the counters: `(edges, labels, hash buckets)` that are non-zero, as indices.
/// For tests and reports; the counters are process-wide.
pub fn snapshot() -> Snapshot {
    let hit = |range: std::ops::Range<usize>| -> Vec<usize> {
        range
            .clone()
            .filter(|&i| COUNTERS[i].load(Relaxed) != 0)
            .map(|i| i - range.start)
            .collect()
    };
    Snapshot {
        edges: hit(EDGE_BASE..EDGE_BASE + EDGE_LEN),
        labels: hit(LABEL_BASE..LABEL_BASE + LABEL_LEN),
        hash: hit(HASH_BASE..HASH_BASE + HASH_LEN),
    }
}

/// Which features are set, as returned by [`snapshot`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Set edge features.
    pub edges: Vec<usize>,
    /// Set label slots.
    pub labels: Vec<usize>,
    /// Set history-hash buckets.
    pub hash: Vec<usize>,
}

/// Marks a protocol state as reached, as a fuzz feature (the `labels` signal).
///
/// `cover!("label")` is one feature; `cover!("label", value)` is one feature per distinct
/// value (a depth, a term, a queue length: keep the values few). The label is hashed at
/// compile time; when labels are off the cost is one relaxed load and a branch. Labels never
/// enter the history and change nothing in the run.
///
/// ```
/// fn on_vote(late: bool, votes: u64) {
///     if late {
///         sim_core::cover!("vote arrived after the decision");
///     }
///     sim_core::cover!("votes counted", votes);
/// }
/// on_vote(true, 2);
/// ```
#[macro_export]
macro_rules! cover {
    ($label:literal) => {{
        const HASH: u64 = $crate::signal::label_hash($label);
        $crate::signal::cover_hash(HASH)
    }};
    ($label:literal, $value:expr) => {{
        const HASH: u64 = $crate::signal::label_hash($label);
        $crate::signal::cover_value(HASH, ($value) as u64)
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_round_trips_through_display() {
        for text in ["none", "edges", "labels,hash", "edges,labels,hash,reject"] {
            assert_eq!(Signals::parse(text).unwrap().to_string(), text, "{text}");
        }
        assert_eq!(Signals::parse("all").unwrap(), Signals::ALL);
        // Set but empty says how to get the default or nothing, instead of silently nothing.
        assert_eq!(Signals::parse(""), Err(SignalError::Empty));
        assert_eq!(Signals::parse("  "), Err(SignalError::Empty));
        assert_eq!(
            Signals::parse("edges,nope"),
            Err(SignalError::Unknown("nope".into()))
        );
    }

    #[test]
    fn distinct_label_values_rarely_share_a_counter() {
        // As many distinct values as random raft-kv runs reach (see `LABEL_LEN`): a shared
        // counter hides a rare feature behind a common one.
        let values = 5_000u64;
        let hash = label_hash("abstract.cluster");
        let slots: std::collections::BTreeSet<usize> =
            (0..values).map(|v| label_slot(hash, v)).collect();
        let shared = values as usize - slots.len();
        assert!(
            shared * 20 < values as usize,
            "{shared} of {values} values share a counter"
        );
    }

    #[test]
    fn label_hash_is_fnv1a() {
        assert_eq!(label_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(label_hash("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
