//! What the command-line tests share: the built `sim` run as a subprocess, reading its
//! `key=value` lines, and a scratch directory per test.
// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// An empty directory for test `name` of suite `suite`, this process's own.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-{suite}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A finished `sim` process.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the built `sim` binary with `args`.
pub fn sim<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Out {
    let o = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .output()
        .expect("the sim binary runs");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The value of `key` on the last line that has it.
pub fn value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .rev()
        .flat_map(|l| l.split_whitespace())
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")).map(str::to_string))
}
