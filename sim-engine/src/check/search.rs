//! The search: Wing & Gong's linearization search with Lowe's memoisation, per partition,
//! and the window a failure reports.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use super::{Limits, Model, OpLog};

/// Why a check did not pass.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// No order of the operations explains their results.
    #[error("{0}")]
    NotLinearizable(Violation),
    /// A partition's search took more steps than its budget: undecided, not a failure.
    #[error("the search of partition {partition} ({ops} operations) passed its budget of {budget_steps} steps; raise Limits::budget_steps or record fewer concurrent operations")]
    OutOfBudget {
        /// The partition.
        partition: u64,
        /// Its operations.
        ops: usize,
        /// The budget.
        budget_steps: u64,
    },
    /// A partition holds more operations than the limit: undecided, not a failure.
    #[error("partition {partition} holds {ops} operations, more than Limits::ops_max = {ops_max}; raise the limit or shorten the run")]
    TooLong {
        /// The partition.
        partition: u64,
        /// Its operations.
        ops: usize,
        /// The limit.
        ops_max: usize,
    },
}

impl CheckError {
    /// The violation, if the history was decided non-linearizable.
    pub fn violation(&self) -> Option<&Violation> {
        match self {
            CheckError::NotLinearizable(v) => Some(v),
            _ => None,
        }
    }
}

/// One operation of a failure's window, as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowOp {
    /// Its index in the [`OpLog`].
    pub index: usize,
    /// Who issued it.
    pub client: String,
    /// The input, `Debug`-formatted.
    pub input: String,
    /// The output, `Debug`-formatted, or `None` if indeterminate.
    pub output: Option<String>,
    /// Call time, nanoseconds.
    pub call_ns: u64,
    /// Return time, nanoseconds (`None`: indeterminate, or still pending at the window's end).
    pub return_ns: Option<u64>,
    /// Its operation number in the run's history ([`crate::sim::OpId`]), when it was
    /// recorded inside a simulation: the `op N` of the trace's operation events.
    pub history_op: Option<u64>,
}

/// A non-linearizable history, explained by a small window of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The partition (for a key-value store, the key).
    pub partition: u64,
    /// The operation whose return made the partition's history non-linearizable: every
    /// prefix ending before it is linearizable, the one ending with it is not.
    pub culprit: usize,
    /// Operations of the partition in the failing prefix.
    pub prefix_ops: usize,
    /// A subset of the failing prefix that alone admits no linearization, by call time.
    pub window: Vec<WindowOp>,
    /// True if dropping any one operation of the window was tried and made it linearizable
    /// (false when the minimisation ran out of its budget first).
    pub minimal: bool,
}

impl Violation {
    /// Start and end of the window, nanoseconds: the first call to the culprit's return.
    pub fn span_ns(&self) -> (u64, u64) {
        let start = self.window.iter().map(|o| o.call_ns).min().unwrap_or(0);
        let end = self
            .window
            .iter()
            .find(|o| o.index == self.culprit)
            .and_then(|o| o.return_ns)
            .unwrap_or(start);
        (start, end)
    }
}

fn ns_text(ns: u64) -> String {
    format!("{}.{:03}ms", ns / 1_000_000, (ns / 1_000) % 1_000)
}

/// Where a failure message names its window's span, and its operations' numbers in the
/// history: the text [`WindowMark::find`] reads back.
const SPAN_TAG: &str = "; window ";
const HISTORY_OPS_TAG: &str = "history ops ";

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (start, end) = self.span_ns();
        let history_ops: Vec<String> = self
            .window
            .iter()
            .filter_map(|o| o.history_op.map(|n| n.to_string()))
            .collect();
        write!(
            f,
            "partition {}: no linearization after op {} returned{SPAN_TAG}{}..{} of {} operations{} \
             (the failing prefix holds {}; {HISTORY_OPS_TAG}{}):",
            self.partition,
            self.culprit,
            ns_text(start),
            ns_text(end),
            self.window.len(),
            if self.minimal { ", each needed" } else { "" },
            self.prefix_ops,
            if history_ops.is_empty() {
                "none".to_string()
            } else {
                history_ops.join(",")
            }
        )?;
        for op in &self.window {
            let until = op.return_ns.map_or("...".to_string(), ns_text);
            let output = op.output.as_deref().unwrap_or("indeterminate");
            let mut mark = String::new();
            if op.index == self.culprit {
                mark.push_str(" <- culprit");
            }
            write!(
                f,
                " [op {} {} {}..{}: {} -> {}{}]",
                op.index,
                op.client,
                ns_text(op.call_ns),
                until,
                op.input,
                output,
                mark
            )?;
        }
        Ok(())
    }
}

