//! The shrinker: reduce a failing input while the *same* failure still occurs.
//!
//! Works on stable Rust, without libFuzzer, over the **choice sequence**: the draw log of a
//! run (label, bound, value), which [`crate::choice::encode`] turns into the bytes that
//! replay it. Every edit is made on whole draws, so it stays aligned with choice boundaries
//! (a draw's byte width follows from its bound, see [`crate::choice::bytes_for_bound`]).
//!
//! # The search
//!
//! Passes in the style of Hypothesis, repeated until a whole round changes nothing:
//!
//! 1. **delete operations**: the draws of one workload operation (from its
//!    [`crate::sim::op_start`] to the next one's) go as one block, alone and together with
//!    lowering a draw made before the first operation by one (the operation *count*, in a
//!    workload that draws one up front); then zero an operation's block;
//! 2. **cut the tail**: keep only a prefix of the draws (the rest read as defaults);
//! 3. **delete blocks** of 8, 4, 2 and 1 consecutive draws;
//! 4. **zero blocks** of 8, 4, 2 and 1 consecutive draws;
//! 5. **lower values**: each integer, and each byte of a raw draw, to 0, else by binary search;
//! 6. **zero with dependents**: zero a choice and delete the one or two draws after it;
//! 7. **sort operations**: swap adjacent operations whose blocks are out of order.
//!
//! # Two searches
//!
//! Which failing input a greedy search ends at depends on the order it tries things in, and
//! on a long run with periodic traffic the classic order above often gets stuck: deleting one
//! early operation or one quiet period changes how much virtual time passes before the rest,
//! hence how many heartbeats (each with a latency draw) are sent meanwhile, and since a draw
//! is a *position* in its lane's stream every later message then reads another latency. The
//! timing the failure needs is lost, so each single deletion is refused. So the shrinker runs
//! two searches from the same start, sharing the run budget, and keeps the better result
//! (fewer events, then shortlex):
//!
//! * **structure first**: each round begins with three passes that remove several things at
//!   once: **runs of operations** (half of them, a quarter, ..., two; delta debugging over
//!   operations, with the count lowered to match), **idle stretches** (a non-zero workload
//!   choice such as a quiet period zeroed together with every draw the system made while the
//!   workload waited), and, once few operations are left, **an operation with one other
//!   choice** zeroed (an operation that only let time pass, with whatever made the wait
//!   necessary). While they make the run shorter (fewer events or operations) the round
//!   starts over; once they do not, the **keyed passes** below run, then the passes above;
//! * **classic**: the passes above alone, in that order, with what budget is left.
//!
//! The second keeps the shrinker at least as good as the classic order alone wherever the
//! budget allows both. Measured on the registry (three planted bugs, 56 failing seeds with
//! 10 or more operations), the median shrunk story went from 14, 20 and 29 lines to 14, 10
//! and 21, the worst from 161 to 51; reply-reinsert seed 1037 from 161 lines to 15.
//!
//! # Keyed edits
//!
//! The lanes ([`crate::choice::lanes`]) keep one *kind* of decision from re-mapping another,
//! but within a lane a draw is still a position: delete a fault and the messages it would
//! have dropped are delivered and answered, their latency draws take the bytes of later
//! messages, and the rest of the run is another run. So the keyed passes do not run their
//! edits as bytes. A keyed candidate is the best's draw log, edited, with the virtual time
//! each draw was made at ([`crate::choice::DrawLog::time_marks`], which the run loop feeds
//! through [`crate::choice::Source::mark_time`]) and the node each was made for
//! ([`crate::choice::DrawLog::node_marks`], from [`crate::choice::Source::mark_node`]); it
//! runs on a source that answers each draw with the intended draw of the same label made
//! for the same node at the same instant, and a draw the edit made appear with the default.
//! A deleted decision then leaves every other with the value it had: the messages sent at
//! 300 ms read the latencies they read before, whatever happened at 100 ms. Two kinds of
//! draw are read otherwise, because an instant does not carry their meaning: a
//! **workload** choice takes its node's intended draw of this instant if there is one, else
//! its node's next unused one (a client's next operation is its next operation, even if it
//! now starts sooner, and never another client's; a replica's election timeout keeps its
//! value where it is drawn when it was, and one drawn at a moment the edit moved takes that
//! replica's next timeout rather than the minimum, which would give every replica the same
//! one and split the votes), and a **fault** whose draw is not made at its instant fires at
//! the next draw of its label for its node, with the parameters it drew (a crash whose tick
//! now comes 30 ms later draws the target and downtime it drew). An edit that does not keep
//! the failure so is run once more matched by label alone (workload choices then in order,
//! whichever node draws them): what one order of matching loses, the other sometimes
//! keeps. What is kept is what the run drew, encoded as plain lanes, so the result is an
//! ordinary byte input, verified as below. The keyed passes:
//!
//! * **delete faults**: the fired fault events, half of them at once, a quarter, ..., one;
//! * **lower operation counts**: each count (a draw the run shows to count a node's
//!   operations: `op_counts`) to 0,
//!   else by binary search, so each client's last operations go;
//! * **delete operations**: each one's definition (the workload draws its node made right
//!   before its start) with its node's operation count lowered by one; runs of operations
//!   are tried keyed too, side by side;
//! * **zero workload choices**: each non-zero one (a quiet period, a key, a timeout);
//! * **move faults earlier**: each fired event to the earliest earlier draw of its label
//!   (binary search) that still fails the same way, with its parameters;
//! * **cut time before a fault**: every draw from an earlier draw of the fault's label up to
//!   the fault deleted, and the fault and everything after it that much sooner.
//!
//! Measured on 15 long failures (at least 1,000 events and 6 operations, default faults on:
//! two of each of raft-kv's five bugs, five of the registry's three bugs; `shrink_study`
//! lists them), with the default budget of 10,000 runs: before the keyed passes, with them
//! matching by label alone, and matching per node first:
//!
//! | | median events after / before | median operations after | median (worst) shrink |
//! |---|---|---|---|
//! | raft-kv, 10 failures | 0.820 → 0.535 → 0.496 | 7 → 5 → 4 | 3.8 s (11.6 s) → 3.7 s (7.9 s) → 3.5 s (7.6 s) |
//! | registry, 5 failures | 0.084 → 0.080 → 0.080 | 2 → 2 → 2 | 0.7 s (1.1 s) → 0.3 s (0.9 s) → 0.3 s (0.8 s) |
//! | all 15 | 0.541 → 0.425 → 0.386 | 6 → 4 → 4 | 3.1 s (11.6 s) → 2.6 s (7.9 s) → 2.6 s (7.6 s) |
//!
//! Per node, raft-kv's geometric mean went from 0.54 to 0.49; stale-read 518 from 651 of
//! 2,772 events to 378, old-term-commit 7858 from 1,141 to 1,090 and 100004812 from 1,655
//! events and 5 operations to 1,505 and 4, ack-before-fsync 100022177 from 816 events and 6
//! operations to 665 and 5, 100222918 from all 14 operations to 13, vote-not-persisted
//! 100053757 from 5 operations to 3 (566 events to 581), 100023464 from 915 events to 863.
//! Registry reply-reinsert 5942 went the other way: 89 events and 2 operations to 112 and 3.
//! Matching per node alone, without the second run by label, gave raft-kv's median 0.444
//! at 10,000 runs and 0.417 at 20,000, but 0.622 at 5,000, and on stale-read 456 with 2,000
//! runs it kept 6 operations instead of 4; with the second run the median is 0.508, 0.496
//! and 0.494 at 5,000, 10,000 and 20,000 runs: steadier, so it is kept. Matching per label
//! with the hybrid workload reading (no node) gave 0.570; matching latencies (the timing
//! lane) like workload choices, 0.651.
//!
//! A fifth of the events is out of reach for most raft-kv failures. Every run starts with
//! about 90 events of replicas opening their disks and, since every client starts its first
//! operation at once and no replica leads before the first election timeout (at least
//! 150 ms), about 100 more of clients asking replicas that answer "not leader"; every client
//! runs at least one operation (3 is the floor), and a committed operation costs about 40
//! events (request, append, two syncs, replies). So a failure that needs two elections and a
//! crash, like vote-not-persisted's, cannot go much below 400 events, about 0.4 of a
//! 1,000-event original. On commit-past-request the diverging entry sits at index 9 (an
//! AppendEntries carries at most 8), so 9 operations are the floor (21998 keeps 9).
//! Ack-before-fsync 100222918 needs a leader crash while its newest committed entry is
//! unsynced; its crash comes at 1,800 ms, after the 14th operation, and deleting earlier
//! operations moves that entry away from the crash, so the search keeps 13.
//! Where the 581 events of vote-not-persisted 100053757's shrunk run go (1,035 events and 10
//! operations before; `sim shrink --trace-json`): 228 come before any replica leads (r1 wins
//! term 1 at 164 ms; until then the replicas open their disks and elect, and the three
//! clients' first requests bounce off replicas that know no leader), 152 while those three
//! operations commit, one per client (by 230 ms), and 201 are the failure itself: a
//! partition, the leader's crash at 400 ms, r2's election, r0's crash losing its unsynced
//! vote at 600 ms, both restarts, and r1 winning term 2 again at 1,095 ms. A fifth of the
//! original is 207 events, fewer than the run needs before its first leader.
//! Reproduce with `cargo run --release -p acceptance --example shrink_study`.
//!
//! Tried and left out (before matching per node): re-aligning a failed candidate's draw log
//! with the intended one by a longest common subsequence of labels and running it again, up
//! to three rounds (on commit-past-request 21998 it kept none of the fault deletions that
//! failed by position);
//! matching draws by label and position within 50 draws instead of by instant (a draw a
//! deleted fault made appear still takes a later draw's value: on stale-read 456, 29 single
//! deletions of 76 kept the failure, 42 keyed by instant; raft-kv's study median 0.822);
//! zeroing each lane's tail alone; accepting up to 5% more events for a run with fewer
//! faults; running the keyed passes first (raft-kv's median 0.555, but registry
//! partial-batch seed 53 then shrank to 20 story lines instead of 14); a third search with
//! its own share of the budget (no gain); keeping a quarter of the budget for the classic
//! search (raft-kv's median 0.567). Four times the budget (`sim shrink --max-runs 40000`)
//! helps a little: raft-kv's median stays 0.535 (geometric mean 0.47, from 0.54), all 15 at
//! 0.269, at up to 31 s a shrink. Accepting a run with fewer events whatever its bytes (not
//! only a shortlex-smaller one) left raft-kv's median at 0.547. Cutting stretches of virtual
//! time keyed, the run's span in halves, quarters, ..., 64ths (delta debugging over time,
//! from the time marks alone): chain replication's seed 2012590 went from 507 events of
//! 1,093 to 389, but with 2,000 runs raft-kv's stale-read 456 kept 521 to 899 events
//! instead of 385 wherever in the round it ran, so it is left out.
//!
//! # What the run records, not what labels say
//!
//! The passes find a run's structure in what the run itself recorded, so a system written
//! without this crate's naming habits shrinks as well as ours: operations are the workload's
//! [`crate::sim::op_start`] marks, each with the node that started it; an operation *count*
//! is the first integer a node drew before its first operation that is at least its number
//! of operations less three (`op_counts`; a run's own operations say which node's count it is, which a
//! label cannot); faults are the fired entries of the events lane; the stretch of time a
//! fault is pulled across comes from the time marks. No pass reads a label's text beyond the lane
//! ([`crate::choice::lanes::Lane::of`]) the framework's own draws declare.
//!
//! # Budget
//!
//! A shrink stops after [`DEFAULT_MAX_RUNS`] candidate runs or [`DEFAULT_MAX_STEPS`] events
//! over all of them, whichever comes first ([`Shrinker::max_runs`], [`Shrinker::max_steps`]).
//! The second is the budget in the runs' own cost: a run of 10,000 events costs ten of 1,000,
//! so a long run's shrink ends after fewer candidates, and one that sheds events early buys
//! more. It is counted in events, not seconds, so the same input always shrinks to the same
//! result, on any machine and under any load.
//!
//! # Acceptance
//!
//! Candidates are compared in **shortlex** order of their bytes (shorter first, then
//! lexicographically smaller), and only a smaller candidate is run (a keyed edit that moves a
//! fault earlier is run even if it does not encode smaller). A candidate is accepted
//! when the run fails the same way with no more operations and no more events than the best
//! so far — a smaller input whose default schedule happens to take a longer road to the same
//! failure is no easier to read, so it is not taken; what is kept is not the candidate but
//! the draws the run *actually made*, re-encoded, smaller than the best, so every kept input
//! is one the system itself produced. Shortlex is a well-order, so the search ends; a run
//! budget bounds it as well.
//!
//! # Same failure
//!
//! By default a candidate must end in the same class with the same invariant as the original
//! ([`Outcome::same_failure`]). With several invariants, "any failure" would happily shrink
//! one bug into a different one, which looks like progress and is worse than no shrink;
//! [`Shrinker::matching`] takes the caller's own predicate instead.
//!
//! # Identities after a deletion
//!
//! Deleting an operation's draws removes the tasks and messages it created, and every task
//! and message after it is numbered one lower in the new run. That renumbering cannot make a
//! later choice mean something else, because **no draw names a task or a message by id**: a
//! scheduling draw is a position in the ready set, which is kept in spawn order (a deletion
//! keeps the relative order of every task that remains), and a tie draw is a position among
//! the events due at one instant, in schedule order. This is the difference from a shrinker
//! that records `(step, process id)` entries, where a deletion renames every later process
//! and strands its entries; here nothing needs pinning or remapping, and the shrunk input
//! stays a plain byte input that `Bytes` (and `cargo fuzz tmin`) can replay alone. Ids in
//! the shrunk *trace* (task 5, message #3) are the shrunk run's own, counted afresh.
//!
//! What positions cannot give is independence from leftovers: if the deleted operation still
//! had a message in flight or a task ready when the next one started, the ready sets after
//! the deletion differ and so may the schedule. The test
//! `deleting_an_operation_keeps_the_later_schedule` checks, on two-phase commit, that deleting
//! a transaction that started and ended quiet leaves everything after it identical up to
//! renumbering; the shrinker itself simply tries the deletion and keeps it only if the same
//! failure follows. The first operation's block also holds the draws that start the other
//! nodes, since operations are marked where they start.
//!
//! # Verification
//!
//! The result is replayed strictly from its bytes alone, twice, through the plain
//! [`Sim::run_input`] path: it must match the predicate, consume exactly its own bytes and
//! give the history hash seen while shrinking. [`Shrunk::verified`] says whether it did. If
//! nothing smaller fails the same way, the original input comes back with
//! [`Shrunk::improved`] false — never a smaller input that fails differently.
//!
//!
//! ## Where the code is
//!
//! This file holds the public API ([`Shrinker`], [`Shrunk`]) and the search's state (the
//! best candidate, its draws and their stamps). The search itself is in `search.rs` (run a
//! candidate, keep it, the fixed point over the passes); the passes are grouped by what they
//! edit: `ops.rs` (operations), `timeline.rs` (idle stretches and faults), `bytes.rs` (the
//! draws, blind to their meaning); `keyed.rs` is the source that replays an edited run
//! keyed by label, node and instant.
//! ```
//! use sim_core::choice::{Choices, Input};
//! use sim_core::shrink::Shrinker;
//! use sim_core::sim::{self, Config, Sim};
//! use std::{cell::Cell, rc::Rc};
//!
//! // Fails when any of up to 8 drawn values reaches 200.
//! fn scenario() -> Sim {
//!     let mut sim = Sim::new(Config::default());
//!     let worst = Rc::new(Cell::new(0u64));
//!     let w = worst.clone();
//!     sim.client("client", move |_| {
//!         let w = w.clone();
//!         async move {
//!             let n = sim::draw(|s| s.below("count", 8));
//!             for _ in 0..n {
//!                 let v = sim::draw(|s| s.below("value", 256));
//!                 sim::op_start(&v);
//!                 w.set(w.get().max(v));
//!             }
//!         }
//!     });
//!     sim.invariant("small", move || if worst.get() < 200 { Ok(()) } else { Err("too big".into()) });
//!     sim
//! }
//! // One section of the workload lane (tag 2, 6 bytes): a count of 7, then the values.
//! let input = Input::Bytes(vec![2, 6, 7, 3, 9, 250, 1, 255]);
//! let shrunk = Shrinker::new(scenario).run(&input).unwrap();
//! assert!(shrunk.verified && shrunk.improved);
//! assert_eq!(shrunk.outcome.invariant.as_deref(), Some("small"));
//! // One operation with the smallest value that fails, in a two-byte workload section.
//! assert_eq!(shrunk.bytes, [2, 2, 1, 200]);
//! assert_eq!(shrunk.ops_after, 1);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::choice::lanes::Lane;
use crate::choice::{encode, Draw, DrawValue, Input, Recorder};
use crate::faults::Intensity;
use crate::report::Outcome;
use crate::sim::Sim;
use crate::trace::{Event, Recording};

