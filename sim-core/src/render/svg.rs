//! The space-time diagram: [`svg`].

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
