//! Story filters: the lines of a long story that matter to one question ([`StoryFilter`]).

use std::collections::BTreeMap;

use super::{is_story_line, lanes, vector_clocks, Stamp};
use crate::check::WindowMark;
use crate::trace::{render_lines, Event, EventKind};

/// The kinds of line a story can hold, by the names it prints ([`EventKind::name`]): every
/// kind but task steps, spawns and ends, deliveries, timers and clock readings, which
/// [`is_story_line`] leaves out.
pub const STORY_KINDS: &[&str] = &[
    "start", "crash", "send", "drop", "fault", "op", "result", "FAILED", "note", "dup", "hold",
    "release", "reset", "down", "clock", "jump", "late", "pause", "resume", "stop", "exit",
    "broken", "disk", "dfault",
];

/// A filter that names something the trace does not have.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StoryFilterError {
    /// A node the trace never mentions.
    #[error("no node {name:?} in this trace; its nodes are: {known}")]
    UnknownNode {
        /// The name asked for.
        name: String,
        /// The trace's nodes, comma-separated.
        known: String,
    },
    /// A kind the story never prints.
    #[error("{name:?} is not a kind of story line; the kinds are: {known}")]
    UnknownKind {
        /// The name asked for.
        name: String,
        /// [`STORY_KINDS`], comma-separated.
        known: String,
    },
    /// A time window that ends before it starts.
    #[error("the time window {from_ms}ms..{to_ms}ms is empty: it keeps from <= t < to, so from must be below to")]
    EmptyWindow {
        /// Its start, milliseconds of virtual time.
        from_ms: u64,
        /// Its end (excluded).
        to_ms: u64,
    },
}

/// Which lines of a story to keep.
///
/// A long failure's [`story`](super::story) runs to hundreds of lines. A [`StoryFilter`] keeps
/// a subset of them, never adds any: lines of some nodes, of some kinds, in a window of
/// virtual time, or in the causal past of the failure. Conditions of different sorts must all
/// hold; repeated nodes or kinds are alternatives.
///
/// The causal past is read off the vector clocks of the ShiViz export ([`super::shiviz`]):
/// an event is kept when the failure has seen it, directly or through messages. The failure
/// is
///
/// * for a failed linearizability check that names its window ([`WindowMark`]), the window's
///   operations: every event that happened before one of their calls or returns, and the
///   check itself;
/// * for any other failed check, the check: it read the state of every node, so everything
///   before it is in its past (the checker's clock merges every node's) — the filter keeps
///   the whole story, and `node`, `kind` and the window narrow it instead;
/// * without a failed check (a panic, a deadlock, a liveness failure), the last event of the
///   run, at the node it happened on.
///
/// Lines that belong to no node — faults the network or the nemesis decided, the failed
/// check — concern every node: the node filter keeps them, and the causal filter keeps those
/// up to the failure.
///
/// ```
/// use sim_core::net::{Addr, Socket};
/// use sim_core::render::{story, StoryFilter};
/// use sim_core::sim::{Config, Sim};
///
/// let mut config = Config::default();
/// config.recording = sim_core::trace::Recording::Full;
/// let mut sim = Sim::new(config);
/// sim.node("server", |_| async {
///     let sock = Socket::<u8>::bind(1).unwrap();
///     loop {
///         let (from, n) = sock.recv().await;
///         sock.send(from, n + 1);
///     }
/// });
/// for name in ["alice", "bob"] {
///     sim.client(name, |_| async {
///         let sock = Socket::<u8>::bind(1).unwrap();
///         sock.send(Addr::named("server", 1), 1);
///         sock.recv().await;
///     });
/// }
/// let events = sim.run_seed(0).history.into_events();
///
/// // Alice's sends, and the server's reply to her; nothing of Bob's.
/// let alice = StoryFilter::new().node("alice").story(&events).unwrap();
/// assert!(alice.contains("alice") && !alice.contains("bob"), "{alice}");
/// assert!(alice.lines().count() < story(&events).lines().count());
///
/// // Names are checked against the trace.
/// let typo = StoryFilter::new().node("alcie").story(&events).unwrap_err();
/// assert!(typo.to_string().contains("server, alice, bob"), "{typo}");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoryFilter {
    nodes: Vec<String>,
    kinds: Vec<String>,
    from_ms: Option<u64>,
    to_ms: Option<u64>,
    causal: bool,
}

impl StoryFilter {
    /// A filter that keeps the whole story.
    pub fn new() -> Self {
        StoryFilter::default()
    }

