//! The space-time diagram ([`svg`]): a layout, then its parts in drawing order — header,
//! lanes, non-linearizable windows, message arrows, then one row per event — so that later
//! parts draw over earlier ones.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{is_story_event, lanes, time_label, MAX_ROWS};
use crate::check::WindowMark;
use crate::trace::{Event, EventKind};

const LANE_W: usize = 190;
const ROW_H: usize = 24;
const LEFT: usize = 90;
const TOP: usize = 78;

/// A self-contained SVG space-time diagram of `events`. See the [module docs](crate::render).
///
/// ```
/// use sim_core::net::{Addr, Socket};
/// use sim_core::render::svg;
/// use sim_core::sim::{Config, Sim};
///
/// let mut config = Config::default();
/// config.recording = sim_core::trace::Recording::Full;
/// let mut sim = Sim::new(config);
/// sim.node("server", |_| async {
///     let sock = Socket::<u8>::bind(1).unwrap();
///     let (from, n) = sock.recv().await;
///     sock.send(from, n + 1);
/// });
/// sim.client("client", |_| async {
///     let sock = Socket::<u8>::bind(1).unwrap();
///     sock.send(Addr::named("server", 1), 1);
///     sock.recv().await;
/// });
/// let events = sim.run_seed(0).history.into_events();
/// let picture = svg(&events, "echo");
/// // One lane per node, and an arrow from each send to its delivery.
/// assert!(picture.starts_with("<svg") && picture.ends_with("</svg>\n"));
/// assert!(picture.contains(">server</text>") && picture.contains(">client</text>"));
/// assert_eq!(picture.matches(r#"marker-end="url(#arrow)""#).count(), 2);
/// ```
pub fn svg(events: &[Event], title: &str) -> String {
    let layout = Layout::new(events);
    let windows = non_linearizable_windows(events);
    let mut s = String::new();
    header(&mut s, &layout, events.len(), title);
    lane_lines(&mut s, &layout);
    for window in &windows {
        window_band(&mut s, &layout, window);
    }
    // Messages before the rows, so the rows' marks draw over the arrows.
    messages(&mut s, &layout, events);
    rows(&mut s, &layout, &windows);
    s.push_str("</svg>\n");
    s
}

/// Where things go: the rows shown, the lanes, and the picture's size.
struct Layout<'a> {
    /// One event per row, time running down: the story events, at most [`MAX_ROWS`].
    shown: Vec<&'a Event>,
    /// How many story events were cut from the front to keep [`MAX_ROWS`].
    cut_rows: usize,
    /// One lane per node, left to right in order of first appearance.
    lanes: Vec<String>,
    width: usize,
    height: usize,
}

impl<'a> Layout<'a> {
    fn new(events: &'a [Event]) -> Self {
        let mut shown: Vec<&Event> = events.iter().filter(|e| is_story_event(e)).collect();
        // The last rows are kept: they hold the failure.
        let cut_rows = shown.len().saturating_sub(MAX_ROWS);
        shown.drain(..cut_rows);
        let lanes = lanes(events);
        // Room on the right for the labels of the last lane.
        let width = LEFT + lanes.len().max(1) * LANE_W + 260;
        let height = TOP + shown.len() * ROW_H + 50;
        Layout {
            shown,
            cut_rows,
            lanes,
            width,
            height,
        }
    }

    /// The lane of an event's node (`None` for the harness's own events).
    fn lane_of(&self, node: &Option<String>) -> Option<usize> {
        node.as_deref().and_then(|n| self.lane_named(n))
    }

    fn lane_named(&self, name: &str) -> Option<usize> {
        self.lanes.iter().position(|l| l == name)
    }
}

/// The x of a lane's line.
fn lane_x(lane: usize) -> usize {
    LEFT + lane * LANE_W + LANE_W / 2
}

/// The y of a row's middle.
fn row_y(row: usize) -> usize {
    TOP + row * ROW_H + ROW_H / 2
}

/// The opening tag, the shared markers and styles, the title and what the picture leaves out.
fn header(s: &mut String, layout: &Layout, event_count: usize, title: &str) {
    let (width, height) = (layout.width, layout.height);
    // A title is text like any other: `<` or `&` in it must not break the XML.
    let escaped_title = esc(title);
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="11">
<title>{escaped_title}</title>
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
        layout.shown.len(),
        event_count,
        if layout.cut_rows > 0 {
            format!("; first {} rows cut", layout.cut_rows)
        } else {
            String::new()
        },
    );
}

