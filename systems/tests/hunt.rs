//! `sim hunt`'s contracts, apart from libFuzzer's search itself (the fuzz scripts and the
//! quickstart's CI measure that): seed runs that fail end the hunt in process; the first
//! crash of any job stops the others and every job's executions count; errors say what to do.
// A stand-in fuzz target is a real file: these tests are outside every simulation.
#![allow(clippy::disallowed_methods)]

mod common;

use common::{scratch, sim, value};

#[test]
fn a_failing_seed_run_ends_the_hunt_before_libfuzzer_starts() {
    let dir = scratch("hunt", "seeds");
    // Any existing file will do as the target: the seed runs find the shallow bug first.
    let bin = env!("CARGO_BIN_EXE_sim");
    let o = sim(&[
        "hunt",
        "--system",
        "two-pc",
        "--bug",
        "first-vote-wins",
        "--bin",
        bin,
        "--fuzz-dir",
    ]
    .iter()
    .copied()
    .chain([dir.to_str().unwrap()])
    .collect::<Vec<_>>());
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    assert_eq!(value(&o.stdout, "found").as_deref(), Some("1"));
    let execs: u64 = value(&o.stdout, "execs").unwrap().parse().unwrap();
    assert!((1..=32).contains(&execs), "{}", o.stdout);
    assert!(
        o.stdout.contains("replay=") && o.stdout.contains("--seed 1000"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("class=correctness"), "{}", o.stdout);
}

/// A stand-in for a fuzz target: job 0 (`-seed=1`) writes a crash after a moment; any other
/// job runs until stopped and then prints its final stats, as libFuzzer does on SIGTERM.
#[cfg(unix)]
fn fake_target(dir: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("fake-target");
    std::fs::write(
        &script,
        r#"#!/bin/sh
prefix=$(printf '%s\n' "$@" | sed -n 's/^-artifact_prefix=//p')
case " $* " in
*" -seed=1 "*)
    sleep 0.3
    echo "class=correctness invariant=fake steps=1"
    printf 'x' >"${prefix}crash-fake"
    echo "artifact_prefix='$prefix'; Test unit written to ${prefix}crash-fake"
    echo "stat::number_of_executed_units: 7"
    exit 1 ;;
*)
    trap 'echo "stat::number_of_executed_units: 5"; exit 0' TERM
    while :; do sleep 0.05; done ;;
esac
"#,
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[cfg(unix)]
#[test]
fn the_first_crash_stops_every_job_and_all_executions_count() {
    let dir = scratch("hunt", "jobs");
    let target = fake_target(&dir);
    let fuzz_dir = dir.join("fuzz");
    let o = sim(&[
        "hunt",
        "--system",
        "two-pc",
        "--seeds",
        "0",
        "--jobs",
        "2",
        "--budget",
        "60",
        "--bin",
        target.to_str().unwrap(),
        "--fuzz-dir",
        fuzz_dir.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    assert_eq!(value(&o.stdout, "found").as_deref(), Some("1"));
    // 7 from the job that crashed, 5 from the one stopped: no seed runs.
    assert_eq!(
        value(&o.stdout, "execs").as_deref(),
        Some("12"),
        "{}",
        o.stdout
    );
    let crash = fuzz_dir.join("artifacts/two_pc/crash-fake");
    assert!(crash.is_file(), "the crash is kept beside the crate");
    assert_eq!(
        value(&o.stdout, "failing_input").as_deref(),
        Some(crash.to_str().unwrap())
    );
    let wall: f64 = value(&o.stdout, "wall_s").unwrap().parse().unwrap();
    assert!(
        wall < 30.0,
        "the waiting job was stopped, not left to its budget: {wall}"
    );
}

#[test]
fn a_hunt_that_cannot_start_says_what_to_do() {
    let dir = scratch("hunt", "errors");
    let missing = dir.join("no-fuzz-here");
    let o = sim(&[
        "hunt",
        "--system",
        "two-pc",
        "--fuzz-dir",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("cargo fuzz init"), "{}", o.stderr);
    let o = sim(&["hunt", "--system", "two-pc", "--jobs", "0"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("--jobs 0"), "{}", o.stderr);
    let o = sim(&["hunt", "--system", "no-such-system"]);
    assert_eq!(o.code, 2);
}
