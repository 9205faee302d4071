//! Nothing a sweep finds is lost: not to SIGKILL or SIGTERM (each failing seed is in the
//! failure log the moment it is found), not to a directory or disk that refuses the failure
//! files (the seed and its replay line are printed before the error), not to a closed pipe
//! (no panic, the documented exit status 141, and a sweep with `--out` goes on).
// The files, processes and clocks are the test's own, outside any simulation.
#![allow(clippy::disallowed_methods)]
#![cfg(unix)]

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use sim_core::choice::Input;

mod common;

const SIM: &str = env!("CARGO_BIN_EXE_sim");
/// A planted bug most seeds find: a sweep of it fails many times a second.
const BUGGY: [&str; 4] = ["--system", "two-pc", "--bug", "first-vote-wins"];
/// Far more seeds than the test waits for: the sweep is still running when it is killed.
const ENDLESS: &str = "0..100000000";
/// The failure log of `BUGGY` in its failures directory.
const LOG: &str = "two-pc-first-vote-wins.failures.jsonl";

fn scratch(test: &str) -> PathBuf {
    common::scratch("nothing-lost", test)
}

fn sweep_args<'a>(dir: &'a str, seeds: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["sweep"];
    args.extend(BUGGY);
    args.extend(["--seeds", seeds, "--jobs", "1", "--failures-dir", dir]);
    args.extend(extra);
    args
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The seeds of the failure lines of a log or `--out` file, in file order; every line must
/// be a whole JSON object.
fn logged_seeds(path: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect(line))
        .filter(|v| v["kind"] == "failure")
        .map(|v| v["seed"].as_u64().expect("a seed"))
        .collect()
}

/// The failing seeds of `BUGGY` in `seeds`, by running each here.
fn failing_seeds(seeds: std::ops::Range<u64>) -> Vec<u64> {
    let spec = systems::two_pc::SPEC;
    let opts = spec.options(Some("first-vote-wins")).unwrap();
    seeds
        .filter(|&seed| {
            let outcome = spec.run(&opts, &Input::Seed(seed)).outcome;
            outcome.class.is_failure()
        })
        .collect()
}

/// Waits until the log at `path` holds at least `lines` failures (the sweep has found them),
/// failing the test if `child` ends first or a minute passes.
fn wait_for_failures(child: &mut Child, path: &Path, lines: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while logged_seeds(path).len() < lines {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the sweep ended ({status}) before {path:?} had {lines} failures");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{path:?} did not get {lines} failure lines in a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The log holds exactly the failing seeds below its highest: with one worker seeds run in
/// order, so a seed missing there was found and lost.
fn assert_every_failure_logged(log: &Path, ran_below: Option<u64>) -> Vec<u64> {
    let logged = logged_seeds(log);
    let mut sorted = logged.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted, logged, "each failure once, in seed order");
    let end = ran_below.unwrap_or(logged.last().unwrap() + 1);
    assert_eq!(
        logged,
        failing_seeds(0..end),
        "every failing seed below {end}"
    );
    logged
}

/// A sweep of an endless range of `BUGGY` on one worker, once its failure log holds 20
/// failures; and the log.
fn sweep_with_failures_found(test: &str) -> (Child, PathBuf) {
    let dir = scratch(test);
    let d = dir.display().to_string();
    let mut child = Command::new(SIM)
        .args(sweep_args(&d, ENDLESS, &[]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = dir.join(LOG);
    wait_for_failures(&mut child, &log, 20);
    (child, log)
}

#[test]
fn a_sweep_killed_with_sigkill_has_logged_every_failure_it_found() {
    let (mut child, log) = sweep_with_failures_found("kill");
    child.kill().unwrap();
    child.wait().unwrap();
    let logged = assert_every_failure_logged(&log, None);
    assert!(logged.len() >= 20, "{logged:?}");
}

#[test]
fn sigterm_stops_a_sweep_like_ctrl_c_and_exits_143() {
    let (child, log) = sweep_with_failures_found("term");
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let done = child.wait_with_output().unwrap();
    let (out, err) = (text(&done.stdout), text(&done.stderr));
    assert_eq!(done.status.code(), Some(143), "{out}\n{err}");
    let interrupted = out
        .lines()
        .find(|l| l.starts_with("interrupted=true"))
        .unwrap_or_else(|| panic!("no interrupted=true line: {out}"));
    let value = |key: &str| -> u64 {
        let kv = interrupted
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(key));
        kv.unwrap().parse().unwrap()
    };
    let (runs, failures) = (value("seeds_run="), value("failures="));
    let logged = assert_every_failure_logged(&log, Some(runs));
    assert_eq!(logged.len() as u64, failures, "{out}");
    assert!(
        out.contains(&format!("seeds={runs} failures={failures} ")),
        "{out}"
    );
    let replays = out.lines().filter(|l| l.starts_with("replay=")).count();
    // The first failure's replay line, then one per failure up to a screenful.
    assert_eq!(replays as u64, 1 + failures.min(100), "{out}");
}

#[test]
fn a_sweep_keeps_files_for_the_first_failures_and_every_class() {
    let dir = scratch("keep");
    let repro_seeds = |dir: &Path| -> Vec<u64> {
        let mut seeds: Vec<u64> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                let seed = name.strip_prefix("two-pc-first-vote-wins-seed-")?;
                seed.strip_suffix(".repro.json")?.parse().ok()
            })
            .collect();
        seeds.sort_unstable();
        seeds
    };
    let failing = failing_seeds(0..400);
    for (keep, kept) in [(Some("3"), 3), (None, 10)] {
        let sub = dir.join(format!("keep-{kept}"));
        let d = sub.display().to_string();
        let keep_args = keep.map_or(vec![], |n| vec!["--keep", n]);
        let o = Command::new(SIM)
            .args(sweep_args(&d, "0..400", &keep_args))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
        // One class here: the first `kept` failures found, which on one worker are the lowest.
        assert_eq!(repro_seeds(&sub), failing[..kept], "--keep {keep:?}");
        assert_eq!(logged_seeds(&sub.join(LOG)), failing);
    }
}