    /// Keeps lines at node `name`, messages sent to or from it, and lines of no node. Given
    /// more than once, lines of any of the nodes.
    pub fn node(mut self, name: impl Into<String>) -> Self {
        self.nodes.push(name.into());
        self
    }

    /// Keeps lines of kind `name` (one of [`STORY_KINDS`], in any case). Given more than
    /// once, lines of any of the kinds.
    pub fn kind(mut self, name: impl Into<String>) -> Self {
        self.kinds.push(name.into());
        self
    }

    /// Keeps lines at or after `ms` milliseconds of virtual time.
    pub fn from_ms(mut self, ms: u64) -> Self {
        self.from_ms = Some(ms);
        self
    }

    /// Keeps lines before `ms` milliseconds of virtual time.
    pub fn to_ms(mut self, ms: u64) -> Self {
        self.to_ms = Some(ms);
        self
    }

    /// Keeps lines in the causal past of the failure (see [`StoryFilter`]).
    pub fn causal(mut self) -> Self {
        self.causal = true;
        self
    }

    /// True if the filter keeps every line.
    pub fn keeps_all(&self) -> bool {
        *self == StoryFilter::default()
    }

    /// The story lines of `events` the filter keeps, in order.
    pub fn events<'a>(&self, events: &'a [Event]) -> Result<Vec<&'a Event>, StoryFilterError> {
        self.lines(events, true)
    }

    /// The trace lines of `events` the filter keeps, in order: every event, not only the
    /// story's (steps, timers, spawns too), so a kind may also name any kind the trace has.
    pub fn trace_events<'a>(
        &self,
        events: &'a [Event],
    ) -> Result<Vec<&'a Event>, StoryFilterError> {
        self.lines(events, false)
    }

    fn lines<'a>(
        &self,
        events: &'a [Event],
        story_only: bool,
    ) -> Result<Vec<&'a Event>, StoryFilterError> {
        self.check(events, story_only)?;
        let by_node = (!self.nodes.is_empty()).then(|| messages(events));
        let past = self.causal.then(|| causal_past(events));
        let from_ns = self.from_ms.map_or(0, |ms| ms.saturating_mul(1_000_000));
        let to_ns = self
            .to_ms
            .map_or(u64::MAX, |ms| ms.saturating_mul(1_000_000));
        let kept = events.iter().enumerate().filter(|(at, e)| {
            (!story_only || is_story_line(e))
                && (from_ns..to_ns).contains(&e.time_ns)
                && (self.kinds.is_empty()
                    || self
                        .kinds
                        .iter()
                        .any(|k| k.eq_ignore_ascii_case(e.kind.name())))
                && by_node
                    .as_ref()
                    .is_none_or(|ends| self.concerns_nodes(e, ends))
                && past.as_ref().is_none_or(|past| past[*at])
        });
        Ok(kept.map(|(_, e)| e).collect())
    }

    /// The story of `events` with only the lines the filter keeps (see
    /// [`story`](super::story)).
    pub fn story(&self, events: &[Event]) -> Result<String, StoryFilterError> {
        let kept: Vec<Event> = self.events(events)?.into_iter().cloned().collect();
        Ok(render_lines(&kept))
    }

    /// Every node, kind and window the filter names exists in `events`.
    fn check(&self, events: &[Event], story_only: bool) -> Result<(), StoryFilterError> {
        let nodes = lanes(events);
        if let Some(name) = self.nodes.iter().find(|n| !nodes.contains(n)) {
            return Err(StoryFilterError::UnknownNode {
                name: name.clone(),
                known: nodes.join(", "),
            });
        }
        let known_kind = |k: &String| {
            STORY_KINDS.iter().any(|s| s.eq_ignore_ascii_case(k))
                || (!story_only && events.iter().any(|e| e.kind.name().eq_ignore_ascii_case(k)))
        };
        if let Some(name) = self.kinds.iter().find(|k| !known_kind(k)) {
            return Err(StoryFilterError::UnknownKind {
                name: name.clone(),
                known: STORY_KINDS.join(", "),
            });
        }
        if let (Some(from_ms), Some(to_ms)) = (self.from_ms, self.to_ms) {
            if from_ms >= to_ms {
                return Err(StoryFilterError::EmptyWindow { from_ms, to_ms });
            }
        }
        Ok(())
    }

    /// True if `e` is at one of the filter's nodes, is about a message sent to or from one,
    /// or belongs to no node.
    fn concerns_nodes(&self, e: &Event, ends: &BTreeMap<u64, MessageEnds>) -> bool {
        let Some(node) = &e.node else {
            return true;
        };
        let selected =
            |name: &Option<String>| name.as_ref().is_some_and(|n| self.nodes.contains(n));
        if self.nodes.contains(node) {
            return true;
        }
        let msg = match e.kind {
            EventKind::Send { msg, .. }
            | EventKind::Deliver { msg }
            | EventKind::Drop { msg }
            | EventKind::Duplicate { msg, .. }
            | EventKind::Hold { msg }
            | EventKind::Release { msg } => msg,
            _ => return false,
        };
        ends.get(&msg)
            .is_some_and(|m| selected(&m.from) || selected(&m.to))
    }
}