/// Why shrinking could not start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShrinkError {
    /// The input does not fail (with the default predicate) or does not match the caller's.
    #[error("the input does not fail in a way to shrink ({summary}); give a failing input, e.g. a seed `sim sweep` reported")]
    NotFailing {
        /// The original run's summary line.
        summary: String,
    },
    /// The bytes recorded from the original run did not replay it: a framework bug (a
    /// decision not drawn from the source, or state leaking between runs).
    #[error("the original run does not replay from its recorded bytes (hash {expected:016x} became {got:016x}); the system has a source of nondeterminism outside the input")]
    NotReplayable {
        /// History hash of the original run.
        expected: u64,
        /// History hash of the replay.
        got: u64,
    },
}

/// The result of shrinking.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The original input's bytes: as given, or for a seed its draw log re-encoded.
    pub bytes_before: Vec<u8>,
    /// The shrunk input (the original bytes if nothing smaller failed the same way).
    pub bytes: Vec<u8>,
    /// How the original run ended.
    pub outcome_before: Outcome,
    /// How the shrunk run ended (from the verifying replay).
    pub outcome: Outcome,
    /// Workload operations ([`crate::sim::op_start`] calls) in the original run.
    pub ops_before: usize,
    /// Workload operations in the shrunk run.
    pub ops_after: usize,
    /// The shrunk run's full trace.
    pub trace: Vec<Event>,
    /// True if the shrunk input replayed strictly: same failure, same bytes consumed, same
    /// history hash, twice.
    pub verified: bool,
    /// True if something smaller than the original fails the same way.
    pub improved: bool,
    /// Candidate runs made.
    pub runs: u64,
}

