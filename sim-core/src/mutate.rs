//! A mutator that knows the choice sequence: edits whole decisions of a lane-encoded input.
//!
//! A fuzzer's byte mutations know nothing of the [lane layout](crate::choice::lanes): a
//! flipped byte may land in a section header and re-cut every section after it, and turning a
//! fault on means writing five exact bytes into the events lane. This mutator parses the input
//! into its lanes, makes one edit that means something, and writes the canonical bytes back:
//!
//! * **fault events**: add an entry (a label the system has drawn events under, at an ordinal
//!   it has reached — from [`observed_event_counts`]), remove one, move one to another
//!   ordinal (near its old one or anywhere), or copy one to a nearby ordinal (a fault that
//!   fired once, fired again soon after);
//! * **dense draws**: set a byte of the setup, workload, fault-parameter, timing or schedule
//!   lane to a new value (random, one more or less, zero, the largest), or delete, duplicate
//!   or zero a short run of bytes in one lane;
//! * **crossover** ([`crossover`]): each lane from one parent or the other, and the fault
//!   events of both, so a workload that reaches a state meets a fault schedule that breaks it
//!   (for engines and tools that want it; sim-fuzz's libFuzzer hooks no longer use it: on a
//!   deep bug, hunts without crossover did better);
//! * **a fresh future** ([`Lane::Futures`]): keep a run up to a cut and draw everything
//!   after it from a new seed — what a seed sweep would try next, from a past worth keeping.
//!   The run is taken from the mutator's **archive** — for every label feature (a `cover!`,
//!   or an abstract state a node named with [`crate::node::abstract_state_at`]), the first
//!   input whose run reached it — and cut just after the state it was first to reach, the
//!   rarest of a few archived states drawn at random (how many runs reached it decides), as
//!   go-explore does. Until the archive holds anything, or for a system that names no
//!   states, the future is of the input the engine picked, three cuts in four just after a
//!   **rare state** its run reached (a label feature few runs reached, picked with odds
//!   inversely proportional to how many did);
//! * **a fault just after a rare state**: add one fault decision among those the run drew
//!   soon after such a state (a crash of the node as it commits, the loss of the message it
//!   sends then), every other decision kept.
//! * **a fresh run** ([`fresh_run`]): a whole run drawn from a new seed — the sweep's
//!   variety inside the hunt, for bugs no rare state leads to.
//!
//! Fresh runs and fresh futures get a **profile**: an [intensity](Future::fault_intensity)
//! for every fault group, or a [focus](Future::fault_focus) on one group; all run the
//! [longest workload](Future::longest_workload). Which fault profile is learnt from coverage:
//! three in four get the profile whose fresh runs lately reached the most label features no
//! run had reached, the fourth a random one.
//!
//! The archive, futures after rare states, faults after them and the profile choice need to
//! know what runs did: the fuzz harness tells this module after every run ([`observe_run`]:
//! the input, the label features it reached with the draw clock of each first hit, and the
//! clock of each fault decision), and the mutator looks the input up by a hash of its bytes.
//! This memory is the mutator's alone; no run reads it. It is bounded however long a campaign
//! runs: the latest runs in one ring of at most 256 MiB (the oldest forgotten first), the
//! archive at 64 MiB of inputs, and the counts per label feature by the 65,536 label counters.
//!
//! Each edit changes the decisions it names and no others (that is what the lanes are for), so
//! a mutation that turns a fault on keeps the rest of the run. An engine that mutates its own
//! mutants again (libFuzzer does, up to five times in a row) undoes that; [`unstack`] and
//! [`note_mutant`] let its hook start every edit from the input the engine picked.
//! [`mutate`] returns `None` for a share of calls so the engine's own byte mutations still run
//! (they find what this one cannot express, such as a section that grows a lane past its old
//! end).
//!
//! Deterministic: the result is a pure function of the input, `seed` and what this thread has
//! observed of earlier runs. It draws from [`Seeded`], never from the OS.
//!
//! ```
//! use sim_core::choice::lanes::{label_id, Lane, LaneBuffers};
//! use sim_core::mutate::{crossover, mutate};
//!
//! let mut lanes = LaneBuffers::default();
//! lanes.dense_mut(Lane::Workload).extend_from_slice(&[3, 1, 4]);
//! lanes.push_event(label_id("net.fault.partition"), 7);
//! let input = lanes.to_bytes();
//! let changed = (0..200u32)
//!     .filter_map(|seed| mutate(&input, 4096, seed))
//!     .filter(|out| *out != input)
//!     .count();
//! assert!(changed > 100);
//! // Every output is within the size limit and parses (as any byte string does).
//! assert!((0..200u32).filter_map(|s| mutate(&input, 12, s)).all(|out| out.len() <= 12));
//! let child = crossover(&input, &[], 4096, 1);
//! assert!(child.len() <= 4096);
//! ```

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use crate::choice::lanes::{
    Future, Lane, LaneBuffers, EVENT_ENTRY_BYTES, FAULT_PROFILES, LONGEST_WORKLOAD_BIT,
    MAX_EVENT_ORDINAL,
};
use crate::choice::{observed_event_counts, DrawTrace, Seeded, Source};
use crate::trace::stable_hash_bytes;

/// Which mutations a fuzz target uses, from the `SIM_MUTATOR` environment variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MutatorChoice {
    /// This module's lane-aware edits, with a share left to the engine (the default).
    Lanes,
    /// The engine's byte mutations only (the behaviour before this mutator).
    Bytes,
    /// Fresh runs only ([`fresh_mutant`]): the swarm sweep inside the fuzzer, coverage choosing
    /// only each run's fault profile. An ablation, to measure what edits of corpus inputs add.
    Fresh,
}

/// A `SIM_MUTATOR` value that names no mutator.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("SIM_MUTATOR={0:?} is not a mutator; use `lanes` (the default), `bytes` (the engine's own byte mutations) or `fresh` (fresh runs only)")]
pub struct UnknownMutator(pub String);

impl MutatorChoice {
    /// Parses `lanes`, `bytes` or `fresh`; empty means the default.
    pub fn parse(text: &str) -> Result<MutatorChoice, UnknownMutator> {
        match text.trim() {
            "" | "lanes" => Ok(MutatorChoice::Lanes),
            "bytes" => Ok(MutatorChoice::Bytes),
            "fresh" => Ok(MutatorChoice::Fresh),
            other => Err(UnknownMutator(other.to_string())),
        }
    }

    /// Reads `SIM_MUTATOR` (unset means the default).
    pub fn from_env() -> Result<MutatorChoice, UnknownMutator> {
        MutatorChoice::parse(&std::env::var("SIM_MUTATOR").unwrap_or_default())
    }
}

/// The dense lanes a mutation may edit, with how often each is picked (out of their sum).
/// Fault parameters and the workload decide most of what a run does; the schedule and timing
/// lanes are long and mostly noise, so they get fewer edits per byte.
const DENSE_WEIGHTS: [(Lane, u64); 5] = [
    (Lane::Setup, 2),
    (Lane::Workload, 4),
    (Lane::Faults, 4),
    (Lane::Timing, 2),
    (Lane::Schedule, 2),
];

/// Out of 100 calls, how many leave the input to the engine's byte mutations.
const ENGINE_SHARE_PERCENT: u64 = 15;