/// One operation as the search sees it: an index into the log, its call and return
/// positions (`u64::MAX` = never returns), and whether it must be linearized.
#[derive(Clone, Copy, Debug)]
struct SearchOp {
    index: usize,
    call: u64,
    ret: u64,
    determinate: bool,
}

pub(super) fn check<M: Model>(
    model: &M,
    log: &OpLog<M::Input, M::Output>,
    limits: Limits,
) -> Result<(), CheckError> {
    let mut partitions: BTreeMap<u64, Vec<SearchOp>> = BTreeMap::new();
    for (index, op) in log.ops().iter().enumerate() {
        let determinate = op.return_seq.is_some();
        // An indeterminate read explains nothing whether it happened or not.
        if !determinate && !model.changes_state(&op.input) {
            continue;
        }
        partitions
            .entry(model.partition(&op.input))
            .or_default()
            .push(SearchOp {
                index,
                call: op.call_seq,
                ret: op.return_seq.unwrap_or(u64::MAX),
                determinate,
            });
    }
    for (&partition, ops) in &partitions {
        if ops.len() > limits.ops_max {
            return Err(CheckError::TooLong {
                partition,
                ops: ops.len(),
                ops_max: limits.ops_max,
            });
        }
        let out_of_budget = || CheckError::OutOfBudget {
            partition,
            ops: ops.len(),
            budget_steps: limits.budget_steps,
        };
        match search(model, log, ops, limits.budget_steps) {
            Some(true) => continue,
            Some(false) => {
                let violation =
                    window(model, log, partition, ops, limits).ok_or_else(out_of_budget)?;
                return Err(CheckError::NotLinearizable(violation));
            }
            None => return Err(out_of_budget()),
        }
    }
    Ok(())
}

/// A set of operations (by position in the partition) with an incremental hash.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Bits {
    words: Vec<u64>,
    hash: u64,
}

impl Bits {
    fn new(n: usize) -> Self {
        Bits {
            words: vec![0; n.div_ceil(64)],
            hash: 0,
        }
    }
    /// Flips membership of `i` (set when clear, clear when set).
    fn flip(&mut self, i: usize) {
        self.words[i / 64] ^= 1 << (i % 64);
        self.hash ^= mix(i as u64);
    }
}

/// A bijective mixer (SplitMix64's finaliser): the set's hash is the xor over its members.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A configuration already explored: the linearized set and the model state.
#[derive(PartialEq, Eq)]
struct Seen<S> {
    bits: Vec<u64>,
    hash: u64,
    state: S,
}

impl<S: Hash> Hash for Seen<S> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.hash);
        self.state.hash(h);
    }
}

const NIL: usize = usize::MAX;

/// The calls and returns of `ops` as a doubly linked list in real-time order, `(next, prev)`:
/// entry 2k is the call of `ops[k]`, 2k+1 its return, and 2n the head (a sentinel).
fn real_time_list(ops: &[SearchOp]) -> (Vec<usize>, Vec<usize>) {
    let n = ops.len();
    let mut order: Vec<(u64, bool, usize)> = Vec::with_capacity(2 * n);
    for (k, op) in ops.iter().enumerate() {
        // At equal positions a call sorts before a return: concurrent, the permissive reading.
        order.push((op.call, false, 2 * k));
        order.push((op.ret, true, 2 * k + 1));
    }
    order.sort_unstable();
    let head = 2 * n;
    let mut next = vec![NIL; 2 * n + 1];
    let mut prev = vec![NIL; 2 * n + 1];
    let mut last = head;
    for &(_, _, e) in &order {
        next[last] = e;
        prev[e] = last;
        last = e;
    }
    (next, prev)
}