type Matcher<'a> = Box<dyn Fn(&Outcome) -> bool + 'a>;

/// How the shrinker makes a [`Sim`] for each run.
enum Builder<'a> {
    /// Runs on the shrinking thread.
    Local(Box<dyn Fn() -> Sim + 'a>),
    /// Each run on a thread of its own (a system with
    /// [`SystemSpec::thread_per_run`](crate::system::SystemSpec::thread_per_run)).
    ThreadPerRun(Box<dyn Fn() -> Sim + Send + Sync + 'a>),
}

/// Configures and runs a shrink. See the [module docs](self).
pub struct Shrinker<'a> {
    build: Builder<'a>,
    matches: Option<Matcher<'a>>,
    max_runs: u64,
    max_steps: u64,
}

/// The default [`Shrinker::max_runs`].
pub const DEFAULT_MAX_RUNS: u64 = 10_000;

/// The default [`Shrinker::max_steps`]: the events of 10,000 candidate runs of 10,000
/// events, about a minute at the engine's one to two million events a second. A run of up to
/// 10,000 events gets the whole run budget ([`DEFAULT_MAX_RUNS`]); a longer one is stopped by
/// this in about the same time instead.
///
/// Why this many: at a tenth of it, a shrink of openraft (an async Raft crate whose runs
/// cannot fail in fewer than about 1,500 events, its runtime's tasks and timers) stopped
/// after 1,274 candidates of an 11,398-event failure at 10,721 events; with this budget the
/// same shrink reaches 3,898 events in 10,000 candidates (31 s).
pub const DEFAULT_MAX_STEPS: u64 = 100_000_000;

