//! The lane layout of a byte input: one region per kind of decision, and fault events as a
//! sparse schedule.
//!
//! A flat byte input (every draw reading the next bytes) makes decisions depend on each
//! other's positions: a fault that fires reads its duration, so every later draw reads
//! different bytes, and turning one fault on re-maps the rest of the run. Measured on a
//! replication protocol, toggling a fault left only 11.8% of later draws unchanged — so a
//! fuzzer's mutations and a shrinker's deletions composed only front to back.
//!
//! Here each draw reads from the **lane** of its label ([`Lane::of`]): scheduling, timing,
//! workload, fault parameters and run setup each have their own byte stream, so a change in
//! one kind of decision leaves the others where they were. Fault decisions (a
//! [`Choices::chance`](super::Choices::chance) of a fault label, or of any label with odds of
//! 1 in 16 or less) are **events**, not bytes: the [`Lane::Events`] lane is a list of entries
//! *(label id, ordinal)*, meaning "the n-th event draw of this label fires". Every other event
//! draw is "no". Adding, removing or moving one entry changes that one decision and nothing
//! else the input says.
//!
//! The [`Lane::Futures`] lane holds **fresh futures**: entries *(cut, seed)* meaning "from the
//! cut-th draw of the run on, draw from a seeded stream" ([`Future`]). A run with none is read
//! from the other lanes alone. A fuzzer that has reached a rare state keeps the run up to it
//! and tries what a seed sweep would try next — many different futures of one interesting
//! past — which no edit of a single lane can express: a random future changes every lane at
//! once. An entry of the events lane fires inside a future too, so a fault added after a
//! rare state composes with the future that reached it. A future draws its fault events at
//! one of four [intensities](Future::fault_intensity), on every fault group or, under a
//! [focus](Future::fault_focus), on one group only, and may run the
//! [longest workload](Future::longest_workload). Recording such a run
//! ([`Recorder`](super::Recorder)) re-encodes it as plain lanes, so a shrinker or a corpus
//! never depends on the stream.
//!
//! # The container
//!
//! The input is a sequence of **sections**: a tag byte, a length byte `n`, then `n` payload
//! bytes (fewer if the input ends first). The tag's value modulo [`LANES`] names the lane, and
//! a lane's stream is the concatenation of its sections' payloads, in order. So every byte
//! string is a valid input, the empty input gives every lane an empty stream (the plainest
//! run: every draw reads zero, no event fires), and a shorter input is a simpler one. Within
//! a dense lane a draw reads as in the flat encoding: the fewest big-endian bytes that hold
//! `bound - 1`, modulo `bound`, zeros past the end. The events lane is read in 5-byte entries:
//! a 16-bit label id ([`label_id`]) and a 24-bit ordinal, both big-endian; the futures lane in
//! 8-byte entries: a 32-bit cut and a 32-bit seed, big-endian (a cut-off last entry of either
//! is completed with zeros).
//!
//! ```
//! use sim_core::choice::lanes::{Lane, LaneBuffers};
//!
//! let mut lanes = LaneBuffers::default();
//! lanes.dense_mut(Lane::Schedule).extend_from_slice(&[2, 0, 1]);
//! lanes.push_event(sim_core::choice::lanes::label_id("net.fault.partition"), 17);
//! let bytes = lanes.to_bytes();
//! let back = LaneBuffers::parse(&bytes);
//! assert_eq!(back.dense(Lane::Schedule), &[2, 0, 1]);
//! assert_eq!(back.events().len(), 1);
//! assert_eq!(LaneBuffers::parse(&[]), LaneBuffers::default());
//! ```

use crate::hash::stable_hash_bytes;

/// Whether a draw's label names an operation count: it ends in `ops` ([`crate::workload::op_count`] draws
/// `workload.ops`; systems that draw their own name them so too, e.g. `raft.client_ops`).
/// The shrinker tries lowering these first, and a fuzzer's future with the
/// [longest workload](crate::choice::lanes::Future::longest_workload) draws them at their
/// largest.
///
/// ```
/// use sim_core::choice::lanes::is_op_count_label;
///
/// assert!(is_op_count_label("workload.ops"));
/// assert!(is_op_count_label("raft.client_ops"));
/// assert!(!is_op_count_label("raft.key"));
/// ```
pub fn is_op_count_label(label: &str) -> bool {
    label.ends_with("ops")
}

