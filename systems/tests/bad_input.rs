//! Bad input, case by case: each command line with its expected exit code and a fragment of
//! the message that must name the problem (stderr for errors, stdout for results). A repro
//! file written by `sweep --faults all` is the raw material; the cases edit it.
// The files are the test's own, outside any simulation.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

mod common;
use common::{sim, value};

struct Fixtures {
    dir: PathBuf,
    /// A repro of `two-pc --bug first-vote-wins --faults all`, written by a sweep.
    repro: String,
    trace: String,
}

impl Fixtures {
    fn new() -> Fixtures {
        let dir = std::env::temp_dir().join(format!("sim-bad-input-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let d = dir.display().to_string();
        let sweep = sim(&[
            "sweep",
            "--system",
            "two-pc",
            "--bug",
            "first-vote-wins",
            "--faults",
            "all",
            "--seeds",
            "0..40",
            "--failures-dir",
            &d,
        ]);
        assert_eq!(sweep.code, 1, "{}{}", sweep.stdout, sweep.stderr);
        Fixtures {
            repro: value(&sweep.stdout, "repro_file").unwrap(),
            trace: value(&sweep.stdout, "trace_json_file").unwrap(),
            dir,
        }
    }

    /// Writes `text` to a file named `name`; its path.
    fn file(&self, name: &str, text: impl AsRef<[u8]>) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    fn repro_json(&self) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(&self.repro).unwrap()).unwrap()
    }

    /// The repro with `field` set to `to`.
    fn edited(&self, name: &str, field: &str, to: serde_json::Value) -> String {
        let mut v = self.repro_json();
        v[field] = to;
        self.file(name, serde_json::to_string_pretty(&v).unwrap())
    }
}

