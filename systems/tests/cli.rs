//! The `sim` command line's contracts: key=value lines, exit codes, replay from saved input,
//! the same history hash in a fresh process, repro files that replay strictly, and the run
//! identity printed with every failure.

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

/// `sim run` of the two-pc planted bug with `extra` arguments; its standard output.
fn run_planted_bug(extra: &[&str]) -> String {
    let base = ["run", "--system", "two-pc", "--bug", "first-vote-wins"];
    stdout(&sim(&[&base[..], extra].concat()))
}

/// The value of `key` on the last line that has it.
fn value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .rev()
        .flat_map(|l| l.split_whitespace())
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")).map(str::to_string))
}

/// The first seed whose run of the planted bug fails (found, not pinned).
fn failing_seed() -> String {
    let spec = systems::two_pc::SPEC;
    let opts = spec.options(Some("first-vote-wins")).unwrap();
    let seed = (0..200u64)
        .find(|&seed| {
            spec.run(&opts, &sim_core::choice::Input::Seed(seed))
                .outcome
                .class
                .is_failure()
        })
        .expect("the planted bug fails within 200 seeds");
    seed.to_string()
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
    let o = sim(&["sweep", "--all", "--seeds", "0..120"]);
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
    assert!(
        lines
            .iter()
            .any(|l| l.contains("system=raft-kv bug=none") && l.contains("failures=0")),
        "{out}"
    );
    // An explicit --seeds range is the range of every variant: 50 seeds find the shallow bugs
    // and not the deep ones of raft-kv, so the verdict says so (without --seeds, the campaign
    // sweeps each planted bug until its first failure).
    let verdict = out.lines().last().unwrap_or_default();
    let found = verdict
        .strip_prefix("campaign=UNEXPECTED correct_runs_failed=0 planted_bugs_found=")
        .unwrap_or_else(|| panic!("{out}"));
    let (_, of) = found.split_once('/').unwrap_or_else(|| panic!("{out}"));
    let bugs = systems::all().iter().map(|s| s.bugs.len()).sum::<usize>();
    assert_eq!(
        of,
        bugs.to_string(),
        "every planted bug of every system is swept: {out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("system=two-pc bug=first-vote-wins") && !l.contains("failures=0 ")),
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
        let by_seed = run_planted_bug(&["--seed", seed, "--save-input", file]);
        let by_bytes = run_planted_bug(&["--input", file]);
        let again = run_planted_bug(&["--seed", seed]);
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
            "use off, swarm, all, a list of kinds",
        ),
        (
            vec![
                "run",
                "--system",
                "two-pc",
                "--seed",
                "1",
                "--faults",
                "swarm:partition,flood",
            ],
            "\"flood\"; use off, swarm, all",
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

#[test]
fn a_failure_prints_commit_toolchain_and_target() {
    let seed = failing_seed();
    let dir = std::env::temp_dir().join(format!("sim-identity-test-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args([
            "run",
            "--system",
            "two-pc",
            "--bug",
            "first-vote-wins",
            "--seed",
            seed.as_str(),
            "--failures-dir",
        ])
        .arg(&dir)
        .output()
        .expect("the sim binary runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let identity = text
        .lines()
        .find(|l| l.starts_with("identity "))
        .expect("an identity line");
    let field = |key: &str| {
        identity
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("{identity} lacks {key}"))
            .to_string()
    };
    // A commit hash (maybe marked dirty), or `unknown` where the build had no git.
    let commit = field("commit");
    let hash = commit.trim_end_matches("-dirty");
    assert!(
        commit == "unknown" || (hash.len() == 12 && hash.chars().all(|c| c.is_ascii_hexdigit())),
        "{identity}"
    );
    assert!(identity.contains("toolchain=\"rustc "), "{identity}");
    let target = field("target");
    assert!(
        target.starts_with(std::env::consts::ARCH) && target.contains(std::env::consts::OS),
        "{identity}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_shrunk_repro_replays_strictly_in_a_fresh_process() {
    let seed = failing_seed();
    let dir = std::env::temp_dir().join(format!("sim-repro-cli-test-{}", std::process::id()));
    let dir_arg = dir.to_str().unwrap();
    let out = sim(&[
        "shrink",
        "--system",
        "two-pc",
        "--bug",
        "first-vote-wins",
        "--seed",
        seed.as_str(),
        "--failures-dir",
        dir_arg,
    ]);
    let shrunk = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{shrunk}");
    assert_eq!(
        value(&shrunk, "verified").as_deref(),
        Some("true"),
        "{shrunk}"
    );
    let repro = value(&shrunk, "repro_file").expect("a repro file");
    let out = sim(&["replay", &repro]);
    let replay = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{replay}");
    assert_eq!(
        value(&replay, "strict").as_deref(),
        Some("true"),
        "{replay}"
    );
    assert_eq!(value(&replay, "invariant").as_deref(), Some("atomicity"));
    assert_eq!(value(&replay, "steps"), value(&shrunk, "events_after"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--faults` takes lists of kinds and swarms over a subset, and `sim run --help` says so.
#[test]
fn faults_take_lists_of_kinds_and_the_help_names_them() {
    let help = stdout(&sim(&["run", "--help"]));
    for word in ["swarm:LIST", "late-timer", "lifecycle", "crash", "disk"] {
        assert!(help.contains(word), "--help mentions {word}: {help}");
    }
    for faults in ["crash,pause", "swarm:net,clock,lifecycle"] {
        let out = stdout(&sim(&[
            "run", "--system", "echo", "--seed", "3", "--faults", faults,
        ]));
        assert!(out.contains("class=pass"), "{faults}: {out}");
        assert!(
            out.contains(&format!("--faults {faults}")),
            "the replay line keeps it: {out}"
        );
    }
}

/// `sim determinism` on tokio-echo, whose client reads std's clock: green with the OS hooks
/// (linked into `sim` through this crate), red when `SIM_OS_HOOKS=off` lets the real clock in.
#[test]
fn determinism_command_sees_what_the_os_hooks_hide() {
    let args = [
        "determinism",
        "--system",
        "tokio-echo",
        "--seed",
        "1",
        "--runs",
        "5",
        "--processes",
        "2",
    ];
    let green = sim(&args);
    let out = stdout(&green);
    assert_eq!(green.status.code(), Some(0), "{out}");
    assert_eq!(
        value(&out, "deterministic").as_deref(),
        Some("yes"),
        "{out}"
    );
    assert_eq!(
        value(&out, "distinct_hashes").as_deref(),
        Some("1"),
        "{out}"
    );

    let red = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .env("SIM_OS_HOOKS", "off")
        .output()
        .unwrap();
    let out = stdout(&red);
    assert_eq!(red.status.code(), Some(1), "{out}");
    assert_eq!(value(&out, "deterministic").as_deref(), Some("no"), "{out}");
    assert!(out.contains("hashes="), "{out}");

    let bad = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .env("SIM_OS_HOOKS", "maybe")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("set it to `on`"));
}
