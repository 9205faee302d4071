//! Passes over time: dropping idle stretches, deleting faults, moving them earlier.

use super::bytes::is_zero;
use super::keyed::is_fault_parameter;
use super::*;

impl Search<'_, '_> {
    /// Zeroes a non-zero workload choice and deletes the draws the run made after it up to
    /// the next workload choice (after the one or two details it may have drawn next) or up
    /// to the next operation's start, the longest such stretch first.
    ///
    /// A choice that makes the workload wait (a quiet period, a think time) is followed by
    /// whatever the system drew while it waited: a leader's heartbeats every 500 ms, each with
    /// its latency draw. Zeroed alone, the wait goes but its draws stay, and the next messages
    /// read them in its place. Deleted with it, the draws after the stretch stay with the
    /// decisions they made. [`Search::zero_and_drop_dependents`] does the same for the one or
    /// two draws right after a choice.
    pub(super) fn drop_idle_stretches(&mut self) {
        let workload = |d: &Draw| Lane::of(&d.label) == Lane::Workload;
        let mut i = 0;
        while i + 1 < self.best.draws.len() && !self.exhausted() {
            let draws = &self.best.draws;
            if !is_zero(&draws[i]) && workload(&draws[i]) {
                let next_workload =
                    |from: usize| (from..draws.len()).find(|&j| workload(&draws[j]));
                let mut ends: Vec<usize> = (i + 1..=i + 3)
                    .map(|from| next_workload(from).unwrap_or(draws.len()))
                    .collect();
                ends.extend(self.best.ops.iter().copied().find(|&start| start > i));
                // Deleting nothing after it is zeroing alone: the value passes do that.
                ends.retain(|&end| end > i + 1);
                ends.sort_unstable();
                ends.dedup();
                for end in ends.into_iter().rev() {
                    if self.zero_and_cut(i, end) {
                        break;
                    }
                }
            }
            i += 1;
        }
    }

    /// Turns off the fired fault events of the best, in runs of half of them, a quarter, ...,
    /// one (delta debugging over faults), keyed: the parameters a fault drew when it fired
    /// (a clog's length, a crash's target) are then not drawn, and keying keeps
    /// every other draw with the decision it made.
    pub(super) fn delete_faults(&mut self) {
        let fired = |best: &Candidate| -> Vec<usize> {
            (0..best.draws.len())
                .filter(|&j| best.draws[j].value == DrawValue::Event { fired: true })
                .collect()
        };
        let mut k = fired(&self.best).len().max(1);
        loop {
            let mut i = 0;
            loop {
                let events = fired(&self.best);
                if i >= events.len() || self.exhausted() {
                    break;
                }
                let mut intended = self.best.draws.clone();
                for &j in events.iter().skip(i).take(k) {
                    intended[j].value = DrawValue::Event { fired: false };
                }
                let stamps = self.best.stamps.clone();
                if !self.attempt_keyed(&intended, &stamps, true) {
                    i += k;
                }
            }
            if k == 1 || self.exhausted() {
                return;
            }
            k /= 2;
        }
    }

    /// Moves each fired fault event to an earlier draw of its label, keyed, with the
    /// parameters it drew ([`Search::move_fault`]): the earliest such draw that still fails
    /// the same way, found by binary search. On raft-kv a crash comes from a nemesis tick
    /// every 100 ms and a partition from any send: an earlier tick or send is a shorter run.
    pub(super) fn move_faults_earlier(&mut self) {
        self.walk_faults_earlier(
            |best, i| {
                (0..i)
                    .filter(|&j| {
                        best.draws[j].label == best.draws[i].label
                            && best.draws[j].value == (DrawValue::Event { fired: false })
                    })
                    .collect()
            },
            |search, i, to| search.move_fault(i, to),
        );
    }