fn d(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn bad_input_gets_its_exit_code_and_a_message_that_names_it() {
    let f = Fixtures::new();
    let repro_text = std::fs::read_to_string(&f.repro).unwrap();
    let bom = f.file("bom.repro.json", format!("\u{feff}\n   {repro_text}"));
    let reordered = {
        // input_hex first, the rest after: field order must not matter.
        let mut v = f.repro_json();
        let hex = v.as_object_mut().unwrap().remove("input_hex").unwrap();
        let mut text = format!("{{\"input_hex\": {hex},");
        let rest = serde_json::to_string(&v).unwrap();
        text.push_str(&rest[1..]);
        f.file("reordered.repro.json", text)
    };
    let hash = f.repro_json()["history_hash"]
        .as_str()
        .unwrap()
        .to_uppercase();
    let upper = f.edited("upper.repro.json", "history_hash", hash.into());
    let not_hash = f.edited("nothash.repro.json", "history_hash", "not-a-hash".into());
    let version0 = f.edited("v0.repro.json", "version", 0.into());
    let class = f.edited("class.repro.json", "class", "banana".into());
    let input = f.edited("input.repro.json", "input_hex", "00".into());
    let broken = f.file("broken.repro.json", &repro_text[..repro_text.len() / 2]);
    let raw = f.file("raw.bin", [1, 2, 3]);
    let not_a_dir = f.file("plain-file", "");
    let under_file = format!("{not_a_dir}/sub");
    let out_under_file = format!("{not_a_dir}/x.bin");
    let repro = f.repro.as_str();
    let trace = f.trace.as_str();
    let dir = d(&f.dir);
    // JSON that is not a repro file, and a repro missing only its format.
    let empty_object = f.file("object.json", "{}");
    let null = f.file("null.json", "null");
    let array = f.file("array.json", "[1,2,3]");
    let no_format = {
        let mut v = f.repro_json();
        v.as_object_mut().unwrap().remove("format");
        f.file(
            "noformat.repro.json",
            serde_json::to_string_pretty(&v).unwrap(),
        )
    };
    // Only the recorded input_hash edited: the run still reproduces the pinned history.
    let input_hash = f.edited(
        "inputhash.repro.json",
        "input_hash",
        "0123456789abcdef".into(),
    );
    // The readable trace written next to the repro.
    let trace_txt = trace.replace(".trace.json", ".trace.txt");
    // Trace files edited: a version never written, an event's index, its node, a send's target.
    let trace_json = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(trace).unwrap()).unwrap()
    };
    let edited_trace = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = trace_json();
        edit(&mut v);
        f.file(name, serde_json::to_string(&v).unwrap())
    };
    let v9 = edited_trace("v9.trace.json", &|v| v["version"] = 9.into());
    let index = edited_trace("index.trace.json", &|v| v["events"][5]["index"] = 99.into());
    let ghost = edited_trace("ghost.trace.json", &|v| {
        let events = v["events"].as_array_mut().unwrap();
        let step = events.iter_mut().find(|e| e["kind"] == "step").unwrap();
        step["node"] = "ghost".into();
    });
    let send_to = edited_trace("sendto.trace.json", &|v| {
        let events = v["events"].as_array_mut().unwrap();
        let send = events.iter_mut().find(|e| e["kind"] == "send").unwrap();
        send["to"] = 99.into();
    });
    let events_only = {
        let v = trace_json();
        f.file("events.json", serde_json::to_string(&v["events"]).unwrap())
    };
    // A corpus directory with an entry in it already.
    let corpus = d(&f.dir.join("corpus"));
    assert_eq!(
        sim(&["corpus", "--system", "two-pc", "--seeds", "0..2", "--out", &corpus]).code,
        0
    );
    // Shard results: a whole shard, the same shard killed before its summary, a blank file.
    let shard_out = d(&f.dir.join("s1.jsonl"));
    let sweep = sim(&[
        "sweep",
        "--system",
        "two-pc",
        "--bug",
        "first-vote-wins",
        "--seeds",
        "0..40",
        "--shard",
        "1/2",
        "--out",
        &shard_out,
        "--failures-dir",
        &dir,
    ]);
    assert_eq!(sweep.code, 1, "{}", sweep.stderr);
    let killed = {
        let text = std::fs::read_to_string(&shard_out).unwrap();
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| !l.contains("\"summary\""))
            .collect();
        f.file("killed.jsonl", lines.join("\n") + "\n")
    };
    let blank = f.file("blank.jsonl", "\n\n  \n");
    let (out_svg, out_log) = (d(&f.dir.join("o.svg")), d(&f.dir.join("o.log")));
    let corpus2 = d(&f.dir.join("corpus2"));
    #[rustfmt::skip]
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        // Names and values.
        (vec!["run", "--system", "nope", "--seed", "1"], 2, "known systems"),
        (vec!["run", "--system", "two-pc", "--bug", "nope", "--seed", "1"], 2, "its bugs"),
        (vec!["sweep", "--system", "two-pc", "--seeds", "10"], 2, "START..END"),
        (vec!["sweep", "--system", "two-pc", "--seeds", "5..5"], 2, "--seeds 5..5 is empty"),
        (vec!["sweep", "--system", "two-pc", "--seeds", "10..5"], 2, "--seeds 10..5 is reversed"),
        (vec!["corpus", "--system", "two-pc", "--seeds", "10..5", "--out", &corpus], 2, "write --seeds 5..10"),
        (vec!["run", "--system", "two-pc", "--seed", "1", "--strategy", "random"], 2, "uniform, pct or fifo"),
        (vec!["run", "--system", "two-pc", "--seed", "1", "--faults", "some"], 2, "use off, swarm, all"),
        (vec!["sweep"], 2, "--system NAME or --all"),
        // Flags accepted and ignored are refused.
        (vec!["sweep", "--all", "--bug", "first-vote-wins"], 2, "drop --bug"),
        (vec!["run", "--system", "echo", "--pinned", "--seed", "1"], 2, "does not read --pinned"),
        // --json works on every command.
        (vec!["shrink", "--input", repro, "--json", "--failures-dir", &dir], 1, "\"verified\":true"),
        (vec!["replay", repro, "--json"], 1, "\"strict\":true"),
        (vec!["determinism", "--system", "two-pc", "--seed", "1", "--processes", "0", "--json"], 0, "\"deterministic\":true"),
        (vec!["render", trace, "--json", "--svg", &out_svg, "--shiviz", &out_log], 0, "\"rows\":"),
        (vec!["corpus", "--system", "two-pc", "--seeds", "0..1", "--out", &corpus2, "--json"], 0, "\"runs\":1"),
        (vec!["merge", &shard_out, "--partial", "--json"], 1, "\"missing\":[\"shard=0/2"),
        (vec!["replay", repro, "--failures-dir", "x"], 2, "unexpected argument"),
        // Files recognised by parsing.
        (vec!["replay", &bom], 1, "strict=true"),
        (vec!["replay", &reordered], 1, "strict=true"),
        (vec!["run", "--system", "two-pc", "--input", &bom, "--failures-dir", &dir], 1, "--faults all --input"),
        (vec!["replay", trace], 2, "is a trace file"),
        (vec!["run", "--system", "two-pc", "--input", trace], 2, "is a trace file"),
        (vec!["replay", &raw], 2, "sim replay --system NAME"),
        (vec!["replay", &empty_object], 2, "is JSON but not a repro file: it has no format, version, system, input_hex field"),
        (vec!["replay", &null], 2, "is JSON but not a repro file: it is JSON null"),
        (vec!["replay", &array], 2, "is JSON but not a repro file: it is a JSON array"),
        (vec!["replay", &no_format], 2, "add \"format\": \"sim-repro\""),
        (vec!["run", "--system", "two-pc", "--input", &empty_object], 2, "is JSON but not a repro file"),
        (vec!["shrink", "--input", &null], 2, "is JSON but not a repro file"),
        (vec!["run", "--system", "two-pc", "--input", &trace_txt], 2, "is a readable trace"),
        (vec!["replay", &trace_txt], 2, ".repro.json"),
        (vec!["render", &trace_txt], 2, ".trace.json"),
        // Traces are checked on read.
        (vec!["render", &v9], 2, "trace version 9"),
        (vec!["render", &index], 2, "has index 99"),
        (vec!["render", &ghost], 2, "\"ghost\", which no earlier start event introduced"),
        (vec!["render", &send_to], 2, "sends to node id 99"),
        (vec!["render", &events_only, "--svg", &out_svg, "--shiviz", &out_log], 0, "rows="),
        // Too few runs to compare; an existing corpus entry.
        (vec!["determinism", "--system", "two-pc", "--seed", "1", "--runs", "1", "--processes", "0"], 2, "nothing to agree with"),
        (vec!["corpus", "--system", "two-pc", "--seeds", "0..2", "--out", &corpus], 2, "add --force"),
        (vec!["corpus", "--system", "two-pc", "--seeds", "0..2", "--out", &corpus, "--force"], 0, "runs=2"),
        // Shard results that are not a whole sweep.
        (vec!["merge", "/dev/null"], 2, "/dev/null holds no shard results"),
        (vec!["merge", &blank], 2, "blank.jsonl holds no shard results"),
        (vec!["merge", &killed], 2, "killed.jsonl (18 failure lines): the shard was killed before it finished"),
        (vec!["merge", &shard_out], 2, "shard 0/2 of --system two-pc --bug first-vote-wins (seeds 0, 2, ... of 0..40) is missing"),
        (vec!["merge", &shard_out, &shard_out], 2, "is given twice"),
        (vec!["replay", &broken], 2, "not a sim-repro file"),
        // What a repro says is checked; flags that contradict it are refused.
        (vec!["replay", repro, "--faults", "off"], 2, "--faults off but the file says all"),
        (vec!["replay", repro, "--system", "echo"], 2, "--system echo but the file says two-pc"),
        (vec!["shrink", "--system", "echo", "--input", repro], 2, "the file says two-pc"),
        (vec!["replay", &upper], 1, "strict=true"),
        (vec!["replay", &not_hash], 2, "not 16 hex digits"),
        (vec!["replay", &version0], 2, "not a version"),
        (vec!["replay", &class], 2, "not an outcome class"),
        (vec!["replay", &input], 1, "the input itself was edited"),
        (vec!["replay", &input_hash], 1, "input_hash was edited or damaged"),
        // Sizes are capped.
        (vec!["run", "--system", "two-pc", "--input", "/dev/zero"], 2, "larger than"),
        (vec!["replay", "--system", "two-pc", "/dev/zero"], 2, "larger than"),
        (vec!["shrink", "--system", "two-pc", "--input", "/dev/zero"], 2, "larger than"),
        (vec!["render", "/dev/zero"], 2, "larger than"),
        (vec!["run", "--system", "two-pc", "--input", "/definitely/not/here"], 2, "check the path"),
        // Output locations are checked before any run.
        (vec!["sweep", "--system", "two-pc", "--bug", "first-vote-wins", "--failures-dir", &under_file], 2, "check the path"),
        (vec!["sweep", "--all", "--failures-dir", &under_file], 2, "check the path"),
        (vec!["run", "--system", "two-pc", "--bug", "first-vote-wins", "--seed", "5", "--failures-dir", &under_file], 2, "check the path"),
        (vec!["run", "--system", "two-pc", "--seed", "5", "--save-input", &out_under_file], 2, "check the path"),
        (vec!["shrink", "--system", "two-pc", "--bug", "first-vote-wins", "--seed", "5", "--out", &out_under_file], 2, "check the path"),
    ];
    let mut wrong = Vec::new();
    for (args, code, fragment) in &cases {
        let out = sim(args);
        let text = format!("{}{}", out.stdout, out.stderr);
        if out.code != *code || !text.contains(fragment) {
            let tail: Vec<&str> = text.lines().rev().take(3).collect();
            wrong.push(format!(
                "{args:?}: exit {} (want {code}), want {fragment:?} in: {tail:?}",
                out.code
            ));
        }
        if *code == 2 {
            assert!(!text.contains("panicked"), "{args:?} panicked: {text}");
        }
    }
    // Work that was refused started nothing: no summary line, no files.
    let refused = sim(&["sweep", "--all", "--failures-dir", &under_file]);
    assert!(!refused.stdout.contains("seeds="), "{}", refused.stdout);
    assert!(
        wrong.is_empty(),
        "{} of {} cases wrong:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
    let _ = std::fs::remove_dir_all(d(&f.dir));
}

