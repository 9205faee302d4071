//! Self-check: a run must be a pure function of its input.
//!
//! [`self_check`] runs an input again, twice, with every event recorded, and compares the
//! history hashes with the first run's. A mismatch means something outside the input reached
//! the run — the wall clock, OS randomness, a global counter, address-dependent ordering — and
//! is reported as [`Class::Diverged`](crate::report::Class::Diverged), naming the first event
//! at which the two recorded re-runs differ ([`first_difference`]).
//!
//! The fuzz harness ([`crate::fuzz`]) self-checks every failing input before reporting it, so
//! a failure the fuzzer saves is one that replays.
//!
//! ```
//! use sim_core::choice::Input;
//! use sim_core::determinism::self_check;
//! use sim_core::sim::{Config, Sim};
//! use sim_core::trace::Recording;
//!
//! let build = |recording: Recording| {
//!     let mut sim = Sim::new(Config { recording, ..Config::default() });
//!     sim.client("c", |_| async { sim_core::time::sleep(std::time::Duration::from_millis(3)).await });
//!     sim
//! };
//! let input = Input::Bytes(vec![1, 2, 3]);
//! let first = build(Recording::HashOnly).run_input(&input);
//! let rerun = self_check(build, &input, first.outcome.history_hash).expect("deterministic");
//! assert_eq!(rerun.outcome.history_hash, first.outcome.history_hash);
//! ```

use std::fmt;

use crate::choice::Input;
use crate::sim::{Report, Sim};
use crate::trace::{Event, Recording};

/// Two runs of one input that saw different histories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The history hash of the run being checked.
    pub expected_hash: u64,
    /// The hashes of the two recorded re-runs.
    pub rerun_hashes: [u64; 2],
    /// The first event at which the recorded re-runs differ: its index and the event in
    /// each (`None` where that run had already ended). `None` when the re-runs agree with
    /// each other and only the first run differed.
    pub first_difference: Option<(u64, Option<Event>, Option<Event>)>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the same input gave history hashes {:016x}, {:016x} and {:016x}",
            self.expected_hash, self.rerun_hashes[0], self.rerun_hashes[1]
        )?;
        match &self.first_difference {
            Some((index, a, b)) => {
                let show = |e: &Option<Event>| {
                    e.as_ref().map_or("(run already ended)".to_string(), |e| {
                        e.to_string().trim().to_string()
                    })
                };
                write!(
                    f,
                    "; first differing event is #{index}: [{}] vs [{}]",
                    show(a),
                    show(b)
                )
            }
            None => write!(
                f,
                "; the two recorded re-runs agree, so the first run differed somewhere"
            ),
        }
    }
}

/// Runs `input` twice more with recording on and compares with `expected_hash`.
///
/// `build` makes a fresh scenario with the given recording mode (everything else must be
/// what produced `expected_hash`). Returns the first recorded re-run when all three agree.
pub fn self_check(
    build: impl Fn(Recording) -> Sim,
    input: &Input,
    expected_hash: u64,
) -> Result<Report, Box<Divergence>> {
    self_check_runs(|recording| build(recording).run_input(input), expected_hash)
}

/// [`self_check`] over runs `run` makes itself (say, each on a thread of its own: see
/// [`crate::os::isolated`]): `run(Recording::Full)` must run the input being checked.
pub fn self_check_runs(
    run: impl Fn(Recording) -> Report,
    expected_hash: u64,
) -> Result<Report, Box<Divergence>> {
    let a = run(Recording::Full);
    let b = run(Recording::Full);
    let (ha, hb) = (a.outcome.history_hash, b.outcome.history_hash);
    if ha == expected_hash && hb == expected_hash {
        return Ok(a);
    }
    let first_difference = first_difference(a.history.events(), b.history.events())
        .map(|(i, x, y)| (i, x.cloned(), y.cloned()));
    Err(Box::new(Divergence {
        expected_hash,
        rerun_hashes: [ha, hb],
        first_difference,
    }))
}

/// The first position where two event lists differ in anything the history hash covers
/// (time, node, kind and its fields; not the readable detail), with the event from each.
///
/// ```
/// use sim_core::determinism::first_difference;
/// assert!(first_difference(&[], &[]).is_none());
/// ```
pub fn first_difference<'a>(
    a: &'a [Event],
    b: &'a [Event],
) -> Option<(u64, Option<&'a Event>, Option<&'a Event>)> {
    let same =
        |x: &Event, y: &Event| x.time_ns == y.time_ns && x.node == y.node && x.kind == y.kind;
    let n = a.len().max(b.len());
    (0..n).find_map(|i| match (a.get(i), b.get(i)) {
        (Some(x), Some(y)) if same(x, y) => None,
        (x, y) => Some((i as u64, x, y)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::EventKind;

    fn ev(index: u64, task: u32) -> Event {
        Event {
            index,
            time_ns: 0,
            node: Some("n".into()),
            kind: EventKind::Step { task },
            detail: String::new(),
        }
    }

    #[test]
    fn first_difference_finds_changed_and_missing_events() {
        let a = [ev(0, 1), ev(1, 2)];
        let b = [ev(0, 1), ev(1, 3)];
        assert_eq!(
            first_difference(&a, &b).map(|d| d.0),
            Some(1),
            "changed event"
        );
        assert_eq!(
            first_difference(&a, &a[..1]).map(|d| (d.0, d.2.is_none())),
            Some((1, true)),
            "shorter run"
        );
        assert!(first_difference(&a, &a).is_none(), "equal runs");
        let mut detail_only = a.clone();
        detail_only[1].detail = "other words".into();
        assert!(
            first_difference(&a, &detail_only).is_none(),
            "detail is not hashed, so not a divergence"
        );
    }
}
