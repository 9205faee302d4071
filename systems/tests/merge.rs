//! `sim merge` never drops what a shard found: a shard killed before its summary line, an
//! empty or foreign file, a shard or file given twice and shards of different runs are
//! refused (exit 2, naming the file and what is missing); `--partial` merges what exists,
//! names the missing seeds, and counts every failure line it saw.
// The files are the test's own, outside any simulation.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

mod common;
use common::{sim, value};

fn scratch(name: &str) -> PathBuf {
    common::scratch("merge", name)
}

/// Runs shard `i/n` of a sweep into `dir/name`; the file's path.
fn shard(dir: &Path, name: &str, sweep: &[&str], i: u64, n: u64) -> String {
    let path = dir.join(name).display().to_string();
    let shard = format!("{i}/{n}");
    let d = dir.display().to_string();
    let args = [
        &[
            "sweep",
            "--shard",
            &shard,
            "--out",
            &path,
            "--failures-dir",
            &d,
        ][..],
        sweep,
    ]
    .concat();
    let out = sim(&args);
    assert!(out.code <= 1, "{args:?}: {}{}", out.stdout, out.stderr);
    path
}

/// The file as a shard killed before it finished leaves it: every line but the summaries.
fn killed(from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(from).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| !l.contains("\"kind\":\"summary\""))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(to, kept).unwrap();
    to.to_string()
}

fn failure_lines(path: &str) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| l.contains("\"kind\":\"failure\""))
        .count() as u64
}

const TWO_PC_BUG: [&str; 6] = [
    "--system",
    "two-pc",
    "--bug",
    "first-vote-wins",
    "--seeds",
    "0..60",
];

