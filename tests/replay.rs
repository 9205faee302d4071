//! Replay, failure files, shrink and render through the `sim` command line (in process).

use std::path::{Path, PathBuf};

use sim_core::choice::Input;
use sim_core::repro::{Repro, TraceFile};
use sim_core::trace::EventKind;

use acceptance::{key_value as value, scratch_dir as scratch, sim_cli as sim};

/// The first seed whose run of the planted bug fails: found, not pinned, so the tests follow
/// changes to the workload's draws.
fn failing_seed() -> String {
    let spec = systems::two_pc::SPEC;
    let opts = spec.options(Some("first-vote-wins")).unwrap();
    let seed = (0..200u64)
        .find(|&seed| {
            spec.run(&opts, &Input::Seed(seed))
                .outcome
                .class
                .is_failure()
        })
        .expect("the planted bug fails within 200 seeds");
    seed.to_string()
}

/// `sim run` of the first failing seed of the planted 2PC bug, failure files into `dir`:
/// the seed, the exit code and the output.
fn run_failing(dir: &Path) -> (String, i32, String) {
    let seed = failing_seed();
    let (code, out) = sim(&[
        "run",
        "--system",
        "two-pc",
        "--bug",
        "first-vote-wins",
        "--seed",
        seed.as_str(),
        "--failures-dir",
        s(dir),
    ]);
    (seed, code, out)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn shrink_prints_the_summary_last_and_its_output_replays_strictly() {
    let seed = failing_seed();
    let dir = scratch("shrink");
    let out_file = dir.join("shrunk.bin");
    let (code, out) = sim(&[
        "shrink",
        "--system",
        "two-pc",
        "--bug",
        "first-vote-wins",
        "--seed",
        seed.as_str(),
        "--out",
        s(&out_file),
        "--failures-dir",
        s(&dir),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.lines().next().unwrap().starts_with("replay=")
            && out.contains(&format!("--seed {seed}")),
        "{out}"
    );
    let last = out.lines().last().unwrap();
    let keys: Vec<&str> = last
        .split_whitespace()
        .map(|kv| kv.split('=').next().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "class",
            "invariant",
            "bytes_before",
            "bytes_after",
            "events_before",
            "events_after",
            "ops_before",
            "ops_after",
            "story_lines",
            "verified"
        ],
        "{last}"
    );
    assert_eq!(value(last, "class").as_deref(), Some("correctness"));
    assert_eq!(value(last, "invariant").as_deref(), Some("atomicity"));
    assert_eq!(value(last, "verified").as_deref(), Some("true"));
    let (before, after): (usize, usize) = (
        value(last, "bytes_before").unwrap().parse().unwrap(),
        value(last, "bytes_after").unwrap().parse().unwrap(),
    );
    assert!(after < before, "{last}");
    assert_eq!(std::fs::read(&out_file).unwrap().len(), after);
    assert!(out.contains("FAILED"), "the shrunk trace is printed: {out}");

    // The raw shrunk input, run in a new process-equivalent, fails the same way...
    let (code, run) = sim(&[
        "run",
        "--system",
        "two-pc",
        "--bug",
        "first-vote-wins",
        "--input",
        s(&out_file),
    ]);
    assert_eq!(code, 1, "{run}");
    assert_eq!(value(&run, "invariant").as_deref(), Some("atomicity"));
    // ...and the repro replays strictly to the pinned hash, with the full trace.
    let repro = PathBuf::from(value(&out, "repro_file").unwrap());
    let (code, replay) = sim(&["replay", s(&repro)]);
    assert_eq!(code, 1, "{replay}");
    assert!(
        replay.lines().next().unwrap().starts_with("replay="),
        "{replay}"
    );
    assert_eq!(
        value(&replay, "strict").as_deref(),
        Some("true"),
        "{replay}"
    );
    assert_eq!(value(&replay, "history_hash"), value(&run, "history_hash"));
    let trace_lines = replay
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric))
        .count();
    assert_eq!(
        trace_lines as u64,
        value(&replay, "steps").unwrap().parse::<u64>().unwrap(),
        "full trace"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn replay_detects_a_diverged_repro_and_asks_raw_input_for_its_system() {
    let dir = scratch("diverged");
    let (seed, _, out) = run_failing(&dir);
    let repro_path =
        PathBuf::from(value(&out, "repro_file").expect("a failing run writes a repro"));
    let mut repro = Repro::from_json(&std::fs::read_to_string(&repro_path).unwrap()).unwrap();
    assert_eq!(repro.origin, format!("seed:{seed}"));
    let (code, ok) = sim(&["replay", s(&repro_path)]);
    assert_eq!(
        (code, value(&ok, "strict").as_deref()),
        (1, Some("true")),
        "{ok}"
    );
    assert_eq!(
        value(&ok, "history_hash"),
        value(&out, "history_hash"),
        "the repro replays the seed's run"
    );

    // A pinned hash that the run does not reproduce is reported, even for a passing input.
    repro.history_hash = Some("0000000000000000".into());
    repro.input_hex = String::new();
    let tampered = dir.join("tampered.repro.json");
    std::fs::write(&tampered, repro.to_json()).unwrap();
    let (code, bad) = sim(&["replay", s(&tampered)]);
    assert_eq!(value(&bad, "class").as_deref(), Some("pass"), "{bad}");
    assert_eq!(
        (code, value(&bad, "strict").as_deref()),
        (1, Some("false")),
        "{bad}"
    );

    // Raw bytes need a system; a conflicting flag is refused.
    let raw = dir.join("raw.bin");
    std::fs::write(&raw, [1, 2, 3]).unwrap();
    assert_eq!(sim(&["replay", s(&raw)]).0, 2);
    assert_eq!(sim(&["replay", "--system", "two-pc", s(&raw)]).0, 0);
    assert_eq!(
        sim(&[
            "replay",
            "--system",
            "two-pc",
            s(&repro_path),
            "--bug",
            "nope"
        ])
        .0,
        2
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failures_leave_trace_files_and_an_identity() {
    let dir = scratch("files");
    let (seed, code, out) = run_failing(&dir);
    assert_eq!(code, 1);
    let trace = std::fs::read_to_string(value(&out, "trace_file").unwrap()).unwrap();
    assert!(trace.lines().last().unwrap().contains("FAILED"), "{trace}");
    let identity = out
        .lines()
        .find(|l| l.starts_with("identity "))
        .expect("identity line");
    for key in [
        &format!("input=seed:{seed}"),
        "commit=",
        "toolchain=",
        "target=",
        "flags=\"--system two-pc --bug first-vote-wins\"",
    ] {
        assert!(identity.contains(key), "{identity} lacks {key}");
    }
    // A passing run writes nothing.
    let quiet = scratch("files-pass");
    let (code, _) = sim(&[
        "run",
        "--system",
        "two-pc",
        "--seed",
        "0",
        "--failures-dir",
        s(&quiet),
    ]);
    assert_eq!(code, 0);
    assert_eq!(std::fs::read_dir(&quiet).unwrap().count(), 0);

    // A sweep writes its first failure, with the last trace lines and the replay command.
    let (code, out) = sim(&[
        "sweep",
        "--system",
        "two-pc",
        "--bug",
        "first-vote-wins",
        "--seeds",
        "0..20",
        "--failures-dir",
        s(&dir),
    ]);
    assert_eq!(code, 1);
    let first: u64 = value(&out, "first_failure_seed").unwrap().parse().unwrap();
    assert!(out.contains(&format!("--seed {first}")), "{out}");
    assert!(
        out.lines().filter(|l| l.starts_with("  | ")).count() >= 5,
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("  | ") && l.contains("FAILED")),
        "{out}"
    );
    assert!(Path::new(&value(&out, "repro_file").unwrap()).exists());
    assert!(
        out.lines().last().unwrap().starts_with("seeds=20 "),
        "the summary stays last: {out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&quiet);
}

#[test]
fn trace_json_round_trips_and_renders() {
    let seed = failing_seed();
    let dir = scratch("render");
    let json = dir.join("t.json");
    let (_, out) = sim(&[
        "run",
        "--system",
        "two-pc",
        "--bug",
        "first-vote-wins",
        "--seed",
        seed.as_str(),
        "--trace-json",
        s(&json),
        "--failures-dir",
        s(&dir),
    ]);
    let file: TraceFile = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(file.format, "sim-trace");
    assert_eq!(
        file.events.len() as u64,
        value(&out, "steps").unwrap().parse::<u64>().unwrap()
    );
    assert_eq!(
        format!("{:016x}", file.outcome.history_hash),
        value(&out, "history_hash").unwrap()
    );

    let (code, rendered) = sim(&["render", s(&json)]);
    assert_eq!(code, 0, "{rendered}");
    let svg = std::fs::read_to_string(value(&rendered, "svg").unwrap()).unwrap();
    let sends = file
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Send { .. }))
        .count();
    let delivered = file
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Deliver { .. }))
        .count();
    assert_eq!(
        svg.matches(r#"marker-end="url(#arrow)""#).count(),
        delivered,
        "one arrow per delivery"
    );
    assert_eq!(
        svg.matches(r#"class="inflight""#).count(),
        sends - delivered,
        "the rest still in flight"
    );
    assert!(svg.contains("INVARIANT VIOLATED"));

    // ShiViz: pairs of lines, `host {clock}`, each host's own entry counting up from 1.
    let log = std::fs::read_to_string(value(&rendered, "shiviz").unwrap()).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len() % 2, 0);
    let mut own: std::collections::BTreeMap<String, u64> = Default::default();
    for pair in lines.chunks(2) {
        let (host, clock) = pair[1].split_once(' ').expect("host clock");
        let clock: std::collections::BTreeMap<String, u64> =
            serde_json::from_str(clock).expect("JSON clock");
        let last = own.entry(host.to_string()).or_insert(0);
        assert_eq!(clock[host], *last + 1, "{host}: {}", pair[1]);
        *last += 1;
    }
    assert!(own.contains_key("checker") && own.contains_key("coord"));

    // A repro renders too (replayed).
    let repro = value(&out, "repro_file").unwrap();
    let svg2 = dir.join("from-repro.svg");
    let (code, _) = sim(&[
        "render",
        &repro,
        "--svg",
        s(&svg2),
        "--shiviz",
        s(&dir.join("r.log")),
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read_to_string(&svg2)
            .unwrap()
            .matches(r#"marker-end="url(#arrow)""#)
            .count(),
        delivered
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sweep_until_first_stops_at_the_first_failure() {
    let dir = scratch("until-first");
    let first = failing_seed();
    let (code, out) = sim(&[
        "sweep",
        "--system",
        "two-pc",
        "--bug",
        "first-vote-wins",
        "--jobs",
        "1",
        "--until-first",
        "--seeds",
        "0..200",
        "--failures-dir",
        s(&dir),
    ]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        value(&out, "first_failure_seed").as_deref(),
        Some(first.as_str())
    );
    assert_eq!(value(&out, "failures").as_deref(), Some("1"), "{out}");
    let ran: u64 = value(&out, "seeds").unwrap().parse().unwrap();
    assert_eq!(ran, first.parse::<u64>().unwrap() + 1, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `sim corpus` writes each seed's run as the bytes that replay it: the same history, read
/// back through the byte decoder a fuzz target uses.
#[test]
fn corpus_files_replay_the_seeded_runs() {
    let dir = scratch("corpus");
    let (code, out) = sim(&[
        "corpus",
        "--system",
        "two-pc",
        "--seeds",
        "10..14",
        "--out",
        s(&dir),
    ]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(value(&out, "runs").as_deref(), Some("4"), "{out}");
    assert_eq!(value(&out, "failures").as_deref(), Some("0"), "{out}");
    let spec = systems::two_pc::SPEC;
    let opts = spec.options(None).unwrap();
    let mut bytes_max = 0;
    for seed in 10..14u64 {
        let bytes = std::fs::read(dir.join(format!("seed-{seed}.bin"))).unwrap();
        bytes_max = bytes_max.max(bytes.len());
        let seeded = spec.run(&opts, &Input::Seed(seed)).outcome.history_hash;
        let replayed = spec.run(&opts, &Input::Bytes(bytes)).outcome.history_hash;
        assert_eq!(seeded, replayed, "seed {seed}");
    }
    assert_eq!(value(&out, "bytes_max"), Some(bytes_max.to_string()));

    // With the planted bug the command stops at the first failing seed, exit 1.
    let first = failing_seed();
    let bug_dir = dir.join("bug");
    let (code, out) = sim(&[
        "corpus",
        "--system",
        "two-pc",
        "--bug",
        "first-vote-wins",
        "--seeds",
        "0..200",
        "--out",
        s(&bug_dir),
    ]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(value(&out, "first_failure_seed"), Some(first));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A repro file names its system and flags, so `shrink --input REPRO` needs nothing else and
/// shrinks that very run; raw bytes still need `--system`, and say so.
#[test]
fn shrink_takes_a_repro_alone_and_asks_raw_input_for_its_system() {
    let dir = scratch("shrink-repro");
    let (_, code, out) = run_failing(&dir);
    assert_eq!(code, 1, "{out}");
    let repro = value(&out, "repro_file").expect("a failing run writes a repro");
    let steps = value(&out, "steps").unwrap();
    let (code, shrunk) = sim(&["shrink", "--input", &repro, "--failures-dir", s(&dir)]);
    assert_eq!(code, 1, "{shrunk}");
    assert_eq!(value(&shrunk, "events_before"), Some(steps), "{shrunk}");
    assert_eq!(value(&shrunk, "verified").as_deref(), Some("true"));

    let raw = dir.join("raw.bin");
    std::fs::write(&raw, [1u8, 2, 3]).unwrap();
    let (code, text) = sim(&["shrink", "--input", s(&raw), "--failures-dir", s(&dir)]);
    // A usage error (its message, naming the fix, goes to stderr); nothing was shrunk.
    assert_eq!(code, 2, "{text}");
    assert!(!text.contains("class="), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
