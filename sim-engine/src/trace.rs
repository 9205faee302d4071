//! Trace and history: every harness-visible event, and a stable 64-bit hash over them.
//!
//! Every event the harness sees — a task step, a send, a delivery, a drop, a timer, a crash,
//! an operation's start and result — is folded into the **history hash** as it happens. The
//! hash is made of integers only (times, ids, kinds and payload digests computed with
//! [`StableHasher`]), so it does not depend on the platform, on pointer values or on std's
//! randomised hashing. Two runs with the same hash saw the same events in the same order.
//!
//! Recording the events themselves (with readable details) is optional: a sweep keeps only
//! the hash, and a failing input is simply run again with recording on — the run is a pure
//! function of its input, so the second run is the first one, written down. The hash is the
//! same in both modes (a test checks it).

use std::fmt::{self, Write as _};

use serde::{Deserialize, Serialize};

use crate::hash::mix;
/// Stable hashing lives in [`crate::hash`], at the bottom of the crate; these paths stay for
/// code written against them.
pub use crate::hash::{stable_hash, stable_hash_bytes, StableHasher};

/// What happened. The numeric fields are hashed; the `detail` of an [`Event`] is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum EventKind {
    /// A node's main task was built and started.
    Start {
        /// How many times this node has started before.
        incarnation: u32,
    },
    /// The node crashed: all its tasks were dropped.
    Crash,
    /// A task was created.
    Spawn {
        /// The new task.
        task: u32,
    },
    /// A task was polled once.
    Step {
        /// The task polled.
        task: u32,
    },
    /// A task finished.
    TaskDone {
        /// The finished task.
        task: u32,
    },
    /// A message left its sender.
    Send {
        /// Message id, unique in the run.
        msg: u64,
        /// Destination node.
        to: u32,
        /// Virtual time it is due, in nanoseconds.
        deliver_at_ns: u64,
        /// Stable digest of the payload.
        digest: u64,
    },
    /// A message reached its destination's mailbox.
    Deliver {
        /// Message id.
        msg: u64,
    },
    /// A message was lost.
    Drop {
        /// Message id.
        msg: u64,
    },
    /// A sleep's deadline passed.
    Timer {
        /// Timer slot.
        timer: u32,
    },
    /// A fault was injected (partition, clog, crash decision, ...).
    Fault {
        /// Digest of the fault's description.
        digest: u64,
    },
    /// A workload operation started.
    OpStart {
        /// Operation number within the run.
        op: u64,
        /// Stable digest of the operation.
        digest: u64,
    },
    /// A workload operation completed.
    OpResult {
        /// Operation number within the run.
        op: u64,
        /// Stable digest of the result.
        digest: u64,
    },
    /// A check failed (the last event of a failing run).
    CheckFailed {
        /// Digest of the invariant's name.
        digest: u64,
    },
    /// A free-form note from system code (`sim_core::trace::note`).
    Note {
        /// Digest of the note.
        digest: u64,
    },
    /// The network delivers a datagram twice: `copy` is the second delivery's message id.
    Duplicate {
        /// Message id of the original.
        msg: u64,
        /// Message id of the copy.
        copy: u64,
    },
    /// A message is held (by a clog or a stream stall) instead of delivered.
    Hold {
        /// Message id.
        msg: u64,
    },
    /// A held message is released towards its destination.
    Release {
        /// Message id.
        msg: u64,
    },
    /// A stream connection is reset at the event's node.
    Reset {
        /// Connection id, unique in the run.
        conn: u64,
    },
    /// A watch fired: its watcher (the event's node) lost the target node.
    NodeDown {
        /// Watch id, unique in the run.
        watch: u64,
        /// The node lost.
        target: u32,
        /// 1 = the node crashed, 2 = a partition cut the link.
        reason: u32,
    },
    /// A node's wall clock was set for the run: its offset from true time and its drift.
    ClockSkew {
        /// Offset from true time, nanoseconds (negative: behind).
        offset_ns: i64,
        /// Drift, parts per million (negative: slow).
        drift_ppm: i64,
    },
    /// A node read its wall clock ([`crate::time::system_now`]): what it believed.
    ClockRead {
        /// The reading, nanoseconds since the Unix epoch.
        local_ns: u64,
    },
    /// A node's wall clock jumped (forwards or backwards).
    ClockJump {
        /// The jump, nanoseconds (negative: backwards).
        delta_ns: i64,
    },
    /// A timer was set to fire late (a timer fault).
    TimerLate {
        /// Timer slot.
        timer: u32,
        /// How late, nanoseconds.
        late_ns: u64,
    },
    /// The node was paused: its tasks are frozen while time goes on.
    Pause,
    /// The node was resumed: what woke while it was paused runs now.
    Resume,
    /// The node was asked to stop (a graceful stop: a signal it may handle).
    Stop {
        /// How long it has before it is killed, nanoseconds.
        grace_ns: u64,
    },
    /// The node stopped by itself after a stop request (its main task returned).
    Exit,
    /// A datagram session broke; the event's node is the end told.
    SessionBroken {
        /// The session that broke (the next one is one more).
        session: u64,
        /// Digest of the other end's address.
        digest: u64,
    },
    /// A disk operation completed (or failed) on the event's node.
    Disk {
        /// Which operation: [`crate::disk::DiskOp::code`].
        op: u32,
        /// The file (inode number on its node; 0 for directory-wide operations).
        file: u32,
        /// The offset, or for name operations a digest of the names.
        at: u64,
        /// Bytes read or written, or a count the operation reports.
        len: u64,
        /// Whether it succeeded.
        ok: bool,
    },
    /// The disk injected a fault, or a crash decided the fate of unsynced state.
    DiskFault {
        /// Which: [`crate::disk::DiskFault::code`].
        fault: u32,
        /// The file (inode number on its node; 0 for the directory).
        file: u32,
        /// Where (offset), or what the fault names in it.
        at: u64,
        /// How many bytes.
        len: u64,
    },
}

