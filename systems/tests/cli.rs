//! The `sim` command line's contracts: key=value lines, exit codes, replay from saved input,
//! and the same history hash in a fresh process.

use std::process::{Command, Output};

fn sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .output()
        .expect("the sim binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The value of `key` on the last line that has it.
fn value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .rev()
        .flat_map(|l| l.split_whitespace())
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")).map(str::to_string))
}

#[test]
fn sweep_finds_the_planted_bug_and_passes_the_correct_system() {
    let buggy = sim(&[
        "sweep",
        "--system",
        "two-pc",
        "--bug",
        "first-vote-wins",
        "--seeds",
        "0..1000",
    ]);
    let out = stdout(&buggy);
    assert_eq!(buggy.status.code(), Some(1), "{out}");
    let failures: u64 = value(&out, "failures").unwrap().parse().unwrap();
    assert!(failures > 0, "{out}");
    assert_eq!(value(&out, "seeds").as_deref(), Some("1000"));
    assert!(
        value(&out, "first_failure_seed")
            .unwrap()
            .parse::<u64>()
            .is_ok(),
        "{out}"
    );
    assert!(value(&out, "runs_per_sec").is_some());

    let correct = sim(&["sweep", "--system", "two-pc", "--seeds", "0..1000"]);
    let out = stdout(&correct);
    assert_eq!(correct.status.code(), Some(0), "{out}");
    assert_eq!(value(&out, "failures").as_deref(), Some("0"), "{out}");
    assert_eq!(value(&out, "first_failure_seed").as_deref(), Some("none"));
}

#[test]
fn sweep_all_prints_one_line_per_system_and_bug() {
    let o = sim(&["sweep", "--all", "--seeds", "0..50"]);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("system=")).collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("system=two-pc bug=none") && l.contains("failures=0")),
        "{out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("system=two-pc bug=first-vote-wins")),
        "{out}"
    );
}

#[test]
fn run_prints_replay_first_and_summary_last() {
    let o = sim(&[
        "run",
        "--system",
        "two-pc",
        "--bug",
        "first-vote-wins",
        "--pinned",
        "--seed",
        "1",
    ]);
    let out = stdout(&o);
    let first = out.lines().next().unwrap();
    let last = out.lines().last().unwrap();
    assert!(
        first.starts_with("replay=") && first.contains("--seed 1") && first.contains("--pinned"),
        "{first}"
    );
    for key in ["class", "invariant", "steps", "sim_time_ms", "history_hash"] {
        assert!(
            last.contains(&format!("{key}=")),
            "summary lacks {key}: {last}"
        );
    }
    let hash = value(last, "history_hash").unwrap();
    assert_eq!(hash.len(), 16, "{hash}");
    assert_eq!(
        o.status.code(),
        Some(1),
        "seed 1 of the pinned bug fails: {out}"
    );
    assert!(
        out.contains("FAILED"),
        "the trace is printed on failure: {out}"
    );
}

#[test]
fn a_saved_input_replays_the_seeds_history_in_a_fresh_process() {
    let dir = std::env::temp_dir().join(format!("sim-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for seed in ["3", "11", "12"] {
        let file = dir.join(format!("seed{seed}.bin"));
        let file = file.to_str().unwrap();
        let by_seed = stdout(&sim(&[
            "run",
            "--system",
            "two-pc",
            "--bug",
            "first-vote-wins",
            "--seed",
            seed,
            "--save-input",
            file,
        ]));
        let by_bytes = stdout(&sim(&[
            "run",
            "--system",
            "two-pc",
            "--bug",
            "first-vote-wins",
            "--input",
            file,
        ]));
        let again = stdout(&sim(&[
            "run",
            "--system",
            "two-pc",
            "--bug",
            "first-vote-wins",
            "--seed",
            seed,
        ]));
        let h = value(&by_seed, "history_hash").unwrap();
        assert_eq!(value(&by_bytes, "history_hash").unwrap(), h, "seed {seed}");
        assert_eq!(
            value(&again, "history_hash").unwrap(),
            h,
            "seed {seed} in another process"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn usage_and_input_errors_exit_2_and_say_what_to_fix() {
    for (args, hint) in [
        (
            vec!["run", "--system", "nope", "--seed", "1"],
            "known systems",
        ),
        (
            vec!["run", "--system", "two-pc", "--bug", "nope", "--seed", "1"],
            "its bugs",
        ),
        (
            vec!["sweep", "--system", "two-pc", "--seeds", "10"],
            "START..END",
        ),
        (
            vec![
                "run",
                "--system",
                "two-pc",
                "--input",
                "/definitely/not/here",
            ],
            "check the path",
        ),
        (vec!["run", "--system", "two-pc"], "--seed"),
        (
            vec![
                "run",
                "--system",
                "two-pc",
                "--seed",
                "1",
                "--strategy",
                "random",
            ],
            "uniform, pct or fifo",
        ),
        (vec!["sweep"], "--system NAME or --all"),
        (
            vec![
                "run", "--system", "two-pc", "--seed", "1", "--faults", "some",
            ],
            "off, swarm or all",
        ),
    ] {
        let o = sim(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(hint),
            "{args:?} should mention {hint:?}: {err}"
        );
    }
}

#[test]
fn list_names_systems_and_bugs() {
    let out = stdout(&sim(&["list"]));
    assert!(out.contains("system=two-pc bug=first-vote-wins"), "{out}");
}

#[test]
fn json_output_is_one_parseable_object() {
    let out = stdout(&sim(&[
        "run", "--system", "two-pc", "--seed", "2", "--json",
    ]));
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("valid JSON");
    assert_eq!(v["class"], "pass");
    assert!(v["history_hash_hex"].as_str().unwrap().len() == 16);
}