impl<'a> Shrinker<'a> {
    /// Shrinks runs of the scenarios `build` makes (a fresh [`Sim`] per run).
    pub fn new(build: impl Fn() -> Sim + 'a) -> Self {
        Shrinker {
            build: Builder::Local(Box::new(build)),
            matches: None,
            max_runs: DEFAULT_MAX_RUNS,
            max_steps: DEFAULT_MAX_STEPS,
        }
    }

    /// Like [`Shrinker::new`], but every run goes on an OS thread of its own
    /// ([`crate::os::isolated`]), for systems whose code uses std's `HashMap` keys.
    pub fn thread_per_run(build: impl Fn() -> Sim + Send + Sync + 'a) -> Self {
        Shrinker {
            build: Builder::ThreadPerRun(Box::new(build)),
            matches: None,
            max_runs: DEFAULT_MAX_RUNS,
            max_steps: DEFAULT_MAX_STEPS,
        }
    }

    /// Accept a candidate when `matches` says its outcome is the failure being shrunk. The
    /// original must match too. Default: same class and invariant as the original.
    pub fn matching(mut self, matches: impl Fn(&Outcome) -> bool + 'a) -> Self {
        self.matches = Some(Box::new(matches));
        self
    }

    /// At most this many candidate runs (default [`DEFAULT_MAX_RUNS`]).
    pub fn max_runs(mut self, runs: u64) -> Self {
        self.max_runs = runs;
        self
    }