/// Out of 100 lane-aware mutations, how many replace the input with a fresh run: one future
/// from the first draw on ([`fresh_run`]), with a learnt fault profile. 40 against 25 took
/// the median hunt on raft-kv's `ack-before-fsync` from 15,238 to 12,858 executions and on
/// `vote-not-persisted` from 1,588 to 1,266 (20 hunts each, `fuzz/README.md`); 55 had a
/// lower median on `ack-before-fsync` but missed it once in 20.
const FRESH_RUN_SHARE_PERCENT: u64 = 40;

/// Out of 100 lane-aware mutations, how many are a fresh future of an archived input
/// ([`archive_future`]; of the engine's pick while the archive is empty). On raft-kv's
/// `commit-past-request`, 10 hunts each: median 10,286 executions with every future of the
/// engine's pick, 6,659 with half of them from the archive, 5,395 with all; 13,429 when the
/// faults after rare states (the next 20) were taken from the archive too.
const FUTURE_SHARE_PERCENT: u64 = 30;

/// Out of 100 lane-aware mutations, how many add a fault just after a rare state.
const FAULT_AT_STATE_SHARE_PERCENT: u64 = 20;

// `mutate` splits one draw of 0..100 into these ranges (the rest goes to event and dense
// edits): shares that overlap would silently shrink one another.
const _: () =
    assert!(FUTURE_SHARE_PERCENT + FAULT_AT_STATE_SHARE_PERCENT + FRESH_RUN_SHARE_PERCENT <= 100);

/// The largest distance a "near" move or copy of an event travels, in ordinals.
const NEAR_ORDINALS: u64 = 8;

/// Mutates `data` (any bytes) into a new input of at most `max_size` bytes, or returns `None`
/// to leave this mutation to the engine (also when the edit would not fit in `max_size`).
/// See the [module docs](self).
pub fn mutate(data: &[u8], max_size: usize, seed: u32) -> Option<Vec<u8>> {
    let mut rng = Seeded::new(u64::from(seed) ^ 0x6d75_7461_7465_0000);
    if rng.draw("mutate.engine", 100) < ENGINE_SHARE_PERCENT {
        return None;
    }
    let kind = rng.draw("mutate.kind", 100);
    if kind >= 100 - FRESH_RUN_SHARE_PERCENT {
        return fresh_run_with_learnt_profile(max_size, &mut rng);
    }
    if kind < FUTURE_SHARE_PERCENT {
        // From the archive while it holds anything; before that (or for a system that names
        // no states) from the input the engine picked.
        if let Some(out) = archive_future(&mut rng) {
            return (out.len() <= max_size).then_some(out);
        }
    }
    let mut lanes = LaneBuffers::parse(data);
    let observed = observed_event_counts();
    let edited = match kind {
        kind if kind < FUTURE_SHARE_PERCENT => {
            mutate_futures(data, &mut lanes, &mut rng) || mutate_dense(&mut lanes, &mut rng)
        }
        kind if kind < FUTURE_SHARE_PERCENT + FAULT_AT_STATE_SHARE_PERCENT => {
            mutate_fault_after_rare_state(data, &mut lanes, &mut rng)
                || mutate_events(&mut lanes, &observed, &mut rng)
        }
        // Event edits half the rest of the time (when there is anything to edit), dense
        // edits otherwise.
        kind if kind % 2 == 0 => {
            mutate_events(&mut lanes, &observed, &mut rng) || mutate_dense(&mut lanes, &mut rng)
        }
        _ => mutate_dense(&mut lanes, &mut rng),
    };
    if !edited {
        return None;
    }
    let out = lanes.to_bytes();
    (out.len() <= max_size).then_some(out)
}

/// A fresh run ([`fresh_run`]) with a fault profile picked by what earlier fresh runs of each
/// profile found, or `None` if it would not fit in `max_size`: what [`mutate`] makes in
/// 40% of its lane-aware mutations, and `SIM_MUTATOR=fresh` in all.
pub fn fresh_mutant(max_size: usize, seed: u32) -> Option<Vec<u8>> {
    let mut rng = Seeded::new(u64::from(seed) ^ 0x6672_6573_6800_0000);
    fresh_run_with_learnt_profile(max_size, &mut rng)
}

fn fresh_run_with_learnt_profile(max_size: usize, rng: &mut Seeded) -> Option<Vec<u8>> {
    let (arm, seed) = OBSERVED.with(|observed| observed.borrow().profiles.seed(rng));
    let out = fresh_run(seed);
    OBSERVED.with(|observed| observed.borrow_mut().profiles.pending(&out, arm));
    (out.len() <= max_size).then_some(out)
}

thread_local! {
    /// The last mutant this thread made, by a hash of its bytes, and the input it was made
    /// from ([`unstack`]).
    static LAST_MUTANT: RefCell<Option<(u64, Vec<u8>)>> = const { RefCell::new(None) };
}

/// The input the last mutant was made from, when `data` is that mutant; `None` otherwise.
///
/// libFuzzer mutates its last mutant again, up to `-mutate_depth` (5) times in a row, running
/// each. On a choice sequence that is a random walk away from the corpus: a fresh future cut
/// just after a rare state, then a dense edit before the cut, and the past the future was for
/// is gone. A custom mutator that starts again from this base makes every run one edit from
/// an input that earned its place. Measured on raft-kv `vote-not-persisted` (10 hunts of 60 s
/// each, `scripts/deep-bench.sh`): libFuzzer's defaults found it 7/10 at a median of 29,734
/// executions; `-mutate_depth=1 -cross_over=0` 10/10 at 10,120.
pub fn unstack(data: &[u8]) -> Option<Vec<u8>> {
    LAST_MUTANT.with(|last| match &*last.borrow() {
        Some((hash, base)) if *hash == stable_hash_bytes(data) => Some(base.clone()),
        _ => None,
    })
}

/// Remembers that `mutant` was made from `base`, for [`unstack`].
pub fn note_mutant(base: &[u8], mutant: &[u8]) {
    LAST_MUTANT.with(|last| *last.borrow_mut() = Some((stable_hash_bytes(mutant), base.to_vec())));
}

/// A child of two inputs: each dense lane from one parent or the other, and a random share of
/// each parent's fault events. Always at most `max_size` bytes (cut at a section boundary).
pub fn crossover(a: &[u8], b: &[u8], max_size: usize, seed: u32) -> Vec<u8> {
    let mut rng = Seeded::new(u64::from(seed) ^ 0x6372_6f73_7300_0000);
    let (left, right) = (LaneBuffers::parse(a), LaneBuffers::parse(b));
    let mut child = LaneBuffers::default();
    for (lane, _) in DENSE_WEIGHTS {
        let from = if rng.draw("crossover.lane", 2) == 0 {
            &left
        } else {
            &right
        };
        child.dense_mut(lane).extend_from_slice(from.dense(lane));
    }
    let mut events: Vec<(u16, u32)> = left
        .events()
        .into_iter()
        .chain(right.events())
        .filter(|_| rng.draw("crossover.event", 2) == 0)
        .collect();
    events.sort_unstable();
    events.dedup();
    child.set_events(&events);
    // The futures go with the workload: they continue the run its choices began.
    let futures_from = if child.dense(Lane::Workload) == left.dense(Lane::Workload) {
        &left
    } else {
        &right
    };
    child.set_futures(&futures_from.futures());
    let mut out = child.to_bytes();
    out.truncate(section_boundary_at_most(&out, max_size));
    out
}

thread_local! {
    /// What recent runs of this thread reached: the mutator's memory. Written by the fuzz
    /// harness after each run ([`observe_run`]), read only here; no run reads it.
    static OBSERVED: RefCell<Observed> = RefCell::new(Observed::default());
}

