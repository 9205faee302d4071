//! The operation log: what each client asked, when, and what it saw.

use std::fmt::{self, Debug};
use std::hash::Hash;

use crate::sim::{self, OpId};

/// One operation of a client history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation<I, O> {
    /// Who issued it (a node name, or any label).
    pub client: String,
    /// What was asked.
    pub input: I,
    /// What the client saw; `None` while pending, or for good when it timed out.
    pub output: Option<O>,
    /// Position of the call among the log's calls and returns (the real-time order).
    pub call_seq: u64,
    /// Position of the return; `None` = pending or indeterminate.
    pub return_seq: Option<u64>,
    /// Virtual time of the call, nanoseconds (for reports).
    pub call_ns: u64,
    /// Virtual time of the return, nanoseconds.
    pub return_ns: Option<u64>,
    /// The operation mark in the run's history, when recorded inside a simulation.
    pub mark: Option<OpId>,
}

impl<I, O> Operation<I, O> {
    /// True when the client never saw a result: it may have taken effect at any time after
    /// its call, or never.
    pub fn is_indeterminate(&self) -> bool {
        self.return_seq.is_none()
    }
}

/// A started operation, to be finished with [`OpLog::ret`] or [`OpLog::time_out`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "finish the operation with OpLog::ret or OpLog::time_out"]
pub struct Pending(usize);

/// What the history's operation mark says of an operation that timed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Indeterminate;

/// A client history: every operation with its call and return, in real-time order.
///
/// Inside a simulation each call and return also writes the history's operation mark
/// ([`sim::op_start`] / [`sim::op_result`]), so the operations are in the history hash and
/// the trace, and their times are virtual time. Outside one (unit tests), times are the
/// positions in the log.
///
/// ```
/// use sim_core::check::OpLog;
///
/// let mut log: OpLog<&str, u32> = OpLog::new();
/// let a = log.call("c1", "read");
/// let b = log.call("c2", "write");
/// log.ret(a, 0);
/// log.time_out(b);
/// assert_eq!(log.ops().len(), 2);
/// assert!(log.ops()[1].is_indeterminate());
/// ```
#[derive(Clone, Debug)]
pub struct OpLog<I, O> {
    ops: Vec<Operation<I, O>>,
    next_seq: u64,
}

impl<I, O> Default for OpLog<I, O> {
    fn default() -> Self {
        OpLog {
            ops: Vec::new(),
            next_seq: 0,
        }
    }
}

impl<I: Debug + Hash, O: Debug + Hash> OpLog<I, O> {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the call of `input` by `client`.
    pub fn call(&mut self, client: &str, input: I) -> Pending {
        let in_sim = crate::in_simulation();
        let mark = in_sim.then(|| sim::op_start(&input));
        let seq = self.tick();
        let call_ns = if in_sim {
            crate::time::now().as_nanos()
        } else {
            seq
        };
        self.ops.push(Operation {
            client: client.to_string(),
            input,
            output: None,
            call_seq: seq,
            return_seq: None,
            call_ns,
            return_ns: None,
            mark,
        });
        Pending(self.ops.len() - 1)
    }

    /// Records that the operation returned `output` to its client.
    pub fn ret(&mut self, op: Pending, output: O) {
        let seq = self.tick();
        let entry = &mut self.ops[op.0];
        debug_assert!(
            entry.return_seq.is_none(),
            "operation {} ({:?}) returned twice",
            op.0,
            entry.input
        );
        if let Some(mark) = entry.mark {
            sim::op_result(mark, &output);
        }
        entry.return_ns = Some(match entry.mark {
            Some(_) => crate::time::now().as_nanos(),
            None => seq,
        });
        entry.return_seq = Some(seq);
        entry.output = Some(output);
    }

    /// Records that the client gave up on the operation: its outcome is unknown.
    pub fn time_out(&mut self, op: Pending) {
        let entry = &self.ops[op.0];
        debug_assert!(
            entry.return_seq.is_none(),
            "operation {} timed out after returning",
            op.0
        );
        if let Some(mark) = entry.mark {
            sim::op_result(mark, &Indeterminate);
        }
    }

    fn tick(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }
}

impl<I, O> OpLog<I, O> {
    /// Every operation, in call order.
    pub fn ops(&self) -> &[Operation<I, O>] {
        &self.ops
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True when no operation was recorded.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

impl fmt::Display for Indeterminate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("indeterminate (timed out)")
    }
}
