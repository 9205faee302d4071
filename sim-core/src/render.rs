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

use crate::check::WindowMark;
use crate::trace::{render_lines, Event, EventKind};

mod filter;
pub use filter::{StoryFilter, StoryFilterError, STORY_KINDS};

/// ShiViz's parser regex for [`shiviz`] logs (its default).
pub const SHIVIZ_REGEX: &str = r"(?<event>.*)\n(?<host>\S*) (?<clock>{.*})";

/// Rows kept in a picture; a longer trace keeps its last rows (where failures are).
pub const MAX_ROWS: usize = 4000;

const LANE_W: usize = 190;
const ROW_H: usize = 24;
const LEFT: usize = 90;
const TOP: usize = 78;

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

fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// The payload part of a send's detail (`#3 a:1 -> b:1 +4ms Vote { .. }` → `Vote { .. }`).
fn payload(detail: &str) -> &str {
    detail.split_once("ms ").map_or(detail, |(_, rest)| rest)
}

/// The text after the route in a drop's detail (`#3 a:1 -> b:1: node is down` → the reason).
fn reason(detail: &str) -> &str {
    detail.rsplit_once(": ").map_or(detail, |(_, r)| r)
}

fn time_label(ns: u64) -> String {
    format!("{}.{:03}ms", ns / 1_000_000, (ns / 1_000) % 1_000)
}

/// A self-contained SVG space-time diagram of `events`. See the [module docs](self).
pub fn svg(events: &[Event], title: &str) -> String {
    let mut shown: Vec<&Event> = events.iter().filter(|e| is_story_event(e)).collect();
    let dropped_rows = shown.len().saturating_sub(MAX_ROWS);
    shown.drain(..dropped_rows);
    let lanes = lanes(events);
    let lane_of = |name: &Option<String>| {
        name.as_ref()
            .and_then(|n| lanes.iter().position(|l| l == n))
    };
    let x_of = |lane: usize| LEFT + lane * LANE_W + LANE_W / 2;
    let y_of = |row: usize| TOP + row * ROW_H + ROW_H / 2;
    let width = LEFT + lanes.len().max(1) * LANE_W + 260;
    let height = TOP + shown.len() * ROW_H + 50;

    // Where each message was sent and where it ended.
    let mut sends: BTreeMap<u64, (usize, usize, String)> = BTreeMap::new();
    let mut ends: BTreeMap<u64, (usize, usize, bool)> = BTreeMap::new();
    for (row, e) in shown.iter().enumerate() {
        let Some(lane) = lane_of(&e.node) else {
            continue;
        };
        match e.kind {
            EventKind::Send { msg, .. } => {
                sends.insert(msg, (row, lane, payload(&e.detail).to_string()));
            }
            EventKind::Deliver { msg } => {
                ends.insert(msg, (row, lane, true));
            }
            EventKind::Drop { msg } => {
                ends.insert(msg, (row, lane, false));
            }
            _ => {}
        }
    }
    // Destination lanes of messages never delivered: the `to` node id is a start order index.
    let starts: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for e in events {
            if let (EventKind::Start { incarnation: 0 }, Some(n)) = (&e.kind, &e.node) {
                v.push(n.clone());
            }
        }
        v
    };

    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="11">
