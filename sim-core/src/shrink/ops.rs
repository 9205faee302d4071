//! Passes over operations: deleting them (one, several, in runs, keyed), lowering operation
//! counts, zeroing workload choices, sorting.

use super::bytes::{is_zero, zero};
use super::*;

impl Search<'_, '_> {
    pub(super) fn delete_ops(&mut self) {
        let mut i = 0;
        while i < self.best.ops.len() && !self.exhausted() {
            if !self.delete_op(i) {
                i += 1;
            }
        }
    }

    /// Tries to delete (else zero) operation `i`. An operation's own definition is usually
    /// drawn just before its [`crate::sim::op_start`], so the block is also tried shifted back
    /// by up to three draws.
    pub(super) fn delete_op(&mut self, i: usize) -> bool {
        let (start, end) = self.best.op_block(i);
        let first = self.best.ops[0];
        for shift in 0..=3usize.min(start) {
            let (start, end) = (start - shift, end - shift);
            let mut without: Vec<Draw> = self.best.draws[..start].to_vec();
            without.extend_from_slice(&self.best.draws[end..]);
            if self.attempt(&without) {
                return true;
            }
            // Together with the operation count, if the workload drew one up front.
            let count_search = first.saturating_sub(shift).min(start);
            let whole = self.runs - self.started_at < self.shrinker.max_runs / 4;
            if self.attempt_with_count_lowered(&without, count_search, 1, whole) {
                return true;
            }
        }
        let mut zeroed = self.best.draws.clone();
        zeroed[start.saturating_sub(1)..end]
            .iter_mut()
            .for_each(zero);
        self.attempt(&zeroed);
        false
    }

    /// Deletes runs of `k` consecutive operations at once, `k` from half the operations down
    /// to two, halving (delta debugging over operations), each together with lowering the
    /// operation count by `k`.
    ///
    /// One operation at a time is often not enough: deleting an early operation changes how
    /// much virtual time passes before the later ones, hence how many periodic draws (a
    /// heartbeat's latency, a timer's jitter) are made in between, and every later draw of
    /// those lanes is read by a different decision (a draw is a position in its lane's
    /// stream). The timing a failure needs is then lost, and each single deletion is refused,
    /// while deleting everything before the operations that matter leaves them to run from a
    /// plain start, where a default schedule often still fails the same way. On the registry's
    /// reply-reinsert seed 1037 this took 11 of 13 operations left (161 story lines) to 2 (15).
    pub(super) fn delete_op_runs(&mut self) {
        let mut k = self.best.ops.len() / 2;
        while k >= 2 && !self.exhausted() {
            let mut i = 0;
            while i + k <= self.best.ops.len() && !self.exhausted() {
                let run: Vec<usize> = (i..i + k).collect();
                // Keyed, the runs of operations are tried side by side (each try costs one
                // run per operation count); by position, sliding one operation at a time.
                if !self.delete_op_set(&run, None)
                    && (i % k != 0 || !self.delete_ops_keyed_set(&run))
                {
                    i += 1;
                }
            }
            k /= 2;
        }
    }

    /// Deletes each operation alone, keyed ([`Search::delete_ops_keyed_set`]).
    pub(super) fn delete_ops_keyed(&mut self) {
        let mut i = 0;
        while i < self.best.ops.len() && !self.exhausted() {
            if !self.delete_ops_keyed_set(&[i]) {
                i += 1;
            }
        }
    }

    /// With few operations and few non-zero draws left: deletes one operation together with
    /// zeroing one non-zero draw elsewhere.
    ///
    /// An operation may be there only to let time pass while something slow finishes (on
    /// the registry's reply-reinsert seed 180, a 7 ms store call): deleted alone, the later
    /// operations arrive before it is done; the slow call zeroed alone, the timing the failure
    /// needs changes. The two together can fail the same way (that seed: 29 story lines
    /// left without this pass, 15 with it).
    /// Tried with at most [`PAIR_OPS_MAX`] operations and [`PAIR_NONZERO_MAX`] non-zero draws
    /// left, and for at most [`PAIR_RUNS_MAX`] runs a round: the pairs are many, and on a
    /// small echo failure an unbounded pass spent 7,000 runs here.
    pub(super) fn delete_op_and_zero_one(&mut self) {
        let stop_at = self.runs.saturating_add(PAIR_RUNS_MAX);
        let mut i = 0;
        while i < self.best.ops.len()
            && self.best.ops.len() <= PAIR_OPS_MAX
            && self.runs < stop_at
            && !self.exhausted()
        {
            let nonzero: Vec<usize> = (0..self.best.draws.len())
                .filter(|&j| !is_zero(&self.best.draws[j]))
                .collect();
            if nonzero.len() > PAIR_NONZERO_MAX {
                return;
            }
            if !nonzero
                .into_iter()
                .any(|j| self.runs < stop_at && self.delete_op_set(&[i], Some(j)))
            {
                i += 1;
            }
        }
    }