/// The number of lanes; a section's tag names lane `tag % LANES`.
pub const LANES: usize = 7;

/// Bytes per entry of the [`Lane::Events`] lane: a 16-bit label id, a 24-bit ordinal.
pub const EVENT_ENTRY_BYTES: usize = 5;

/// The largest ordinal an event entry can name (24 bits).
pub const MAX_EVENT_ORDINAL: u32 = (1 << 24) - 1;

/// Bytes per entry of the [`Lane::Futures`] lane: a 32-bit draw index, a 32-bit seed.
pub const FUTURE_ENTRY_BYTES: usize = 8;

/// The bit of a [`Future`]'s seed that asks for the
/// [longest workload](Future::longest_workload).
pub const LONGEST_WORKLOAD_BIT: u32 = 1 << 26;

/// The twelve fault profiles a [`Future`] can have, as the seed bits that name them (bits
/// 27–31: [`Future::fault_intensity`] and [`Future::fault_focus`]): every fault group at 1, 2,
/// 4 or 8 times its odds, and each of the four groups focused at 8 and at 64 times its odds.
/// The mutator's fresh runs and futures pick among them (`sim_core::mutate`), and so does a
/// swarm sweep ([`crate::faults::Intensity::Swarm`]).
pub const FAULT_PROFILES: [u32; 12] = [
    0,
    1 << 30,
    2 << 30,
    3 << 30,
    4 << 27,
    5 << 27,
    6 << 27,
    7 << 27,
    4 << 27 | 3 << 30,
    5 << 27 | 3 << 30,
    6 << 27 | 3 << 30,
    7 << 27 | 3 << 30,
];

/// One entry of the [`Lane::Futures`] lane: from the `cut`-th draw of the run on, every draw
/// comes from [`Seeded`](super::Seeded) with this entry's seed (until a later entry's cut).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Future {
    /// How many draws (of those a [`Recorder`](super::Recorder) logs) come before the
    /// first draw this future decides.
    pub cut: u32,
    /// The seed of the stream the rest of the run draws from.
    pub seed: u32,
}

impl Future {
    /// The stream a future draws from. Its own derivation, so a future's stream and a seeded
    /// run's stream with the same number are unrelated. The
    /// [longest-workload](Future::longest_workload) bit is left out: a future with it is the
    /// same future with its operation counts at their largest.
    pub fn stream(self) -> super::Seeded {
        super::Seeded::new(u64::from(self.seed & !LONGEST_WORKLOAD_BIT) ^ 0x6675_7475_7265_0000)
    }

    /// How many times its odds a fault event fires with in this future (capped at certainty):
    /// 1, 2, 4 or 8, named by the seed's top two bits. A seed sweep draws every fault at the
    /// rates its scenario configured; a bug that needs several faults close together may be
    /// far likelier at a higher rate, and which rate is best differs from bug to bug (on
    /// raft-kv, 3x made `ack-before-fsync` 16 times likelier and 8x only 6 times), so a
    /// fuzzer tries futures at every intensity and keeps those that reach new states.
    /// Chances that are not events (dense draws of labels that are not faults, at odds
    /// above 1 in 16) keep their odds.
    pub fn fault_intensity(self) -> u64 {
        1 << (self.seed >> 30)
    }

    /// The fault group this future focuses on, named by the seed's bits 27–29: none for
    /// values 0–3 (every fault event at [`Future::fault_intensity`]), otherwise one group
    /// whose events fire at 8 times that intensity (8, 16, 32 or 64 times their odds) while
    /// every other group's keep their odds. A deep bug often needs many faults of one kind
    /// and few of the rest: crashes at a high rate find raft-kv's durability bugs 13–38 times
    /// sooner than the seed sweep, while a network faulted as often rarely elects a leader.
    pub fn fault_focus(self) -> Option<FaultGroup> {
        match (self.seed >> 27) & 7 {
            4 => Some(FaultGroup::Network),
            5 => Some(FaultGroup::Lifecycle),
            6 => Some(FaultGroup::Disk),
            7 => Some(FaultGroup::Clock),
            _ => None,
        }
    }