/// How many inputs' runs [`Observed`] keeps at most; past it the oldest are forgotten.
const OBSERVED_INPUTS_MAX: usize = 1 << 16;

/// How many bytes the runs [`Observed`] keeps may take ([`KeptRuns`]); past it the oldest runs
/// are forgotten. A count of runs alone does not bound memory: a raft-kv run with a long
/// workload draws thousands of events, and a 300-second hunt kept 2 GiB of them and was
/// stopped by libFuzzer's memory limit.
const OBSERVED_BYTES_MAX: usize = 256 << 20;

/// What a kept run costs beside its entries: its span in the eviction order and in the map
/// (an estimate on the high side).
const OBSERVED_RUN_OVERHEAD_BYTES: usize = 128;

#[derive(Default)]
struct Observed {
    /// By a hash of the input's bytes: what its run reached and drew.
    runs: KeptRuns,
    /// Per label feature: how many runs reached it (how common the state is).
    runs_reaching: BTreeMap<u32, u64>,
    /// The most draws any run made (where to cut an input whose run was forgotten).
    most_draws: u32,
    /// Which fault profile fresh runs and futures get.
    profiles: ProfileChoice,
    /// The first input to reach each label feature, while memory allows.
    archive: Archive,
}

/// The first input that reached each label feature, with the draw clock of its first hit:
/// where a future from that state starts. Bytes are shared between the features one run
/// reached first. Bounded by [`ARCHIVE_BYTES_MAX`]: past it the entries of the features most
/// runs reached go first (a common state's first reacher is worth least).
#[derive(Default)]
struct Archive {
    firsts: BTreeMap<u32, (Rc<[u8]>, u32)>,
    /// The features of `firsts`, for picking one at random.
    keys: Vec<u32>,
    /// Bytes held, counting each entry's input once per feature (an upper bound).
    bytes: usize,
}

/// How many archived features [`archive_future`] draws to keep the rarest of.
const ARCHIVE_PICKS: usize = 8;

/// The most input bytes [`Archive`] holds.
const ARCHIVE_BYTES_MAX: usize = 64 << 20;

/// The workload bits of every fresh run's and future's seed: the
/// [longest workload](Future::longest_workload). Limits live at the end of long workloads, and runs of the longest workload
/// fail at least as often on every deep bug measured: on raft-kv, 200,000 whole runs at
/// twice the fault odds failed `commit-past-request` 51 times with it and 3 times without
/// (`explore_study COUNT=1`), `ack-before-fsync` 11 against 9 times, and 50,000 runs
/// `vote-not-persisted` 29 against 24 times. Hunts of `commit-past-request`: median 19,746
/// executions with it one time in four, 15,646 one in two, 10,286 always (10 hunts each,
/// `fuzz/README.md`). The hunt's seed corpus and the engine's own edits keep workloads as
/// drawn in the corpus.
const FUTURE_WORKLOAD_BITS: u32 = LONGEST_WORKLOAD_BIT;

/// The seed bits a profile does not name (those below the longest-workload bit, the lowest
/// a profile sets): the future's own randomness.
const PROFILE_FREE_SEED_BITS: u32 = LONGEST_WORKLOAD_BIT.trailing_zeros();

/// Picks the fault profile of fresh runs and futures by what fresh runs of each profile
/// found: a choice guided by coverage, as the corpus is. Per profile, a moving average of
/// how many label features a fresh run reached for the first time in the hunt; three picks
/// in four take the profile with the highest average, the fourth a random one (so one that
/// fell behind early is tried again). On raft-kv, 5,000 runs per profile reach 2,693 label
/// features at x1, 5,178 at x4, 7,023 with crashes at x8 and under 3,000 with the network,
/// disks or clocks at x8 (`fuzz/README.md`): which faults to multiply matters more than how
/// much.
#[derive(Default)]
struct ProfileChoice {
    /// Per profile: new label features per fresh run, a moving average, times 1,024.
    novelty_x1024: [u64; FAULT_PROFILES.len()],
    /// Per profile: how many fresh runs were observed.
    observed_runs: [u64; FAULT_PROFILES.len()],
    /// Fresh runs not yet observed, by a hash of their bytes: their profile.
    pending: BTreeMap<u64, usize>,
}

/// How many fresh runs [`ProfileChoice`] waits for at most.
const PENDING_FRESH_RUNS_MAX: usize = 1 << 10;

/// A fresh run's weight in [`ProfileChoice`]'s moving averages: 1/16.
const NOVELTY_AVERAGE_SHIFT: u32 = 4;

impl ProfileChoice {
    /// A profile and a future seed with it.
    fn seed(&self, rng: &mut Seeded) -> (usize, u32) {
        let low = rng.draw("mutate.future.seed", 1 << PROFILE_FREE_SEED_BITS) as u32;
        let arm = self.pick(rng);
        (arm, low | FAULT_PROFILES[arm] | FUTURE_WORKLOAD_BITS)
    }

    fn pick(&self, rng: &mut Seeded) -> usize {
        if rng.draw("mutate.profile.explore", 4) == 0 {
            return rng.draw("mutate.profile.any", FAULT_PROFILES.len() as u64) as usize;
        }
        // A profile no fresh run has tried yet goes first.
        if let Some(untried) = self.observed_runs.iter().position(|&runs| runs == 0) {
            return untried;
        }
        let best = self.novelty_x1024.iter().copied().max().unwrap_or(0);
        self.novelty_x1024
            .iter()
            .position(|&n| n == best)
            .unwrap_or(0)
    }

    /// Remembers that the fresh run `input` has profile `arm`, until [`observe_run`].
    fn pending(&mut self, input: &[u8], arm: usize) {
        // Mutants an engine dropped unrun are forgotten.
        if self.pending.len() >= PENDING_FRESH_RUNS_MAX {
            self.pending.clear();
        }
        self.pending.insert(stable_hash_bytes(input), arm);
    }

    /// The input with this hash reached `new_features` label features no run had: counted
    /// for its profile if it is a fresh run this choice made.
    fn observe_input(&mut self, hash: u64, new_features: u64) {
        if let Some(arm) = self.pending.remove(&hash) {
            self.observe(arm, new_features);
        }
    }

    /// A fresh run of profile `arm` reached `new_features` label features no run had.
    fn observe(&mut self, arm: usize, new_features: u64) {
        let average = &mut self.novelty_x1024[arm];
        *average = if self.observed_runs[arm] == 0 {
            new_features << 10
        } else {
            *average - (*average >> NOVELTY_AVERAGE_SHIFT)
                + ((new_features << 10) >> NOVELTY_AVERAGE_SHIFT)
        };
        self.observed_runs[arm] += 1;
    }
}

/// One run, as the mutator remembers it.
struct ObservedRun {
    /// The label features it reached, each with the draw clock when it first did.
    first_hits: Vec<(u32, u32)>,
    /// Its draws and fault decisions ([`crate::choice::take_draw_trace`]).
    trace: DrawTrace,
}