/// Each node's name over its lane, and the lane's line down the picture.
fn lane_lines(s: &mut String, layout: &Layout) {
    for (i, name) in layout.lanes.iter().enumerate() {
        let x = lane_x(i);
        let _ = writeln!(
            s,
            r##"<text x="{x}" y="{}" text-anchor="middle" font-size="13" font-weight="bold">{}</text><line class="lane" x1="{x}" y1="{}" x2="{x}" y2="{}"/>"##,
            TOP - 14,
            esc(name),
            TOP - 6,
            layout.height - 30
        );
    }
}

/// The windows named by failed linearizability checks.
fn non_linearizable_windows(events: &[Event]) -> Vec<WindowMark> {
    events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::CheckFailed { .. }))
        .filter_map(|e| WindowMark::find(&e.detail))
        .collect()
}

/// A non-linearizable window under everything: a band over the rows of its span.
fn window_band(s: &mut String, layout: &Layout, window: &WindowMark) {
    // The text keeps microseconds: a row inside the last one counts.
    let inside = |e: &&Event| e.time_ns >= window.start_ns && e.time_ns < window.end_ns + 1_000;
    let first = layout.shown.iter().position(inside);
    let last = layout.shown.iter().rposition(inside);
    let (Some(first), Some(last)) = (first, last) else {
        return;
    };
    let (top, bottom) = (row_y(first) - ROW_H / 2, row_y(last) + ROW_H / 2);
    let _ = writeln!(
        s,
        r##"<rect class="lin-window" x="{LEFT}" y="{top}" width="{}" height="{}" fill="#ffb300" fill-opacity="0.12" stroke="#ff8f00" stroke-dasharray="6 3"/><text x="{}" y="{}" fill="#e65100" font-weight="bold" text-anchor="end">non-linearizable window {}..{} ({} operations)</text>"##,
        layout.width - LEFT - 10,
        bottom - top,
        layout.width - 14,
        top + 12,
        time_label(window.start_ns),
        time_label(window.end_ns),
        window.history_ops.len()
    );
}

/// Where a message's arrow starts: its send, with the payload for the arrow's tooltip.
struct Sent {
    row: usize,
    lane: usize,
    payload: String,
}

/// Where a message's arrow ends: its delivery, or its drop.
struct Ended {
    row: usize,
    lane: usize,
    delivered: bool,
}

/// Every message sent in the rows shown: an arrow to where it ended, or a trail towards its
/// destination if it was still in flight when the run ended.
fn messages(s: &mut String, layout: &Layout, events: &[Event]) {
    let (sends, ends) = message_routes(layout);
    // A send names its destination by node id, which is the node's place in the start order.
    let start_order: Vec<&String> = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Start { incarnation: 0 }))
        .filter_map(|e| e.node.as_ref())
        .collect();
    for (&msg, sent) in &sends {
        match ends.get(&msg) {
            Some(ended) => arrow(s, msg, sent, ended),
            None => in_flight_trail(s, layout, &start_order, msg, sent),
        }
    }
}

/// The sends, deliveries and drops of the rows shown, by message id (on a lane: the harness
/// sends nothing).
fn message_routes(layout: &Layout) -> (BTreeMap<u64, Sent>, BTreeMap<u64, Ended>) {
    let mut sends = BTreeMap::new();
    let mut ends = BTreeMap::new();
    for (row, e) in layout.shown.iter().enumerate() {
        let Some(lane) = layout.lane_of(&e.node) else {
            continue;
        };
        let end = |delivered| Ended {
            row,
            lane,
            delivered,
        };
        match e.kind {
            EventKind::Send { msg, .. } => {
                let payload = payload(&e.detail).to_string();
                sends.insert(msg, Sent { row, lane, payload });
            }
            EventKind::Deliver { msg } => {
                ends.insert(msg, end(true));
            }
            EventKind::Drop { msg } => {
                ends.insert(msg, end(false));
            }
            // Only sends, deliveries and drops are ends of an arrow.
            _ => {}
        }
    }
    (sends, ends)
}