    /// Whether this future runs the longest workload, named by the seed's bit 26: every
    /// operation count a client draws ([`crate::workload::op_count`], or a workload label
    /// ending in `ops`: [`crate::workload::is_op_count_label`]) is the largest its bound
    /// allows (the other draws as usual). Limits live at the end of long workloads: a
    /// log longer than one replication batch, a full buffer, a compaction. On raft-kv, three
    /// clients of one to six operations each make 17 or more in 4 runs of 216, and a bug
    /// that needs a log longer than its batch of 16 waits for one of those.
    pub fn longest_workload(self) -> bool {
        self.seed & LONGEST_WORKLOAD_BIT != 0
    }

    /// How many times its odds an event of `group` fires with in this future: the
    /// intensity, or under a [focus](Future::fault_focus) 8 times it for the focused group
    /// and 1 for the others.
    pub fn fault_scale(self, group: Option<FaultGroup>) -> u64 {
        match self.fault_focus() {
            None => self.fault_intensity(),
            Some(focus) if Some(focus) == group => 8 * self.fault_intensity(),
            Some(_) => 1,
        }
    }
}

/// The kinds of fault a [`Future`] can focus on, by the prefix of their labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultGroup {
    /// `net.*`: loss, partitions, clogs and the rest of the network's faults.
    Network,
    /// `nemesis.*`: crashes, stops and pauses of nodes.
    Lifecycle,
    /// `disk.*`: write and read errors, lost and misdirected writes, corruption.
    Disk,
    /// `time.*`: clock skew, jumps and late timers.
    Clock,
}

impl FaultGroup {
    /// The group of an event label; `None` for labels of no group (`buggify.*`, a system's
    /// own events), which only a future without a focus scales.
    pub fn of(label: &str) -> Option<FaultGroup> {
        let (head, _) = label.split_once('.')?;
        match head {
            "net" => Some(FaultGroup::Network),
            "nemesis" => Some(FaultGroup::Lifecycle),
            "disk" => Some(FaultGroup::Disk),
            "time" => Some(FaultGroup::Clock),
            _ => None,
        }
    }
}

/// Where a draw reads from. See the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lane {
    /// Fault decisions: sparse `(label id, ordinal)` entries, each one firing event.
    Events = 0,
    /// Drawn once per run, before anything happens: swarm profiles, which faults and
    /// features a run enables (labels containing `.swarm.`, ending in `.on`, or
    /// `buggify.enable`).
    Setup = 1,
    /// The system's own decisions: the workload's operations, their arguments, quiet
    /// periods (every label no other lane claims).
    Workload = 2,
    /// Parameters of faults that fired and the nemesis' plan: durations, targets
    /// (`net.fault.*`, `nemesis.*`, `time.fault.*`, `time.clock.*`, `disk.*` except
    /// `disk.latency`, `buggify.fire`).
    Faults = 3,
    /// Latency, jitter and tie-breaks (`net.*`, `time.*`, `disk.latency` not claimed above).
    Timing = 4,
    /// Which ready task runs next (`sched.*`).
    Schedule = 5,
    /// Fresh futures: entries *(cut, seed)*, each handing every draw from the cut-th on to a
    /// seeded stream ([`Future`]). No label reads this lane. A fuzzer that has reached an
    /// interesting state explores what can happen next the way a seed sweep would, with the
    /// run up to that point kept as it was; a recorded run re-encodes it as plain lanes.
    Futures = 6,
}

impl Lane {
    /// Every lane, in tag order.
    pub const ALL: [Lane; LANES] = [
        Lane::Events,
        Lane::Setup,
        Lane::Workload,
        Lane::Faults,
        Lane::Timing,
        Lane::Schedule,
        Lane::Futures,
    ];

    /// The lane a draw labelled `label` reads from. A pure function of the label's text, so a
    /// label always reads the same lane in every run and on every machine. `const`, so a
    /// part's [`Label`] declarations are checked against it when the crate compiles.
    pub const fn of(label: &str) -> Lane {
        let label = label.as_bytes();
        if starts_with(label, b"sched.") {
            Lane::Schedule
        } else if contains(label, b".swarm.")
            || ends_with(label, b".on")
            || equals(label, b"buggify.enable")
        {
            Lane::Setup
        } else if starts_with(label, b"net.fault.")
            || starts_with(label, b"nemesis.")
            || starts_with(label, b"time.fault.")
            || starts_with(label, b"time.clock.")
            || (starts_with(label, b"disk.") && !equals(label, b"disk.latency"))
            || equals(label, b"buggify.fire")
        {
            Lane::Faults
        } else if starts_with(label, b"net.")
            || starts_with(label, b"time.")
            || equals(label, b"disk.latency")
        {
            Lane::Timing
        } else {
            Lane::Workload
        }
    }