/// Searches one partition. `Some(true)`: linearizable; `Some(false)`: not; `None`: the
/// budget ran out.
///
/// The calls and returns of `ops` form a doubly linked list in real-time order. Walking it, a
/// call is an operation that may be linearized next (nothing that returned before it was
/// called is still unlinearized); linearizing lifts its call and return out of the list and
/// starts over from the head. Reaching a return means the operation it ends cannot be
/// placed any later: backtrack, undoing the last choice. Returns of indeterminate operations
/// sit after everything, so they are never reached while a determinate one is left.
fn search<M: Model>(
    model: &M,
    log: &OpLog<M::Input, M::Output>,
    ops: &[SearchOp],
    budget_steps: u64,
) -> Option<bool> {
    let n = ops.len();
    let mut remaining = ops.iter().filter(|o| o.determinate).count();
    if remaining == 0 {
        return Some(true);
    }
    let head = 2 * n;
    let (mut next, mut prev) = real_time_list(ops);
    let lift = |next: &mut Vec<usize>, prev: &mut Vec<usize>, e: usize| {
        let (p, q) = (prev[e], next[e]);
        next[p] = q;
        if q != NIL {
            prev[q] = p;
        }
    };
    let unlift = |next: &mut Vec<usize>, prev: &mut Vec<usize>, e: usize| {
        let (p, q) = (prev[e], next[e]);
        next[p] = e;
        if q != NIL {
            prev[q] = e;
        }
    };

    let mut seen: HashSet<Seen<M::State>, BuildHasherDefault<DefaultHasher>> = HashSet::default();
    let mut bits = Bits::new(n);
    let mut state = model.init();
    let mut stack: Vec<(usize, M::State)> = Vec::new();
    let mut entry = next[head];
    let mut steps = 0u64;
    while remaining > 0 {
        steps += 1;
        if steps > budget_steps {
            return None;
        }
        debug_assert!(
            entry != NIL,
            "walked off the list with {remaining} operations left"
        );
        let k = entry / 2;
        if entry % 2 == 0 {
            let op = &log.ops()[ops[k].index];
            // An operation cut off before its return (see `window`) keeps its output hidden.
            let output = if ops[k].determinate {
                op.output.as_ref()
            } else {
                None
            };
            if let Some(after) = model.step(&state, &op.input, output) {
                bits.flip(k);
                let fresh = seen.insert(Seen {
                    bits: bits.words.clone(),
                    hash: bits.hash,
                    state: after.clone(),
                });
                if fresh {
                    stack.push((k, std::mem::replace(&mut state, after)));
                    lift(&mut next, &mut prev, 2 * k);
                    lift(&mut next, &mut prev, 2 * k + 1);
                    remaining -= usize::from(ops[k].determinate);
                    entry = next[head];
                    continue;
                }
                bits.flip(k);
            }
            entry = next[entry];
        } else {
            // A return: its operation found no place. Undo the last choice, try the next.
            let Some((k, before)) = stack.pop() else {
                return Some(false);
            };
            state = before;
            bits.flip(k);
            remaining += usize::from(ops[k].determinate);
            unlift(&mut next, &mut prev, 2 * k + 1);
            unlift(&mut next, &mut prev, 2 * k);
            entry = next[2 * k];
        }
    }
    Some(true)
}

/// Explains a failing partition: the shortest failing prefix (by returns), then a small subset
/// of it that alone still fails. `None` if a search ran out of budget.
fn window<M: Model>(
    model: &M,
    log: &OpLog<M::Input, M::Output>,
    partition: u64,
    ops: &[SearchOp],
    limits: Limits,
) -> Option<Violation> {
    let search = WindowSearch {
        model,
        log,
        ops,
        limits,
    };
    let (cut, failing) = search.first_failing_prefix()?;
    let culprit = ops
        .iter()
        .find(|o| o.ret == cut)
        .expect("the cut is a return")
        .index;
    let explainable = !search.fails(&relaxed(&failing, culprit))?;
    let (window, minimal) = search.shrink_window(&failing, culprit, explainable);
    Some(Violation {
        partition,
        culprit,
        prefix_ops: failing.len(),
        window: search.shown(&window),
        minimal,
    })
}