/// A message from its send to its delivery (arrowhead) or its drop (red dashes).
fn arrow(s: &mut String, msg: u64, sent: &Sent, ended: &Ended) {
    let (x1, y1) = (lane_x(sent.lane), row_y(sent.row));
    let (x2, y2) = (lane_x(ended.lane), row_y(ended.row));
    let (class, marker) = if ended.delivered {
        ("msg", r#" marker-end="url(#arrow)""#)
    } else {
        ("drop", "")
    };
    let _ = writeln!(
        s,
        r#"<line class="{class}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"{marker}><title>#{msg} {}</title></line>"#,
        esc(&sent.payload)
    );
}

/// A message still in flight at the end: a dotted trail off the bottom, halfway towards its
/// destination's lane.
fn in_flight_trail(
    s: &mut String,
    layout: &Layout,
    start_order: &[&String],
    msg: u64,
    sent: &Sent,
) {
    let to = layout.shown.iter().find_map(|e| match e.kind {
        EventKind::Send { msg: m, to, .. } if m == msg => Some(to),
        _ => None,
    });
    let lane = to
        .and_then(|t| start_order.get(t as usize))
        .and_then(|name| layout.lane_named(name));
    let Some(lane) = lane else {
        return;
    };
    let (x1, y1) = (lane_x(sent.lane), row_y(sent.row));
    let (x2, y2) = (lane_x(lane), layout.height - 34);
    let xm = (x1 + x2) / 2;
    let _ = writeln!(
        s,
        r#"<line class="inflight" x1="{x1}" y1="{y1}" x2="{xm}" y2="{y2}" marker-end="url(#arrow-lost)"><title>#{msg} still in flight</title></line>"#
    );
}

/// The rows: a time label and rule when time moves on, and one mark per event.
fn rows(s: &mut String, layout: &Layout, windows: &[WindowMark]) {
    let mut last_time = None;
    for (row, e) in layout.shown.iter().enumerate() {
        let y = row_y(row);
        if last_time != Some(e.time_ns) {
            time_rule(s, layout, y, e.time_ns);
            last_time = Some(e.time_ns);
        }
        // The harness's own events (no node) go in the left margin.
        let x = layout.lane_of(&e.node).map_or(LEFT, lane_x);
        mark(s, layout, e, Spot { x, y }, windows);
    }
}

/// The time in the left margin, and a faint rule across every lane above the row.
fn time_rule(s: &mut String, layout: &Layout, y: usize, time_ns: u64) {
    let _ = writeln!(
        s,
        r#"<text x="8" y="{}" class="t">{}</text>"#,
        y + 4,
        time_label(time_ns)
    );
    let _ = writeln!(
        s,
        r##"<line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="#eee"/>"##,
        y - ROW_H / 2,
        layout.width - 10,
        y - ROW_H / 2
    );
}

/// Where a row's mark goes: on its node's lane, at its row's middle.
#[derive(Clone, Copy)]
struct Spot {
    x: usize,
    y: usize,
}

impl Spot {
    /// Words to the right of the mark.
    fn label(self, s: &mut String, color: &str, text: &str) {
        let (x, y) = (self.x + 9, self.y + 4);
        let _ = writeln!(s, r#"<text x="{x}" y="{y}" fill="{color}">{text}</text>"#);
    }
}

/// One event's mark. Every kind is named here: a new kind does not compile until it is
/// given a mark.
fn mark(s: &mut String, layout: &Layout, e: &Event, at: Spot, windows: &[WindowMark]) {
    use EventKind as K;
    let detail = || esc(&clip(&e.detail, 60));
    let in_window = |op: u64| windows.iter().any(|w| w.history_ops.contains(&op));
    match e.kind {
        K::Send { msg, .. } => send_mark(s, at, msg, &e.detail),
        K::Deliver { msg } => delivery_mark(s, at, msg),
        K::Drop { msg } => drop_mark(s, at, msg, &e.detail),
        K::Crash => crash_mark(s, at, &detail()),
        K::Start { incarnation } => start_mark(s, at, incarnation),
        K::Pause => pause_mark(s, at, &detail()),
        K::Resume => resume_mark(s, at, &detail()),
        K::Stop { .. } => stop_mark(s, at, &detail()),
        K::Exit => exit_mark(s, at, &detail()),
        K::Fault { .. } => fault_mark(s, at, "#ef6c00", &format!("FAULT {}", detail())),
        K::DiskFault { .. } => fault_mark(s, at, "#6a1b9a", &format!("DISK {}", detail())),
        K::Disk { ok, .. } => disk_mark(s, at, ok, &detail()),
        K::Timer { .. } => clock_mark(s, at, "#777", &detail()),
        K::ClockRead { .. } => clock_mark(s, at, "#555", &detail()),
        // Clock and timer faults: the clock face in the faults' orange.
        K::ClockSkew { .. } | K::ClockJump { .. } | K::TimerLate { .. } => {
            clock_mark(s, at, "#ef6c00", &detail());
        }
        K::OpStart { op, .. } => operation_mark(s, at, &format!("▶ {}", detail()), in_window(op)),
        K::OpResult { op, .. } => operation_mark(s, at, &format!("◀ {}", detail()), in_window(op)),
        K::CheckFailed { .. } => failed_check_band(s, layout, at, &e.detail),
        K::Note { .. } => at.label(s, "#555", &format!("note: {}", detail())),
        // No mark of their own: a dot and their words.
        K::Duplicate { .. }
        | K::Hold { .. }
        | K::Release { .. }
        | K::Reset { .. }
        | K::NodeDown { .. }
        | K::SessionBroken { .. } => plain_mark(s, at, e.kind.name(), &detail()),
        // Never shown: `is_story_event` leaves them out of the rows.
        K::Step { .. } | K::Spawn { .. } | K::TaskDone { .. } => {}
    }
}

/// A filled dot, with the payload above it: the message's own arrow leaves it downwards.
fn send_mark(s: &mut String, at: Spot, msg: u64, detail: &str) {
    let Spot { x, y } = at;
    let _ = writeln!(
        s,
        r##"<circle cx="{x}" cy="{y}" r="3.5" fill="#1f4e8c"/><text x="{}" y="{}" fill="#1f4e8c">#{msg} {}</text>"##,
        x + 7,
        y - 3,
        esc(&clip(payload(detail), 44))
    );
}

/// A hollow dot where the arrow lands.
fn delivery_mark(s: &mut String, at: Spot, msg: u64) {
    let Spot { x, y } = at;
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

/// A red cross where the message was lost, and why.
fn drop_mark(s: &mut String, at: Spot, msg: u64, detail: &str) {
    let Spot { x, y } = at;
    let _ = writeln!(
        s,
        r##"<path d="M{} {} l10 10 M{} {} l-10 10" stroke="#c62828" stroke-width="2.5"/>"##,
        x - 5,
        y - 5,
        x + 5,
        y - 5
    );
    let text = format!("dropped #{msg}: {}", esc(reason(detail)));
    at.label(s, "#c62828", &text);
}

/// A white cross on a red square.
fn crash_mark(s: &mut String, at: Spot, detail: &str) {
    let Spot { x, y } = at;
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
    at.label(s, "#c62828", &format!("CRASH: {detail}"));
}

/// A small bar: green for a node's first start, orange for a restart.
fn start_mark(s: &mut String, at: Spot, incarnation: u32) {
    let Spot { x, y } = at;
    let (color, text) = if incarnation == 0 {
        ("#2e7d32", "start")
    } else {
        ("#ef6c00", "RESTART")
    };
    let _ = writeln!(
        s,
        r#"<rect x="{}" y="{}" width="12" height="8" fill="{color}"/>"#,
        x - 6,
        y - 4
    );
    at.label(s, color, text);
}

/// A purple pause sign.
fn pause_mark(s: &mut String, at: Spot, detail: &str) {
    let Spot { x, y } = at;
    let _ = writeln!(
        s,
        r##"<rect x="{}" y="{}" width="4" height="14" fill="#6a1b9a"/><rect x="{}" y="{}" width="4" height="14" fill="#6a1b9a"/>"##,
        x - 6,
        y - 7,
        x + 2,
        y - 7
    );
    at.label(s, "#6a1b9a", &format!("PAUSE: {detail}"));
}

/// A purple play sign.
fn resume_mark(s: &mut String, at: Spot, detail: &str) {
    let Spot { x, y } = at;
    let _ = writeln!(
        s,
        r##"<path d="M{} {} l12 7 l-12 7 z" fill="#6a1b9a"/>"##,
        x - 6,
        y - 7
    );
    at.label(s, "#6a1b9a", &format!("RESUME: {detail}"));
}

/// A hollow red square: the node was asked to stop.
fn stop_mark(s: &mut String, at: Spot, detail: &str) {
    let Spot { x, y } = at;
    let _ = writeln!(
        s,
        r##"<rect x="{}" y="{}" width="14" height="14" fill="#fff" stroke="#c62828" stroke-width="2"/>"##,
        x - 7,
        y - 7
    );
    at.label(s, "#c62828", &format!("STOP: {detail}"));
}

/// A grey square: the node stopped by itself.
fn exit_mark(s: &mut String, at: Spot, detail: &str) {
    let Spot { x, y } = at;
    let _ = writeln!(
        s,
        r##"<rect x="{}" y="{}" width="14" height="14" fill="#777"/>"##,
        x - 7,
        y - 7
    );
    at.label(s, "#555", &format!("EXIT: {detail}"));
}

/// A diamond in `color`: an injected fault.
fn fault_mark(s: &mut String, at: Spot, color: &str, text: &str) {
    let Spot { x, y } = at;
    let _ = writeln!(
        s,
        r#"<path d="M{x} {} l7 7 l-7 7 l-7 -7 z" fill="{color}"/>"#,
        y - 7
    );
    at.label(s, color, text);
}

/// A small hollow square: brown for a disk operation, red for one that failed.
fn disk_mark(s: &mut String, at: Spot, ok: bool, detail: &str) {
    let Spot { x, y } = at;
    let color = if ok { "#5d4037" } else { "#c62828" };
    let _ = writeln!(
        s,
        r#"<rect x="{}" y="{}" width="8" height="8" fill="none" stroke="{color}" stroke-width="1.5"/>"#,
        x - 4,
        y - 4
    );
    at.label(s, color, &format!("disk {detail}"));
}

/// A clock face in `color`: timers, clock readings and clock faults.
fn clock_mark(s: &mut String, at: Spot, color: &str, detail: &str) {
    let Spot { x, y } = at;
    let _ = writeln!(
        s,
        r#"<circle cx="{x}" cy="{y}" r="5" fill="none" stroke="{color}"/><path d="M{x} {y} l0 -3 M{x} {y} l2 1" stroke="{color}"/>"#
    );
    at.label(s, color, detail);
}

/// An operation's call or return, boxed; in amber if it belongs to a non-linearizable window.
fn operation_mark(s: &mut String, at: Spot, text: &str, in_window: bool) {
    let Spot { x, y } = at;
    let w = 12 + 6 * text.chars().count();
    let look = if in_window {
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

/// A failed check: a red band across every lane, with the whole message.
fn failed_check_band(s: &mut String, layout: &Layout, at: Spot, detail: &str) {
    let y = at.y;
    let _ = writeln!(
        s,
        r##"<rect x="{LEFT}" y="{}" width="{}" height="{}" fill="#ffebee" stroke="#c62828" stroke-width="2"/><text x="{}" y="{}" fill="#b71c1c" font-weight="bold">✗ INVARIANT VIOLATED — {}</text>"##,
        y - ROW_H / 2 + 1,
        layout.width - LEFT - 10,
        ROW_H - 2,
        LEFT + 8,
        y + 4,
        esc(detail)
    );
}

/// A grey dot and the event's kind and words.
fn plain_mark(s: &mut String, at: Spot, kind: &str, detail: &str) {
    let Spot { x, y } = at;
    let _ = writeln!(s, r##"<circle cx="{x}" cy="{y}" r="3" fill="#777"/>"##);
    at.label(s, "#555", &format!("{kind} {detail}"));
}

/// Text made safe inside SVG markup; control characters become spaces.
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

/// At most `max` characters, the last an ellipsis if the text was longer.
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_title_element_is_escaped_like_the_heading() {
        let picture = super::svg(&[], "a < b & c");
        assert!(
            picture.contains("<title>a &lt; b &amp; c</title>"),
            "{picture}"
        );
        assert!(!picture.contains("a < b"));
    }
}
