//! Pictures of a trace: a space-time (Lamport) diagram as SVG, and a ShiViz log.
//!
//! [`svg`] draws one vertical lane per node, time running down, one row per event that
//! matters to the story (sends, deliveries, drops, crashes, restarts, stops, exits, pauses and
//! resumes, faults, timers, wall-clock readings and jumps,
//! operations and their results, notes, failed checks — task steps and spawns are left
//! out). A message is an arrow from its send to its delivery, matched by message id; a
//! dropped message ends in a red cross; one still in flight when the run ended trails off
//! dashed. A failed invariant is a red band across every lane. A failed linearizability
//! check ([`crate::check`]) also gets its shortest non-linearizable window marked: an amber
//! band over the rows of the window's time span, and the window's operations boxed in amber
//! ([`crate::check::WindowMark`]). The SVG is self-contained
//! (no scripts, no external fonts or files): open it in any browser.
//!
//! [`shiviz`] writes the same events in the log format of
//! [ShiViz](https://bestchai.bitbucket.io/shiviz/): two lines per event, a description and
//! then `host {"host": n, ...}` with the event's vector clock. Paste or load it with ShiViz's
//! default parser regex, [`SHIVIZ_REGEX`]. Clocks follow messages (a delivery merges the
//! sender's clock at the send); a failed check happens on a host of its own, `checker`,
//! after everything every node had done, since it read them all.
//!
//! [`story`] is the readable lines of the events that tell what happened ([`is_story_line`]:
//! operations, messages once each, faults, lifecycle, checks): what a person reads first.
//! A [`StoryFilter`] keeps the lines of a long story that matter: some nodes, some kinds, a
//! window of virtual time, or the causal past of the failure, read off the ShiViz clocks.
//!
//! ```
//! use sim_core::render::{shiviz, svg};
//! use sim_core::sim::{Config, Sim};
//! use sim_core::net::{Addr, Socket};
//!
//! let mut config = Config::default();
//! config.recording = sim_core::trace::Recording::Full;
//! let mut sim = Sim::new(config);
//! sim.node("server", |_| async {
//!     let sock = Socket::<u8>::bind(1).unwrap();
//!     let (from, n) = sock.recv().await;
//!     sock.send(from, n + 1);
//! });
//! sim.client("client", |_| async {
//!     let sock = Socket::<u8>::bind(1).unwrap();
//!     sock.send(Addr::named("server", 1), 1);
//!     sock.recv().await;
//! });
//! let events = sim.run_seed(0).history.into_events();
//! let picture = svg(&events, "echo");
//! assert!(picture.starts_with("<svg") && picture.contains("server") && picture.contains("marker-end"));
//! let log = shiviz(&events);
//! assert!(log.lines().any(|l| l.starts_with("server {") && l.contains("\"client\":")));
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::trace::{render_lines, Event, EventKind};

mod filter;
mod svg;
pub use filter::{StoryFilter, StoryFilterError, STORY_KINDS};
pub use svg::svg;

/// ShiViz's parser regex for [`shiviz`] logs (its default).
pub const SHIVIZ_REGEX: &str = r"(?<event>.*)\n(?<host>\S*) (?<clock>{.*})";

/// Rows kept in a picture; a longer trace keeps its last rows (where failures are).
pub const MAX_ROWS: usize = 4000;

/// True for the events a picture or a story shows.
pub fn is_story_event(e: &Event) -> bool {
    !matches!(
        e.kind,
        EventKind::Step { .. } | EventKind::Spawn { .. } | EventKind::TaskDone { .. }
    )
}

/// True for the events the story tells: operations and their results, messages (each once,
/// at its send, which names its due time), drops, duplicates, holds and resets, faults,
/// crashes, restarts and the other lifecycle events, disk operations, notes and failed
/// checks. Deliveries (the send line said when), timers and clock readings (a node's own
/// bookkeeping), task steps and the cast's first starts are left out.
pub fn is_story_line(e: &Event) -> bool {
    is_story_event(e)
        && !matches!(
            e.kind,
            EventKind::Start { incarnation: 0 }
                | EventKind::Deliver { .. }
                | EventKind::Timer { .. }
                | EventKind::ClockRead { .. }
        )
}

/// The story: readable trace lines of the [`is_story_line`] events — what a person reads
/// first. Its line count is the `story_lines=` a shrink reports.
pub fn story(events: &[Event]) -> String {
    let kept: Vec<Event> = events
        .iter()
        .filter(|e| is_story_line(e))
        .cloned()
        .collect();
    render_lines(&kept)
}

/// How many lines [`story`] has.
pub fn story_lines(events: &[Event]) -> usize {
    events.iter().filter(|e| is_story_line(e)).count()
}

