//! A sweep gives the same result on one worker, on several, and split into shards merged
//! back: the same seeds run, the same failures counted, the same first failing seed.

use acceptance::{scratch_dir as scratch, sim_cli as sim};

/// `seeds=`, `failures=` and `first_failure_seed=` of the summary (the last line).
fn summary(out: &str) -> String {
    let last = out.lines().last().unwrap_or_default();
    last.split_whitespace()
        .filter(|kv| {
            ["seeds=", "failures=", "first_failure_seed="]
                .iter()
                .any(|k| kv.starts_with(k))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The variants and ranges compared: planted bugs of four systems (failures on some seeds
/// and not others) and a correct system.
const CASES: &[(&str, Option<&str>, &str)] = &[
    ("two-pc", Some("first-vote-wins"), "0..300"),
    ("echo", Some("half-close-drops-reply"), "5..305"),
    ("registry", Some("partial-batch"), "0..400"),
    ("wal", Some("no-checksum"), "0..300"),
    ("raft-kv", None, "0..40"),
];

fn sweep(system: &str, bug: Option<&str>, seeds: &str, extra: &[&str], dir: &str) -> (i32, String) {
    let mut args = vec![
        "sweep",
        "--system",
        system,
        "--seeds",
        seeds,
        "--failures-dir",
        dir,
    ];
    if let Some(bug) = bug {
        args.extend(["--bug", bug]);
    }
    args.extend_from_slice(extra);
    sim(&args)
}

#[test]
fn parallel_and_sharded_sweeps_equal_the_serial_one() {
    let dir = scratch("equal");
    let failures_dir = dir.join("failures");
    let fd = failures_dir.to_str().unwrap();
    for &(system, bug, seeds) in CASES {
        let (serial_code, serial) = sweep(system, bug, seeds, &["--jobs", "1"], fd);
        let expected = summary(&serial);
        assert!(expected.contains("seeds="), "{serial}");
        assert_eq!(
            serial_code,
            i32::from(bug.is_some()),
            "{system} {bug:?}: {serial}"
        );
        let (code, parallel) = sweep(system, bug, seeds, &["--jobs", "3"], fd);
        assert_eq!((code, summary(&parallel)), (serial_code, expected.clone()));

        let mut outs = Vec::new();
        for i in 0..4 {
            let out = dir.join(format!("{system}-{i}.jsonl"));
            let shard = format!("{i}/4");
            let (code, text) = sweep(
                system,
                bug,
                seeds,
                &["--shard", &shard, "--out", out.to_str().unwrap()],
                fd,
            );
            assert!(code == 0 || code == 1, "{text}");
            outs.push(out.to_str().unwrap().to_string());
        }
        let mut args = vec!["merge"];
        args.extend(outs.iter().map(String::as_str));
        let (code, merged) = sim(&args);
        assert_eq!(
            (code, summary(&merged)),
            (serial_code, expected.clone()),
            "{system} {bug:?}: merged {merged}"
        );

        // A shard missing, or one given twice, is refused rather than summed.
        let (code, text) = sim(&args[..4]);
        assert_eq!(code, 2, "a missing shard must be an error: {text}");
        let mut twice = args.clone();
        twice[4] = args[3];
        let (code, text) = sim(&twice);
        assert_eq!(code, 2, "a repeated shard must be an error: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
