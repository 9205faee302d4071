//! A sweep gives the same result on one worker, on several, and split into shards merged
//! back: the same seeds run, the same failures counted, the same first failing seed, the same
//! failures per class and the same list of failing seeds.

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

/// The `classes=` line and the `failure seed=N class=C` lines of `--list`, in order.
fn classes_and_list(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with("classes=") || l.starts_with("failure seed="))
        .map(str::to_string)
        .collect()
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
        let (serial_code, serial) = sweep(system, bug, seeds, &["--jobs", "1", "--list"], fd);
        let expected = summary(&serial);
        assert!(expected.contains("seeds="), "{serial}");
        assert_eq!(
            serial_code,
            i32::from(bug.is_some()),
            "{system} {bug:?}: {serial}"
        );
        let listed = classes_and_list(&serial);
        check_list(&listed, &expected, &serial);
        let (code, parallel) = sweep(system, bug, seeds, &["--jobs", "3", "--list"], fd);
        assert_eq!((code, summary(&parallel)), (serial_code, expected.clone()));
        assert_eq!(classes_and_list(&parallel), listed, "--jobs 3: {parallel}");

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
        let mut listing = args.clone();
        listing.push("--list");
        let (_, merged_list) = sim(&listing);
        assert_eq!(
            classes_and_list(&merged_list),
            listed,
            "{system} {bug:?}: merged {merged_list}"
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

/// The list has one line per failure, in seed order, and the class counts add up to them.
fn check_list(listed: &[String], summary: &str, out: &str) {
    let value = |key: &str| -> u64 {
        let kv = summary.split_whitespace().find(|kv| kv.starts_with(key));
        let kv = kv.unwrap_or_else(|| panic!("{key} in {summary}"));
        kv[key.len()..].parse().unwrap_or(u64::MAX)
    };
    let failures = value("failures=");
    let seeds: Vec<u64> = listed
        .iter()
        .filter_map(|l| l.strip_prefix("failure seed="))
        .map(|rest| rest.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(seeds.len() as u64, failures, "{out}");
    assert!(seeds.windows(2).all(|w| w[0] < w[1]), "seed order: {out}");
    if failures > 0 {
        assert_eq!(seeds[0], value("first_failure_seed="), "{out}");
        let classes = listed.iter().find_map(|l| l.strip_prefix("classes="));
        let counted: u64 = classes
            .unwrap_or_else(|| panic!("a classes= line: {out}"))
            .split(',')
            .map(|pair| pair.rsplit_once(':').unwrap().1.parse::<u64>().unwrap())
            .sum();
        assert_eq!(counted, failures, "{out}");
    } else {
        assert!(
            listed.is_empty(),
            "no classes= line without failures: {out}"
        );
    }
}