/// Nodes in order of first appearance (start events come in node-id order).
fn lanes(events: &[Event]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for e in events {
        if let Some(n) = &e.node {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    names
}

fn time_label(ns: u64) -> String {
    format!("{}.{:03}ms", ns / 1_000_000, (ns / 1_000) % 1_000)
}

/// The events as a ShiViz log (two lines per event). See the [module docs](self).
pub fn shiviz(events: &[Event]) -> String {
    let mut out = String::new();
    for stamp in vector_clocks(events) {
        let e = &events[stamp.at];
        let text = format!("{} {} {}", time_label(e.time_ns), e.kind.name(), e.detail)
            .replace(['\n', '\r'], " ");
        let json = serde_json::to_string(&stamp.clock).expect("a clock serialises");
        let _ = writeln!(
            out,
            "{text}\n{} {json}",
            stamp.host.replace(char::is_whitespace, "_")
        );
    }
    out
}

/// The host of events that belong to no node (a failed check, a fault the harness decided).
const CHECKER: &str = "checker";

/// A vector clock: for each host, how many of its events happened before this one, or are it.
type Clock = BTreeMap<String, u64>;

/// A story event's place in the happened-before order.
struct Stamp {
    /// Its position in the events.
    at: usize,
    /// Its node, or [`CHECKER`].
    host: String,
    clock: Clock,
}

impl Stamp {
    /// True if this event happened before `later` or is it: `later` has seen as many of this
    /// host's events as this one had.
    fn happened_before(&self, later: &Stamp) -> bool {
        later.clock.get(&self.host).copied().unwrap_or(0) >= self.clock[&self.host]
    }
}

/// The vector clock of every [`is_story_event`], in order: the clocks [`shiviz`] writes and
/// [`StoryFilter::causal`] reads. Clocks follow messages (a delivery merges the sender's
/// clock at the send); a failed check merges every host's clock, since it read them all.
fn vector_clocks(events: &[Event]) -> Vec<Stamp> {
    let mut clocks: BTreeMap<String, Clock> = BTreeMap::new();
    let mut at_send: BTreeMap<u64, Clock> = BTreeMap::new();
    let mut stamps = Vec::new();
    for (at, e) in events.iter().enumerate().filter(|(_, e)| is_story_event(e)) {
        let host = e.node.clone().unwrap_or_else(|| CHECKER.to_string());
        let mut clock = clocks.get(&host).cloned().unwrap_or_default();
        match e.kind {
            EventKind::Deliver { msg } => {
                if let Some(sent) = at_send.get(&msg) {
                    merge(&mut clock, sent);
                }
            }
            EventKind::CheckFailed { .. } => {
                for other in clocks.values() {
                    merge(&mut clock, other);
                }
            }
            _ => {}
        }
        *clock.entry(host.clone()).or_insert(0) += 1;
        if let EventKind::Send { msg, .. } = e.kind {
            at_send.insert(msg, clock.clone());
        }
        clocks.insert(host.clone(), clock.clone());
        stamps.push(Stamp { at, host, clock });
    }
    stamps
}

fn merge(into: &mut Clock, from: &Clock) {
    for (host, &n) in from {
        let slot = into.entry(host.clone()).or_insert(0);
        *slot = (*slot).max(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event at `index` ms (also used by the filter's tests).
    pub(super) fn ev(index: u64, node: Option<&str>, kind: EventKind, detail: &str) -> Event {
        Event {
            index,
            time_ns: index * 1_000_000,
            node: node.map(str::to_string),
            kind,
            detail: detail.to_string(),
        }
    }

    fn sample() -> Vec<Event> {
        vec![
            ev(
                0,
                Some("a"),
                EventKind::Start { incarnation: 0 },
                "incarnation 0",
            ),
            ev(
                1,
                Some("b"),
                EventKind::Start { incarnation: 0 },
                "incarnation 0",
            ),
            ev(
                2,
                Some("a"),
                EventKind::Send {
                    msg: 1,
                    to: 1,
                    deliver_at_ns: 5,
                    digest: 0,
                },
                "#1 a:1 -> b:1 +1ms Ping",
            ),
            ev(
                3,
                Some("a"),
                EventKind::Send {
                    msg: 2,
                    to: 1,
                    deliver_at_ns: 5,
                    digest: 0,
                },
                "#2 a:1 -> b:1 +1ms Ping2",
            ),
            ev(4, Some("b"), EventKind::Deliver { msg: 1 }, "#1 a:1 -> b:1"),
            ev(
                5,
                Some("b"),
                EventKind::Drop { msg: 2 },
                "#2 a:1 -> b:1: destination node is down",
            ),
            ev(
                6,
                None,
                EventKind::CheckFailed { digest: 0 },
                "inv: broken <here>",
            ),
        ]
    }

    #[test]
    fn shiviz_clocks_follow_messages() {
        let log = shiviz(&sample());
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 14, "{log}");
        // The delivery of #1 has seen the send (a's second event).
        assert_eq!(lines[9], r#"b {"a":2,"b":2}"#, "{log}");
        // The checker saw everything.
        assert_eq!(lines[13], r#"checker {"a":3,"b":3,"checker":1}"#, "{log}");
    }

    /// A real checker failure inside a simulation, drawn: the window's band and its
    /// operations stand out, and operations outside it do not.
    #[test]
    fn svg_marks_the_non_linearizable_window() {
        use crate::check::kv::{Kv, KvInput, KvOutput};
        use crate::check::{self, OpLog, WindowMark};
        use crate::sim::{Config, Sim};
        use std::cell::RefCell;
        use std::rc::Rc;
        use std::time::Duration;

        let config = Config {
            recording: crate::trace::Recording::Full,
            ..Config::default()
        };
        let mut sim = Sim::new(config);
        let log: Rc<RefCell<OpLog<KvInput, KvOutput>>> = Rc::default();
        let l = log.clone();
        sim.client("c", move |_| {
            let l = l.clone();
            async move {
                let step = || crate::time::sleep(Duration::from_millis(10));
                // Key 2: fine, outside the window.
                let other = l.borrow_mut().call("c", KvInput::Put { key: 2, value: 1 });
                step().await;
                l.borrow_mut().ret(other, KvOutput::Done);
                step().await;
                // Key 1: a put that returned, then a read that misses it.
                let put = l.borrow_mut().call("c", KvInput::Put { key: 1, value: 7 });
                step().await;
                l.borrow_mut().ret(put, KvOutput::Done);
                step().await;
                let get = l.borrow_mut().call("c", KvInput::Get { key: 1 });
                step().await;
                l.borrow_mut().ret(get, KvOutput::Value(None));
            }
        });
        sim.invariant("linearizable", move || {
            check::linearizable(&Kv, &log.borrow()).map_err(|e| e.to_string())
        });
        let report = sim.run_seed(0);
        assert!(!report.outcome.class.is_pass(), "the read missed the put");
        let events = report.history.into_events();
        let failed = events
            .iter()
            .find(|e| matches!(e.kind, EventKind::CheckFailed { .. }))
            .expect("a failed check");
        let mark = WindowMark::find(&failed.detail).expect("the message names its window");
        assert_eq!(mark.history_ops, vec![1, 2], "{}", failed.detail);
        assert_eq!((mark.start_ns, mark.end_ns), (20_000_000, 50_000_000));

        let picture = svg(&events, "lin");
        assert_eq!(
            picture.matches(r#"class="lin-window""#).count(),
            1,
            "one band"
        );
        assert!(picture.contains("non-linearizable window 20.000ms..50.000ms (2 operations)"));
        // Each window operation's start and result are boxed in amber; op 0 is not.
        assert_eq!(
            picture.matches(r#"class="window-op""#).count(),
            4,
            "{picture}"
        );
        let op0 = picture
            .lines()
            .find(|l| l.contains("▶ op 0:"))
            .expect("op 0 drawn");
        assert!(!op0.contains("window-op"), "{op0}");
        // The band spans the rows from the put's call to the read's return.
        let band = picture
            .lines()
            .find(|l| l.contains(r#"class="lin-window""#))
            .expect("band");
        let attr = |name: &str| -> usize {
            let at = band.find(&format!(" {name}=\"")).expect(name) + name.len() + 3;
            band[at..at + band[at..].find('"').expect("quote")]
                .parse()
                .expect("number")
        };
        let rows = |text: &str| {
            picture
                .lines()
                .find(|l| l.contains(text))
                .and_then(|l| l.split(" y=\"").nth(1))
                .and_then(|y| y.split('"').next())
                .and_then(|y| y.parse::<usize>().ok())
                .expect(text)
        };
        let (top, bottom) = (attr("y"), attr("y") + attr("height"));
        for text in ["▶ op 1:", "◀ op 2:"] {
            let y = rows(text);
            assert!(top <= y && y <= bottom, "{text} at {y} in {top}..{bottom}");
        }
        let y0 = rows("◀ op 0:");
        assert!(y0 < top, "op 0's result lies above the band");
    }

    #[test]
    fn svg_escapes_and_draws_arrows_drops_and_the_violation() {
        let picture = svg(&sample(), "t");
        assert!(picture.contains("&lt;here&gt;"));
        assert_eq!(
            picture.matches(r#"marker-end="url(#arrow)""#).count(),
            1,
            "one delivered message"
        );
        assert_eq!(
            picture.matches(r#"class="drop""#).count(),
            1,
            "one dropped message"
        );
        assert!(picture.contains("INVARIANT VIOLATED"));
    }
}
