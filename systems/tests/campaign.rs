//! A sweep's result does not depend on how it is run: on one worker, on several, or split
//! into shards and merged, the summary lines are the same but `runs_per_sec` — the same
//! failures and the same first failing seed — on several systems, bugs and fault settings.

use sim_core::cli::Cli;

fn sim(args: &[&str]) -> (i32, String) {
    let mut out = Vec::new();
    let argv = std::iter::once("sim").chain(args.iter().copied());
    let code = Cli::new(systems::all()).execute(argv, &mut out);
    (code, String::from_utf8(out).expect("utf-8 output"))
}

/// The summary and verdict lines, `runs_per_sec` dropped.
fn summaries(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.contains("seeds=") || l.starts_with("campaign="))
        .map(|l| {
            l.split_whitespace()
                .filter(|kv| !kv.starts_with("runs_per_sec="))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn scratch(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("sim-campaign-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

/// Serial, parallel and sharded-then-merged runs of one sweep agree.
fn check(name: &str, variant: &[&str], seeds: &str) {
    let dir = scratch(name);
    let sweep = |extra: &[&str]| {
        let args: Vec<&str> = [
            &["sweep", "--seeds", seeds, "--failures-dir", &dir][..],
            variant,
            extra,
        ]
        .concat();
        sim(&args)
    };
    let (code, serial) = sweep(&["--jobs", "1"]);
    let want = summaries(&serial);
    assert!(!want.is_empty(), "{serial}");
    for jobs in ["2", "3"] {
        let (c, parallel) = sweep(&["--jobs", jobs]);
        assert_eq!(
            (c, summaries(&parallel)),
            (code, want.clone()),
            "--jobs {jobs} of {variant:?}"
        );
    }
    for n in [2u64, 3, 5] {
        let files: Vec<String> = (0..n)
            .map(|i| format!("{dir}/shard-{i}-of-{n}.jsonl"))
            .collect();
        for (i, file) in files.iter().enumerate() {
            let shard = format!("{i}/{n}");
            let (c, _) = sweep(&["--shard", &shard, "--out", file, "--jobs", "2"]);
            assert!(c <= 1, "shard {shard}");
        }
        let args: Vec<&str> = std::iter::once("merge")
            .chain(files.iter().map(String::as_str))
            .collect();
        let (c, merged) = sim(&args);
        assert_eq!(
            (c, summaries(&merged)),
            (code, want.clone()),
            "{n} shards of {variant:?}:\n{merged}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_pc_results_do_not_depend_on_workers_or_shards() {
    check(
        "2pc-bug",
        &["--system", "two-pc", "--bug", "first-vote-wins"],
        "0..300",
    );
    check(
        "2pc-swarm",
        &["--system", "two-pc", "--faults", "swarm"],
        "10..160",
    );
}

#[test]
fn echo_results_do_not_depend_on_workers_or_shards() {
    check(
        "echo-bug",
        &["--system", "echo", "--bug", "half-close-drops-reply"],
        "0..200",
    );
    check("echo", &["--system", "echo"], "0..100");
}

#[test]
fn a_whole_campaign_does_not_depend_on_workers_or_shards() {
    check("all", &["--all"], "0..40");
}

#[test]
fn merge_refuses_a_missing_or_repeated_shard() {
    let dir = scratch("refuse");
    let files: Vec<String> = (0..3).map(|i| format!("{dir}/s{i}.jsonl")).collect();
    for (i, file) in files.iter().enumerate() {
        let shard = format!("{i}/3");
        sim(&[
            "sweep",
            "--system",
            "two-pc",
            "--bug",
            "first-vote-wins",
            "--seeds",
            "0..90",
            "--shard",
            &shard,
            "--out",
            file,
            "--failures-dir",
            &dir,
        ]);
    }
    let (code, _) = sim(&["merge", &files[0], &files[1]]);
    assert_eq!(code, 2, "a missing shard is an error");
    let (code, _) = sim(&["merge", &files[0], &files[1], &files[1], &files[2]]);
    assert_eq!(code, 2, "a repeated shard is an error");
    let (code, _) = sim(&["merge", &files[0], &files[1], &files[2]]);
    assert_eq!(code, 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_hunt_for_the_first_failure_does_not_depend_on_workers() {
    use sim_core::campaign::{Campaign, Shard};
    use sim_core::run_spec::{RunFlags, Variant};
    let stop = std::sync::atomic::AtomicBool::new(false);
    for (system, bug) in [
        ("two-pc", "first-vote-wins"),
        ("echo", "half-close-drops-reply"),
    ] {
        let spec = systems::all()
            .into_iter()
            .find(|s| s.name == system)
            .unwrap();
        let variant = Variant::new(&spec, Some(bug), RunFlags::default()).unwrap();
        // Start at 2, away from seeds that fail at once, so the workers race past the first.
        let tallies: Vec<_> = [1, 2, 3]
            .map(|jobs| {
                Campaign::new(&variant, 2..5000, Shard::WHOLE, jobs)
                    .until_first_failure()
                    .run(&stop, |_| {})
            })
            .into();
        let first = tallies[0].first_failure.as_ref().expect("the bug is found");
        assert_eq!(tallies[0].runs, first.seed - 2 + 1, "{system}");
        assert_eq!(tallies[0].failures, 1);
        assert!(
            tallies.iter().all(|t| *t == tallies[0]),
            "{system}: {tallies:?}"
        );
    }
}