/// Tells the mutator what the run of `data` reached and drew: its label features with the
/// draw clock of each first hit ([`crate::signal::take_first_hits`]) and its draw trace
/// ([`crate::choice::take_draw_trace`]). The fuzz harness calls it after every run; a run
/// that was the first to reach a state goes into the archive, and the fresh-future mutation
/// cuts archived inputs just after states few runs have reached, so it explores many
/// futures of a rare past.
pub fn observe_run(data: &[u8], first_hits: Vec<(u32, u32)>, trace: DrawTrace) {
    OBSERVED.with(|observed| {
        let mut observed = observed.borrow_mut();
        let mut new_features = 0;
        for &(feature, _) in &first_hits {
            let reaching = observed.runs_reaching.entry(feature).or_insert(0);
            *reaching += 1;
            new_features += u64::from(*reaching == 1);
        }
        if new_features > 0 {
            observed.archive_firsts(data, &first_hits, ARCHIVE_BYTES_MAX);
        }
        let hash = stable_hash_bytes(data);
        observed.profiles.observe_input(hash, new_features);
        observed.most_draws = observed.most_draws.max(trace.draws);
        observed.remember(
            hash,
            ObservedRun { first_hits, trace },
            OBSERVED_INPUTS_MAX,
            OBSERVED_BYTES_MAX,
        );
    });
}

impl Observed {
    /// Keeps what the run of the input with this hash did ([`KeptRuns::remember`]).
    fn remember(&mut self, hash: u64, run: ObservedRun, max_runs: usize, max_bytes: usize) {
        self.runs.remember(hash, &run, max_runs, max_bytes);
    }
}

/// The runs [`Observed`] keeps, oldest first: the first hits and then the event draws of each,
/// one run after another in one ring of 8-byte entries. Forgetting the oldest run frees
/// nothing and keeping a new one allocates nothing once the ring has grown to its budget.
/// A vector per run fragmented the heap instead: runs of every size freed and allocated
/// thousands of times over left the allocator holding memory nothing used, and the correct
/// raft_kv fuzz target's RSS went on growing by about 2 KB an execution after the budget was
/// full (`fuzz/README.md`, "Memory over long campaigns").
#[derive(Default)]
struct KeptRuns {
    /// First hits (feature, clock), then event draws (label id, clock), of every span in
    /// `order`, in that order.
    entries: VecDeque<(u32, u32)>,
    /// How many entries were dropped from the front so far: `entries[i]` is entry number
    /// `dropped + i` of all ever kept.
    dropped: u64,
    /// Every kept span, oldest first. A run of an input that ran again is left in place (its
    /// entries are dropped in turn) and no longer in `by_hash`.
    order: VecDeque<Span>,
    /// By a hash of the input's bytes: the newest span of its run.
    by_hash: BTreeMap<u64, Span>,
}

/// Where one kept run's entries are in [`KeptRuns::entries`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    hash: u64,
    /// The number of its first entry (see [`KeptRuns::dropped`]).
    start: u64,
    hits: u32,
    events: u32,
    /// How many draws the run made.
    draws: u32,
}

impl Span {
    fn len(&self) -> usize {
        self.hits as usize + self.events as usize
    }
}

impl KeptRuns {
    /// Keeps what the run of the input with this hash did, as its newest run, forgetting the
    /// oldest runs while more than `max_runs` runs or `max_bytes` bytes (8 per entry and
    /// [`OBSERVED_RUN_OVERHEAD_BYTES`] per run) would be kept. The ring grows to at most
    /// `max_bytes` of entries. A run too large for the budget on its own is not kept.
    fn remember(&mut self, hash: u64, run: &ObservedRun, max_runs: usize, max_bytes: usize) {
        let span = Span {
            hash,
            start: self.dropped + self.entries.len() as u64,
            hits: run.first_hits.len() as u32,
            events: run.trace.event_clocks.len() as u32,
            draws: run.trace.draws,
        };
        let cost = |entries: usize, runs: usize| {
            entries * std::mem::size_of::<(u32, u32)>() + runs * OBSERVED_RUN_OVERHEAD_BYTES
        };
        self.by_hash.remove(&hash);
        if cost(span.len(), 1) > max_bytes || max_runs == 0 {
            return;
        }
        while !self.order.is_empty()
            && (self.order.len() >= max_runs
                || cost(self.entries.len() + span.len(), self.order.len() + 1) > max_bytes)
        {
            self.forget_oldest();
        }
        let needed = self.entries.len() + span.len();
        if needed > self.entries.capacity() {
            // An eighth more than needed, never past the budget: a ring cycles through all
            // of its capacity, so every page of it ends up resident, used or not. (Doubling
            // left registry, whose 65,536 runs need 130-160 MB, with a 256 MiB ring.)
            let ring_max = max_bytes / std::mem::size_of::<(u32, u32)>();
            let target = (needed + needed / 8).clamp(needed, ring_max.max(needed));
            self.entries.reserve_exact(target - self.entries.len());
        }
        self.entries.extend(run.first_hits.iter().copied());
        self.entries.extend(
            run.trace
                .event_clocks
                .iter()
                .map(|&(id, clock)| (u32::from(id), clock)),
        );
        self.order.push_back(span);
        self.by_hash.insert(hash, span);
    }

    fn forget_oldest(&mut self) {
        let Some(oldest) = self.order.pop_front() else {
            return;
        };
        self.entries.drain(..oldest.len());
        self.dropped += oldest.len() as u64;
        if self.by_hash.get(&oldest.hash) == Some(&oldest) {
            self.by_hash.remove(&oldest.hash);
        }
    }

    /// The newest kept run of the input with this hash.
    fn get(&self, hash: u64) -> Option<Span> {
        self.by_hash.get(&hash).copied()
    }

    fn range(&self, span: &Span) -> std::ops::Range<usize> {
        let at = (span.start - self.dropped) as usize;
        at..at + span.len()
    }

    /// The label features the run reached, each with the draw clock when it first did.
    fn first_hits(&self, span: &Span) -> Vec<(u32, u32)> {
        let at = self.range(span).start;
        self.entries
            .range(at..at + span.hits as usize)
            .copied()
            .collect()
    }

    /// The run's event draws in order ([`DrawTrace::event_clocks`]).
    fn event_clocks(&self, span: &Span) -> Vec<(u16, u32)> {
        let range = self.range(span);
        self.entries
            .range(range.start + span.hits as usize..range.end)
            .map(|&(id, clock)| (id as u16, clock))
            .collect()
    }
}

impl Observed {
    /// Archives `data` for every feature of `first_hits` its run was the first to reach
    /// (`runs_reaching` already counts it). Past `max_bytes`, drops the entries of the most
    /// reached quarter of the archived features, in one pass, so the cost is paid once per
    /// quarter's growth.
    fn archive_firsts(&mut self, data: &[u8], first_hits: &[(u32, u32)], max_bytes: usize) {
        let input: Rc<[u8]> = data.into();
        for &(feature, clock) in first_hits {
            if self.runs_reaching.get(&feature) != Some(&1) {
                continue;
            }
            let archive = &mut self.archive;
            if let Some((old, _)) = archive.firsts.insert(feature, (input.clone(), clock)) {
                archive.bytes -= old.len();
            } else {
                archive.keys.push(feature);
            }
            archive.bytes += input.len();
        }
        if self.archive.bytes <= max_bytes {
            return;
        }
        let reach = |feature: &u32| self.runs_reaching.get(feature).copied().unwrap_or(0);
        let mut by_reach: Vec<(u64, u32)> =
            self.archive.keys.iter().map(|f| (reach(f), *f)).collect();
        by_reach.sort_unstable();
        let keep = by_reach.len() - by_reach.len() / 4;
        for &(_, feature) in &by_reach[keep..] {
            if let Some((input, _)) = self.archive.firsts.remove(&feature) {
                self.archive.bytes -= input.len();
            }
        }
        let firsts = &self.archive.firsts;
        self.archive.keys.retain(|key| firsts.contains_key(key));
        debug_assert_eq!(self.archive.keys.len(), self.archive.firsts.len());
    }
}