impl EventKind {
    // Inlined: on the per-event hot path, where the kind is usually known at the call site.
    #[inline]
    fn words(&self) -> [u64; 4] {
        use EventKind::*;
        match *self {
            Start { incarnation } => [1, u64::from(incarnation), 0, 0],
            Crash => [2, 0, 0, 0],
            Spawn { task } => [3, u64::from(task), 0, 0],
            Step { task } => [4, u64::from(task), 0, 0],
            TaskDone { task } => [5, u64::from(task), 0, 0],
            Send {
                msg,
                to,
                deliver_at_ns,
                digest,
            } => [
                6,
                msg,
                u64::from(to) ^ deliver_at_ns.rotate_left(20),
                digest,
            ],
            Deliver { msg } => [7, msg, 0, 0],
            Drop { msg } => [8, msg, 0, 0],
            Timer { timer } => [9, u64::from(timer), 0, 0],
            Fault { digest } => [10, digest, 0, 0],
            OpStart { op, digest } => [11, op, digest, 0],
            OpResult { op, digest } => [12, op, digest, 0],
            CheckFailed { digest } => [13, digest, 0, 0],
            Note { digest } => [14, digest, 0, 0],
            Duplicate { msg, copy } => [15, msg, copy, 0],
            Hold { msg } => [16, msg, 0, 0],
            Release { msg } => [17, msg, 0, 0],
            Reset { conn } => [18, conn, 0, 0],
            NodeDown {
                watch,
                target,
                reason,
            } => [19, watch, u64::from(target), u64::from(reason)],
            ClockSkew {
                offset_ns,
                drift_ppm,
            } => [20, offset_ns as u64, drift_ppm as u64, 0],
            ClockRead { local_ns } => [21, local_ns, 0, 0],
            ClockJump { delta_ns } => [22, delta_ns as u64, 0, 0],
            TimerLate { timer, late_ns } => [23, u64::from(timer), late_ns, 0],
            Pause => [24, 0, 0, 0],
            Resume => [25, 0, 0, 0],
            Stop { grace_ns } => [26, grace_ns, 0, 0],
            Exit => [27, 0, 0, 0],
            SessionBroken { session, digest } => [28, session, digest, 0],
            Disk {
                op,
                file,
                at,
                len,
                ok,
            } => [
                29,
                u64::from(op) | u64::from(ok) << 7 | u64::from(file) << 8,
                at,
                len,
            ],
            DiskFault {
                fault,
                file,
                at,
                len,
            } => [30, u64::from(fault) | u64::from(file) << 8, at, len],
        }
    }

    /// A short name for trace lines.
    pub fn name(&self) -> &'static str {
        use EventKind::*;
        match self {
            Start { .. } => "start",
            Crash => "crash",
            Spawn { .. } => "spawn",
            Step { .. } => "step",
            TaskDone { .. } => "done",
            Send { .. } => "send",
            Deliver { .. } => "deliver",
            Drop { .. } => "drop",
            Timer { .. } => "timer",
            Fault { .. } => "fault",
            OpStart { .. } => "op",
            OpResult { .. } => "result",
            CheckFailed { .. } => "FAILED",
            Note { .. } => "note",
            Duplicate { .. } => "dup",
            Hold { .. } => "hold",
            Release { .. } => "release",
            Reset { .. } => "reset",
            NodeDown { .. } => "down",
            ClockSkew { .. } => "clock",
            ClockRead { .. } => "clock?",
            ClockJump { .. } => "jump",
            TimerLate { .. } => "late",
            Pause => "pause",
            Resume => "resume",
            Stop { .. } => "stop",
            Exit => "exit",
            SessionBroken { .. } => "broken",
            Disk { .. } => "disk",
            DiskFault { .. } => "dfault",
        }
    }
}