    /// At most this many events over every candidate run (default [`DEFAULT_MAX_STEPS`]):
    /// the budget in the runs' own cost, so a long run's shrink ends in about the time of a
    /// short one's, and a run that shrinks buys more candidates. Counted in events, not
    /// seconds, so a shrink stays a function of its input.
    pub fn max_steps(mut self, steps: u64) -> Self {
        self.max_steps = steps;
        self
    }

    /// Shrinks `input`.
    pub fn run(&self, input: &Input) -> Result<Shrunk, ShrinkError> {
        let original = self.execute(input, None);
        let matches: &dyn Fn(&Outcome) -> bool = match &self.matches {
            Some(m) => {
                if !m(&original.outcome) {
                    return Err(ShrinkError::NotFailing {
                        summary: original.outcome.summary_line(),
                    });
                }
                m.as_ref()
            }
            None => {
                if !original.outcome.class.is_failure() {
                    return Err(ShrinkError::NotFailing {
                        summary: original.outcome.summary_line(),
                    });
                }
                &|o: &Outcome| o.same_failure(&original.outcome)
            }
        };
        // The search starts from the draws the run made, re-encoded (a seed has no bytes of its
        // own, and bytes a run never read are dropped); a byte input is reported as given.
        let canonical = encode(&original.draws);
        let bytes_before = match input {
            Input::Bytes(given) => given.clone(),
            // A seed has no bytes of its own; flat bytes are in another encoding.
            Input::Seed(_) | Input::FlatBytes(_) => canonical.clone(),
        };
        let replayed = self.execute(&Input::Bytes(canonical), None);
        if replayed.outcome.history_hash != original.outcome.history_hash {
            return Err(ShrinkError::NotReplayable {
                expected: original.outcome.history_hash,
                got: replayed.outcome.history_hash,
            });
        }
        // Candidates may not run much longer than the original: a candidate that wanders off
        // into a long passing run is not the failure, and must not cost a million steps.
        let budget_steps = original.outcome.steps.saturating_mul(4).max(10_000);
        let start = Candidate::from_run(replayed);
        // Two searches from the same start (see "Two searches" in the module docs), the run
        // budget shared.
        let (mut runs, mut steps) = (0, 0);
        let mut results = Vec::new();
        for schedule in [Schedule::StructureFirst, Schedule::Classic] {
            let mut search = Search {
                shrinker: self,
                matches,
                budget_steps,
                best: start.clone(),
                seen: BTreeSet::new(),
                runs,
                started_at: runs,
                steps,
            };
            search.fixed_point(schedule);
            (runs, steps) = (search.runs, search.steps);
            results.push(search.best);
        }
        let best = results
            .into_iter()
            .min_by(|a, b| {
                (a.events, a.bytes.len(), &a.bytes).cmp(&(b.events, b.bytes.len(), &b.bytes))
            })
            .expect("two searches ran");
        // A byte input is never handed back longer than it came: a short input (a fuzzer's
        // seeded future, say) re-encodes to every draw its run made, and a search that shed
        // events may still be longer than what it started from. Then the input as given is
        // the answer, re-run for its trace.
        let (best, canonical) = match input {
            Input::Bytes(given) if best.bytes.len() > given.len() => {
                let mut kept = Candidate::from_run(self.execute(input, None));
                kept.bytes = given.clone();
                (kept, false)
            }
            _ => (best, true),
        };
        // invariant: every kept candidate is shortlex-smaller than the start, which is the
        // input as given or (for a seed or flat bytes) its own re-encoding, and a byte input
        // is handed back as given when the search's best is longer than it.
        assert!(
            best.bytes.len() <= bytes_before.len(),
            "a shrunk input grew: {} bytes from {}",
            best.bytes.len(),
            bytes_before.len()
        );
        let improved = shortlex_less(&best.bytes, &bytes_before);
        let (verified, outcome, trace) = self.verify(&best, matches, canonical);
        Ok(Shrunk {
            bytes_before,
            bytes: best.bytes,
            outcome_before: original.outcome,
            outcome,
            ops_before: original.ops.len(),
            ops_after: best.ops.len(),
            trace,
            verified,
            improved,
            runs,
        })
    }

