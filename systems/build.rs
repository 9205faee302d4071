//! Captures what built the `sim` binary — commit (with a dirty flag), toolchain, target — so
//! every failure it reports says exactly what produced it. Without git (a source tarball) the
//! commit is `unknown`; `SIM_BUILD_COMMIT` overrides it (e.g. in a packaging script).

use std::path::Path;
use std::process::Command;

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = std::env::var("SIM_BUILD_COMMIT").ok().unwrap_or_else(|| {
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
    });
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let toolchain = run(&rustc, &["-V"]).unwrap_or_else(|| "unknown".to_string());
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_string());
    println!("cargo:rustc-env=SIM_BUILD_COMMIT={commit}");
    println!("cargo:rustc-env=SIM_BUILD_RUSTC={toolchain}");
    println!("cargo:rustc-env=SIM_BUILD_TARGET={target}");
    // Re-run when the commit or the working tree changes.
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
    for dir in ["src", "../sim-core/src"] {
        println!("cargo:rerun-if-changed={dir}");
    }
}