/// The nodes a message went between.
struct MessageEnds {
    from: Option<String>,
    to: Option<String>,
}

/// Every sent message's ends. A send names its destination by node id, which is the node's
/// place in the order of first starts (nodes start in id order).
fn messages(events: &[Event]) -> BTreeMap<u64, MessageEnds> {
    let started: Vec<&String> = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Start { incarnation: 0 }))
        .filter_map(|e| e.node.as_ref())
        .collect();
    events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Send { msg, to, .. } => Some((
                msg,
                MessageEnds {
                    from: e.node.clone(),
                    to: started.get(to as usize).map(|n| n.to_string()),
                },
            )),
            _ => None,
        })
        .collect()
}

/// For each event, whether it is in the causal past of the failure (see the module docs).
fn causal_past(events: &[Event]) -> Vec<bool> {
    let mut past = vec![false; events.len()];
    let stamps = vector_clocks(events);
    let check = stamps
        .iter()
        .rposition(|s| matches!(events[s.at].kind, EventKind::CheckFailed { .. }));
    let window = check.and_then(|c| WindowMark::find(&events[stamps[c].at].detail));
    let failure: Vec<&Stamp> = match (check, window) {
        (Some(check), Some(window)) => {
            // The last call or return of each of the window's operations.
            let mut last: BTreeMap<u64, &Stamp> = BTreeMap::new();
            for s in &stamps {
                if let EventKind::OpStart { op, .. } | EventKind::OpResult { op, .. } =
                    events[s.at].kind
                {
                    if window.history_ops.contains(&op) {
                        last.insert(op, s);
                    }
                }
            }
            past[stamps[check].at] = true;
            if last.is_empty() {
                vec![&stamps[check]]
            } else {
                last.into_values().collect()
            }
        }
        (Some(check), None) => vec![&stamps[check]],
        (None, _) => {
            // The last event of the run, which may be a task step (not stamped): the last
            // stamped event of its node stands for it.
            let node = events.last().and_then(|e| e.node.as_ref());
            let at_node = node.and_then(|n| stamps.iter().rev().find(|s| s.host == *n));
            at_node.or(stamps.last()).into_iter().collect()
        }
    };
    let Some(latest) = failure.iter().map(|s| s.at).max() else {
        return past;
    };
    for s in &stamps {
        let seen = failure.iter().any(|f| s.happened_before(f));
        let harness = events[s.at].node.is_none() && s.at <= latest;
        past[s.at] |= seen || harness;
    }
    past
}

#[cfg(test)]
mod tests {
    use super::super::tests::ev;
    use super::*;

    fn send(index: u64, from: &str, msg: u64, to: u32) -> Event {
        let kind = EventKind::Send {
            msg,
            to,
            deliver_at_ns: 0,
            digest: 0,
        };
        ev(index, Some(from), kind, &format!("#{msg} from {from}"))
    }

    /// a, b and c start; a pings b, which answers; then c talks to b, and a crashes after its
    /// last word with anyone: c's exchange is outside the past of a's crash.
    fn trace() -> Vec<Event> {
        let start = EventKind::Start { incarnation: 0 };
        vec![
            ev(0, Some("a"), start, "incarnation 0"),
            ev(1, Some("b"), start, "incarnation 0"),
            ev(2, Some("c"), start, "incarnation 0"),
            send(3, "a", 1, 1),
            ev(4, Some("b"), EventKind::Deliver { msg: 1 }, "#1"),
            send(5, "b", 2, 0),
            ev(6, Some("a"), EventKind::Deliver { msg: 2 }, "#2"),
            send(7, "c", 3, 1),
            ev(8, Some("b"), EventKind::Deliver { msg: 3 }, "#3"),
            ev(9, None, EventKind::Fault { digest: 0 }, "partition a | b c"),
            ev(10, Some("a"), EventKind::Note { digest: 0 }, "a gives up"),
            ev(11, Some("a"), EventKind::Crash, "panic"),
        ]
    }

