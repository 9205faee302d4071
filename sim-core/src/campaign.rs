//! Seed campaigns: a range of seeds on one [`Variant`], on every core, and split into shards
//! for many machines — with results that do not depend on either.
//!
//! Owns: which seeds a shard runs ([`Shard`]), the workers and how they share the seeds, and
//! the [`Tally`] of a campaign. Promises: the tally (runs, failures, the lowest failing seed
//! and its outcome) is the same for any number of workers, and the tallies of the shards
//! `0/N .. N-1/N` merge ([`Tally::merge`]) into the tally of the whole range.
//!
//! Each worker is one OS thread with its own world (the simulation's state is thread-local,
//! see `world.rs`): nothing a run touches is shared with another run. Workers take chunks of
//! the shard's seeds from one atomic counter, so fast and slow seeds balance; each run is a
//! pure function of its seed, so which worker ran it changes nothing. Results reach the
//! calling thread as [`Event`]s over a channel, in arrival order; only the calling thread
//! writes output.
//!
//! ```
//! use std::sync::atomic::AtomicBool;
//! use sim_core::campaign::{Campaign, Shard};
//! use sim_core::run_spec::{RunFlags, Variant};
//! use sim_core::sim::Sim;
//! use sim_core::system::{BugSpec, RunOptions, SystemSpec};
//!
//! use sim_core::choice::Choices;
//!
//! fn build(opts: &RunOptions) -> Sim {
//!     let mut sim = Sim::new(opts.config.clone());
//!     // Fails (a panic in system code) on the seeds whose coin comes up 1.
//!     sim.client("c", |_| async { assert_eq!(sim_core::sim::draw(|s| s.below("coin", 2)), 0) });
//!     sim
//! }
//! const TOY: SystemSpec = SystemSpec::new("toy", "", build);
//! let variant = Variant::new(&TOY, None, RunFlags::default()).unwrap();
//! let stop = AtomicBool::new(false);
//! let serial = Campaign::new(&variant, 0..200, Shard::WHOLE, 1).run(&stop, |_| {});
//! let parallel = Campaign::new(&variant, 0..200, Shard::WHOLE, 4).run(&stop, |_| {});
//! assert_eq!(serial, parallel);
//! assert!(serial.failures > 0 && serial.failures < 200);
//! let shards = (0..3).map(|i| {
//!     let shard = Shard { index: i, count: 3 };
//!     Campaign::new(&variant, 0..200, shard, 2).run(&stop, |_| {})
//! });
//! assert_eq!(shards.reduce(|a, b| a.merge(&b)).unwrap(), serial);
//! ```

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;

use crate::choice::Input;
use crate::report::Outcome;
use crate::run_spec::Variant;

/// One of `count` disjoint parts of a seed range: the seeds `start + index + k * count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which part, `0..count`.
    pub index: u64,
    /// How many parts.
    pub count: u64,
}

/// Errors reading `--shard`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--shard {0:?} is not I/N with I < N (e.g. --shard 0/4 .. --shard 3/4)")]
pub struct BadShard(pub String);

impl Shard {
    /// The whole range.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Parses `I/N`.
    pub fn parse(text: &str) -> Result<Shard, BadShard> {
        let bad = || BadShard(text.to_string());
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count): (u64, u64) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// How many seeds of `seeds` this shard runs.
    pub fn len(&self, seeds: &Range<u64>) -> u64 {
        let total = seeds.end.saturating_sub(seeds.start);
        total / self.count + u64::from(total % self.count > self.index)
    }

    /// True if this shard runs no seed of `seeds`.
    pub fn is_empty(&self, seeds: &Range<u64>) -> bool {
        self.len(seeds) == 0
    }

    /// The `k`-th seed of this shard in `seeds`.
    pub fn seed(&self, seeds: &Range<u64>, k: u64) -> u64 {
        debug_assert!(
            k < self.len(seeds),
            "seed {k} of a shard of {} seeds",
            self.len(seeds)
        );
        seeds.start + self.index + k * self.count
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A failing seed and how its run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The seed.
    pub seed: u64,
    /// How the run ended.
    pub outcome: Outcome,
}

/// What a campaign found: independent of worker count, and mergeable across shards.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Seeds run.
    pub runs: u64,
    /// Seeds that failed.
    pub failures: u64,
    /// The lowest failing seed.
    pub first_failure: Option<Failure>,
    /// Failures per [`Outcome::failure_class`], so a harness panic is never counted as a
    /// protocol failure. The counts add up to `failures`.
    pub classes: BTreeMap<String, u64>,
}