    /// Replays `best` from its bytes alone, twice, through the plain path.
    /// `canonical`: `best.bytes` are its draws re-encoded (every candidate but an input handed
    /// back as given), which the replay must reproduce byte for byte.
    fn verify(
        &self,
        best: &Candidate,
        matches: &dyn Fn(&Outcome) -> bool,
        canonical: bool,
    ) -> (bool, Outcome, Vec<Event>) {
        let input = Input::Bytes(best.bytes.clone());
        let logged = self.execute(&input, None);
        let plain = self.on_its_thread(|build| {
            let mut sim = build();
            sim.config_mut().recording = Recording::Full;
            sim.run_input(&input)
        });
        let verified = matches(&plain.outcome)
            && plain.outcome.history_hash == best.history_hash
            && logged.outcome.history_hash == best.history_hash
            && (!canonical || encode(&logged.draws) == best.bytes);
        (verified, plain.outcome, plain.history.into_events())
    }

    fn execute(&self, input: &Input, budget_steps: Option<u64>) -> Run {
        self.execute_on(|intensity| input.source_at(intensity), budget_steps)
    }

    /// Runs on the source `source` makes, logging every draw.
    fn execute_on(
        &self,
        source: impl Fn(Intensity) -> Box<dyn crate::choice::Source> + Send + Sync,
        budget_steps: Option<u64>,
    ) -> Run {
        self.on_its_thread(|build| {
            let mut sim = build();
            let logger = Recorder::new(source(sim.config().intensity));
            let log = logger.log();
            if let Some(budget) = budget_steps {
                let config = sim.config_mut();
                config.budget_steps = config.budget_steps.min(budget);
            }
            let report = sim.run(Box::new(logger));
            let log = log.take();
            Run {
                outcome: report.outcome,
                stamps: log
                    .draw_times_ns()
                    .into_iter()
                    .zip(log.draw_nodes())
                    .map(|(at, node)| Stamp { at, node })
                    .collect(),
                draws: log.draws,
                ops: log.op_starts,
                op_nodes: log.op_nodes,
            }
        })
    }

    /// Runs `run` (given the builder) here, or on a fresh thread for a thread-per-run system.
    fn on_its_thread<R: Send>(&self, run: impl Fn(&dyn Fn() -> Sim) -> R + Send + Sync) -> R {
        match &self.build {
            Builder::Local(build) => run(build.as_ref()),
            Builder::ThreadPerRun(build) => crate::os::isolated(|| run(build.as_ref())),
        }
    }
}