#[test]
fn a_failure_that_cannot_be_written_is_printed_before_the_error() {
    let dir = scratch("unwritable");
    let d = dir.display().to_string();
    let first = failing_seeds(0..50)[0];
    // The directory takes the probe and the log, but not the first failure's trace file.
    std::fs::create_dir(dir.join(format!("two-pc-first-vote-wins-seed-{first}.trace.txt")))
        .unwrap();
    // Exit 2 with the error, but the failure's seed and replay line on stdout first.
    let printed_before_error = |extra: &[&str], error: &str| {
        let o = Command::new(SIM)
            .args(sweep_args(&d, "0..50", extra))
            .output()
            .unwrap();
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
        let failure = format!("failure seed={first} class=");
        assert!(out.contains(&failure), "{out}");
        let replay = out.lines().find(|l| l.starts_with("replay=")).unwrap_or("");
        assert!(replay.ends_with(&format!("--seed {first}")), "{out}");
        assert!(err.contains(error), "{err}");
    };
    printed_before_error(&[], "cannot write failure files into");
    assert_eq!(logged_seeds(&dir.join(LOG))[0], first);
    // A full disk under --out.
    if Path::new("/dev/full").exists() {
        printed_before_error(&["--out", "/dev/full"], "cannot write /dev/full");
    }
}

/// The write end of a pipe whose reader has already gone, twice (for stdout and stderr).
fn closed_pipe() -> (Stdio, Stdio) {
    let mut reader = Command::new("true").stdin(Stdio::piped()).spawn().unwrap();
    let write_end: OwnedFd = reader.stdin.take().unwrap().into();
    reader.wait().unwrap();
    let again = write_end.try_clone().unwrap();
    (Stdio::from(write_end), Stdio::from(again))
}

/// Waits for `child`, killing it (and failing) if it runs longer than `limit`.
fn finish_within(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn assert_quiet_141(what: &str, o: &Output) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(141), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
}

#[test]
fn a_closed_pipe_ends_every_command_quietly_with_141() {
    let dir = scratch("pipe");
    let d = dir.display().to_string();
    // Repro and trace files to replay and render.
    let o = Command::new(SIM)
        .args(sweep_args(&d, "0..20", &[]))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let first = failing_seeds(0..20)[0].to_string();
    let repro = dir.join(format!("two-pc-first-vote-wins-seed-{first}.repro.json"));
    let trace = dir.join(format!("two-pc-first-vote-wins-seed-{first}.trace.json"));
    let (repro, trace) = (repro.display().to_string(), trace.display().to_string());
    let run: Vec<&str> = [
        &["run"][..],
        &BUGGY,
        &["--seed", &first, "--failures-dir", &d],
    ]
    .concat();
    let shrink: Vec<&str> = [
        &["shrink"][..],
        &BUGGY,
        &["--seed", &first, "--failures-dir", &d],
    ]
    .concat();
    let commands: Vec<Vec<&str>> = vec![
        vec!["list"],
        run,
        vec!["replay", &repro],
        vec!["render", &trace, "--story"],
        shrink,
        sweep_args(&d, "0..50", &[]),
    ];
    for args in commands {
        // `sim ... 2>&1 | head -0`: both streams into a pipe nobody reads.
        let (stdout, stderr) = closed_pipe();
        let status = Command::new(SIM)
            .args(&args)
            .stdout(stdout)
            .stderr(stderr)
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(141), "sim {}", args.join(" "));
    }
}

#[test]
fn a_sweep_whose_stdout_closes_stops_with_its_summary_on_stderr_unless_it_has_out() {
    let dir = scratch("stdout");
    let d = dir.display().to_string();
    // Without --out: stops (long before the end of an endless range), summary on stderr.
    let (stdout, _) = closed_pipe();
    let child = Command::new(SIM)
        .args(sweep_args(&d, ENDLESS, &[]))
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = finish_within(child, Duration::from_secs(60));
    assert_quiet_141("sweep", &o);
    let err = text(&o.stderr);
    assert!(err.contains("interrupted=true"), "{err}");
    assert!(err.contains(" first_failure_seed="), "{err}");

    // With --out: goes on to the end, the results in the file, and exits as it would have.
    let results = dir.join("results.jsonl");
    let r = results.display().to_string();
    let (stdout, _) = closed_pipe();
    let o = Command::new(SIM)
        .args(sweep_args(&d, "0..300", &["--out", &r]))
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let file = std::fs::read_to_string(&results).unwrap();
    let last: serde_json::Value = serde_json::from_str(file.lines().last().unwrap()).unwrap();
    assert_eq!(last["kind"], "summary", "{file}");
    assert_eq!(last["complete"], true, "{file}");
    assert_eq!(last["runs"], 300, "{file}");
    assert_eq!(logged_seeds(&results), failing_seeds(0..300));
}