/// The searches [`window`] makes over one partition's operations.
struct WindowSearch<'a, M: Model> {
    model: &'a M,
    log: &'a OpLog<M::Input, M::Output>,
    ops: &'a [SearchOp],
    limits: Limits,
}

/// `subset` with the culprit free of real time: called before everything, returning after
/// every determinate return (so it can take effect at any moment).
fn relaxed(subset: &[SearchOp], culprit: usize) -> Vec<SearchOp> {
    subset
        .iter()
        .map(|o| {
            if o.index == culprit {
                SearchOp {
                    call: 0,
                    ret: u64::MAX - 1,
                    ..*o
                }
            } else {
                *o
            }
        })
        .collect()
}

impl<M: Model> WindowSearch<'_, M> {
    /// Whether `subset` has no linearization; `None` when the search ran out of budget.
    fn fails(&self, subset: &[SearchOp]) -> Option<bool> {
        search(self.model, self.log, subset, self.limits.budget_steps).map(|ok| !ok)
    }

    /// The prefix up to a return at position `cut`: operations called before it; those still
    /// running at `cut` become indeterminate.
    fn prefix(&self, cut: u64) -> Vec<SearchOp> {
        self.ops
            .iter()
            .filter(|o| o.call < cut)
            .filter_map(|o| {
                if o.ret <= cut {
                    Some(*o)
                } else {
                    let input = &self.log.ops()[o.index].input;
                    self.model.changes_state(input).then_some(SearchOp {
                        ret: u64::MAX,
                        determinate: false,
                        ..*o
                    })
                }
            })
            .collect()
    }

    /// The first failing prefix and the return it ends at. Linearizability is prefix-closed,
    /// so it is found by binary search over the determinate returns.
    fn first_failing_prefix(&self) -> Option<(u64, Vec<SearchOp>)> {
        let mut returns: Vec<u64> = self
            .ops
            .iter()
            .filter(|o| o.determinate)
            .map(|o| o.ret)
            .collect();
        returns.sort_unstable();
        let (mut lo, mut hi) = (0, returns.len() - 1);
        debug_assert!(
            self.fails(&self.prefix(returns[hi])) == Some(true),
            "the whole partition fails"
        );
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.fails(&self.prefix(returns[mid]))? {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Some((returns[lo], self.prefix(returns[lo])))
    }

    /// Drops operations of `failing` while the rest still fails: the oldest first, then
    /// chunks, then one at a time; true with the window when no single drop is left. When
    /// the culprit's result can be explained at some other moment (`explainable`: the
    /// culprit placed anywhere, free of real time), a drop must keep that so: the window then
    /// shows what the culprit saw and what made it too late (the write it read, and the one
    /// after it), not a result that merely lost its writer.
    fn shrink_window(
        &self,
        failing: &[SearchOp],
        culprit: usize,
        explainable: bool,
    ) -> (Vec<SearchOp>, bool) {
        let keeps_failing = |candidate: &[SearchOp]| -> bool {
            self.fails(candidate) == Some(true)
                && (!explainable || self.fails(&relaxed(candidate, culprit)) == Some(false))
        };
        // First the oldest operations, by binary search on how many to drop (a heuristic:
        // the result is checked, and the one-at-a-time pass below makes it minimal).
        let culprit_at = failing
            .iter()
            .position(|o| o.index == culprit)
            .expect("the culprit is in its prefix");
        let (mut keep_from, mut upper) = (0, culprit_at);
        while keep_from < upper {
            let mid = (keep_from + upper).div_ceil(2);
            if keeps_failing(&failing[mid..]) {
                keep_from = mid;
            } else {
                upper = mid - 1;
            }
        }
        let mut window = failing[keep_from..].to_vec();
        let mut searches = 0u32;
        let mut chunk = window.len().div_ceil(2).max(1);
        loop {
            let mut start = 0;
            let mut dropped_any = false;
            while start < window.len() {
                let end = (start + chunk).min(window.len());
                let keeps_culprit = window[start..end].iter().all(|o| o.index != culprit);
                if keeps_culprit {
                    if searches >= self.limits.window_searches_max {
                        return (window, false);
                    }
                    searches += 1;
                    let mut candidate = window[..start].to_vec();
                    candidate.extend_from_slice(&window[end..]);
                    if keeps_failing(&candidate) {
                        window = candidate;
                        dropped_any = true;
                        continue;
                    }
                }
                start = end;
            }
            if chunk == 1 && !dropped_any {
                return (window, true);
            }
            chunk = (chunk / 2).max(1);
        }
    }

    /// The window as a failure shows it, in call order.
    fn shown(&self, window: &[SearchOp]) -> Vec<WindowOp> {
        let mut shown: Vec<WindowOp> = window
            .iter()
            .map(|o| {
                let op = &self.log.ops()[o.index];
                let returned = o.determinate;
                WindowOp {
                    index: o.index,
                    client: op.client.clone(),
                    input: format!("{:?}", op.input),
                    output: returned
                        .then(|| op.output.as_ref().map(|out| format!("{out:?}")))
                        .flatten(),
                    call_ns: op.call_ns,
                    return_ns: if returned { op.return_ns } else { None },
                    history_op: op.mark.map(|m| m.0),
                }
            })
            .collect();
        shown.sort_by_key(|o| (o.call_ns, o.index));
        shown
    }
}