/// One logged run.
struct Run {
    outcome: Outcome,
    draws: Vec<Draw>,
    /// When, and for which node, each draw was made.
    stamps: Vec<Stamp>,
    /// Index into `draws` where each operation started.
    ops: Vec<usize>,
    /// The node that started each operation.
    op_nodes: Vec<Option<u32>>,
}

/// When a draw was made, and for which node ([`crate::choice::Source::mark_node`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    /// Virtual time, in nanoseconds.
    at: u64,
    /// The node whose task drew it; `None` for the run loop's and the set-up's draws.
    node: Option<u32>,
}

/// The best input so far: what a run actually drew, and its encoding.
#[derive(Clone)]
struct Candidate {
    draws: Vec<Draw>,
    /// When, and for which node, each draw was made.
    stamps: Vec<Stamp>,
    ops: Vec<usize>,
    /// The node that started each operation.
    op_nodes: Vec<Option<u32>>,
    /// The draws that count operations, per node ([`op_counts`]).
    counts: Vec<Count>,
    bytes: Vec<u8>,
    history_hash: u64,
    /// Events in the run's history: a kept candidate never has more than the best.
    events: u64,
}

impl Candidate {
    fn from_run(run: Run) -> Candidate {
        let bytes = encode(&run.draws);
        let counts = op_counts(&run.draws, &run.stamps, &run.ops, &run.op_nodes);
        Candidate {
            draws: run.draws,
            stamps: run.stamps,
            ops: run.ops,
            op_nodes: run.op_nodes,
            counts,
            bytes,
            history_hash: run.outcome.history_hash,
            events: run.outcome.steps,
        }
    }

    /// The half-open draw range of operation `i`.
    fn op_block(&self, i: usize) -> (usize, usize) {
        let start = self.ops[i];
        let end = self.ops.get(i + 1).copied().unwrap_or(self.draws.len());
        (start, end)
    }
}

/// A draw that may count a node's operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Count {
    /// Its index among the draws.
    draw: usize,
    /// The node whose operations it counts (the node that drew it).
    node: Option<u32>,
}

/// The draw that counts each node's operations, found from what the run recorded (not from
/// labels): the first integer workload draw a node made before its first operation started
/// whose value is at least its operations less [`COUNT_OFFSET_MAX`] (a count drawn as
/// `k + below(n)` for a small `k`; a run that failed before a client finished started fewer
/// than its count). The first: a client decides how much to do before what to do, and the
/// arguments of its first operation (a key, a kind), drawn after it, are not counts; naming
/// them too cost raft-kv's stale-read 456 a third of its shrink (385 events left of 1,205
/// in 2,000 runs became 515), since a count is never zeroed alone and is searched value by
/// value.
fn op_counts(
    draws: &[Draw],
    stamps: &[Stamp],
    ops: &[usize],
    op_nodes: &[Option<u32>],
) -> Vec<Count> {
    let mut per_node: BTreeMap<Option<u32>, (usize, usize)> = BTreeMap::new();
    for (&start, &node) in ops.iter().zip(op_nodes) {
        let entry = per_node.entry(node).or_insert((start, 0));
        entry.1 += 1;
    }
    let mut counts = Vec::new();
    for (node, (first, n)) in per_node {
        let n = n as u64;
        let found = (0..first).find(|&j| {
            stamps[j].node == node
                && Lane::of(&draws[j].label) == Lane::Workload
                && matches!(draws[j].value,
                    DrawValue::Int { value, .. } if value > 0 && value + COUNT_OFFSET_MAX >= n)
        });
        counts.extend(found.map(|draw| Count { draw, node }));
    }
    counts.sort_unstable_by_key(|c| c.draw);
    counts
}

/// Whether draw `j` counts a node's operations (`counts` as [`op_counts`] returns them,
/// sorted by draw).
fn is_count(counts: &[Count], j: usize) -> bool {
    counts.binary_search_by_key(&j, |c| c.draw).is_ok()
}

/// How much larger than its value a count's operations may be ([`op_counts`]).
const COUNT_OFFSET_MAX: u64 = 3;

/// Shorter first, then lexicographically smaller.
pub fn shortlex_less(a: &[u8], b: &[u8]) -> bool {
    (a.len(), a) < (b.len(), b)
}

/// The order a search runs its passes in (see "Two searches" in the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Schedule {
    /// Operations and idle stretches first, several at a time, then the classic passes.
    StructureFirst,
    /// One operation at a time, then blocks and values.
    Classic,
}

struct Search<'s, 'a> {
    shrinker: &'s Shrinker<'a>,
    matches: &'s dyn Fn(&Outcome) -> bool,
    budget_steps: u64,
    best: Candidate,
    seen: BTreeSet<Vec<u8>>,
    /// Candidate runs made by both searches so far.
    runs: u64,
    /// `runs` when this search started.
    started_at: u64,
    /// Events over every candidate run of both searches so far.
    steps: u64,
}

