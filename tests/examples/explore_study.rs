//! How much a fresh future from a rare state is worth, without a fuzzer's noise (issue 9's
//! study; figures in `fuzz/README.md`). Uninstrumented, in process, label signal on.
//!
//!     cargo run --release -p acceptance --example explore_study -- SYSTEM BUG [TRIALS] [BUDGET]
//!
//! * Default: an idealised "go-explore" search. Each trial starts from 32 recorded seed runs
//!   (as `scripts/hunt.sh` does) and keeps, per label feature (`cover!`, abstract-state
//!   transitions, crash states, cluster states), up to `RESERVOIR` (1) inputs that reached it
//!   with the draw clock when they did. Each step picks a feature with odds inversely
//!   proportional to how many runs reached it (`WEIGHT=1`: to the square root) and runs its
//!   input with a fresh future cut just after the first hit, or (`FAULT_PERCENT` of steps)
//!   with one fault added among the decisions drawn right after it; `FOLLOW=K` first tries K
//!   futures of every newly reached feature. Prints runs to the first failure per trial and
//!   the median; compare `sim sweep --until-first`. `FRESH_PERCENT` of steps run a fresh
//!   whole run instead (`mutate::fresh_run`, a random fault intensity); `START_FUTURES=1`
//!   starts from 32 such runs instead of recorded seed runs.
//! * `SWEEP_INTENSITY=LEVEL`: a seed sweep of whole-run futures at one fault intensity (0..=3:
//!   every fault event's odds x1, x2, x4, x8; `mix`: the four in turn). The control for the
//!   hunt's intensities: how much of a win is the fault rate alone. `LONGEST=1`: every
//!   future runs the longest workload (`Future::longest_workload`); `SWEEP_FOCUS=4..=7`
//!   focuses the faults on one group (`Future::fault_focus`: network, lifecycle, disk, clock).
//!   `COUNT=1` runs every trial's whole budget and counts its failures (a rate, which
//!   separates close profiles with fewer runs than a median of first failures does).
//! * `PROFILE=SEED`: along a failing seed's run, for each feature it reached, the failure rate
//!   of 200 fresh futures cut just after its first hit (where the failure becomes likely).
//! * `CENSUS=F1,F2,..`: over BUDGET seeds, how many runs reach any of these label features
//!   (counter indexes, as `PROFILE` prints them) and how many of those fail.
//! * `SATURATION=1`: over BUDGET seeds, how many label counters the runs touch, at every power
//!   of two (a map nearly full hides rare features behind common ones).
//! * `NOVELTY=1`: per fault intensity (x1, x2, x4, x8), how many label features BUDGET whole
//!   runs at that intensity reach: what a choice of intensity rewarded by new coverage sees.

use std::collections::BTreeMap;

use sim_core::choice::lanes::{Future, LaneBuffers, LONGEST_WORKLOAD_BIT};
use sim_core::choice::{encode, Input, Recorder, Seeded, Source};
use sim_core::mutate;
use sim_core::signal::{self, Signals};
use sim_core::system::SystemSpec;

/// An input, the draw clock at which its run first reached a feature, and its run's event
/// draws (label id, clock).
type Reached = (Vec<u8>, u32, std::rc::Rc<Vec<(u16, u32)>>);

struct Cell {
    /// Up to RESERVOIR inputs that reached the feature.
    inputs: Vec<Reached>,
    /// How many runs offered an input for this cell (reservoir sampling).
    offered: u64,
}