/// A crash input of `two-pc --bug first-vote-wins` recorded before the lane encoding (the
/// corpus entry `two_pc/first-vote-wins-afl` as it was then, in the flat encoding): read in
/// the lanes it passes, so a replay that read it so would report a found bug as a pass.
const FLAT_CRASH_HEX: &str =
    "01000000008f2d9a05050301010305000305000001010001020505020001050704040302b1";

#[test]
fn an_input_recorded_before_the_lane_encoding_is_refused_with_the_fix() {
    let dir = common::scratch("bad-input", "stale-encoding");
    let bytes: Vec<u8> = (0..FLAT_CRASH_HEX.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&FLAT_CRASH_HEX[i..i + 2], 16).unwrap())
        .collect();
    let old = dir.join("crash-old");
    std::fs::write(&old, &bytes).unwrap();
    let old = old.display().to_string();
    let variant = ["--system", "two-pc", "--bug", "first-vote-wins"];
    let with = |head: &[&str], tail: &[&str]| -> Vec<String> {
        head.iter()
            .chain(&variant)
            .chain(tail)
            .map(|s| s.to_string())
            .collect()
    };

    // Read as the lanes it is refused, naming both readings and the flag that settles it.
    for head in [&["replay"][..], &["run", "--input", &old][..]] {
        let tail: &[&str] = if head[0] == "replay" { &[&old] } else { &[] };
        let out = sim(&with(head, tail));
        assert_eq!(out.code, 2, "{head:?}: {}{}", out.stdout, out.stderr);
        for fragment in [
            "recorded before the lane encoding",
            "class=correctness invariant=atomicity",
            "--encoding flat",
            "--encoding lanes",
        ] {
            assert!(out.stderr.contains(fragment), "{head:?}: {}", out.stderr);
        }
        assert!(!out.stdout.contains("class=pass"), "{}", out.stdout);
    }

    // The fix it names: replayed as recorded it is the bug it found, and converted it is the
    // corpus entry the same input became when the corpus was converted.
    let flat = sim(&with(&["replay", "--encoding", "flat"], &[&old]));
    assert_eq!(flat.code, 1, "{}{}", flat.stdout, flat.stderr);
    assert_eq!(value(&flat.stdout, "class").as_deref(), Some("correctness"));
    assert_eq!(
        value(&flat.stdout, "history_hash").as_deref(),
        Some("bcf7e3de8b2203b3")
    );
    let new = dir.join("converted.bin").display().to_string();
    let run = sim(&with(
        &[
            "run",
            "--encoding",
            "flat",
            "--input",
            &old,
            "--save-input",
            &new,
        ],
        &["--failures-dir", &dir.display().to_string()],
    ));
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let corpus = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpus/two_pc/first-vote-wins-afl.bin"
    );
    assert_eq!(std::fs::read(&new).unwrap(), std::fs::read(corpus).unwrap());
    assert_eq!(sim(&with(&["replay"], &[&new])).code, 1);

    // Said explicitly, the lanes reading stands; a repro file names its own encoding.
    assert_eq!(
        sim(&with(&["replay", "--encoding", "lanes"], &[&old])).code,
        0
    );
    let repro = dir.join("r.repro.json");
    std::fs::write(
        &repro,
        format!(r#"{{"format":"sim-repro","version":1,"system":"two-pc","bug":"first-vote-wins","input_hex":"{FLAT_CRASH_HEX}"}}"#),
    )
    .unwrap();
    let repro = repro.display().to_string();
    let out = sim(&["replay", &repro]);
    assert_eq!(
        value(&out.stdout, "history_hash").as_deref(),
        Some("bcf7e3de8b2203b3")
    );
    let out = sim(&["replay", "--encoding", "flat", &repro]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("whose version names its encoding"),
        "{}",
        out.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}
