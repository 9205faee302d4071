//! Story and trace filters on the command line: each flag narrows the story `sim render` and
//! `sim shrink` print, and the trace `sim replay` prints; a filter that is ignored fails a
//! test here.

use acceptance::{key_value as value, scratch_dir as scratch, sim_cli as sim};

fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

/// A story line as printed: `  | index time node kind detail`.
struct Line<'a> {
    time_ms: f64,
    node: &'a str,
    kind: &'a str,
    text: &'a str,
}

fn story(out: &str) -> Vec<Line<'_>> {
    out.lines()
        .filter_map(|l| l.strip_prefix("  | "))
        .map(|text| {
            let words: Vec<&str> = text.split_whitespace().collect();
            let time = words[1].strip_suffix("ms").expect("a time in ms");
            Line {
                time_ms: time.parse().expect("a time"),
                node: words[2],
                kind: words[3],
                text,
            }
        })
        .collect()
}

/// The first failure of raft-kv's stale read: a non-linearizable window of a few operations
/// among hundreds of story lines of elections, heartbeats and disk writes.
#[test]
fn render_filters_narrow_a_long_story() {
    let dir = scratch("story-filters");
    let (code, out) = sim(&[
        "sweep",
        "--system",
        "raft-kv",
        "--bug",
        "stale-read",
        "--seeds",
        "0..2000",
        "--until-first",
        "--failures-dir",
        s(&dir),
    ]);
    assert_eq!(
        code, 1,
        "stale-read fails about one seed in a hundred: {out}"
    );
    let repro = value(&out, "repro_file").expect("a repro file");
    let render = |filter: &[&str]| {
        let mut args = vec!["render", repro.as_str(), "--story", "--svg"];
        let svg = dir.join("r.svg");
        let shiviz = dir.join("r.log");
        args.extend([s(&svg), "--shiviz", s(&shiviz)]);
        args.extend_from_slice(filter);
        sim(&args)
    };
    let (code, full_out) = render(&[]);
    assert_eq!(code, 0, "{full_out}");
    let full = story(&full_out);
    let failed = full
        .iter()
        .find(|l| l.kind == "FAILED")
        .expect("the failed check is in the story");
    assert!(failed.text.contains("history ops"), "{}", failed.text);

    // The causal past of the window's operations: strictly shorter, still with the check and
    // the result of every operation of the window.
    let (code, causal_out) = render(&["--causal"]);
    assert_eq!(code, 0, "{causal_out}");
    let causal = story(&causal_out);
    assert!(
        causal.len() < full.len(),
        "--causal keeps {} of {} lines",
        causal.len(),
        full.len()
    );
    assert!(causal.iter().any(|l| l.text == failed.text), "{causal_out}");
    let ops = failed.text.split("history ops ").nth(1).unwrap();
    let ops = &ops[..ops.find(')').unwrap()];
    for op in ops.split(',') {
        let result = format!("op {op}:");
        let is_result = |l: &Line| l.kind == "result" && l.text.contains(&result);
        assert!(full.iter().any(is_result), "op {op} returned: {full_out}");
        assert!(
            causal.iter().any(is_result),
            "op {op}'s result: {causal_out}"
        );
    }
    assert_eq!(
        value(&causal_out, "story_lines"),
        Some(causal.len().to_string())
    );

    // One client: its lines, the replies sent to it, lines of no node; nothing of the others.
    let (code, node_out) = render(&["--node", "c2"]);
    assert_eq!(code, 0, "{node_out}");
    let mine = story(&node_out);
    assert!(full.iter().any(|l| l.node == "c1") && !mine.is_empty());
    for line in &mine {
        assert!(!["c1", "c3"].contains(&line.node), "{}", line.text);
        // Elsewhere, only a message of c2's: a send names its ends, the others its number.
        let about_c2 = match line.kind {
            "send" => line.text.contains("c2:"),
            kind => ["drop", "dup", "hold", "release"].contains(&kind),
        };
        assert!(
            line.node == "c2" || line.node == "-" || about_c2,
            "{}",
            line.text
        );
    }

    // Kinds and a time window.
    let (code, window_out) = render(&["--kind", "result", "--from-ms", "500", "--to-ms", "1500"]);
    assert_eq!(code, 0, "{window_out}");
    let results = story(&window_out);
    assert!(!results.is_empty(), "{full_out}");
    for line in &results {
        assert_eq!(line.kind, "result", "{}", line.text);
        assert!((500.0..1500.0).contains(&line.time_ms), "{}", line.text);
    }

    // Names the trace does not have are usage errors.
    for bad in [
        &["--node", "c9"][..],
        &["--kind", "timer"],
        &["--from-ms", "9", "--to-ms", "9"],
    ] {
        let (code, text) = render(bad);
        assert_eq!(code, 2, "{bad:?}: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `sim shrink` prints the filtered story; its summary still counts the whole story.
#[test]
fn shrink_prints_the_filtered_story() {
    let dir = scratch("shrink-story");
    let shrink = |filter: &[&str]| {
        let mut args = vec![
            "shrink",
            "--system",
            "two-pc",
            "--bug",
            "first-vote-wins",
            "--seed",
            "1",
            "--failures-dir",
            s(&dir),
        ];
        args.extend_from_slice(filter);
        sim(&args)
    };
    let (code, whole) = shrink(&[]);
    assert_eq!(code, 1, "{whole}");
    let (code, filtered) = shrink(&["--kind", "FAILED"]);
    assert_eq!(code, 1, "{filtered}");
    let lines = story(&filtered);
    assert_eq!(lines.len(), 1, "{filtered}");
    assert_eq!(lines[0].kind, "FAILED");
    assert!(story(&whole).len() > 1, "{whole}");
    assert_eq!(
        value(&filtered, "story_lines"),
        value(&whole, "story_lines")
    );
    let (code, _) = shrink(&["--node", "nobody"]);
    assert_eq!(code, 2, "an unknown node is refused before the shrink");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `sim replay` takes the same filters for its trace: every event kind (steps, timers), not
/// only the story's; the strict check still covers the whole run.
#[test]
fn replay_filters_the_trace() {
    let dir = scratch("trace-filters");
    let (code, out) = sim(&[
        "sweep",
        "--system",
        "two-pc",
        "--bug",
        "first-vote-wins",
        "--seeds",
        "0..50",
        "--until-first",
        "--failures-dir",
        s(&dir),
    ]);
    assert_eq!(code, 1, "{out}");
    let repro = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".repro.json"))
        .expect("a repro file");
    let trace_lines = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.starts_with("    ") && l.trim_start().starts_with(char::is_numeric))
            .map(str::to_string)
            .collect()
    };
    let (code, whole) = sim(&["replay", s(&repro)]);
    assert_eq!(code, 1, "{whole}");
    let all = trace_lines(&whole);
    let (code, narrowed) = sim(&["replay", s(&repro), "--node", "p1", "--kind", "step"]);
    assert_eq!(code, 1, "{narrowed}");
    let kept = trace_lines(&narrowed);
    assert!(!kept.is_empty() && kept.len() < all.len(), "{narrowed}");
    for line in &kept {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!((words[2], words[3]), ("p1", "step"), "{line}");
    }
    assert_eq!(
        value(&narrowed, "trace_lines").as_deref(),
        Some(kept.len().to_string().as_str())
    );
    assert_eq!(value(&narrowed, "strict").as_deref(), Some("true"));
    let (code, err) = sim(&["replay", s(&repro), "--kind", "no-such-kind"]);
    assert_eq!(code, 2, "{err}");
}
