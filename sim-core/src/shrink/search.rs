//! The search: running a candidate, keeping it if it still fails and is smaller, and the
//! fixed point that runs the passes in [`Schedule`] order.

use super::keyed::{Keyed, Keying};
use super::*;

impl Search<'_, '_> {
    pub(super) fn exhausted(&self) -> bool {
        self.runs >= self.shrinker.max_runs || self.steps >= self.shrinker.max_steps
    }

    /// Runs `draws` if they encode smaller than the best; keeps the run if it fails the same
    /// way. Returns true when the best changed.
    pub(super) fn attempt(&mut self, draws: &[Draw]) -> bool {
        let bytes = encode(draws);
        if !self.worth_running(&bytes, true) {
            return false;
        }
        let run = self
            .shrinker
            .execute(&Input::Bytes(bytes.clone()), Some(self.budget_steps));
        // invariant: a run that did not run out of input drew only what its input holds, so
        // what it drew encodes no larger than the candidate. A run that ran out read the
        // missing bytes as zeros, which the re-encoding writes out: it may grow, and `keep`
        // then leaves the best as it is.
        debug_assert!(
            run.outcome.input_exhausted || !shortlex_less(&bytes, &encode(&run.draws)),
            "executed draws grew: {bytes:?} -> {:?}",
            encode(&run.draws)
        );
        self.keep(run)
    }

    /// Runs `intended` (an edit of the best's draws, `stamps` saying when each was made) on
    /// the source that answers each draw with the intended draw of its label made at the
    /// same instant ([`Keyed`]); keeps the run if it fails the same way. With `smaller_only`
    /// the edit must encode smaller than the best to be run at all (an edit that moves a
    /// decision need not); either way what the run drew must, to be kept. Returns true when
    /// the best changed.
    pub(super) fn attempt_keyed(
        &mut self,
        intended: &[Draw],
        stamps: &[Stamp],
        smaller_only: bool,
    ) -> bool {
        debug_assert_eq!(intended.len(), stamps.len(), "one stamp per intended draw");
        if !self.worth_running(&encode(intended), smaller_only) {
            return false;
        }
        // Matched per node first; if that does not keep the failure, per label alone (see
        // "Keyed edits" in the module docs), as a second run.
        for keying in [Keying::ByNode, Keying::ByLabel] {
            if keying == Keying::ByLabel {
                if self.exhausted() {
                    return false;
                }
                self.runs += 1;
            }
            let run = self.shrinker.execute_on(
                |_| Box::new(Keyed::new(intended, stamps, keying)),
                Some(self.budget_steps),
            );
            if self.keep(run) {
                return true;
            }
        }
        false
    }

    /// True, counting a run, when a candidate encoding as `bytes` is to be run: budget left,
    /// not run before, and (with `smaller_only`) smaller than the best.
    pub(super) fn worth_running(&mut self, bytes: &[u8], smaller_only: bool) -> bool {
        if (smaller_only && !shortlex_less(bytes, &self.best.bytes))
            || self.exhausted()
            || !self.seen.insert(bytes.to_vec())
        {
            return false;
        }
        self.runs += 1;
        true
    }

    /// The best's draws and stamps without those `deleted` flags.
    pub(super) fn without(&self, deleted: &[bool]) -> (Vec<Draw>, Vec<Stamp>) {
        let mut draws = Vec::with_capacity(self.best.draws.len());
        let mut stamps = Vec::with_capacity(self.best.draws.len());
        for ((draw, &stamp), &gone) in self.best.draws.iter().zip(&self.best.stamps).zip(deleted) {
            if !gone {
                draws.push(draw.clone());
                stamps.push(stamp);
            }
        }
        (draws, stamps)
    }

    /// Keeps `run` as the best if it fails the same way, is smaller, and has no more events
    /// and operations. Returns true when the best changed.
    pub(super) fn keep(&mut self, run: Run) -> bool {
        self.steps = self.steps.saturating_add(run.outcome.steps);
        if !(self.matches)(&run.outcome) {
            return false;
        }
        let kept = Candidate::from_run(run);
        if shortlex_less(&kept.bytes, &self.best.bytes)
            && kept.events <= self.best.events
            && kept.ops.len() <= self.best.ops.len()
        {
            self.best = kept;
            true
        } else {
            false
        }
    }

    pub(super) fn fixed_point(&mut self, schedule: Schedule) {
        loop {
            let before = self.best.bytes.clone();
            let size = (self.best.events, self.best.ops.len());
            if schedule == Schedule::StructureFirst {
                self.delete_op_runs();
                self.drop_idle_stretches();
                self.delete_op_and_zero_one();
                if (self.best.events, self.best.ops.len()) < size {
                    continue;
                }
                self.delete_faults();
                self.lower_op_counts_keyed();
                self.delete_ops_keyed();
                self.zero_workload_keyed();
                self.move_faults_earlier();
                self.pull_faults_forward();
                self.delete_chunks();
            }
            self.delete_ops();
            self.cut_tail();
            self.delete_chunks();
            for k in [8, 4, 2, 1] {
                self.delete_blocks(k);
            }
            for k in [8, 4, 2, 1] {
                self.zero_blocks(k);
            }
            self.lower_values();
            self.zero_and_drop_dependents();
            self.sort_ops();
            if self.best.bytes == before || self.exhausted() {
                return;
            }
        }
    }
}
