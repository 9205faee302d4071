//! A shrunk failure's repro file replays strictly in a fresh process of the `sim` binary.

use std::process::Command;

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

fn sim(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .output()
        .expect("the sim binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .rev()
        .flat_map(|l| l.split_whitespace())
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")).map(str::to_string))
}

#[test]
fn a_shrunk_repro_replays_strictly_in_a_fresh_process() {
    let seed = failing_seed();
    let dir = std::env::temp_dir().join(format!("sim-repro-cli-test-{}", std::process::id()));
    let dir_arg = dir.to_str().unwrap();
    let (code, shrunk) = sim(&[
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
    assert_eq!(code, Some(1), "{shrunk}");
    assert_eq!(
        value(&shrunk, "verified").as_deref(),
        Some("true"),
        "{shrunk}"
    );
    let repro = value(&shrunk, "repro_file").expect("a repro file");
    let (code, replay) = sim(&["replay", &repro]);
    assert_eq!(code, Some(1), "{replay}");
    assert_eq!(
        value(&replay, "strict").as_deref(),
        Some("true"),
        "{replay}"
    );
    assert_eq!(value(&replay, "invariant").as_deref(), Some("atomicity"));
    assert_eq!(value(&replay, "steps"), value(&shrunk, "events_after"));
    let _ = std::fs::remove_dir_all(&dir);
}