    /// True when a [`Choices::chance`](super::Choices::chance) of `num` in `den` under this
    /// label is an event (stored in [`Lane::Events`]) rather than a dense draw: every chance
    /// of a fault label, and any chance of 1 in 16 or less.
    pub fn is_event(label: &str, num: u64, den: u64) -> bool {
        Lane::of(label).chance_is_event(num, den)
    }

    /// [`Lane::is_event`] for a label of this lane.
    pub fn chance_is_event(self, num: u64, den: u64) -> bool {
        self == Lane::Faults || num.saturating_mul(16) <= den
    }

    /// The lane a section tag names.
    pub fn from_tag(tag: u8) -> Lane {
        Lane::ALL[usize::from(tag) % LANES]
    }

    /// This lane's index (and its canonical tag).
    pub fn index(self) -> usize {
        self as usize
    }
}

// `str`'s own methods are not `const`; these are, so `Lane::of` can check declarations at
// compile time. Byte-wise, exactly as `str::starts_with` and friends compare.
const fn starts_with(text: &[u8], prefix: &[u8]) -> bool {
    if prefix.len() > text.len() {
        return false;
    }
    let mut i = 0;
    while i < prefix.len() {
        if text[i] != prefix[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn ends_with(text: &[u8], suffix: &[u8]) -> bool {
    if suffix.len() > text.len() {
        return false;
    }
    let offset = text.len() - suffix.len();
    let mut i = 0;
    while i < suffix.len() {
        if text[offset + i] != suffix[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn equals(text: &[u8], other: &[u8]) -> bool {
    text.len() == other.len() && starts_with(text, other)
}

const fn contains(text: &[u8], needle: &[u8]) -> bool {
    let mut start = 0;
    while start + needle.len() <= text.len() {
        let mut i = 0;
        while i < needle.len() && text[start + i] == needle[i] {
            i += 1;
        }
        if i == needle.len() {
            return true;
        }
        start += 1;
    }
    false
}

/// A draw's label as the part that draws it declares it: its text and the lane it reads.
///
/// Which lane a draw reads from decides what the mutator and the shrinker do with it, and the
/// lane is a function of the label's text ([`Lane::of`]), so a typo in a label would move a
/// draw to another lane without a word. Every label the engine draws is declared with the
/// lane it is meant for, next to the code that draws it; the declaration is checked against
/// the text when the crate compiles, so a mistyped label does not build:
///
/// ```
/// use sim_core::choice::lanes::{Label, Lane};
///
/// const LOSS: Label = Label::fault("net.fault.loss");
/// assert_eq!(LOSS.name(), "net.fault.loss");
/// assert_eq!(LOSS.lane(), Lane::Faults);
/// ```
///
/// ```compile_fail,E0080
/// use sim_core::choice::lanes::Label;
///
/// // "net.falt." is not the fault prefix: this label would read the timing lane.
/// const LOSS: Label = Label::fault("net.falt.loss");
/// ```
///
/// A system's own labels stay plain strings: they read the workload lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label {
    name: &'static str,
    lane: Lane,
}

impl Label {
    /// A label of a fault decision or parameter ([`Lane::Faults`]).
    pub const fn fault(name: &'static str) -> Label {
        Label::declared(name, Lane::Faults)
    }

    /// A label drawn once per run before anything happens ([`Lane::Setup`]).
    pub const fn setup(name: &'static str) -> Label {
        Label::declared(name, Lane::Setup)
    }

    /// A label of latency, jitter or a tie-break ([`Lane::Timing`]).
    pub const fn timing(name: &'static str) -> Label {
        Label::declared(name, Lane::Timing)
    }

    /// A label of the scheduler's choices ([`Lane::Schedule`]).
    pub const fn schedule(name: &'static str) -> Label {
        Label::declared(name, Lane::Schedule)
    }

    /// A label of the workload's own choices ([`Lane::Workload`]).
    pub const fn workload(name: &'static str) -> Label {
        Label::declared(name, Lane::Workload)
    }

    const fn declared(name: &'static str, lane: Lane) -> Label {
        // Evaluated when a `const` declaration is compiled: a mismatch is a build error.
        assert!(
            Lane::of(name) as u8 == lane as u8,
            "a label's text reads another lane than its declaration says (see Lane::of)"
        );
        Label { name, lane }
    }

    /// The label's text, as draws and traces carry it.
    pub const fn name(self) -> &'static str {
        self.name
    }

    /// The lane its draws read.
    pub const fn lane(self) -> Lane {
        self.lane
    }
}

/// The 16-bit id of a label in the events lane: a stable hash of its text, folded.
///
/// Never 0: an entry with id 0 names no label, so the zero bytes that pad a cut-off lane can
/// never fire an event. Two labels may share an id; they then share one ordinal counter,
/// which changes nothing about determinism (it is still a pure function of the input).
pub fn label_id(label: &str) -> u16 {
    let h = stable_hash_bytes(label.as_bytes());
    ((h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48)) as u16).max(1)
}

/// The lanes of one input, parsed: a byte stream per dense lane and the event entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaneBuffers {
    dense: [Vec<u8>; LANES],
}

impl LaneBuffers {
    /// Splits an input into its lanes (see the container in the [module docs](self)).
    pub fn parse(data: &[u8]) -> LaneBuffers {
        let mut lanes = LaneBuffers::default();
        let mut pos = 0;
        while pos < data.len() {
            let lane = Lane::from_tag(data[pos]);
            let len = data.get(pos + 1).copied().map_or(0, usize::from);
            let start = (pos + 2).min(data.len());
            let end = (start + len).min(data.len());
            lanes.dense[lane.index()].extend_from_slice(&data[start..end]);
            pos = start + len;
        }
        lanes
    }

    /// Whether `data` is exactly what [`LaneBuffers::to_bytes`] writes for what it says:
    /// every input this crate writes (a recorded run, a saved or shrunk input, a corpus
    /// entry) is, and few others are, since its sections come in lane order, full but the
    /// last of each lane, none empty, none ending in a zero. A fuzzer's mutations rarely
    /// leave an input so, and an input of the flat encoding almost never is.
    ///
    /// ```
    /// use sim_core::choice::lanes::{Lane, LaneBuffers};
    ///
    /// let mut lanes = LaneBuffers::default();
    /// lanes.dense_mut(Lane::Workload).extend_from_slice(&[4, 2]);
    /// assert!(LaneBuffers::is_canonical(&lanes.to_bytes()));
    /// assert!(LaneBuffers::is_canonical(&[]));
    /// assert!(!LaneBuffers::is_canonical(&[1, 0, 7]));
    /// ```
    pub fn is_canonical(data: &[u8]) -> bool {
        LaneBuffers::parse(data).to_bytes() == data
    }

    /// The byte stream of `lane` (for [`Lane::Events`], the raw entries).
    pub fn dense(&self, lane: Lane) -> &[u8] {
        &self.dense[lane.index()]
    }

    /// The byte stream of `lane`, to edit.
    pub fn dense_mut(&mut self, lane: Lane) -> &mut Vec<u8> {
        &mut self.dense[lane.index()]
    }

    /// The event entries, in input order (a cut-off last entry completed with zeros).
    pub fn events(&self) -> Vec<(u16, u32)> {
        self.dense[Lane::Events.index()]
            .chunks(EVENT_ENTRY_BYTES)
            .map(|chunk| {
                let mut entry = [0u8; EVENT_ENTRY_BYTES];
                entry[..chunk.len()].copy_from_slice(chunk);
                decode_event(entry)
            })
            .collect()
    }

    /// Replaces the event entries.
    pub fn set_events(&mut self, events: &[(u16, u32)]) {
        let lane = &mut self.dense[Lane::Events.index()];
        lane.clear();
        for &(id, ordinal) in events {
            lane.extend_from_slice(&encode_event(id, ordinal));
        }
    }

    /// Adds one event entry: the `ordinal`-th event draw of label `id` fires.
    pub fn push_event(&mut self, id: u16, ordinal: u32) {
        self.dense[Lane::Events.index()].extend_from_slice(&encode_event(id, ordinal));
    }

    /// The future entries, sorted by cut, one per cut (the first in input order wins; a
    /// cut-off last entry is completed with zeros).
    pub fn futures(&self) -> Vec<Future> {
        let mut futures: Vec<Future> = self.dense[Lane::Futures.index()]
            .chunks(FUTURE_ENTRY_BYTES)
            .map(|chunk| {
                let mut entry = [0u8; FUTURE_ENTRY_BYTES];
                entry[..chunk.len()].copy_from_slice(chunk);
                Future {
                    cut: u32::from_be_bytes([entry[0], entry[1], entry[2], entry[3]]),
                    seed: u32::from_be_bytes([entry[4], entry[5], entry[6], entry[7]]),
                }
            })
            .collect();
        // Stable: among equal cuts the first entry stays first, and dedup keeps it.
        futures.sort_by_key(|future| future.cut);
        futures.dedup_by_key(|future| future.cut);
        futures
    }

    /// Replaces the future entries.
    pub fn set_futures(&mut self, futures: &[Future]) {
        let lane = &mut self.dense[Lane::Futures.index()];
        lane.clear();
        for future in futures {
            lane.extend_from_slice(&future.cut.to_be_bytes());
            lane.extend_from_slice(&future.seed.to_be_bytes());
        }
    }

    /// The canonical bytes: each lane in tag order, in sections of up to 255 bytes, trailing
    /// zeros of each lane dropped (they are what an exhausted lane reads anyway).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for lane in Lane::ALL {
            let bytes = &self.dense[lane.index()];
            let used = bytes.len() - bytes.iter().rev().take_while(|&&b| b == 0).count();
            for chunk in bytes[..used].chunks(255) {
                out.push(lane as u8);
                out.push(chunk.len() as u8);
                out.extend_from_slice(chunk);
            }
        }
        // The container is canonical: parsing it gives every lane back, less only the
        // trailing zeros an exhausted lane reads anyway. (Sections over 255 bytes or a tag
        // out of order would make a replay read other bytes than the run drew.)
        debug_assert!(
            {
                let back = LaneBuffers::parse(&out);
                Lane::ALL.iter().all(|&lane| {
                    let ours = self.dense(lane);
                    let zeros = ours.iter().rev().take_while(|&&b| b == 0).count();
                    back.dense(lane) == &ours[..ours.len() - zeros]
                })
            },
            "lane buffers must survive their own encoding"
        );
        out
    }
}

