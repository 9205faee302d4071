//! # sim-build: what built this binary
//!
//! Every failure a sim-core command line reports carries the build that produced it: commit
//! (with `-dirty` when the working tree had changes), toolchain and target. Capturing them
//! takes a build script; this crate is that build script, so a binary of your own needs one
//! line of it and no copy:
//!
//! ```ignore
//! // build.rs (with `sim-build` under [build-dependencies])
//! fn main() {
//!     sim_build::capture();
//! }
//! ```
//!
//! and in the binary, `sim_core::cli::Cli::new(systems).build_info(sim_core::build_info!())`.
//! Without git (a source tarball) the commit is `unknown`; `SIM_BUILD_COMMIT` overrides it
//! (a packaging script). No dependencies: it adds nothing to a build's compile time.
#![deny(missing_docs)]

use std::path::Path;
use std::process::Command;

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The commit: `SIM_BUILD_COMMIT`, else `git rev-parse --short=12 HEAD` (`-dirty` if tracked
/// files changed), else `unknown`.
fn commit() -> String {
    if let Ok(commit) = std::env::var("SIM_BUILD_COMMIT") {
        return commit;
    }
    match run("git", &["rev-parse", "--short=12", "HEAD"]) {
        Some(hash) => {
            let dirty = run("git", &["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{hash}-dirty")
            } else {
                hash
            }
        }
        None => "unknown".to_string(),
    }
}

/// Call from a build script: sets `SIM_BUILD_COMMIT`, `SIM_BUILD_RUSTC` and
/// `SIM_BUILD_TARGET` for the crate being built (read by `sim_core::build_info!`), and asks
/// cargo to run the script again when the commit or the working tree changes.
pub fn capture() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let toolchain = run(&rustc, &["-V"]).unwrap_or_else(|| "unknown".to_string());
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_string());
    println!("cargo:rustc-env=SIM_BUILD_COMMIT={}", commit());
    println!("cargo:rustc-env=SIM_BUILD_RUSTC={toolchain}");
    println!("cargo:rustc-env=SIM_BUILD_TARGET={target}");
    println!("cargo:rerun-if-env-changed=SIM_BUILD_COMMIT");
    // HEAD, the branch it points to (a commit moves that, not HEAD), packed refs and the
    // index; `--git-path` finds them in a linked worktree too.
    let mut watched = vec![
        "HEAD".to_string(),
        "index".to_string(),
        "packed-refs".to_string(),
    ];
    if let Some(branch) = run("git", &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = run("git", &["rev-parse", "--git-path", &name]) {
            if Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
    // A build script that prints `rerun-if-changed` opts out of cargo's default (re-run on
    // any change in the package): keep watching the package's sources.
    println!("cargo:rerun-if-changed=src");
}