    fn kept(filter: StoryFilter, events: &[Event]) -> Vec<u64> {
        let kept = filter.events(events).expect("a valid filter");
        kept.iter().map(|e| e.index).collect()
    }

    #[test]
    fn each_filter_keeps_what_it_says() {
        let events = trace();
        let story: Vec<u64> = vec![3, 5, 7, 9, 10, 11];
        let table: Vec<(&str, StoryFilter, Vec<u64>)> = vec![
            ("nothing", StoryFilter::new(), story.clone()),
            // a's own lines, b's reply to a, and the harness's partition; not c's send to b.
            (
                "node a",
                StoryFilter::new().node("a"),
                vec![3, 5, 9, 10, 11],
            ),
            ("node c", StoryFilter::new().node("c"), vec![7, 9]),
            (
                "nodes a, c",
                StoryFilter::new().node("a").node("c"),
                story.clone(),
            ),
            ("kind send", StoryFilter::new().kind("send"), vec![3, 5, 7]),
            (
                "kind any case",
                StoryFilter::new().kind("CRASH").kind("Note"),
                vec![10, 11],
            ),
            (
                "window",
                StoryFilter::new().from_ms(5).to_ms(10),
                vec![5, 7, 9],
            ),
            ("from", StoryFilter::new().from_ms(10), vec![10, 11]),
            // The crash's past: a's lines, b's reply, the partition before it; not c's send.
            ("causal", StoryFilter::new().causal(), vec![3, 5, 9, 10, 11]),
            (
                "causal sends",
                StoryFilter::new().causal().kind("send"),
                vec![3, 5],
            ),
        ];
        for (name, filter, want) in table {
            assert_eq!(kept(filter, &events), want, "{name}");
        }
    }

    #[test]
    fn a_failed_check_read_every_node_unless_it_names_a_window() {
        let mut events = trace();
        events.pop();
        events.push(ev(
            11,
            None,
            EventKind::CheckFailed { digest: 0 },
            "inv: broken",
        ));
        assert_eq!(
            kept(StoryFilter::new().causal(), &events),
            vec![3, 5, 7, 9, 10, 11],
            "a check without a window saw everything"
        );
        // A linearizability window over op 1 (at c): only what c had seen, and the check.
        events.insert(
            9,
            ev(
                9,
                Some("c"),
                EventKind::OpResult { op: 1, digest: 0 },
                "op 1",
            ),
        );
        let window = "; window 0.000ms..9.000ms of 1 operations (history ops 1):";
        events.last_mut().expect("the check").detail = format!("linearizable: op 1{window}");
        assert!(WindowMark::find(&events.last().unwrap().detail).is_some());
        let causal = StoryFilter::new().causal().events(&events).unwrap();
        let kinds: Vec<&str> = causal.iter().map(|e| e.kind.name()).collect();
        // Not the partition: it came after the window's last operation.
        assert_eq!(kinds, ["send", "result", "FAILED"], "{causal:?}");
        assert_eq!(causal[0].node.as_deref(), Some("c"));
    }

    #[test]
    fn unknown_names_and_empty_windows_are_errors_naming_what_exists() {
        let events = trace();
        let err = StoryFilter::new().node("d").events(&events).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"no node "d" in this trace; its nodes are: a, b, c"#
        );
        let err = StoryFilter::new()
            .kind("timer")
            .events(&events)
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("the kinds are: start, crash, send"),
            "{err}"
        );
        let err = StoryFilter::new()
            .from_ms(5)
            .to_ms(5)
            .events(&events)
            .unwrap_err();
        assert_eq!(
            err,
            StoryFilterError::EmptyWindow {
                from_ms: 5,
                to_ms: 5
            }
        );
    }

    /// Every kind the story can print is in [`STORY_KINDS`], and no other.
    #[test]
    fn story_kinds_are_the_names_of_story_lines() {
        for kind in STORY_KINDS {
            assert_eq!(
                STORY_KINDS.iter().filter(|k| *k == kind).count(),
                1,
                "{kind}"
            );
        }
        for left_out in ["step", "spawn", "done", "deliver", "timer", "clock?"] {
            assert!(!STORY_KINDS.contains(&left_out), "{left_out}");
        }
    }
}