<title>{title}</title>
<defs>
<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#1f4e8c"/></marker>
<marker id="arrow-lost" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#999"/></marker>
</defs>
<style>
text {{ paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }}
.lane {{ stroke: #888; stroke-width: 1.5; }}
.msg {{ stroke: #1f4e8c; stroke-width: 1.3; fill: none; }}
.drop {{ stroke: #c62828; stroke-width: 1.3; stroke-dasharray: 5 3; fill: none; }}
.inflight {{ stroke: #999; stroke-width: 1.2; stroke-dasharray: 2 3; fill: none; }}
.t {{ fill: #666; font-size: 10px; }}
</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="10" y="20" font-size="14" font-weight="bold">{}</text>
<text x="10" y="36" class="t">{} events shown of {} (steps and spawns left out{}); time runs down</text>
"##,
        esc(title),
        shown.len(),
        events.len(),
        if dropped_rows > 0 {
            format!("; first {dropped_rows} rows cut")
        } else {
            String::new()
        },
    );
    // Lanes and their names.
    for (i, name) in lanes.iter().enumerate() {
        let x = x_of(i);
        let _ = writeln!(
            s,
            r##"<text x="{x}" y="{}" text-anchor="middle" font-size="13" font-weight="bold">{}</text><line class="lane" x1="{x}" y1="{}" x2="{x}" y2="{}"/>"##,
            TOP - 14,
            esc(name),
            TOP - 6,
            height - 30
        );
    }
    // A non-linearizable window under everything: a band over the rows of its span.
    let windows: Vec<WindowMark> = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::CheckFailed { .. }))
        .filter_map(|e| WindowMark::find(&e.detail))
        .collect();
    for w in &windows {
        // The text keeps microseconds: a row inside the last one counts.
        let inside = |e: &&&Event| e.time_ns >= w.start_ns && e.time_ns < w.end_ns + 1_000;
        let first = shown.iter().position(|e| inside(&e));
        let last = shown.iter().rposition(|e| inside(&e));
        if let (Some(first), Some(last)) = (first, last) {
            let (top, bottom) = (y_of(first) - ROW_H / 2, y_of(last) + ROW_H / 2);
            let _ = writeln!(
                s,
                r##"<rect class="lin-window" x="{LEFT}" y="{top}" width="{}" height="{}" fill="#ffb300" fill-opacity="0.12" stroke="#ff8f00" stroke-dasharray="6 3"/><text x="{}" y="{}" fill="#e65100" font-weight="bold" text-anchor="end">non-linearizable window {}..{} ({} operations)</text>"##,
                width - LEFT - 10,
                bottom - top,
                width - 14,
                top + 12,
                time_label(w.start_ns),
                time_label(w.end_ns),
                w.history_ops.len()
            );
        }
    }
    let in_window = |op: u64| windows.iter().any(|w| w.history_ops.contains(&op));
    // Messages first, so marks draw over them.
    for (msg, (srow, slane, text)) in &sends {
        let (x1, y1) = (x_of(*slane), y_of(*srow));
        match ends.get(msg) {
            Some(&(erow, elane, delivered)) => {
                let (x2, y2) = (x_of(elane), y_of(erow));
                let (class, marker) = if delivered {
                    ("msg", r#" marker-end="url(#arrow)""#)
                } else {
                    ("drop", "")
                };
                let _ = writeln!(
                    s,
                    r#"<line class="{class}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"{marker}><title>#{msg} {}</title></line>"#,
                    esc(text)
                );
            }
            None => {
                // Still in flight at the end: trail towards the destination lane.
                let to = shown.iter().find_map(|e| match e.kind {
                    EventKind::Send { msg: m, to, .. } if m == *msg => Some(to),
                    _ => None,
                });
                let lane = to
                    .and_then(|t| starts.get(t as usize))
                    .and_then(|n| lanes.iter().position(|l| l == n));
                if let Some(lane) = lane {
                    let (x2, y2) = (x_of(lane), height - 34);
                    let xm = (x1 + x2) / 2;
                    let _ = writeln!(
                        s,
                        r#"<line class="inflight" x1="{x1}" y1="{y1}" x2="{xm}" y2="{y2}" marker-end="url(#arrow-lost)"><title>#{msg} still in flight</title></line>"#
                    );
                }
            }
        }
    }
    // Rows: a time label when time moves on, and one mark per event.
    let mut last_time = None;
    for (row, e) in shown.iter().enumerate() {
        let y = y_of(row);
        if last_time != Some(e.time_ns) {
            let _ = writeln!(
                s,
                r#"<text x="8" y="{}" class="t">{}</text>"#,
                y + 4,
                time_label(e.time_ns)
            );
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="#eee"/>"##,
                y - ROW_H / 2,
                width - 10,
                y - ROW_H / 2
            );
            last_time = Some(e.time_ns);
        }
        let lane = lane_of(&e.node);
        let x = lane.map(x_of).unwrap_or(LEFT);
        let detail = esc(&clip(&e.detail, 60));
        let label = |s: &mut String, color: &str, text: &str| {
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" fill="{color}">{text}</text>"#,
                x + 9,
                y + 4
            );
        };
        match e.kind {
            EventKind::Send { msg, .. } => {
                // Above the dot: the message's own arrow leaves it downwards.
                let _ = writeln!(
                    s,
                    r##"<circle cx="{x}" cy="{y}" r="3.5" fill="#1f4e8c"/><text x="{}" y="{}" fill="#1f4e8c">#{msg} {}</text>"##,
                    x + 7,
                    y - 3,
                    esc(&clip(payload(&e.detail), 44))
                );
            }
            EventKind::Deliver { msg } => {
                let _ = writeln!(
                    s,
                    r##"<circle cx="{x}" cy="{y}" r="3.5" fill="#fff" stroke="#1f4e8c" stroke-width="1.5"/>"##
                );
                let _ = writeln!(
                    s,
                    r##"<text x="{}" y="{}" fill="#555">recv #{msg}</text>"##,
                    x + 12,
                    y + 4
                );
            }
            EventKind::Drop { msg } => {
                let _ = writeln!(
                    s,
                    r##"<path d="M{} {} l10 10 M{} {} l-10 10" stroke="#c62828" stroke-width="2.5"/>"##,
                    x - 5,
                    y - 5,
                    x + 5,
                    y - 5
                );
                label(
                    &mut s,
                    "#c62828",
                    &format!("dropped #{msg}: {}", esc(reason(&e.detail))),
                );
            }
            EventKind::Crash => {
                let _ = writeln!(
                    s,
                    r##"<rect x="{}" y="{}" width="16" height="16" fill="#c62828"/><path d="M{} {} l10 10 M{} {} l-10 10" stroke="#fff" stroke-width="2"/>"##,
                    x - 8,
                    y - 8,
                    x - 5,
                    y - 5,
                    x + 5,
                    y - 5
                );
                label(&mut s, "#c62828", &format!("CRASH: {detail}"));
            }
            EventKind::Start { incarnation } => {
                let color = if incarnation == 0 {
                    "#2e7d32"
                } else {
                    "#ef6c00"
                };
                let _ = writeln!(
                    s,
                    r#"<rect x="{}" y="{}" width="12" height="8" fill="{color}"/>"#,
                    x - 6,
                    y - 4
                );
                label(
                    &mut s,
                    color,
                    if incarnation == 0 { "start" } else { "RESTART" },
                );
            }
            EventKind::Fault { .. } => {
                let _ = writeln!(
                    s,
                    r##"<path d="M{x} {} l7 7 l-7 7 l-7 -7 z" fill="#ef6c00"/>"##,
                    y - 7
                );
                label(&mut s, "#ef6c00", &format!("FAULT {detail}"));
            }
            EventKind::Timer { .. } => {
                let _ = writeln!(
                    s,
                    r##"<circle cx="{x}" cy="{y}" r="5" fill="none" stroke="#777"/><path d="M{x} {y} l0 -3 M{x} {y} l2 1" stroke="#777"/>"##
                );
                label(&mut s, "#777", &detail);
            }
            EventKind::OpStart { op, .. } | EventKind::OpResult { op, .. } => {
                let text = if matches!(e.kind, EventKind::OpStart { .. }) {
                    format!("▶ {detail}")
                } else {
                    format!("◀ {detail}")
                };
                let w = 12 + 6 * text.chars().count();
                // An operation of a non-linearizable window stands out in amber.
                let look = if in_window(op) {
                    r##"class="window-op" fill="#ffe0b2" stroke="#e65100" stroke-width="2""##
                } else {
                    r##"fill="#e3f2fd" stroke="#1565c0""##
                };
                let _ = writeln!(
                    s,
                    r##"<rect x="{}" y="{}" width="{w}" height="18" rx="4" {look}/><text x="{}" y="{}" fill="#0d47a1" style="stroke:none">{text}</text>"##,
                    x + 5,
                    y - 9,
                    x + 11,
                    y + 4
                );
            }
            EventKind::CheckFailed { .. } => {
                let _ = writeln!(
                    s,
                    r##"<rect x="{LEFT}" y="{}" width="{}" height="{}" fill="#ffebee" stroke="#c62828" stroke-width="2"/><text x="{}" y="{}" fill="#b71c1c" font-weight="bold">✗ INVARIANT VIOLATED — {}</text>"##,
                    y - ROW_H / 2 + 1,
                    width - LEFT - 10,
                    ROW_H - 2,
                    LEFT + 8,
                    y + 4,
                    esc(&e.detail)
                );
            }
            EventKind::Note { .. } => label(&mut s, "#555", &format!("note: {detail}")),
            EventKind::Pause => {
                let _ = writeln!(
                    s,
                    r##"<rect x="{}" y="{}" width="4" height="14" fill="#6a1b9a"/><rect x="{}" y="{}" width="4" height="14" fill="#6a1b9a"/>"##,
                    x - 6,
                    y - 7,
                    x + 2,
                    y - 7
                );
                label(&mut s, "#6a1b9a", &format!("PAUSE: {detail}"));
            }
            EventKind::Resume => {
                let _ = writeln!(
                    s,
                    r##"<path d="M{} {} l12 7 l-12 7 z" fill="#6a1b9a"/>"##,
                    x - 6,
                    y - 7
                );
                label(&mut s, "#6a1b9a", &format!("RESUME: {detail}"));
            }
            EventKind::Stop { .. } => {
                let _ = writeln!(
                    s,
                    r##"<rect x="{}" y="{}" width="14" height="14" fill="#fff" stroke="#c62828" stroke-width="2"/>"##,
                    x - 7,
                    y - 7
                );
                label(&mut s, "#c62828", &format!("STOP: {detail}"));
            }
            EventKind::Exit => {
                let _ = writeln!(
                    s,
                    r##"<rect x="{}" y="{}" width="14" height="14" fill="#777"/>"##,
                    x - 7,
                    y - 7
                );
                label(&mut s, "#555", &format!("EXIT: {detail}"));
            }
            EventKind::ClockSkew { .. }
            | EventKind::ClockJump { .. }
            | EventKind::ClockRead { .. }
            | EventKind::TimerLate { .. } => {
                let color = if matches!(e.kind, EventKind::ClockRead { .. }) {
                    "#555"
                } else {
                    "#ef6c00"
                };
                let _ = writeln!(
                    s,
                    r##"<circle cx="{x}" cy="{y}" r="5" fill="none" stroke="{color}"/><path d="M{x} {y} l0 -3 M{x} {y} l2 1" stroke="{color}"/>"##
                );
                label(&mut s, color, &detail);
            }
            EventKind::Disk { ok, .. } => {
                let color = if ok { "#5d4037" } else { "#c62828" };
                let _ = writeln!(
                    s,
                    r#"<rect x="{}" y="{}" width="8" height="8" fill="none" stroke="{color}" stroke-width="1.5"/>"#,
                    x - 4,
                    y - 4
                );
                label(&mut s, color, &format!("disk {detail}"));
            }
            EventKind::DiskFault { .. } => {
                let _ = writeln!(
                    s,
                    r##"<path d="M{x} {} l7 7 l-7 7 l-7 -7 z" fill="#6a1b9a"/>"##,
                    y - 7
                );
                label(&mut s, "#6a1b9a", &format!("DISK {detail}"));
            }
            EventKind::Step { .. } | EventKind::Spawn { .. } | EventKind::TaskDone { .. } => {}
            // Kinds added after this picture was designed still get a mark and their words.
            #[allow(unreachable_patterns)]
            _ => {
                let _ = writeln!(s, r##"<circle cx="{x}" cy="{y}" r="3" fill="#777"/>"##);
                label(&mut s, "#555", &format!("{} {detail}", e.kind.name()));
            }
        }
    }
    s.push_str("</svg>\n");
    s
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

    fn ev(index: u64, node: Option<&str>, kind: EventKind, detail: &str) -> Event {
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
        use crate::check::{self, OpLog};
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