/// A fresh future of an archived input, cut just after the state it was the first to reach:
/// of [`ARCHIVE_PICKS`] archived states drawn at random, the one fewest runs reached. `None`
/// when the archive is empty.
fn archive_future(rng: &mut Seeded) -> Option<Vec<u8>> {
    let (input, clock, seed) = OBSERVED.with(|observed| {
        let observed = observed.borrow();
        let archive = &observed.archive;
        if archive.keys.is_empty() {
            return None;
        }
        // The rarest of a few features drawn at random: biased toward rare states at a cost
        // that does not grow with the archive.
        let feature = (0..ARCHIVE_PICKS)
            .map(|_| {
                archive.keys[rng.draw("mutate.archive.pick", archive.keys.len() as u64) as usize]
            })
            .min_by_key(|feature| observed.runs_reaching.get(feature).copied().unwrap_or(0))?;
        let (input, clock) = archive.firsts.get(&feature)?.clone();
        let (_, seed) = observed.profiles.seed(rng);
        Some((input, clock, seed))
    })?;
    let mut lanes = LaneBuffers::parse(&input);
    let cut = clock.saturating_add(rng.draw("mutate.future.after", 4) as u32);
    add_future(&mut lanes, cut, seed);
    Some(lanes.to_bytes())
}

/// How many draws the run of `data` made if this thread ran it recently, otherwise the most
/// any run made (0 before the first).
fn observed_draws(data: &[u8]) -> u32 {
    OBSERVED.with(|observed| {
        let observed = observed.borrow();
        observed
            .runs
            .get(stable_hash_bytes(data))
            .map_or(observed.most_draws, |run| run.draws)
    })
}

/// Adds a fault decision drawn just after a rare state the run of `data` reached (see
/// [`add_fault_after`]). False when the run is unknown.
fn mutate_fault_after_rare_state(data: &[u8], lanes: &mut LaneBuffers, rng: &mut Seeded) -> bool {
    let Some(clock) = cut_after_rare_state(data, rng) else {
        return false;
    };
    OBSERVED.with(|observed| {
        let observed = observed.borrow();
        observed
            .runs
            .get(stable_hash_bytes(data))
            .is_some_and(|run| {
                add_fault_after(lanes, clock, &observed.runs.event_clocks(&run), rng)
            })
    })
}

/// Adds one fault decision among those a run drew just after draw clock `clock`: a label
/// picked among those it drew events under in the next 64 event draws (`FAULT_WINDOW_DRAWS`),
/// at its first, second or third draw after `clock`. `event_clocks` are the run's event draws
/// in order (label id, clock; [`DrawTrace::event_clocks`]). Every other decision
/// stays as it was, so the fault lands on the state reached at `clock` — a crash of the
/// leader right as it commits, say. False when the run drew no event after `clock`.
pub fn add_fault_after(
    lanes: &mut LaneBuffers,
    clock: u32,
    event_clocks: &[(u16, u32)],
    rng: &mut Seeded,
) -> bool {
    let start = event_clocks.partition_point(|&(_, at)| at <= clock);
    let window = &event_clocks[start..event_clocks.len().min(start + FAULT_WINDOW_DRAWS)];
    let mut labels: Vec<u16> = window.iter().map(|&(id, _)| id).collect();
    labels.sort_unstable();
    labels.dedup();
    if labels.is_empty() {
        return false;
    }
    let id = labels[rng.draw("mutate.fault.label", labels.len() as u64) as usize];
    let before = event_clocks[..start]
        .iter()
        .filter(|&&(i, _)| i == id)
        .count() as u32;
    let ordinal = before + rng.draw("mutate.fault.later", 3) as u32;
    let mut events = lanes.events();
    events.push((id, ordinal.min(MAX_EVENT_ORDINAL)));
    events.sort_unstable();
    events.dedup();
    lanes.set_events(&events);
    true
}

/// A run drawn wholly from a future with this seed: what a seed sweep runs, at the future's
/// [fault intensity](Future::fault_intensity) and [focus](Future::fault_focus). A hunt needs
/// runs that owe nothing to its corpus: a bug that needs several faults anywhere in the run,
/// and no rare state first (raft-kv's `ack-before-fsync`), is found by such runs, and their
/// odds rise with the rate of the right faults, which the seed's profile varies.
pub fn fresh_run(seed: u32) -> Vec<u8> {
    let mut lanes = LaneBuffers::default();
    lanes.set_futures(&[Future { cut: 0, seed }]);
    lanes.to_bytes()
}

/// Gives the run a fresh future from draw `cut` on, drawn from `seed`: futures the input had
/// from that cut on are dropped, earlier ones kept. Its fault-event entries are kept too, and
/// those past the cut still fire inside the future (at the same ordinals of their labels).
pub fn add_future(lanes: &mut LaneBuffers, cut: u32, seed: u32) {
    let mut futures = lanes.futures();
    futures.retain(|future| future.cut < cut);
    futures.push(Future { cut, seed });
    lanes.set_futures(&futures);
}

/// An index into `weights`, each picked with odds proportional to its weight (one draw
/// labelled `label`); `None` when they sum to zero.
pub fn pick_weighted(weights: &[u64], label: &'static str, rng: &mut Seeded) -> Option<usize> {
    let total: u64 = weights.iter().sum();
    if total == 0 {
        return None;
    }
    let mut pick = rng.draw(label, total);
    weights.iter().position(|&w| {
        let here = pick < w;
        pick -= w.min(pick);
        here
    })
}

/// How many event draws after a rare state [`mutate_fault_after_rare_state`] looks at.
const FAULT_WINDOW_DRAWS: usize = 64;

/// A cut just after a state the run of `data` reached, picked with odds inversely
/// proportional to how many runs reached it; `None` when its run is unknown or reached none.
fn cut_after_rare_state(data: &[u8], rng: &mut Seeded) -> Option<u32> {
    OBSERVED.with(|observed| {
        let observed = observed.borrow();
        let hits = observed
            .runs
            .first_hits(&observed.runs.get(stable_hash_bytes(data))?);
        // Weights 2^20 / runs: a state reached by one run in a thousand is picked a thousand
        // times as often as one every run reaches.
        let weights: Vec<u64> = hits
            .iter()
            .map(|(feature, _)| {
                (1 << 20)
                    / observed
                        .runs_reaching
                        .get(feature)
                        .copied()
                        .unwrap_or(1)
                        .max(1)
            })
            .collect();
        let at = pick_weighted(&weights, "mutate.future.state", rng)?;
        Some(hits[at].1)
    })
}

/// Gives the run a fresh future: keeps its first `cut` draws and draws the rest from a new
/// seed; futures the input had from that cut on are dropped. The cut is, three times in four,
/// just after a rare state the run reached ([`observe_run`]), otherwise anywhere its run still
/// draws. One time in eight removes the last future instead,
/// so an input can become plain again. False when there is nothing to cut.
fn mutate_futures(data: &[u8], lanes: &mut LaneBuffers, rng: &mut Seeded) -> bool {
    let mut futures = lanes.futures();
    if !futures.is_empty() && rng.draw("mutate.future.remove", 8) == 0 {
        futures.pop();
        lanes.set_futures(&futures);
        return true;
    }
    let rare = if rng.draw("mutate.future.where", 4) == 0 {
        None
    } else {
        cut_after_rare_state(data, rng)
    };
    let cut = match rare {
        Some(clock) => clock.saturating_add(rng.draw("mutate.future.after", 4) as u32),
        None => match observed_draws(data) {
            0 => return false,
            draws => rng.draw("mutate.future.cut", u64::from(draws)) as u32,
        },
    };
    let (_, seed) = OBSERVED.with(|observed| observed.borrow().profiles.seed(rng));
    add_future(lanes, cut, seed);
    true
}