/// A failure's window as pictures mark it, read back from a failure message (a trace's
/// failed check carries the [`Violation`]'s text, nothing more).
///
/// ```
/// use sim_core::check::{self, kv::{Kv, KvInput, KvOutput}, OpLog, WindowMark};
///
/// let mut log = OpLog::new();
/// let put = log.call("c1", KvInput::Put { key: 1, value: 7 });
/// log.ret(put, KvOutput::Done);
/// let get = log.call("c2", KvInput::Get { key: 1 });
/// log.ret(get, KvOutput::Value(None));
/// let message = format!("linearizable: {}", check::linearizable(&Kv, &log).unwrap_err());
/// let mark = WindowMark::find(&message).unwrap();
/// assert_eq!((mark.start_ns, mark.end_ns), (0, 0), "outside a simulation times are positions");
/// assert!(mark.history_ops.is_empty(), "outside a simulation there is no history");
/// assert_eq!(WindowMark::find("some other failure"), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowMark {
    /// Start of the window (its first call), nanoseconds, to the microsecond the text keeps.
    pub start_ns: u64,
    /// End of the window (the culprit's return), nanoseconds, to the microsecond.
    pub end_ns: u64,
    /// The window's operations, by their number in the history (`op N` in the trace).
    pub history_ops: Vec<u64>,
}

impl WindowMark {
    /// The window named in `text`, if it holds a [`Violation`]'s message.
    pub fn find(text: &str) -> Option<WindowMark> {
        let at = text.find(SPAN_TAG)? + SPAN_TAG.len();
        let rest = &text[at..];
        let (span, rest) = rest.split_once(' ')?;
        let (start, end) = span.split_once("..")?;
        let history_ops = rest
            .find(HISTORY_OPS_TAG)
            .map(|i| {
                let list = &rest[i + HISTORY_OPS_TAG.len()..];
                let list = &list[..list.find(')').unwrap_or(list.len())];
                list.split(',')
                    .filter_map(|n| n.trim().parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        Some(WindowMark {
            start_ns: parse_ms(start)?,
            end_ns: parse_ms(end)?,
            history_ops,
        })
    }
}

/// Reads what [`ns_text`] wrote (`12.345ms`).
fn parse_ms(text: &str) -> Option<u64> {
    let (ms, us) = text.strip_suffix("ms")?.split_once('.')?;
    Some(ms.parse::<u64>().ok()? * 1_000_000 + us.parse::<u64>().ok()? * 1_000)
}