    /// Cuts the stretch of virtual time before each fired fault event, keyed: every draw
    /// made from an earlier draw of its label up to the event goes, and the event and
    /// everything after it happen that much sooner ([`Search::cut_time`]); the longest such
    /// cut that still fails the same way, found by binary search. Where moving the fault
    /// alone comes too early for what it needs to meet, moving the rest of the run with it
    /// keeps them together.
    pub(super) fn pull_faults_forward(&mut self) {
        self.walk_faults_earlier(
            |best, i| {
                (0..i)
                    .filter(|&j| {
                        best.draws[j].label == best.draws[i].label
                            && best.stamps[j].at < best.stamps[i].at
                    })
                    .collect()
            },
            |search, i, to| {
                let (from, until) = (search.best.stamps[to].at, search.best.stamps[i].at);
                search.cut_time(from, until)
            },
        );
    }

    /// For each fired fault event `i` of the best, tries `edit(i, target)` for the earlier
    /// draws `targets(best, i)` lists, in a binary search for the earliest that becomes the
    /// best (a target that fails sends the search later); after a success the event sits at
    /// an earlier index, and the same index is looked at again.
    pub(super) fn walk_faults_earlier(
        &mut self,
        targets: impl Fn(&Candidate, usize) -> Vec<usize>,
        edit: impl Fn(&mut Self, usize, usize) -> bool,
    ) {
        let mut i = 0;
        'events: while i < self.best.draws.len() && !self.exhausted() {
            if self.best.draws[i].value == (DrawValue::Event { fired: true }) {
                let earlier = targets(&self.best, i);
                let mut lo = 0;
                while lo < earlier.len() && !self.exhausted() {
                    let mid = lo + (earlier.len() - lo) / 2;
                    if edit(self, i, earlier[mid]) {
                        continue 'events;
                    }
                    lo = mid + 1;
                }
            }
            i += 1;
        }
    }

    /// Deletes every draw made in `from..to` (virtual time) and moves every later one
    /// `to - from` earlier; keyed. True when that became the best.
    pub(super) fn cut_time(&mut self, from: u64, to: u64) -> bool {
        let shift = to - from;
        let mut intended = Vec::with_capacity(self.best.draws.len());
        let mut stamps = Vec::with_capacity(self.best.draws.len());
        for (draw, &stamp) in self.best.draws.iter().zip(&self.best.stamps) {
            if stamp.at < from {
                intended.push(draw.clone());
                stamps.push(stamp);
            } else if stamp.at >= to {
                intended.push(draw.clone());
                stamps.push(Stamp {
                    at: stamp.at - shift,
                    ..stamp
                });
            }
        }
        self.attempt_keyed(&intended, &stamps, true)
    }

    /// Fires the event draw `to` (earlier than `from`, of the same label) in place of
    /// `from`, with `from`'s parameters moved along; keyed. True when that became the best.
    pub(super) fn move_fault(&mut self, from: usize, to: usize) -> bool {
        let (draws, stamps) = (&self.best.draws, &self.best.stamps);
        let mut end = from + 1;
        while end < draws.len() && stamps[end] == stamps[from] && is_fault_parameter(&draws[end]) {
            end += 1;
        }
        let mut intended: Vec<Draw> = Vec::with_capacity(draws.len());
        let mut intended_stamps: Vec<Stamp> = Vec::with_capacity(draws.len());
        for (j, (draw, &stamp)) in draws.iter().zip(stamps).enumerate() {
            if j > from && j < end {
                // A parameter of the moved fault: drawn where it now fires.
                continue;
            }
            let mut draw = draw.clone();
            if j == from || j == to {
                draw.value = DrawValue::Event { fired: j == to };
            }
            intended.push(draw);
            intended_stamps.push(stamp);
            if j == to {
                intended.extend_from_slice(&draws[from + 1..end]);
                intended_stamps.extend(std::iter::repeat_n(stamp, end - from - 1));
            }
        }
        self.attempt_keyed(&intended, &intended_stamps, false)
    }
}