fn encode_event(id: u16, ordinal: u32) -> [u8; EVENT_ENTRY_BYTES] {
    debug_assert!(
        ordinal <= MAX_EVENT_ORDINAL,
        "event ordinal {ordinal} beyond 24 bits"
    );
    let [_, o2, o1, o0] = ordinal.to_be_bytes();
    let [i1, i0] = id.to_be_bytes();
    [i1, i0, o2, o1, o0]
}

fn decode_event(entry: [u8; EVENT_ENTRY_BYTES]) -> (u16, u32) {
    let id = u16::from_be_bytes([entry[0], entry[1]]);
    let ordinal = u32::from_be_bytes([0, entry[2], entry[3], entry[4]]);
    (id, ordinal)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every label the engine draws is a declared [`Label`]: a string literal that looks like
    /// an engine label (a part's prefix) anywhere else in the crate's code is a draw whose
    /// lane nothing checks. Files that name labels for other reasons are listed with why.
    #[test]
    fn engine_labels_are_declared_not_written_inline() {
        // Lane::of and FaultGroup::of spell the prefixes; the signal hashes feature names;
        // the mutator and the shrinker recognise labels by text; the CLI documents them.
        const ALLOWED: &[&str] = &[
            "choice/lanes.rs",
            "signal.rs",
            "mutate.rs",
            "shrink/",
            "cli/",
        ];
        const PARTS: &[&str] = &[
            "net.",
            "nemesis.",
            "time.",
            "disk.",
            "sched.",
            "buggify.",
            "workload.",
            "node.",
            "os.",
        ];
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = vec![root.clone()];
        let mut inline = Vec::new();
        while let Some(path) = files.pop() {
            if path.is_dir() {
                for entry in std::fs::read_dir(&path).expect("src is readable") {
                    files.push(entry.expect("a directory entry").path());
                }
                continue;
            }
            let rel = path
                .strip_prefix(&root)
                .expect("under src")
                .to_string_lossy()
                .replace('\\', "/");
            if !rel.ends_with(".rs") || ALLOWED.iter().any(|a| rel.starts_with(a)) {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a source file");
            // Unit tests at the end of a file draw made-up labels on purpose.
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
            for (n, line) in code.lines().enumerate() {
                let line = line.split("//").next().unwrap_or("");
                for (i, _) in line.match_indices('"') {
                    let rest = &line[i + 1..];
                    let declared =
                        line[..i].trim_end().ends_with('(') && line[..i].contains("Label::");
                    if PARTS.iter().any(|p| rest.starts_with(p))
                        && rest.split('"').next().is_some_and(|l| {
                            l.bytes().all(|b| {
                                b.is_ascii_lowercase()
                                    || b.is_ascii_digit()
                                    || b == b'.'
                                    || b == b'_'
                            })
                        })
                        && !declared
                    {
                        inline.push(format!("{rel}:{}: {}", n + 1, line.trim()));
                    }
                }
            }
        }
        inline.sort();
        inline.dedup();
        assert!(
            inline.is_empty(),
            "engine labels written inline (declare them with Label::fault/setup/timing/...):\n{}",
            inline.join("\n")
        );
    }

    #[test]
    fn every_label_family_has_its_lane() {
        for (label, lane) in [
            ("sched.pick", Lane::Schedule),
            ("sched.pct.priority", Lane::Schedule),
            ("net.swarm.loss.on", Lane::Setup),
            ("net.swarm.loss", Lane::Setup),
            ("time.swarm.skew.on", Lane::Setup),
            ("buggify.enable", Lane::Setup),
            ("net.fault.partition", Lane::Faults),
            ("net.fault.partition_ms", Lane::Faults),
            ("nemesis.down_ms", Lane::Faults),
            ("disk.corrupt", Lane::Faults),
            ("buggify.fire", Lane::Faults),
            ("net.jitter_ms", Lane::Timing),
            ("time.tie", Lane::Timing),
            ("disk.latency", Lane::Timing),
            ("raft.op", Lane::Workload),
            ("workload.quiet", Lane::Workload),
            ("op", Lane::Workload),
        ] {
            assert_eq!(Lane::of(label), lane, "{label}");
        }
    }

    #[test]
    fn any_bytes_parse_and_sections_may_be_cut_off() {
        // A tag, a length past the end, and a lone tag: nothing panics, payloads are kept.
        let lanes = LaneBuffers::parse(&[5, 200, 7, 8]);
        assert_eq!(lanes.dense(Lane::Schedule), &[7, 8]);
        let lanes = LaneBuffers::parse(&[2, 1, 9, 4]);
        assert_eq!(lanes.dense(Lane::Workload), &[9]);
        assert_eq!(lanes.dense(Lane::Timing), &[] as &[u8]);
        // Tags wrap: 7 names the events lane, 12 the schedule.
        let lanes = LaneBuffers::parse(&[12, 1, 3, 7, 2, 0, 1]);
        assert_eq!(lanes.dense(Lane::Schedule), &[3]);
        assert_eq!(lanes.events(), vec![(1, 0)]);
    }

    #[test]
    fn futures_are_sorted_by_cut_and_one_per_cut() {
        let mut lanes = LaneBuffers::default();
        lanes.set_futures(&[
            Future { cut: 90, seed: 1 },
            Future { cut: 5, seed: 2 },
            Future { cut: 90, seed: 3 },
        ]);
        let back = LaneBuffers::parse(&lanes.to_bytes());
        assert_eq!(
            back.futures(),
            vec![Future { cut: 5, seed: 2 }, Future { cut: 90, seed: 1 }]
        );
        // A cut-off entry is completed with zeros: any bytes are futures.
        let cut_off = LaneBuffers::parse(&[Lane::Futures as u8, 3, 0, 0, 7]);
        assert_eq!(
            cut_off.futures(),
            vec![Future {
                cut: 0x0700,
                seed: 0
            }]
        );
    }

    #[test]
    fn canonical_bytes_round_trip() {
        let mut lanes = LaneBuffers::default();
        lanes
            .dense_mut(Lane::Workload)
            .extend((0..600).map(|i| (i % 7) as u8 + 1));
        lanes
            .dense_mut(Lane::Timing)
            .extend_from_slice(&[0, 4, 0, 0]);
        lanes.set_events(&[(label_id("a"), 3), (label_id("b"), MAX_EVENT_ORDINAL)]);
        let bytes = lanes.to_bytes();
        let back = LaneBuffers::parse(&bytes);
        assert_eq!(back.dense(Lane::Workload), lanes.dense(Lane::Workload));
        assert_eq!(
            back.dense(Lane::Timing),
            &[0, 4],
            "trailing zeros are dropped"
        );
        assert_eq!(back.events(), lanes.events());
        assert_eq!(back.to_bytes(), bytes);
    }
}