mod bytes;
mod keyed;
mod ops;
mod search;
mod timeline;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::lanes::{Future, LaneBuffers};
    use crate::choice::Choices;

    /// Fails when 40 values were drawn and none was zero: no failing run draws fewer than 40.
    fn forty_nonzero() -> Sim {
        let mut sim = Sim::new(crate::sim::Config::default());
        let nonzero = std::rc::Rc::new(std::cell::Cell::new(0u32));
        let n = nonzero.clone();
        sim.client("client", move |_| {
            let n = n.clone();
            async move {
                for _ in 0..40 {
                    if crate::sim::draw(|s| s.below("value", 256)) != 0 {
                        n.set(n.get() + 1);
                    }
                }
            }
        });
        sim.invariant("some-zero", move || {
            if nonzero.get() < 40 {
                Ok(())
            } else {
                Err("40 draws, no zero".into())
            }
        });
        sim
    }

    /// Two clients, each running `1 + below(6)` operations under a label that names no
    /// operations; fails when client b draws a value of 200 or more.
    fn two_clients() -> Sim {
        let mut sim = Sim::new(crate::sim::Config::default());
        let seen = std::rc::Rc::new(std::cell::Cell::new(false));
        for (name, count) in [("a", "a.how_many"), ("b", "b.how_many")] {
            let seen = seen.clone();
            sim.client(name, move |_| {
                let seen = seen.clone();
                async move {
                    let n = 1 + crate::sim::draw(|s| s.below(count, 6));
                    for _ in 0..n {
                        let v = crate::sim::draw(|s| s.below("value", 256));
                        crate::sim::op_start(&v);
                        if name == "b" && v >= 200 {
                            seen.set(true);
                        }
                        crate::rt::yield_now().await;
                    }
                }
            });
        }
        sim.invariant("b-small", move || {
            if seen.get() {
                Err("b drew a large value".into())
            } else {
                Ok(())
            }
        });
        sim
    }

    fn failing_seed(build: fn() -> Sim, ops_at_least: usize) -> u64 {
        (0u64..10_000)
            .find(|&seed| {
                let run = Shrinker::new(build).execute(&Input::Seed(seed), None);
                run.outcome.class.is_failure() && run.ops.len() >= ops_at_least
            })
            .expect("a failing seed")
    }

    /// Which draws count operations is read from the run (the node that started each
    /// operation and what it drew before its first), not from a label ending in `ops`.
    #[test]
    fn operation_counts_are_found_from_the_run() {
        let seed = failing_seed(two_clients, 6);
        let run = Shrinker::new(two_clients).execute(&Input::Seed(seed), None);
        let counts = op_counts(&run.draws, &run.stamps, &run.ops, &run.op_nodes);
        let labels: BTreeSet<&str> = counts
            .iter()
            .map(|c| run.draws[c.draw].label.as_str())
            .filter(|label| label.ends_with("how_many"))
            .collect();
        // A count of zero (one operation) has nothing to lower and is not named.
        let nonzero: BTreeSet<&str> = run
            .draws
            .iter()
            .filter(|d| d.label.ends_with("how_many") && !bytes::is_zero(d))
            .map(|d| d.label.as_str())
            .collect();
        assert_eq!(labels, nonzero, "{counts:?}");
        for c in &counts {
            assert_eq!(Some(c.node), run.stamps.get(c.draw).map(|s| s.node));
        }
        let shrunk = Shrinker::new(two_clients).run(&Input::Seed(seed)).unwrap();
        assert!(shrunk.verified && shrunk.improved);
        // One operation each: client a's run as short as it goes, b's the failing one.
        assert_eq!((shrunk.ops_before >= 6, shrunk.ops_after), (true, 2));
        assert!(shrunk.bytes.len() <= shrunk.bytes_before.len());
    }

    #[test]
    fn a_byte_input_never_comes_back_longer() {
        // A 10-byte input: one future from the first draw on, a seeded stream of draws. Its
        // run draws 40 values, so every re-encoding of it is longer than it is.
        let failing = (1u32..)
            .map(|seed| {
                let mut lanes = LaneBuffers::default();
                lanes.set_futures(&[Future { cut: 0, seed }]);
                lanes.to_bytes()
            })
            .find(|bytes| {
                let report = forty_nonzero().run_input(&Input::Bytes(bytes.clone()));
                report.outcome.invariant.as_deref() == Some("some-zero")
            })
            .expect("most seeded streams draw no zero in 40 tries");
        assert_eq!(failing.len(), 10);
        let shrunk = Shrinker::new(forty_nonzero)
            .max_runs(300)
            .run(&Input::Bytes(failing.clone()))
            .unwrap();
        assert!(
            shrunk.bytes.len() <= failing.len(),
            "{} bytes from {}",
            shrunk.bytes.len(),
            failing.len()
        );
        assert!(shrunk.verified, "the input handed back still fails");
    }
}