#[test]
fn a_killed_shard_is_refused_and_partial_counts_its_failures() {
    let dir = scratch("killed");
    let s0 = shard(&dir, "s0.jsonl", &TWO_PC_BUG, 0, 2);
    let s1 = shard(&dir, "s1.jsonl", &TWO_PC_BUG, 1, 2);
    let k1 = killed(&s1, &dir.join("k1.jsonl").display().to_string());
    assert!(failure_lines(&k1) > 0, "the killed shard found failures");
    let refused = sim(&["merge", &s0, &k1]);
    assert_eq!(refused.code, 2, "{}{}", refused.stdout, refused.stderr);
    assert!(
        refused.stderr.contains(&k1) && refused.stderr.contains("no summary line"),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("--partial"), "{}", refused.stderr);
    let partial = sim(&["merge", "--partial", &s0, &k1]);
    assert_eq!(partial.code, 1, "{}{}", partial.stdout, partial.stderr);
    let all_lines = failure_lines(&s0) + failure_lines(&k1);
    assert_eq!(
        value(&partial.stdout, "failures"),
        Some(all_lines.to_string()),
        "{}",
        partial.stdout
    );
    let gap = partial
        .stdout
        .lines()
        .find(|l| l.starts_with("missing "))
        .unwrap_or_else(|| panic!("a missing line: {}", partial.stdout));
    assert!(
        gap.contains("shard=1/2") && gap.contains("range=0..60") && gap.contains("reason=killed"),
        "{gap}"
    );
    // An absent shard: --partial names it too.
    let absent = sim(&["merge", "--partial", &s0]);
    assert!(
        absent
            .stdout
            .contains("missing shard=1/2 range=0..60 seeds=30 reason=absent"),
        "{}",
        absent.stdout
    );
    // A shard stopped early (its summary says so) is refused, and named.
    let stopped = dir.join("stopped.jsonl").display().to_string();
    let text = std::fs::read_to_string(&s1).unwrap();
    std::fs::write(
        &stopped,
        text.replace("\"complete\":true", "\"complete\":false"),
    )
    .unwrap();
    let out = sim(&["merge", &s0, &stopped]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("was stopped after"), "{}", out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The case: a whole sweep of one system and a killed shard of another merged to
/// `failures=0`, exit 0.
#[test]
fn a_killed_shard_of_another_run_is_refused() {
    let dir = scratch("other");
    let correct = shard(
        &dir,
        "c.jsonl",
        &["--system", "two-pc", "--seeds", "0..30"],
        0,
        1,
    );
    let bug = shard(&dir, "b.jsonl", &TWO_PC_BUG, 0, 1);
    let k = killed(&bug, &dir.join("k.jsonl").display().to_string());
    for args in [
        vec!["merge", &correct, &k],
        vec!["merge", "--partial", &correct, &k],
    ] {
        let out = sim(&args);
        assert_eq!(out.code, 2, "{args:?}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("different runs"), "{}", out.stderr);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn empty_foreign_repeated_and_mismatched_files_are_refused() {
    let dir = scratch("refused");
    let s0 = shard(&dir, "s0.jsonl", &TWO_PC_BUG, 0, 2);
    let s1 = shard(&dir, "s1.jsonl", &TWO_PC_BUG, 1, 2);
    let file = |name: &str, text: &str| {
        let path = dir.join(name).display().to_string();
        std::fs::write(&path, text).unwrap();
        path
    };
    let empty = file("empty.jsonl", "");
    let blank = file("blank.jsonl", "\n  \n\n");
    let prose = file("prose.jsonl", "hello\n");
    let object = file("object.jsonl", "{}\n");
    let copy = file("copy.jsonl", &std::fs::read_to_string(&s1).unwrap());
    let wider = [&TWO_PC_BUG[..4], &["--seeds", "0..80"]].concat();
    let w1 = shard(&dir, "w1.jsonl", &wider, 1, 2);
    let moved = [&TWO_PC_BUG[..4], &["--seeds", "30..90"]].concat();
    let m1 = shard(&dir, "m1.jsonl", &moved, 1, 2);
    let faults = [&TWO_PC_BUG[..], &["--faults", "all"]].concat();
    let f1 = shard(&dir, "f1.jsonl", &faults, 1, 2);
    let three = shard(&dir, "t1.jsonl", &TWO_PC_BUG, 1, 3);
    let first = [&TWO_PC_BUG[..], &["--until-first"]].concat();
    let u1 = shard(&dir, "u1.jsonl", &first, 1, 2);
    #[rustfmt::skip]
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![&s0, &s1, &empty], "empty.jsonl holds no shard results"),
        (vec![&s0, &s1, "/dev/null"], "/dev/null holds no shard results"),
        (vec![&blank], "blank.jsonl holds no shard results"),
        (vec![&s0, &s1, &prose], "prose.jsonl:1: not a shard result line"),
        (vec![&s0, &s1, &object], "object.jsonl:1: not a shard result line"),
        (vec![&s0, &s1, &s1], "s1.jsonl is given twice"),
        (vec![&s0, &s1, &copy], "give each shard's file once"),
        (vec![&s0, &w1], "different runs"),
        (vec![&s0, &m1], "different runs"),
        (vec![&s0, &f1], "different runs"),
        (vec![&s0, &three], "different runs"),
        (vec![&u1], "a sweep with --until-first"),
    ];
    let mut wrong = Vec::new();
    for (files, fragment) in &cases {
        let args = [&["merge"][..], files].concat();
        let out = sim(&args);
        if out.code != 2 || !out.stderr.contains(fragment) {
            wrong.push(format!(
                "{files:?}: exit {} want 2, want {fragment:?} in {:?}",
                out.code,
                format!("{}{}", out.stdout, out.stderr)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let whole = sim(&["merge", &s0, &s1]);
    assert_eq!(whole.code, 1, "{}", whole.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `--all` sweep whose shard 1 was killed part-way: refused; `--partial` says
/// `campaign=INCOMPLETE` and counts the failures the killed shard wrote.
#[test]
fn a_whole_campaign_with_a_killed_shard_is_incomplete() {
    let dir = scratch("all");
    let all = ["--all", "--seeds", "0..4"];
    let s0 = shard(&dir, "s0.jsonl", &all, 0, 2);
    let s1 = shard(&dir, "s1.jsonl", &all, 1, 2);
    // Killed after its first few lines: later variants have no line of shard 1.
    let cut = |from: &str, name: &str, n: usize| {
        let text = std::fs::read_to_string(from).unwrap();
        let kept: String = text.lines().take(n).map(|l| format!("{l}\n")).collect();
        let path = dir.join(name).display().to_string();
        std::fs::write(&path, kept).unwrap();
        path
    };
    let k1 = cut(&s1, "k1.jsonl", 6);
    let refused = sim(&["merge", &s0, &k1]);
    assert_eq!(refused.code, 2, "{}", refused.stdout);
    assert!(refused.stderr.contains("k1.jsonl"), "{}", refused.stderr);
    let partial = sim(&["merge", "--partial", &s0, &k1]);
    assert!(
        partial.stdout.contains("campaign=INCOMPLETE"),
        "{}",
        partial.stdout
    );
    let failures: u64 = partial
        .stdout
        .lines()
        .filter_map(|l| value(l, "failures"))
        .map(|n| n.parse::<u64>().unwrap())
        .sum();
    assert_eq!(failures, failure_lines(&s0) + failure_lines(&k1));
    // Both shards killed at the same place: the variants neither reached are missing.
    let k0 = cut(&s0, "k0.jsonl", 6);
    let out = sim(&["merge", &k0, &k1]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("variants"), "{}", out.stderr);
    let out = sim(&["merge", "--partial", &k0, &k1]);
    assert!(out.stdout.contains("missing variants="), "{}", out.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}