    /// Deletes the operations `set` (ascending indices) and lowers the operation count by
    /// their number; with `also_zero`, zeroes that draw too (unless it is deleted). Each
    /// operation's block is shifted back by up to [`DEFINITION_DRAWS`] draws (an operation's
    /// own choices are drawn before its start is marked), and is deleted either whole or only
    /// its workload-lane draws: the second leaves every other lane's stream (latencies,
    /// schedule, faults) where it was, so the operations after it inherit the deleted one's
    /// timing and schedule instead of their own. Which of the two keeps a failure depends on
    /// the failure; both are tried.
    pub(super) fn delete_op_set(&mut self, set: &[usize], also_zero: Option<usize>) -> bool {
        let first = self.best.ops[0];
        let n = self.best.draws.len();
        for shift in 0..=DEFINITION_DRAWS.min(first) {
            for workload_only in [false, true] {
                let mut deleted = vec![false; n];
                for &op in set {
                    let start = self.best.ops[op] - shift;
                    let end = self.best.ops.get(op + 1).map_or(n, |&next| next - shift);
                    for (flag, draw) in deleted[start..end]
                        .iter_mut()
                        .zip(&self.best.draws[start..end])
                    {
                        *flag = !workload_only || Lane::of(&draw.label) == Lane::Workload;
                    }
                }
                if also_zero.is_some_and(|j| deleted[j]) {
                    continue;
                }
                let mut without: Vec<Draw> = Vec::with_capacity(n);
                for (j, draw) in self.best.draws.iter().enumerate() {
                    if !deleted[j] {
                        without.push(draw.clone());
                        if also_zero == Some(j) {
                            zero(without.last_mut().expect("just pushed"));
                        }
                    }
                }
                // Nothing before the first operation's (shifted) start is deleted, so the
                // set-up draws keep their indices.
                let fewer_by = set.len() as u64;
                if self.attempt_with_count_lowered(&without, first - shift, fewer_by, false) {
                    return true;
                }
            }
        }
        false
    }

    /// Deletes the definitions of the operations `set` (ascending indices: the workload
    /// draws each one's node made right before its start) and lowers an operation count by
    /// their number, keyed ([`Search::attempt_keyed`]): the other clients' operations and
    /// every system draw keep the values they had. The counts tried, nearest first, are the
    /// node's own when every operation of `set` is one node's, else every count drawn before
    /// the first of them; when the run shows none, the set-up draws [`count_candidates`]
    /// names.
    pub(super) fn delete_ops_keyed_set(&mut self, set: &[usize]) -> bool {
        let best = &self.best;
        let draws = &best.draws;
        let mut deleted = vec![false; draws.len()];
        for &op in set {
            let (start, node) = (best.ops[op], best.op_nodes[op]);
            // The operation's definition: the draws its own node made right before it.
            let mut j = start;
            while j > 0
                && start - j < DEFINITION_DRAWS
                && Lane::of(&draws[j - 1].label) == Lane::Workload
                && best.stamps[j - 1].node == node
                && !is_count(&best.counts, j - 1)
            {
                j -= 1;
                deleted[j] = true;
            }
        }
        let fewer_by = set.len() as u64;
        // When every operation is one node's, that node's counts; else every count drawn
        // before the first of them.
        let node = best.op_nodes[set[0]];
        let one_node = set.iter().all(|&op| best.op_nodes[op] == node);
        let first_start = best.ops[set[0]];
        let mut counts: Vec<usize> = best
            .counts
            .iter()
            .filter(|c| c.draw < first_start && (!one_node || c.node == node))
            .map(|c| c.draw)
            .filter(
                |&j| matches!(draws[j].value, DrawValue::Int { value, .. } if value >= fewer_by),
            )
            .collect();
        if counts.is_empty() {
            let whole = self.runs - self.started_at < self.shrinker.max_runs / 4;
            counts = count_candidates(&draws[..best.ops[0]], &best.counts, whole);
        }
        for j in counts {
            let DrawValue::Int { bound, value } = self.best.draws[j].value else {
                continue;
            };
            if deleted[j] || value < fewer_by {
                continue;
            }
            let (mut fewer, stamps) = self.without(&deleted);
            // The count's index among the draws that stay.
            let at = j - deleted[..j].iter().filter(|&&gone| gone).count();
            fewer[at].value = DrawValue::Int {
                bound,
                value: value - fewer_by,
            };
            if self.attempt_keyed(&fewer, &stamps, true) {
                return true;
            }
        }
        false
    }

    /// Lowers every operation count, keyed (each client's last operations go, every other
    /// draw keeps its value).
    pub(super) fn lower_op_counts_keyed(&mut self) {
        let mut k = 0;
        while k < self.best.counts.len() && !self.exhausted() {
            // A kept edit re-finds the counts in the new best; the k-th is tried next.
            let i = self.best.counts[k].draw;
            self.lower_keyed(i);
            k += 1;
        }
    }

