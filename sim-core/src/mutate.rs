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
//!   events of both, so a workload that reaches a state meets a fault schedule that breaks it.
//!
//! Each edit changes the decisions it names and no others (that is what the lanes are for), so
//! a mutation that turns a fault on keeps the rest of the run. [`mutate`] returns `None` for a
//! share of calls so the engine's own byte mutations still run (they find what this one cannot
//! express, such as a section that grows a lane past its old end).
//!
//! Deterministic: the result is a pure function of the input, `seed` and the event counts this
//! thread has observed. It draws from [`Seeded`], never from the OS.
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

use crate::choice::lanes::{Lane, LaneBuffers, EVENT_ENTRY_BYTES, MAX_EVENT_ORDINAL};
use crate::choice::{observed_event_counts, Seeded, Source};

/// Which mutations a fuzz target uses, from the `SIM_MUTATOR` environment variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MutatorChoice {
    /// This module's lane-aware edits, with a share left to the engine (the default).
    Lanes,
    /// The engine's byte mutations only (the behaviour before this mutator).
    Bytes,
}

/// A `SIM_MUTATOR` value that names no mutator.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("SIM_MUTATOR={0:?} is not a mutator; use `lanes` (the default) or `bytes` (the engine's own byte mutations)")]
pub struct UnknownMutator(pub String);

impl MutatorChoice {
    /// Parses `lanes` or `bytes`; empty means the default.
    pub fn parse(text: &str) -> Result<MutatorChoice, UnknownMutator> {
        match text.trim() {
            "" | "lanes" => Ok(MutatorChoice::Lanes),
            "bytes" => Ok(MutatorChoice::Bytes),
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
    let mut lanes = LaneBuffers::parse(data);
    let observed = observed_event_counts();
    // Event edits half the time (when there is anything to edit), dense edits otherwise.
    let edited = if rng.draw("mutate.kind", 2) == 0 {
        mutate_events(&mut lanes, &observed, &mut rng) || mutate_dense(&mut lanes, &mut rng)
    } else {
        mutate_dense(&mut lanes, &mut rng)
    };
    if !edited {
        return None;
    }
    let out = lanes.to_bytes();
    (out.len() <= max_size).then_some(out)
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
    let mut out = child.to_bytes();
    out.truncate(section_boundary_at_most(&out, max_size));
    out
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
    let total: u64 = DENSE_WEIGHTS.iter().map(|&(_, w)| w).sum();
    let mut pick = rng.draw("mutate.dense.lane", total);
    let lane = DENSE_WEIGHTS
        .iter()
        .find(|&&(_, w)| {
            let here = pick < w;
            pick = pick.saturating_sub(w);
            here
        })
        .map_or(Lane::Workload, |&(lane, _)| lane);
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
            if after.events() != before.events() {
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
}