impl Tally {
    /// Counts one run.
    pub fn add(&mut self, seed: u64, outcome: &Outcome) {
        self.runs += 1;
        if outcome.class.is_failure() {
            self.failures += 1;
            *self.classes.entry(outcome.failure_class()).or_insert(0) += 1;
            if self.first_failure.as_ref().is_none_or(|f| seed < f.seed) {
                self.first_failure = Some(Failure {
                    seed,
                    outcome: outcome.clone(),
                });
            }
        }
        debug_assert_eq!(
            self.classes.values().sum::<u64>(),
            self.failures,
            "class counts add up to the failures: {:?}",
            self.classes
        );
    }

    /// The tally of two disjoint sets of seeds.
    pub fn merge(&self, other: &Tally) -> Tally {
        let first = match (&self.first_failure, &other.first_failure) {
            (Some(a), Some(b)) => Some(if b.seed < a.seed { b } else { a }.clone()),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        let mut classes = self.classes.clone();
        for (class, n) in &other.classes {
            *classes.entry(class.clone()).or_insert(0) += n;
        }
        Tally {
            runs: self.runs + other.runs,
            failures: self.failures + other.failures,
            first_failure: first,
            classes,
        }
    }
}

/// `CLASS:COUNT` pairs joined by commas, most failures first and ties by name: the value of a
/// sweep's `classes=` line (see [`Outcome::failure_class`] for the words).
///
/// ```
/// use std::collections::BTreeMap;
/// let classes = BTreeMap::from([("panic".to_string(), 2), ("correctness/atomicity".to_string(), 5), ("deadlock".to_string(), 2)]);
/// assert_eq!(sim_core::campaign::classes_text(&classes), "correctness/atomicity:5,deadlock:2,panic:2");
/// ```
pub fn classes_text(classes: &BTreeMap<String, u64>) -> String {
    let mut by_count: Vec<(&String, &u64)> = classes.iter().collect();
    // Stable sort over a map already in name order: equal counts stay sorted by name.
    by_count.sort_by(|a, b| b.1.cmp(a.1));
    by_count
        .iter()
        .map(|(class, n)| format!("{class}:{n}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// What workers report while a campaign runs.
#[derive(Clone, Debug)]
pub enum Event {
    /// Worker `worker` finished `runs` more seeds, `failures` of them failing.
    Progress {
        /// Which worker.
        worker: usize,
        /// Seeds finished since its last report.
        runs: u64,
        /// Of which failed.
        failures: u64,
    },
    /// A seed failed (reported as soon as its run ends).
    Failure(Failure),
}

/// A campaign: a variant over the seeds of one shard of a range, on `jobs` workers.
#[derive(Debug)]
pub struct Campaign<'a> {
    variant: &'a Variant,
    seeds: Range<u64>,
    shard: Shard,
    jobs: usize,
    until_first_failure: bool,
}

impl<'a> Campaign<'a> {
    /// A campaign of `variant` over `shard` of `seeds` on `jobs` workers (at least one).
    pub fn new(variant: &'a Variant, seeds: Range<u64>, shard: Shard, jobs: usize) -> Self {
        Campaign {
            variant,
            seeds,
            shard,
            jobs: jobs.max(1),
            until_first_failure: false,
        }
    }

    /// Stops at the first (lowest) failing seed: the tally counts the seeds up to and
    /// including it, whatever the worker count (every lower seed is run; runs of higher
    /// seeds already under way are not counted).
    pub fn until_first_failure(mut self) -> Self {
        self.until_first_failure = true;
        self
    }

    /// The number of workers to use by default: every core.
    pub fn all_cores() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }

    /// Runs every seed of the shard (until `stop` is set), calling `on_event` on this thread
    /// for each event; returns the tally of the seeds that ran. With one worker the runs
    /// happen on this thread, in seed order.
    pub fn run(&self, stop: &AtomicBool, mut on_event: impl FnMut(Event)) -> Tally {
        let tally = self.run_workers(stop, &mut on_event);
        match (&tally.first_failure, self.until_first_failure) {
            (Some(first), true) => {
                let k = (first.seed - self.seeds.start - self.shard.index) / self.shard.count;
                Tally {
                    runs: k + 1,
                    failures: 1,
                    first_failure: Some(first.clone()),
                    classes: BTreeMap::from([(first.outcome.failure_class(), 1)]),
                }
            }
            _ => tally,
        }
    }

    fn run_workers(&self, stop: &AtomicBool, on_event: &mut dyn FnMut(Event)) -> Tally {
        let lowest = AtomicU64::new(u64::MAX);
        if self.jobs == 1 {
            let next = AtomicU64::new(0);
            return self.work(0, (&next, &lowest), stop, on_event);
        }
        let next = AtomicU64::new(0);
        let (send, receive) = mpsc::channel();
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..self.jobs)
                .map(|worker| {
                    let (send, shared) = (send.clone(), (&next, &lowest));
                    scope.spawn(move || {
                        self.work(worker, shared, stop, &mut |e| {
                            let _ = send.send(e);
                        })
                    })
                })
                .collect();
            drop(send);
            // Ends when every worker has finished and dropped its sender.
            for event in receive {
                on_event(event);
            }
            workers
                .into_iter()
                .map(|w| w.join().expect("a worker thread does not panic"))
                .fold(Tally::default(), |a, b| a.merge(&b))
        })
    }

    /// Seeds per chunk: small enough to balance the workers, large enough that the counter
    /// and the progress events cost nothing next to the runs.
    fn chunk(&self) -> u64 {
        (self.shard.len(&self.seeds) / (self.jobs as u64 * 16)).clamp(1, 256)
    }

    /// One worker: takes chunks of the shard's seeds until none are left or `stop` is set
    /// (or, until the first failure, no seed is left below the lowest failure found).
    fn work(
        &self,
        worker: usize,
        (next, lowest): (&AtomicU64, &AtomicU64),
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(Event),
    ) -> Tally {
        let opts = self.variant.options();
        let build = self.variant.system.build;
        let (len, chunk) = (self.shard.len(&self.seeds), self.chunk());
        let mut tally = Tally::default();
        loop {
            let start = next.fetch_add(chunk, Ordering::Relaxed);
            if start >= len {
                return tally;
            }
            let (runs_before, failures_before) = (tally.runs, tally.failures);
            for k in start..(start + chunk).min(len) {
                let seed = self.shard.seed(&self.seeds, k);
                if stop.load(Ordering::Relaxed)
                    || (self.until_first_failure && seed > lowest.load(Ordering::Relaxed))
                {
                    return tally;
                }
                let outcome =
                    crate::os::run_maybe_isolated(self.variant.system.thread_per_run, || {
                        build(&opts).run_input(&Input::Seed(seed)).outcome
                    });
                tally.add(seed, &outcome);
                if outcome.class.is_failure() {
                    lowest.fetch_min(seed, Ordering::Relaxed);
                    on_event(Event::Failure(Failure { seed, outcome }));
                }
            }
            on_event(Event::Progress {
                worker,
                runs: tally.runs - runs_before,
                failures: tally.failures - failures_before,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_a_range_once() {
        for (range, n) in [(0..10u64, 3u64), (5..6, 4), (7..107, 7), (0..3, 5)] {
            let mut seen = Vec::new();
            for i in 0..n {
                let shard = Shard { index: i, count: n };
                seen.extend((0..shard.len(&range)).map(|k| shard.seed(&range, k)));
            }
            seen.sort_unstable();
            assert_eq!(seen, range.clone().collect::<Vec<_>>(), "{range:?} in {n}");
        }
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        for bad in ["4/4", "1/0", "x", "1/2/3", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    /// A toy that fails two ways, a panic in system code and a violated invariant, on
    /// different seeds: the class counts are part of the tally, so they too are the same on
    /// any number of workers and merged from shards.
    #[test]
    fn class_counts_do_not_depend_on_workers_or_shards() {
        use crate::choice::Choices;
        use crate::run_spec::{RunFlags, Variant};
        use crate::sim::{draw, Sim};
        use crate::system::{RunOptions, SystemSpec};
        use std::cell::Cell;
        use std::rc::Rc;

        fn build(opts: &RunOptions) -> Sim {
            let mut sim = Sim::new(opts.config.clone());
            let broken = Rc::new(Cell::new(false));
            let b = broken.clone();
            sim.client("c", move |_| {
                let b = b.clone();
                async move {
                    match draw(|s| s.below("die", 4)) {
                        1 => panic!("planted panic"),
                        2 => b.set(true),
                        _ => {}
                    }
                }
            });
            sim.invariant("not broken", move || {
                if broken.get() {
                    Err("planted".into())
                } else {
                    Ok(())
                }
            });
            sim
        }
        const TWO_WAYS: SystemSpec = SystemSpec::new("two-ways", "", build);
        let variant = Variant::new(&TWO_WAYS, None, RunFlags::default()).unwrap();
        let stop = AtomicBool::new(false);
        let serial = Campaign::new(&variant, 0..300, Shard::WHOLE, 1).run(&stop, |_| {});
        let names: Vec<&str> = serial.classes.keys().map(String::as_str).collect();
        assert_eq!(names, ["correctness/not_broken", "panic"], "{serial:?}");
        assert_eq!(serial.classes.values().sum::<u64>(), serial.failures);
        let parallel = Campaign::new(&variant, 0..300, Shard::WHOLE, 3).run(&stop, |_| {});
        assert_eq!(parallel, serial);
        let merged = (0..4)
            .map(|i| {
                let shard = Shard { index: i, count: 4 };
                Campaign::new(&variant, 0..300, shard, 2).run(&stop, |_| {})
            })
            .reduce(|a, b| a.merge(&b))
            .unwrap();
        assert_eq!(merged, serial);
    }
}

/// One line of a shard's results file (`sim sweep --shard I/N --out FILE`): JSON, one object
/// per line, written as the campaign goes (a failure as soon as it is found, the summary at
/// the end), so a killed shard leaves what it found.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ShardLine {
    /// A failing seed.
    Failure {
        /// The variant's command-line words (`--system S --bug B ...`).
        variant: String,
        /// The shard, `I/N`.
        shard: String,
        /// The seed.
        seed: u64,
        /// Its outcome class.
        class: String,
        /// The failed invariant, if any.
        invariant: Option<String>,
        /// 16 hex digits.
        history_hash: String,
        /// The command that replays it.
        replay: String,
    },
    /// A shard's tally of one variant.
    Summary {
        /// The variant's command-line words.
        variant: String,
        /// The system.
        system: String,
        /// The bug, or `none`.
        bug: String,
        /// The whole range, `A..B`.
        seeds: String,
        /// The shard, `I/N`.
        shard: String,
        /// Seeds this shard ran.
        runs: u64,
        /// Of which failed.
        failures: u64,
        /// The lowest failing seed.
        first_failure_seed: Option<u64>,
        /// False if the shard was stopped before it ran every seed.
        complete: bool,
        /// Part of a `--all` campaign.
        all: bool,
        /// Wall seconds the shard took.
        elapsed_s: f64,
        /// The unsharded sweep's words but `--seeds` (`--system S --bug B --faults all`, or
        /// `--all --faults all`): with `seeds`, the shard count and `commit`, what makes
        /// shards parts of the same run. Absent in files written before it existed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        campaign: Option<String>,
        /// How many variants the campaign sweeps (1, or every system and bug of `--all`), so
        /// a merge sees a variant no shard reached. Absent in older files.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        variants: Option<u64>,
        /// The commit that built the binary (as `sim run` prints it). Absent in older files.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        commit: Option<String>,
    },
}

mod merge;
pub use merge::{merge, Gap, GapReason, MergeError, MergeReport, Merged, ShardFile};

/// Parses `A..B` (A < B).
pub fn parse_range(text: &str) -> Option<Range<u64>> {
    let (a, b) = text.split_once("..")?;
    let (a, b): (u64, u64) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a < b).then_some(a..b)
}
