//! The `sim` binary knows what built it, and says so with every failure.

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