/// Adds, removes, moves or copies one event entry. False when there is nothing to work with
/// (no entries and no event draws observed).
fn mutate_events(lanes: &mut LaneBuffers, observed: &[(u16, u32)], rng: &mut Seeded) -> bool {
    let mut events = lanes.events();
    let choice = if events.is_empty() {
        0
    } else {
        rng.draw("mutate.event.op", 4)
    };
    match choice {
        // Add: a label this system draws events under, at an ordinal its runs reach.
        0 => {
            if observed.is_empty() {
                return false;
            }
            let (id, count) =
                observed[rng.draw("mutate.event.label", observed.len() as u64) as usize];
            let ordinal = rng.draw("mutate.event.ordinal", u64::from(count.max(1)));
            events.push((id, ordinal as u32));
        }
        // Remove.
        1 => {
            let at = rng.draw("mutate.event.pick", events.len() as u64) as usize;
            events.remove(at);
        }
        // Move: near its old ordinal, or anywhere its label reaches.
        2 => {
            let at = rng.draw("mutate.event.pick", events.len() as u64) as usize;
            let (id, ordinal) = events[at];
            events[at] = (id, shifted_ordinal(id, ordinal, observed, rng));
        }
        // Copy near: the same fault again, a little later or earlier.
        _ => {
            let at = rng.draw("mutate.event.pick", events.len() as u64) as usize;
            let (id, ordinal) = events[at];
            events.push((id, near_ordinal(ordinal, rng)));
        }
    }
    events.sort_unstable();
    events.dedup();
    lanes.set_events(&events);
    debug_assert_eq!(
        lanes.dense(Lane::Events).len() % EVENT_ENTRY_BYTES,
        0,
        "set_events writes whole entries"
    );
    true
}

fn shifted_ordinal(id: u16, ordinal: u32, observed: &[(u16, u32)], rng: &mut Seeded) -> u32 {
    let reached = observed
        .iter()
        .find(|&&(seen, _)| seen == id)
        .map_or(ordinal.saturating_add(1), |&(_, count)| count.max(1));
    if rng.draw("mutate.event.far", 4) == 0 {
        return rng.draw("mutate.event.ordinal", u64::from(reached)) as u32;
    }
    near_ordinal(ordinal, rng)
}

/// An ordinal a few draws before or after `ordinal`.
fn near_ordinal(ordinal: u32, rng: &mut Seeded) -> u32 {
    let delta = 1 + rng.draw("mutate.event.near", NEAR_ORDINALS) as u32;
    if rng.draw("mutate.event.sign", 2) == 0 {
        ordinal.saturating_add(delta).min(MAX_EVENT_ORDINAL)
    } else {
        ordinal.saturating_sub(delta)
    }
}

/// Edits one dense lane: a byte set to a new value, or a short run deleted, duplicated or
/// zeroed. Always edits something (an empty lane grows by one byte).
fn mutate_dense(lanes: &mut LaneBuffers, rng: &mut Seeded) -> bool {
    let weights = DENSE_WEIGHTS.map(|(_, w)| w);
    let lane = pick_weighted(&weights, "mutate.dense.lane", rng)
        .map_or(Lane::Workload, |i| DENSE_WEIGHTS[i].0);
    let bytes = lanes.dense_mut(lane);
    let len = bytes.len();
    // Positions up to a few past the end, so a lane can grow into draws it did not reach.
    let at = rng.draw("mutate.dense.at", len as u64 + 4) as usize;
    if at >= len {
        bytes.resize(at + 1, 0);
    }
    match rng.draw("mutate.dense.op", 8) {
        0..=1 => bytes[at] = rng.draw("mutate.dense.value", 256) as u8,
        2 => bytes[at] = bytes[at].wrapping_add(1),
        3 => bytes[at] = bytes[at].wrapping_sub(1),
        4 => bytes[at] = if bytes[at] == 0 { 255 } else { 0 },
        5 => {
            let run = (1 + rng.draw("mutate.dense.run", 8) as usize).min(bytes.len() - at);
            bytes.drain(at..at + run);
        }
        6 => {
            let run = (1 + rng.draw("mutate.dense.run", 8) as usize).min(bytes.len() - at);
            let copy: Vec<u8> = bytes[at..at + run].to_vec();
            bytes.splice(at..at, copy);
        }
        _ => {
            let run = (1 + rng.draw("mutate.dense.run", 8) as usize).min(bytes.len() - at);
            bytes[at..at + run].fill(0);
        }
    }
    true
}