fn knob(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |v| v.parse().expect("a number"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (system, bug) = (args[0].as_str(), args[1].as_str());
    let trials: u64 = args
        .get(2)
        .map_or(10, |t| t.parse().expect("a trial count"));
    let budget: u64 = args
        .get(3)
        .map_or(200_000, |t| t.parse().expect("a run budget"));
    let all = systems::all();
    let spec: &SystemSpec = all
        .iter()
        .find(|s| s.name == system)
        .expect("a system `sim list` shows");
    let opts = spec.options(Some(bug)).expect("a bug `sim list` shows");
    Signals {
        edges: false,
        labels: true,
        hash: false,
        reject: false,
    }
    .install();
    if let Ok(seed) = std::env::var("PROFILE") {
        // Along a failing seed's run: for each label feature it reached, the failure rate of
        // 200 fresh futures cut just after its first hit.
        let recorder = Recorder::new(Seeded::new(seed.parse().expect("a seed")));
        let log = recorder.log();
        (spec.build)(&opts).run(Box::new(recorder));
        let bytes = encode(&log.borrow().draws);
        signal::clear();
        signal::begin_run();
        let report = (spec.build)(&opts).run_input(&Input::Bytes(bytes.clone()));
        assert!(report.outcome.class.is_failure(), "the seed fails");
        let hits = signal::take_first_hits();
        let total_draws = log.borrow().draws.len();
        println!("draws={total_draws} features={}", hits.len());
        let mut last_clock = u32::MAX;
        for (feature, clock) in hits {
            if clock == last_clock {
                continue;
            }
            last_clock = clock;
            let mut fails = 0;
            for s in 0..200u32 {
                let mut lanes = LaneBuffers::parse(&bytes);
                lanes.set_futures(&[Future {
                    cut: clock,
                    seed: s,
                }]);
                let report = (spec.build)(&opts).run_input(&Input::Bytes(lanes.to_bytes()));
                fails += u32::from(report.outcome.class.is_failure());
            }
            println!("clock={clock} feature={feature} fails={fails}/200");
        }
        return;
    }
    if std::env::var("SATURATION").is_ok() {
        // How many of the label map's counters random runs touch, as the runs add up.
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..budget {
            signal::clear();
            signal::begin_run();
            (spec.build)(&opts).run_input(&Input::Seed(seed));
            seen.extend(signal::take_first_hits().into_iter().map(|(f, _)| f));
            if (seed + 1).is_power_of_two() || seed + 1 == budget {
                println!("runs={} label_counters_hit={}", seed + 1, seen.len());
            }
        }
        return;
    }
    if std::env::var("NOVELTY").is_ok() {
        // Per fault intensity: how many label features BUDGET whole runs at that intensity
        // reach (what a novelty-rewarded choice of intensity would see).
        for level in 0..4u32 {
            let mut seen = std::collections::BTreeSet::new();
            for run in 0..budget {
                let seed = (run as u32 & ((1 << 30) - 1)) | (level << 30);
                signal::clear();
                signal::begin_run();
                (spec.build)(&opts).run_input(&Input::Bytes(mutate::fresh_run(seed)));
                seen.extend(signal::take_first_hits().into_iter().map(|(f, _)| f));
            }
            println!(
                "intensity=x{} runs={budget} label_features={}",
                1 << level,
                seen.len()
            );
        }
        return;
    }
    if std::env::var("CENSUS").is_ok() {
        // How often random runs crash a replica holding an answered, unsynced vote, and how
        // often the runs that do, and those that do not, fail.
        let wanted: Vec<u32> = std::env::var("CENSUS")
            .unwrap()
            .split(',')
            .map(|f| f.parse().expect("feature numbers"))
            .collect();
        let (mut reach, mut fail_reach, mut fail_other) = (0, 0, 0);
        for seed in 0..budget {
            signal::clear();
            signal::begin_run();
            let report = (spec.build)(&opts).run_input(&Input::Seed(seed));
            let hits = signal::take_first_hits();
            let reached = hits.iter().any(|(f, _)| wanted.contains(f));
            let failed = report.outcome.class.is_failure();
            reach += u64::from(reached);
            fail_reach += u64::from(reached && failed);
            fail_other += u64::from(!reached && failed);
        }
        println!("runs={budget} reach={reach} fail_reach={fail_reach} fail_other={fail_other}");
        return;
    }
    if let Ok(level) = std::env::var("SWEEP_INTENSITY") {
        // The control for fault intensity: a seed sweep whose runs are whole futures at one
        // intensity level (0..=3: odds x1, x2, x4, x8), or `mix` (the levels in turn).
        let workload_bit = if knob("LONGEST", 0) == 1 {
            LONGEST_WORKLOAD_BIT
        } else {
            0
        };
        let focus = knob("SWEEP_FOCUS", 0) as u32;
        assert!(
            focus < 8,
            "SWEEP_FOCUS=0..=7 (bits 27-29 of a future's seed)"
        );
        let mut results = Vec::new();
        let count = knob("COUNT", 0) == 1;
        for trial in 1..=trials {
            let (mut runs, mut failures) = (0, 0);
            while runs < budget {
                let level = match level.as_str() {
                    "mix" => runs % 4,
                    fixed => fixed.parse().expect("SWEEP_INTENSITY=0..=3 or mix"),
                };
                let low_bits = (trial * 1_000_000 + runs) as u32 & ((1 << 30) - 1);
                let low_bits = low_bits & !LONGEST_WORKLOAD_BIT | workload_bit;
                let low_bits = low_bits & !(7 << 27) | focus << 27;
                let seed = low_bits | ((level as u32) << 30);
                runs += 1;
                let input = Input::Bytes(mutate::fresh_run(seed));
                if (spec.build)(&opts)
                    .run_input(&input)
                    .outcome
                    .class
                    .is_failure()
                {
                    failures += 1;
                    if !count {
                        break;
                    }
                }
            }
            println!("trial={trial} runs={runs} failures={failures}");
            results.push(runs);
        }
        results.sort_unstable();
        println!("median_runs={}", results[(results.len() - 1) / 2]);
        return;
    }
    let mut results = Vec::new();
    for trial in 1..=trials {
        let mut rng = Seeded::new(trial);
        let mut runs_reaching: BTreeMap<u32, u64> = BTreeMap::new();
        let mut archive: BTreeMap<u32, Cell> = BTreeMap::new();
        let mut runs = 0u64;
        let mut found = None;
        let mut queue: Vec<(Vec<u8>, u32)> = Vec::new();
        let follow = knob("FOLLOW", 0);
        let run = |input: Vec<u8>,
                   runs_reaching: &mut BTreeMap<u32, u64>,
                   archive: &mut BTreeMap<u32, Cell>,
                   queue: &mut Vec<(Vec<u8>, u32)>| {
            signal::clear();
            signal::begin_run();
            let report = (spec.build)(&opts).run_input(&Input::Bytes(input.clone()));
            let events = std::rc::Rc::new(sim_core::choice::take_draw_trace().event_clocks);
            for (feature, clock) in signal::take_first_hits() {
                *runs_reaching.entry(feature).or_insert(0) += 1;
                let cell = archive.entry(feature).or_insert_with(|| Cell {
                    inputs: Vec::new(),
                    offered: 0,
                });
                cell.offered += 1;
                if cell.offered == 1 {
                    for _ in 0..follow {
                        queue.push((input.clone(), clock));
                    }
                }
                let reservoir = knob("RESERVOIR", 1) as usize;
                if cell.inputs.len() < reservoir {
                    cell.inputs.push((input.clone(), clock, events.clone()));
                } else {
                    // Deterministic reservoir sampling, keyed by the offer count.
                    let slot = (Seeded::new(cell.offered).draw("slot", cell.offered)) as usize;
                    if slot < reservoir {
                        cell.inputs[slot] = (input.clone(), clock, events.clone());
                    }
                }
            }
            report.outcome.class.is_failure()
        };
        for seed in 0..32 {
            let bytes = if knob("START_FUTURES", 0) == 1 {
                mutate::fresh_run(rng.draw("start", 1 << 32) as u32)
            } else {
                let recorder = Recorder::new(Seeded::new(trial * 1_000_000 + seed));
                let log = recorder.log();
                (spec.build)(&opts).run(Box::new(recorder));
                let bytes = encode(&log.borrow().draws);
                bytes
            };
            runs += 1;
            if run(bytes, &mut runs_reaching, &mut archive, &mut queue) {
                found = Some(runs);
                break;
            }
        }
        while found.is_none() && runs < budget {
            let child = match queue.pop() {
                Some((input, clock)) => with_fresh_future(&input, clock, &mut rng),
                None => {
                    let feature = pick_feature(&archive, &runs_reaching, &mut rng)
                        .unwrap_or_else(|| {
                            eprintln!("{system} reached no label feature (no cover!, no abstract state): nothing to explore from");
                            std::process::exit(2);
                        });
                    let cell = &archive[&feature];
                    let (input, clock, events) =
                        &cell.inputs[rng.draw("which", cell.inputs.len() as u64) as usize];
                    let mut lanes = LaneBuffers::parse(input);
                    let op = rng.draw("op", 100);
                    if op >= 100 - knob("FRESH_PERCENT", 0) {
                        mutate::fresh_run(rng.draw("fresh", 1 << 32) as u32)
                    } else if op < knob("FAULT_PERCENT", 0)
                        && mutate::add_fault_after(&mut lanes, *clock, events, &mut rng)
                    {
                        lanes.to_bytes()
                    } else {
                        with_fresh_future(input, *clock, &mut rng)
                    }
                }
            };
            runs += 1;
            if run(child, &mut runs_reaching, &mut archive, &mut queue) {
                found = Some(runs);
            }
        }
        println!(
            "trial={trial} found={} runs={} features={}",
            u8::from(found.is_some()),
            found.unwrap_or(runs),
            archive.len()
        );
        results.push(found.unwrap_or(runs));
    }
    results.sort_unstable();
    println!("median_runs={}", results[(results.len() - 1) / 2]);
}

/// `input` with a fresh future cut a few draws after `clock`.
fn with_fresh_future(input: &[u8], clock: u32, rng: &mut Seeded) -> Vec<u8> {
    let mut lanes = LaneBuffers::parse(input);
    let cut = clock + rng.draw("after", 4) as u32;
    mutate::add_future(&mut lanes, cut, rng.draw("seed", 1 << 32) as u32);
    lanes.to_bytes()
}

/// A feature of the archive, with odds inversely proportional to how many runs reached it
/// (`WEIGHT=1`: to the square root; `WEIGHT=2`: uniform); `None` when the archive is empty.
fn pick_feature(
    archive: &BTreeMap<u32, Cell>,
    runs_reaching: &BTreeMap<u32, u64>,
    rng: &mut Seeded,
) -> Option<u32> {
    let features: Vec<u32> = archive.keys().copied().collect();
    let weights: Vec<u64> = features
        .iter()
        .map(|f| {
            let n = runs_reaching[f].max(1);
            match knob("WEIGHT", 0) {
                0 => (1u64 << 20) / n,
                1 => ((1u64 << 40) as f64 / (n as f64).sqrt()) as u64 >> 20,
                _ => 1,
            }
        })
        .collect();
    mutate::pick_weighted(&weights, "pick", rng).map(|i| features[i])
}
