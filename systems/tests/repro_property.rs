//! Every repro file the command line writes replays strictly in a fresh process: for every
//! command that writes one (`run`, `sweep`, `sweep --all`, `shrink`) and every combination of
//! system, bug and run flag the command line accepts (the flags and their values come from
//! `RunFlags::EXAMPLES`, so a new flag is covered as soon as it is declared).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sim_core::run_spec::RunFlags;

mod common;
use common::{sim, value};

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

/// Every combination of run flags: each flag unset or set to each of its example values.
fn flag_combinations() -> Vec<Vec<(String, String)>> {
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (id, values) in RunFlags::EXAMPLES {
        let mut next = Vec::new();
        for combo in &combos {
            next.push(combo.clone());
            for v in *values {
                let mut c = combo.clone();
                c.push((id.to_string(), v.to_string()));
                next.push(c);
            }
        }
        combos = next;
    }
    combos
}

fn flag_words(combo: &[(String, String)]) -> Vec<String> {
    let mut w = Vec::new();
    for (id, v) in combo {
        w.push(format!("--{id}"));
        if v != "true" {
            w.push(v.clone());
        }
    }
    w
}

/// Replays `repro` in a fresh process; panics unless it reproduces the pinned history.
fn assert_replays_strictly(repro: &str, context: &str) {
    let out = sim(&["replay".to_string(), repro.to_string()]);
    assert_eq!(
        value(&out.stdout, "strict").as_deref(),
        Some("true"),
        "{context}: {repro} did not replay strictly (exit {}):\n{}{}",
        out.code,
        out.stdout
            .lines()
            .rev()
            .take(4)
            .collect::<Vec<_>>()
            .join("\n"),
        out.stderr
    );
    assert_eq!(
        out.code, 1,
        "{context}: a repro of a failure replays as a failure"
    );
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-repro-prop-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One variant (system, bug, flags): sweep it, run and (for `shrink_too`) shrink its first
/// failing seed, and replay every repro written. Returns whether a repro was replayed.
fn check_variant(
    system: &str,
    bug: Option<&str>,
    combo: &[(String, String)],
    dir: &Path,
    shrink_too: bool,
) -> bool {
    let mut variant = vec!["--system".to_string(), system.to_string()];
    if let Some(bug) = bug {
        variant.extend(["--bug".to_string(), bug.to_string()]);
    }
    variant.extend(flag_words(combo));
    let context = variant.join(" ");
    let dir_words = vec!["--failures-dir".to_string(), dir.display().to_string()];
    let sweep = sim(&[
        words("sweep --seeds 0..40"),
        variant.clone(),
        dir_words.clone(),
    ]
    .concat());
    let supported = !combo.iter().any(|(id, _)| {
        RunFlags::SYSTEM_SPECIFIC.contains(&id.as_str())
            && !systems::all()
                .iter()
                .any(|s| s.name == system && s.flags.contains(&id.as_str()))
    });
    if !supported {
        assert_eq!(
            sweep.code, 2,
            "{context}: a flag the system does not read is refused"
        );
        assert!(
            sweep.stderr.contains("does not read"),
            "{context}: {}",
            sweep.stderr
        );
        return false;
    }
    assert!(sweep.code <= 1, "{context}: {}", sweep.stderr);
    let Some(seed) = value(&sweep.stdout, "first_failure_seed").filter(|s| s != "none") else {
        return false;
    };
    assert_replays_strictly(
        &value(&sweep.stdout, "repro_file").expect("sweep repro"),
        &format!("sweep {context}"),
    );
    let run = sim(&[
        words("run --seed"),
        vec![seed.clone()],
        variant.clone(),
        dir_words.clone(),
    ]
    .concat());
    assert_eq!(run.code, 1, "{context} seed {seed}: {}", run.stderr);
    let run_repro = value(&run.stdout, "repro_file").expect("run repro");
    assert_replays_strictly(&run_repro, &format!("run {context} --seed {seed}"));
    if shrink_too {
        for input in [
            vec!["--seed".to_string(), seed.clone()],
            vec!["--input".to_string(), run_repro.clone()],
        ] {
            let shrink = sim(&[
                words("shrink --max-runs 300"),
                input,
                variant.clone(),
                dir_words.clone(),
            ]
            .concat());
            assert_eq!(
                shrink.code, 1,
                "shrink {context}: {}{}",
                shrink.stdout, shrink.stderr
            );
            let repro = value(&shrink.stdout, "repro_file").expect("shrink repro");
            assert_replays_strictly(&repro, &format!("shrink {context}"));
        }
    }
    true
}

fn check_system(system: &str) {
    let spec = systems::all()
        .into_iter()
        .find(|s| s.name == system)
        .unwrap();
    let dir = scratch(system);
    let bugs = std::iter::once(None).chain(spec.bugs.iter().map(|b| Some(b.name)));
    let mut replayed: BTreeSet<(String, String)> = BTreeSet::new();
    let mut shrunk: BTreeSet<(String, String)> = BTreeSet::new();
    for bug in bugs {
        for combo in flag_combinations() {
            // Shrink is the costly command: once per flag value not yet shrunk.
            let shrink_too = bug.is_some() && combo.iter().any(|f| !shrunk.contains(f));
            if check_variant(system, bug, &combo, &dir, shrink_too) {
                replayed.extend(combo.iter().cloned());
                if shrink_too {
                    shrunk.extend(combo.iter().cloned());
                }
            }
        }
    }
    // The property is not vacuous: every value of every flag this system reads was in a run
    // that failed, wrote a repro and replayed it.
    for (id, values) in RunFlags::EXAMPLES {
        if RunFlags::SYSTEM_SPECIFIC.contains(id) && !spec.flags.contains(id) {
            continue;
        }
        for v in *values {
            let key = (id.to_string(), v.to_string());
            assert!(
                replayed.contains(&key),
                "{system}: no failing run with --{id} {v}"
            );
            assert!(shrunk.contains(&key), "{system}: no shrink with --{id} {v}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_two_pc_repro_replays_strictly_in_a_fresh_process() {
    check_system("two-pc");
}

#[test]
fn every_echo_repro_replays_strictly_in_a_fresh_process() {
    check_system("echo");
}

#[test]
fn every_sweep_all_repro_replays_strictly_in_a_fresh_process() {
    let dir = scratch("all");
    for combo in flag_combinations() {
        let sweep = sim(&[
            words("sweep --all --seeds 0..20 --failures-dir"),
            vec![dir.display().to_string()],
            flag_words(&combo),
        ]
        .concat());
        if combo
            .iter()
            .any(|(id, _)| RunFlags::SYSTEM_SPECIFIC.contains(&id.as_str()))
        {
            // Some system does not read it: the campaign is refused rather than run without it.
            assert_eq!(sweep.code, 2, "{combo:?}: {}", sweep.stderr);
            continue;
        }
        assert_eq!(sweep.code, 1, "{combo:?}: {}{}", sweep.stdout, sweep.stderr);
        let repros: Vec<&str> = sweep
            .stdout
            .lines()
            .filter_map(|l| l.strip_prefix("repro_file="))
            .collect();
        assert!(!repros.is_empty(), "{combo:?}: {}", sweep.stdout);
        for repro in repros {
            assert_replays_strictly(repro, &format!("sweep --all {combo:?}"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