/// One recorded event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Position in the history.
    pub index: u64,
    /// Virtual time, nanoseconds since the run started.
    pub time_ns: u64,
    /// The node it happened on (`None` for the harness itself).
    pub node: Option<String>,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
    /// A readable description (not part of the hash).
    pub detail: String,
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.time_ns / 1_000_000;
        let us = (self.time_ns / 1_000) % 1_000;
        write!(
            f,
            "{:>6} {:>7}.{:03}ms {:<8} {:<7} {}",
            self.index,
            ms,
            us,
            self.node.as_deref().unwrap_or("-"),
            self.kind.name(),
            self.detail
        )
    }
}

/// How much of the history to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Recording {
    /// The hash and the count only (sweeps, fuzzing).
    #[default]
    HashOnly,
    /// Every event with its readable detail (replays, failures).
    Full,
}

/// The history of one run.
#[derive(Clone, Debug)]
pub struct History {
    hash: u64,
    count: u64,
    sealed: bool,
    events: Option<Vec<Event>>,
}

const HASH_SEED: u64 = 0x243f_6a88_85a3_08d3;

impl History {
    /// An empty history.
    pub fn new(recording: Recording) -> Self {
        History {
            hash: HASH_SEED,
            count: 0,
            sealed: false,
            events: (recording == Recording::Full).then(Vec::new),
        }
    }

    /// Ends the history: later pushes are ignored. The harness seals it when a run ends, so
    /// what tearing the run down does (dropping tasks, closing their connections) is not
    /// mistaken for something the run did.
    pub fn seal(&mut self) {
        self.sealed = true;
    }

    /// True when events are kept with their details.
    pub fn is_recording(&self) -> bool {
        self.events.is_some()
    }

    /// Appends an event. `detail` is only called when recording.
    #[inline]
    pub fn push(
        &mut self,
        time_ns: u64,
        node: Option<(u32, &str)>,
        kind: EventKind,
        detail: impl FnOnce() -> String,
    ) {
        if self.sealed {
            return;
        }
        let node_word = node.map_or(u64::MAX, |(id, _)| u64::from(id));
        let [a, b, c, d] = kind.words();
        // Two rounds of the mixer per event (this is on the per-event hot path): kind, node
        // and first field folded into one word, time and the other fields into the second.
        // Every field reaches the hash, and event order matters because the rounds chain.
        let head = a | (node_word << 8) ^ b.rotate_left(32);
        let tail = time_ns ^ c.rotate_left(17) ^ d.rotate_left(41) ^ b;
        self.hash = mix(mix(self.hash ^ head).wrapping_add(tail));
        if crate::signal::edges_on() {
            crate::signal::on_event(node_word, a);
        }
        if let Some(events) = &mut self.events {
            events.push(Event {
                index: self.count,
                time_ns,
                node: node.map(|(_, name)| name.to_string()),
                kind,
                detail: detail(),
            });
        }
        self.count += 1;
    }

    /// The stable 64-bit history hash.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// How many events happened.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// True before the first event.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The recorded events (empty unless recording).
    pub fn events(&self) -> &[Event] {
        self.events.as_deref().unwrap_or(&[])
    }

    /// Takes the recorded events out.
    pub fn into_events(self) -> Vec<Event> {
        self.events.unwrap_or_default()
    }
}

/// Readable trace lines, one per event.
pub fn render_lines(events: &[Event]) -> String {
    let mut out = String::new();
    for e in events {
        let _ = writeln!(out, "{e}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_the_same_with_and_without_recording() {
        let mut a = History::new(Recording::HashOnly);
        let mut b = History::new(Recording::Full);
        for h in [&mut a, &mut b] {
            h.push(5, Some((1, "n1")), EventKind::Step { task: 3 }, || {
                "x".into()
            });
            h.push(9, None, EventKind::Deliver { msg: 4 }, || "y".into());
        }
        assert_eq!(a.hash(), b.hash());
        assert_eq!(b.events().len(), 2);
        assert!(a.events().is_empty());
    }

    #[test]
    fn hash_sees_order_time_and_node() {
        let base = |t: u64, n: u32, first: u32, second: u32| {
            let mut h = History::new(Recording::HashOnly);
            h.push(
                t,
                Some((n, "")),
                EventKind::Step { task: first },
                String::new,
            );
            h.push(
                t,
                Some((n, "")),
                EventKind::Step { task: second },
                String::new,
            );
            h.hash()
        };
        let reference = base(1, 1, 1, 2);
        assert_ne!(reference, base(1, 1, 2, 1), "order");
        assert_ne!(reference, base(2, 1, 1, 2), "time");
        assert_ne!(reference, base(1, 2, 1, 2), "node");
    }

    #[test]
    fn stable_hash_is_pinned() {
        // Digests go into pinned corpus hashes: a change here must be deliberate.
        assert_eq!(stable_hash(&(1u32, "ab")), stable_hash(&(1u32, "ab")));
        assert_eq!(stable_hash_bytes(b""), mix(0xcbf2_9ce4_8422_2325));
    }
}
