//! Bad input, case by case: each command line with its expected exit code and a fragment of
//! the message that must name the problem (stderr for errors, stdout for results). A repro
//! file written by `sweep --faults all` is the raw material; the cases edit it.
// The files are the test's own, outside any simulation.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn sim(args: &[&str]) -> Out {
    let o = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .output()
        .expect("the sim binary runs");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .rev()
        .flat_map(|l| l.split_whitespace())
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")).map(str::to_string))
}

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
    #[rustfmt::skip]
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        // Names and values.
        (vec!["run", "--system", "nope", "--seed", "1"], 2, "known systems"),
        (vec!["run", "--system", "two-pc", "--bug", "nope", "--seed", "1"], 2, "its bugs"),
        (vec!["sweep", "--system", "two-pc", "--seeds", "10"], 2, "START..END"),
        (vec!["sweep", "--system", "two-pc", "--seeds", "5..5"], 2, "START..END"),
        (vec!["run", "--system", "two-pc", "--seed", "1", "--strategy", "random"], 2, "uniform, pct or fifo"),
        (vec!["run", "--system", "two-pc", "--seed", "1", "--faults", "some"], 2, "use off, swarm, all"),
        (vec!["sweep"], 2, "--system NAME or --all"),
        // Flags accepted and ignored are refused.
        (vec!["sweep", "--all", "--bug", "first-vote-wins"], 2, "drop --bug"),
        (vec!["run", "--system", "echo", "--pinned", "--seed", "1"], 2, "does not read --pinned"),
        (vec!["shrink", "--system", "two-pc", "--seed", "1", "--json"], 2, "not supported"),
        (vec!["replay", repro, "--failures-dir", "x"], 2, "unexpected argument"),
        // Files recognised by parsing.
        (vec!["replay", &bom], 1, "strict=true"),
        (vec!["replay", &reordered], 1, "strict=true"),
        (vec!["run", "--system", "two-pc", "--input", &bom, "--failures-dir", &dir], 1, "--faults all --input"),
        (vec!["replay", trace], 2, "is a trace file"),
        (vec!["run", "--system", "two-pc", "--input", trace], 2, "is a trace file"),
        (vec!["replay", &raw], 2, "sim replay --system NAME"),
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