/// The largest prefix length of `bytes` (a canonical section list) that ends on a section
/// boundary and is at most `limit`.
fn section_boundary_at_most(bytes: &[u8], limit: usize) -> usize {
    let mut end = 0;
    while end < bytes.len() {
        let next =
            (end + 2 + usize::from(bytes.get(end + 1).copied().unwrap_or(0))).min(bytes.len());
        if next > limit {
            break;
        }
        end = next;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::lanes::label_id;

    fn sample() -> Vec<u8> {
        let mut lanes = LaneBuffers::default();
        lanes.dense_mut(Lane::Workload).extend_from_slice(&[5; 40]);
        lanes.dense_mut(Lane::Schedule).extend_from_slice(&[1; 300]);
        lanes.push_event(label_id("nemesis.crash"), 3);
        lanes.push_event(label_id("net.fault.partition"), 11);
        lanes.to_bytes()
    }

    /// Whether `out` is a [`fresh_run`]: one future from the first draw, nothing else.
    fn is_fresh_run(out: &[u8]) -> bool {
        match LaneBuffers::parse(out).futures()[..] {
            [only] => out == fresh_run(only.seed),
            _ => false,
        }
    }

    #[test]
    fn fresh_mutants_are_fresh_runs() {
        assert_eq!(MutatorChoice::parse("fresh"), Ok(MutatorChoice::Fresh));
        for seed in 0..200 {
            let out = fresh_mutant(4096, seed).expect("a fresh run fits in 4,096 bytes");
            assert!(is_fresh_run(&out), "seed {seed}: {out:?}");
        }
        assert_eq!(
            fresh_mutant(1, 7),
            None,
            "a run that does not fit is declined"
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_mutation() {
        let input = sample();
        for seed in 0..300 {
            assert_eq!(mutate(&input, 4096, seed), mutate(&input, 4096, seed));
        }
    }

    #[test]
    fn an_event_edit_leaves_every_dense_lane_alone() {
        let input = sample();
        let before = LaneBuffers::parse(&input);
        let mut event_edits = 0;
        for seed in 0..2000 {
            let Some(out) = mutate(&input, 4096, seed) else {
                continue;
            };
            let after = LaneBuffers::parse(&out);
            if after.events() != before.events() && !is_fresh_run(&out) {
                event_edits += 1;
                for (lane, _) in DENSE_WEIGHTS {
                    assert_eq!(
                        after.dense(lane),
                        before.dense(lane),
                        "seed {seed}, {lane:?}"
                    );
                }
            }
        }
        assert!(event_edits > 200, "{event_edits} event edits in 2000 calls");
    }

    #[test]
    fn a_future_edit_keeps_every_other_lane_of_an_archived_input_and_cuts_after_its_rare_state() {
        let input = sample();
        let common = {
            let mut lanes = LaneBuffers::default();
            lanes.dense_mut(Lane::Workload).push(9);
            lanes.to_bytes()
        };
        // `common` was first to reach a state 50 runs reach (clock 3); `input` was first to
        // reach a rare one (clock 40), after the common state at clock 10.
        for _ in 0..50 {
            observe_run(&common, vec![(7, 3)], DrawTrace::default());
        }
        observe_run(&input, vec![(7, 10), (9, 40)], DrawTrace::default());
        let (mut futures, mut near_rare, mut fresh) = (0, 0, 0);
        for seed in 0..2000 {
            // The engine picked some other input: archived runs are what futures continue.
            let Some(out) = mutate(&[], 4096, seed) else {
                continue;
            };
            let after = LaneBuffers::parse(&out);
            if after.futures().is_empty() {
                continue;
            }
            if is_fresh_run(&out) {
                fresh += 1;
                continue;
            }
            futures += 1;
            let cut = after.futures()[0].cut;
            let base = if (40..44).contains(&cut) {
                near_rare += 1;
                LaneBuffers::parse(&input)
            } else {
                assert!((3..7).contains(&cut), "seed {seed}: cut {cut}");
                LaneBuffers::parse(&common)
            };
            for lane in Lane::ALL.into_iter().filter(|&l| l != Lane::Futures) {
                assert_eq!(after.dense(lane), base.dense(lane), "seed {seed}, {lane:?}");
            }
        }
        assert!(futures > 300, "{futures} future edits in 2000 calls");
        assert!(fresh > 300, "{fresh} fresh runs in 2000 calls");
        // The rarer of two archived states is picked unless all eight draws miss it.
        assert!(
            near_rare * 100 > futures * 95,
            "{near_rare} of {futures} cuts just after the rare state"
        );
    }

    #[test]
    fn a_future_edit_of_the_engines_pick_cuts_after_its_rare_state_while_nothing_is_archived() {
        let input = sample();
        let before = LaneBuffers::parse(&input);
        let mut observed = Observed::default();
        // A run the mutator saw, archived nothing of (it was not the first to reach anything).
        observed.runs_reaching.insert(7, 50);
        observed.runs_reaching.insert(9, 2);
        observed.remember(
            stable_hash_bytes(&input),
            ObservedRun {
                first_hits: vec![(7, 10), (9, 40)],
                trace: DrawTrace::default(),
            },
            64,
            1_000,
        );
        OBSERVED.with(|o| *o.borrow_mut() = observed);
        let (mut futures, mut near_rare) = (0, 0);
        for seed in 0..2000 {
            let Some(out) = mutate(&input, 4096, seed) else {
                continue;
            };
            let after = LaneBuffers::parse(&out);
            if after.futures() == before.futures() || is_fresh_run(&out) {
                continue;
            }
            futures += 1;
            for lane in Lane::ALL.into_iter().filter(|&l| l != Lane::Futures) {
                assert_eq!(
                    after.dense(lane),
                    before.dense(lane),
                    "seed {seed}, {lane:?}"
                );
            }
            near_rare += u32::from((40..44).contains(&after.futures()[0].cut));
        }
        assert!(futures > 300, "{futures} future edits in 2000 calls");
        // Three in four cuts follow a state the run reached, weighted 25:1 towards the rare one.
        assert!(
            near_rare * 2 > futures,
            "{near_rare} of {futures} cuts just after the rare state"
        );
    }

    #[test]
    fn the_archive_keeps_the_first_reacher_of_each_state_and_sheds_common_states_first() {
        let mut observed = Observed::default();
        let offer = |observed: &mut Observed, input: &[u8], hits: &[(u32, u32)]| {
            for &(feature, _) in hits {
                *observed.runs_reaching.entry(feature).or_insert(0) += 1;
            }
            observed.archive_firsts(input, hits, 40);
        };
        offer(&mut observed, &[1; 10], &[(1, 5), (2, 6)]);
        // A later run that also reaches state 1 does not replace its first reacher.
        offer(&mut observed, &[2; 10], &[(1, 7), (3, 8)]);
        assert_eq!(observed.archive.firsts[&1].0[..], [1; 10]);
        assert_eq!(observed.archive.firsts[&3], (Rc::from(&[2u8; 10][..]), 8));
        assert_eq!(observed.archive.bytes, 30);
        // Past 40 bytes the most reached quarter goes: state 1 (two runs reached it).
        offer(&mut observed, &[4; 20], &[(4, 1)]);
        let kept: Vec<u32> = observed.archive.firsts.keys().copied().collect();
        assert_eq!(kept, [2, 3, 4]);
        assert_eq!(observed.archive.keys.len(), 3);
        assert_eq!(observed.archive.bytes, 40);
    }

    #[test]
    fn a_fault_after_a_rare_state_lands_on_a_draw_that_follows_it() {
        let mut before = LaneBuffers::default();
        before.dense_mut(Lane::Workload).extend_from_slice(&[4; 20]);
        let input = before.to_bytes();
        let crash = label_id("nemesis.crash");
        let loss = label_id("net.fault.loss");
        // Event draws of the run: crash ticks at clocks 5, 15, 25...; a loss draw at 31.
        let mut clocks: Vec<(u16, u32)> = (0..10).map(|i| (crash, 5 + 10 * i)).collect();
        clocks.push((loss, 31));
        clocks.sort_by_key(|&(_, at)| at);
        let trace = DrawTrace {
            draws: 120,
            event_clocks: clocks,
        };
        observe_run(&input, vec![(11, 30)], trace);
        let mut added = Vec::new();
        for seed in 0..3000 {
            let mut rng = Seeded::new(seed);
            let mut lanes = before.clone();
            if mutate_fault_after_rare_state(&input, &mut lanes, &mut rng) {
                let new: Vec<(u16, u32)> = lanes
                    .events()
                    .into_iter()
                    .filter(|e| !before.events().contains(e))
                    .collect();
                assert_eq!(new.len(), 1, "one event added");
                added.push(new[0]);
            }
        }
        assert!(!added.is_empty());
        // Crash draws 3, 4, 5 (clocks 35, 45, 55) follow the state at clock 30; loss draw 0
        // (clock 31) does.
        for &(id, ordinal) in &added {
            if id == crash {
                assert!((3..=5).contains(&ordinal), "crash ordinal {ordinal}");
            } else {
                assert_eq!(id, loss);
                assert!(ordinal <= 2, "loss ordinal {ordinal}");
            }
        }
        assert!(
            added.iter().any(|&(id, _)| id == crash) && added.iter().any(|&(id, _)| id == loss)
        );
    }

    #[test]
    fn outputs_respect_the_size_limit_for_any_input() {
        let inputs: Vec<Vec<u8>> = vec![
            vec![],
            vec![255],
            vec![0, 255, 1, 2, 3],
            (0..=255).collect(),
            sample(),
        ];
        for input in &inputs {
            for seed in 0..500 {
                for limit in [0, 3, 17, 300, 4096] {
                    if let Some(out) = mutate(input, limit, seed) {
                        assert!(out.len() <= limit);
                    }
                    let child = crossover(input, &sample(), limit, seed);
                    assert!(child.len() <= limit);
                }
            }
        }
    }

    #[test]
    fn a_mutant_handed_back_unstacks_to_the_input_it_was_made_from() {
        let base = sample();
        let mutant = (0..100u32)
            .find_map(|seed| mutate(&base, 4096, seed).filter(|m| *m != base))
            .expect("some seed edits the sample");
        note_mutant(&base, &mutant);
        assert_eq!(unstack(&mutant), Some(base.clone()));
        // Any other input, the base itself included, is mutated as it is.
        assert_eq!(unstack(&base), None);
        assert_eq!(unstack(&[]), None);
        // Only the last mutant is remembered.
        note_mutant(&mutant, &base);
        assert_eq!(unstack(&mutant), None);
    }

    #[test]
    fn crossover_takes_events_from_both_parents() {
        let mut a = LaneBuffers::default();
        a.push_event(label_id("nemesis.crash"), 1);
        let mut b = LaneBuffers::default();
        b.push_event(label_id("net.fault.partition"), 2);
        let both = (0..200)
            .map(|seed| LaneBuffers::parse(&crossover(&a.to_bytes(), &b.to_bytes(), 4096, seed)))
            .filter(|child| child.events().len() == 2)
            .count();
        assert!(both > 20, "{both} of 200 children kept both events");
    }

    #[test]
    fn a_cut_child_ends_on_a_section_boundary() {
        let bytes = sample();
        for limit in 0..bytes.len() {
            let end = section_boundary_at_most(&bytes, limit);
            assert!(end <= limit);
            // Re-cutting the prefix changes nothing: it is whole sections.
            assert_eq!(
                LaneBuffers::parse(&bytes[..end]).to_bytes(),
                bytes[..end].to_vec()
            );
        }
    }

    /// A run with one first hit (feature 1 at clock `draws`) and `events` event draws (label
    /// 7 at clocks 0..), as [`observe_run`] gets it.
    fn observed_run(draws: u32, events: u32) -> ObservedRun {
        ObservedRun {
            first_hits: vec![(1, draws)],
            trace: DrawTrace {
                draws,
                event_clocks: (0..events).map(|clock| (7, clock)).collect(),
            },
        }
    }

    /// The kept run of `hash` as [`observed_run`] made it: (draws, event draws).
    fn kept(observed: &Observed, hash: u64) -> Option<(u32, usize)> {
        let span = observed.runs.get(hash)?;
        assert_eq!(observed.runs.first_hits(&span), [(1, span.draws)]);
        let events = observed.runs.event_clocks(&span);
        assert!(events.iter().enumerate().all(|(i, &e)| e == (7, i as u32)));
        Some((span.draws, events.len()))
    }

    /// The mutator's memory stays within its byte budget, however long the runs, and forgets
    /// the oldest runs first.
    #[test]
    fn the_memory_of_runs_forgets_the_oldest_past_its_budget() {
        let mut observed = Observed::default();
        // A run of 99 event draws and one first hit: 100 entries of 8 bytes, plus overhead.
        let one = 800 + OBSERVED_RUN_OVERHEAD_BYTES;
        for hash in 0..100 {
            observed.remember(hash, observed_run(hash as u32, 99), 64, 10 * one);
        }
        // Ten such runs fit; the newest ten are the ones kept, each as it was.
        assert_eq!(
            observed.runs.by_hash.keys().copied().collect::<Vec<_>>(),
            (90..100).collect::<Vec<_>>()
        );
        assert_eq!(kept(&observed, 93), Some((93, 99)));
        // Running a kept input again makes it the newest; its old run is dropped in turn.
        observed.remember(95, observed_run(1_000, 9), 64, 10 * one);
        assert_eq!(kept(&observed, 90), None, "room was made");
        assert_eq!(kept(&observed, 95), Some((1_000, 9)));
        for hash in 100..106 {
            observed.remember(hash, observed_run(hash as u32, 99), 64, 10 * one);
        }
        // 91..96 are gone, the old run of 95 with them; its new run is kept.
        assert_eq!(kept(&observed, 96), None);
        assert_eq!(kept(&observed, 95), Some((1_000, 9)));
        assert_eq!(kept(&observed, 105), Some((105, 99)));
        // A count of runs bounds it too.
        for hash in 200..300 {
            observed.remember(hash, observed_run(hash as u32, 0), 64, 10 * one);
        }
        assert_eq!(observed.runs.order.len(), 64);
        assert_eq!(observed.runs.order.front().map(|s| s.hash), Some(236));
        assert_eq!(kept(&observed, 236), Some((236, 0)));
    }

    /// What the kept runs take in memory is the ring as allocated: it never grows past the
    /// budget, however many runs of whatever sizes come and go, and every kept run reads back
    /// as it was stored.
    #[test]
    fn the_memory_of_runs_never_allocates_past_its_budget() {
        let mut observed = Observed::default();
        let budget = 50_000;
        for hash in 0..10_000u64 {
            let events = (hash * 7919 % 600) as u32;
            observed.remember(hash, observed_run(hash as u32, events), 1 << 16, budget);
            let held = observed.runs.entries.capacity() * 8;
            assert!(
                held <= budget,
                "after {hash} runs: {held} bytes held, budget {budget}"
            );
        }
        assert!(observed.runs.order.len() > 10);
        for span in &observed.runs.order {
            let events = (span.hash * 7919 % 600) as usize;
            assert_eq!(kept(&observed, span.hash), Some((span.hash as u32, events)));
        }
        // When the count of runs binds first, the ring stays near what the runs need: it is
        // resident in full once it has cycled, so spare room is memory held for nothing.
        let mut fewer = Observed::default();
        let mut most_kept = 0;
        for hash in 0..10_000u64 {
            let events = (hash * 7919 % 600) as u32;
            fewer.remember(hash, observed_run(hash as u32, events), 10, 1 << 30);
            most_kept = most_kept.max(fewer.runs.entries.len());
        }
        let capacity = fewer.runs.entries.capacity();
        assert!(
            capacity <= most_kept + most_kept / 8 + 601,
            "{capacity} entries allocated, at most {most_kept} kept"
        );
        // A run larger than the whole budget is not kept, and nothing else is lost for it.
        let before = observed.runs.order.len();
        observed.remember(1 << 40, observed_run(0, 100_000), 1 << 16, budget);
        assert_eq!(kept(&observed, 1 << 40), None);
        assert_eq!(observed.runs.order.len(), before);
    }

    /// The profile whose fresh runs keep finding new label features is picked most of the
    /// time, and every profile is still tried now and then.
    #[test]
    fn the_profile_that_finds_new_states_is_picked_most() {
        let mut profiles = ProfileChoice::default();
        let mut rng = Seeded::new(3);
        let mut picks = [0u32; FAULT_PROFILES.len()];
        for _ in 0..4_000 {
            let (arm, seed) = profiles.seed(&mut rng);
            assert_eq!(
                seed & !((1 << PROFILE_FREE_SEED_BITS) - 1) & !LONGEST_WORKLOAD_BIT,
                FAULT_PROFILES[arm]
            );
            // Every future runs the longest workload, whatever its profile.
            assert_ne!(seed & LONGEST_WORKLOAD_BIT, 0);
            picks[arm] += 1;
            // Only profile 5 (crashes at 8x) reaches new states.
            profiles.observe(arm, if arm == 5 { 3 } else { 0 });
        }
        assert!(picks[5] > 3_000, "{picks:?}");
        assert!(picks.iter().all(|&n| n > 20), "{picks:?}");
    }
}