    /// Zeroes every non-zero workload choice (not an operation count) in turn, keyed.
    pub(super) fn zero_workload_keyed(&mut self) {
        let mut i = 0;
        while i < self.best.draws.len() && !self.exhausted() {
            let draw = &self.best.draws[i];
            if Lane::of(&draw.label) == Lane::Workload
                && !is_zero(draw)
                && !is_count(&self.best.counts, i)
            {
                let mut intended = self.best.draws.clone();
                zero(&mut intended[i]);
                let stamps = self.best.stamps.clone();
                self.attempt_keyed(&intended, &stamps, true);
            }
            i += 1;
        }
    }

    /// Lowers integer draw `i`, keyed: 0 first, then a binary search.
    pub(super) fn lower_keyed(&mut self, i: usize) {
        let DrawValue::Int { value, .. } = self.best.draws[i].value else {
            return;
        };
        let try_value = |search: &mut Self, v: u64| {
            let mut draws = search.best.draws.clone();
            if let DrawValue::Int { value, .. } = &mut draws[i].value {
                *value = v;
            }
            let stamps = search.best.stamps.clone();
            search.attempt_keyed(&draws, &stamps, true)
        };
        if value == 0 || try_value(self, 0) {
            return;
        }
        let (mut lo, mut hi) = (0u64, value);
        while hi - lo > 1 && !self.exhausted() {
            let mid = lo + (hi - lo) / 2;
            if try_value(self, mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
    }

    /// Tries `without` with the operation count lowered by `fewer_by`, at each set-up draw
    /// (among its first `setup` draws) that [`count_candidates`] names; true when one became
    /// the best. Deleting operations without lowering the count makes the workload draw new
    /// ones in their place.
    pub(super) fn attempt_with_count_lowered(
        &mut self,
        without: &[Draw],
        setup: usize,
        fewer_by: u64,
        whole: bool,
    ) -> bool {
        for j in count_candidates(&without[..setup], &self.best.counts, whole) {
            let DrawValue::Int { bound, value } = without[j].value else {
                continue;
            };
            if value < fewer_by {
                continue;
            }
            let mut fewer = without.to_vec();
            fewer[j].value = DrawValue::Int {
                bound,
                value: value - fewer_by,
            };
            if self.attempt(&fewer) {
                return true;
            }
        }
        false
    }

    pub(super) fn sort_ops(&mut self) {
        let mut i = 0;
        while i + 1 < self.best.ops.len() && !self.exhausted() {
            let (a_start, a_end) = self.best.op_block(i);
            let (b_start, b_end) = self.best.op_block(i + 1);
            let a = encode(&self.best.draws[a_start..a_end]);
            let b = encode(&self.best.draws[b_start..b_end]);
            if shortlex_less(&b, &a) || (b.len() == a.len() && b < a) {
                let mut swapped = self.best.draws[..a_start].to_vec();
                swapped.extend_from_slice(&self.best.draws[b_start..b_end]);
                swapped.extend_from_slice(&self.best.draws[a_start..a_end]);
                swapped.extend_from_slice(&self.best.draws[b_end..]);
                self.attempt(&swapped);
            }
            i += 1;
        }
    }
}

/// Where an up-front operation count may be among `before` (the draws before the first
/// operation), nearest first. Searched whole (`whole`) until the search has spent a quarter
/// of the run budget: lowering some other set-up choice with the deletion sometimes keeps the
/// failure too. Past that, a long set-up (more than [`COUNT_SEARCH_MAX`] non-zero choices: a
/// Raft cluster's fault and disk parameters) costs that many runs for every operation tried in
/// every round, and spent the whole budget here (raft-kv stale-read: 1,205 events left at
/// 1,174); then only the draws the run shows to count operations (`counts`, see
/// [`super::op_counts`]) and the two nearest non-zero integers are tried.
pub(super) fn count_candidates(before: &[Draw], counts: &[Count], whole: bool) -> Vec<usize> {
    let nonzero_int = |d: &Draw| matches!(d.value, DrawValue::Int { value, .. } if value > 0);
    let all: Vec<usize> = (0..before.len())
        .rev()
        .filter(|&j| nonzero_int(&before[j]))
        .collect();
    if whole || all.len() <= COUNT_SEARCH_MAX {
        return all;
    }
    let mut candidates: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&j| is_count(counts, j))
        .collect();
    for &j in all.iter().take(2) {
        if !candidates.contains(&j) {
            candidates.push(j);
        }
    }
    candidates
}

/// Past a quarter of the budget, the most set-up choices [`count_candidates`] still searches
/// whole.
pub(super) const COUNT_SEARCH_MAX: usize = 16;

/// How far back of its marked start an operation's block is shifted by the passes that
/// delete several operations: the registry's clients draw four choices (whether to join the
/// calls in flight, name, kind, member) before [`crate::sim::op_start`].
pub(super) const DEFINITION_DRAWS: usize = 4;

/// [`Search::delete_op_and_zero_one`] runs with at most this many operations left...
pub(super) const PAIR_OPS_MAX: usize = 4;

/// ...and at most this many non-zero draws...
pub(super) const PAIR_NONZERO_MAX: usize = 40;

/// ...for at most this many runs a round.
pub(super) const PAIR_RUNS_MAX: u64 = 300;
