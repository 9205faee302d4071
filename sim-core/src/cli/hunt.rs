//! `sim hunt`: search for a failure with libFuzzer, the way that finds bugs soonest, from the
//! crate the command is run in.
//!
//! The recipe (measured in `fuzz/README.md`; a user's crate gets the same one):
//!
//! 1. **Build** the crate's own fuzz target (`fuzz/`, the target named after the system with
//!    `-` written `_`) with `cargo fuzz build -s none` on stable, without comparison tracing
//!    (it cost a third of the run time and found nothing the lane mutator does not), without
//!    indirect-call traces and without the PC table (read only by libFuzzer options a hunt
//!    does not use). It builds into `fuzz/target/hunt/`, apart from `cargo fuzz run`'s own.
//! 2. **Seed runs, in this process**: `--seeds` seeded runs (default 32) recorded and
//!    re-encoded as byte inputs, so the fuzzer starts with the sweep's variety. They are real
//!    executions and count; one that fails ends the hunt there.
//! 3. **libFuzzer** from those inputs with the lane-aware mutator (the target's), inputs up
//!    to 4x the longest seed input, no length ramp, the vanilla corpus schedule
//!    (`-entropic=0`), no mutations from comparison tables (`-use_cmp=0`: keyed by code
//!    address, so any rebuild would run another search), the corpus in memory. `--jobs N`
//!    runs N independent processes; the first crash stops them all.
//!
//! A crash is kept in `fuzz/artifacts/TARGET/` beside the crate, where `cargo fuzz run`
//! keeps its own, and the target's report there names it in its replay line. The last line
//! is `found=0|1 execs=N wall_s=S`: every execution counts (seed runs, and libFuzzer's
//! initial pass over them), and wall time excludes the build. Exit status 1 when a failure
//! was found, 0 when the budget ran out without one, 2 on a usage or build error.
//!
//! The wall clock is read here to bound and report the hunt; it never reaches a run.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;

use super::{Cli, CliError, VariantArgs};
use crate::choice::Input;
use crate::fuzz::{hunt_max_len_bytes, HUNT_FLAGS, HUNT_SEED_RUNS};
use crate::run_spec::{RunFlags, RunSpec};

/// Seeds of hunt run R start here times R, so runs of a benchmark never share a seed.
const SEEDS_PER_RUN: u64 = 1_000_000;
/// How often the hunt looks for a finished libFuzzer process.
const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// RUSTFLAGS added to `cargo fuzz build`'s: no indirect-call traces
/// (`-sanitizer-coverage-level=3`, read only with `-use_value_profile`) and no PC table
/// (read to print coverage, and walked against every counter for each new corpus entry).
const HUNT_RUSTFLAGS: &str =
    "-Cllvm-args=-sanitizer-coverage-level=3 -Cllvm-args=-sanitizer-coverage-pc-table=0";

#[derive(Args, Debug)]
pub(super) struct HuntArgs {
    /// The system to hunt in (see `sim list`).
    #[arg(long)]
    system: String,
    /// The planted bug to enable; unset = the system as it is (a hunt for a real bug).
    #[arg(long)]
    bug: Option<String>,
    /// Stop after this many seconds without a failure.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    budget: u64,
    /// Which independent hunt this is: its seed runs start at RUN x 1,000,000 and libFuzzer
    /// gets -seed=RUN (a benchmark's runs differ only here).
    #[arg(long, default_value_t = 1)]
    run: u64,
    /// libFuzzer processes to run side by side; the first crash stops every one.
    #[arg(long, default_value_t = 1)]
    jobs: u32,
    /// Seeded runs to start from (0: libFuzzer starts from an empty corpus).
    #[arg(long, default_value_t = HUNT_SEED_RUNS)]
    seeds: u64,
    /// The fuzz crate (made by `cargo fuzz init`); crashes are kept in DIR/artifacts/TARGET.
    #[arg(long, value_name = "DIR", default_value = "fuzz")]
    fuzz_dir: PathBuf,
    /// The fuzz target's name [default: the system's, with `-` written `_`].
    #[arg(long)]
    target: Option<String>,
    /// Run this fuzz target binary instead of building one (a build of your own).
    #[arg(long, value_name = "PATH")]
    bin: Option<PathBuf>,
    /// An extra libFuzzer flag, e.g. -entropic=1 (repeatable; they come last and win).
    #[arg(long = "fuzz-arg", value_name = "FLAG", allow_hyphen_values = true)]
    fuzz_args: Vec<String>,
    /// Copy the first libFuzzer process's log to FILE.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
}

/// Why a hunt could not start.
#[derive(Debug, thiserror::Error)]
pub enum HuntError {
    /// No fuzz crate where the hunt looked.
    #[error("no fuzz crate at {0}: run sim hunt from your crate's root (where `cargo fuzz init` made fuzz/), or give --fuzz-dir DIR, or --bin PATH for a target you built")]
    NoFuzzCrate(String),
    /// `cargo fuzz` is not installed.
    #[error("`cargo fuzz` is not installed: cargo install cargo-fuzz (or build the target yourself and give --bin PATH)")]
    NoCargoFuzz,
    /// The build failed.
    #[error("cargo fuzz build of target {0} failed (its errors are above); check that fuzz/Cargo.toml has a [[bin]] named {0}, or give --target NAME")]
    Build(String),
    /// The target binary is missing or would not start.
    #[error("cannot run the fuzz target {path}: {reason}")]
    Target {
        /// The binary.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// `--jobs 0` or `--budget 0`.
    #[error("--{0} 0 runs nothing; give at least 1")]
    Zero(&'static str),
}

/// Removes the hunt's scratch directory however the hunt ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(super) fn execute(cli: &Cli, args: &HuntArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    if args.jobs == 0 {
        return Err(HuntError::Zero("jobs").into());
    }
    if args.budget == 0 {
        return Err(HuntError::Zero("budget").into());
    }
    let variant_args = VariantArgs {
        bug: args.bug.clone(),
        flags: RunFlags::default(),
    };
    // The fuzz target runs the variant SIM_BUG names with default flags: so do the seed runs.
    let variant = cli.variant(&args.system, &variant_args)?;
    let target = args
        .target
        .clone()
        .unwrap_or_else(|| args.system.replace('-', "_"));
    let bin = match &args.bin {
        Some(bin) => bin.clone(),
        None => build(&args.fuzz_dir, &target)?,
    };
    if !bin.is_file() {
        return Err(HuntError::Target {
            path: bin.display().to_string(),
            reason: "no such file".to_string(),
        }
        .into());
    }

    let scratch = Scratch(scratch_dir(args.run)?);
    let start = Instant::now();

    // 2. Seed runs, recorded and re-encoded as byte inputs.
    let mut seed_files = Vec::new();
    let mut longest_bytes = 0usize;
    let first_seed = args.run.saturating_mul(SEEDS_PER_RUN);
    for seed in first_seed..first_seed.saturating_add(args.seeds) {
        let run = RunSpec::new(variant.clone(), Input::Seed(seed));
        let (report, bytes) = run.run_encoded();
        if report.outcome.class.is_failure() {
            writeln!(out, "replay={}", run.run_command(&cli.replay_prefix, None))?;
            writeln!(out, "{}", report.outcome.summary_line())?;
            let execs = seed - first_seed + 1;
            finish(out, true, execs, start.elapsed())?;
            return Ok(1);
        }
        let path = scratch.0.join(format!("seed-{seed}.bin"));
        super::files::write_text_bytes(&path, &bytes)?;
        longest_bytes = longest_bytes.max(bytes.len());
        seed_files.push(path);
    }
    let seed_execs = args.seeds;

    // 3. libFuzzer, one process per job.
    let artifacts = args.fuzz_dir.join("artifacts").join(&target);
    std::fs::create_dir_all(&artifacts).map_err(|source| CliError::File {
        action: "create",
        path: artifacts.clone(),
        source,
    })?;
    let flags = libfuzzer_flags(args, &artifacts, &scratch, &seed_files, longest_bytes)?;
    let mut jobs = Vec::new();
    for job in 0..args.jobs {
        // Job 0 takes -seed=RUN, so one job is the same search as scripts/hunt.sh's.
        let libfuzzer_seed = if job == 0 {
            args.run
        } else {
            args.run.saturating_mul(1000).saturating_add(u64::from(job))
        };
        let log = scratch.0.join(format!("job-{job}.log"));
        let child = spawn(
            &bin,
            &flags,
            &args.fuzz_args,
            libfuzzer_seed,
            args.bug.as_deref(),
            &log,
        )?;
        jobs.push((child, log));
    }
    let found_job = wait_for_first_crash(&mut jobs)?;
    let wall = start.elapsed();

    let mut execs = seed_execs;
    for (_, log) in &jobs {
        execs += executed_units(log);
    }
    if let Some(log_copy) = &args.log {
        let _ = std::fs::copy(&jobs[0].1, log_copy);
    }
    report_jobs(out, &jobs, found_job)?;
    finish(out, found_job.is_some(), execs, wall)?;
    Ok(i32::from(found_job.is_some()))
}

/// libFuzzer's flags for a hunt of `args.budget` seconds started from `seed_files` (the
/// longest `longest_bytes` long), its artifacts in `artifacts`.
fn libfuzzer_flags(
    args: &HuntArgs,
    artifacts: &Path,
    scratch: &Scratch,
    seed_files: &[PathBuf],
    longest_bytes: usize,
) -> Result<Vec<String>, CliError> {
    let mut flags: Vec<String> = HUNT_FLAGS.iter().map(|f| f.to_string()).collect();
    flags.extend([
        format!("-max_total_time={}", args.budget),
        format!("-max_len={}", hunt_max_len_bytes(longest_bytes)),
        // No status line per new corpus entry: about 5% of a hunt's time, read by nobody.
        "-verbosity=0".to_string(),
        "-print_final_stats=1".to_string(),
        format!("-artifact_prefix={}/", artifacts.display()),
    ]);
    if !seed_files.is_empty() {
        // libFuzzer reads the list as one string: no trailing newline.
        let list = seed_files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(",");
        let list_file = scratch.0.join("seeds.list");
        super::files::write_text_bytes(&list_file, list.as_bytes())?;
        flags.push(format!("-seed_inputs=@{}", list_file.display()));
    }
    Ok(flags)
}

/// What the jobs' logs say: the failure the finding job printed, or why a job stopped early.
fn report_jobs(
    out: &mut dyn Write,
    jobs: &[(Child, PathBuf)],
    found_job: Option<usize>,
) -> Result<(), CliError> {
    match found_job {
        Some(job) => {
            let log = &jobs[job].1;
            for line in lines_of(log) {
                if line.starts_with("class=") || line.starts_with("replay: ") {
                    writeln!(out, "{line}")?;
                }
                if let Some(path) = failing_input(&line) {
                    writeln!(out, "failing_input={path}")?;
                }
            }
        }
        None => {
            for (_, log) in jobs {
                // With no failure found, every input libFuzzer wrote is a slow one.
                for line in lines_of(log) {
                    if let Some(path) = written_input(&line) {
                        super::output::to_stderr(&format!(
                            "warning: libFuzzer kept a slow input (over -report_slow_units, a loaded machine or a slow run), not a failure: {path}"
                        ));
                    }
                }
                if let Some(summary) = lines_of(log).find(|l| l.starts_with("SUMMARY: libFuzzer")) {
                    // Stopped before its budget by something other than the system failing
                    // (memory, a timeout): say so, or a short hunt reads as a clean one.
                    super::output::to_stderr(&format!(
                        "warning: libFuzzer stopped early: {summary}"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Builds `target` in `fuzz_dir` with the hunt's flags and returns the binary's path.
fn build(fuzz_dir: &Path, target: &str) -> Result<PathBuf, CliError> {
    if !fuzz_dir.join("Cargo.toml").is_file() {
        return Err(
            HuntError::NoFuzzCrate(fuzz_dir.join("Cargo.toml").display().to_string()).into(),
        );
    }
    let has_cargo_fuzz = Command::new("cargo")
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_cargo_fuzz {
        return Err(HuntError::NoCargoFuzz.into());
    }
    let rustflags = match std::env::var("RUSTFLAGS") {
        Ok(user) if !user.is_empty() => format!("{HUNT_RUSTFLAGS} {user}"),
        _ => HUNT_RUSTFLAGS.to_string(),
    };
    let host = host_triple()?;
    // Cargo's progress and errors go to stderr (inherited); standard output keeps the hunt's
    // own lines.
    let status = Command::new("cargo")
        .current_dir(fuzz_dir)
        .args(["fuzz", "build", "-s", "none", "--no-trace-compares", target])
        .args(["--target", &host, "--target-dir", "target/hunt"])
        .env("RUSTFLAGS", rustflags)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| HuntError::Target {
            path: "cargo".to_string(),
            reason: e.to_string(),
        })?;
    if !status.success() {
        return Err(HuntError::Build(target.to_string()).into());
    }
    Ok(fuzz_dir
        .join("target/hunt")
        .join(host)
        .join("release")
        .join(target))
}

/// The host's target triple, as `cargo fuzz` builds for it.
fn host_triple() -> Result<String, CliError> {
    let output = Command::new("rustc")
        .arg("-vV")
        .output()
        .map_err(|e| HuntError::Target {
            path: "rustc".to_string(),
            reason: e.to_string(),
        })?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or_else(|| {
            HuntError::Target {
                path: "rustc -vV".to_string(),
                reason: "it printed no `host:` line".to_string(),
            }
            .into()
        })
}

/// A directory for the seed inputs and logs: in memory (/dev/shm) where there is one.
fn scratch_dir(run: u64) -> Result<PathBuf, CliError> {
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let dir = base.join(format!("sim-hunt-{}-{run}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|source| CliError::File {
        action: "create",
        path: dir.clone(),
        source,
    })?;
    Ok(dir)
}

fn spawn(
    bin: &Path,
    flags: &[String],
    extra: &[String],
    libfuzzer_seed: u64,
    bug: Option<&str>,
    log: &Path,
) -> Result<Child, CliError> {
    let file = std::fs::File::create(log).map_err(|source| CliError::File {
        action: "create",
        path: log.to_path_buf(),
        source,
    })?;
    let err = file.try_clone()?;
    let mut command = Command::new(bin);
    command
        .arg(format!("-seed={libfuzzer_seed}"))
        .args(flags)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err);
    match bug {
        Some(bug) => command.env("SIM_BUG", bug),
        None => command.env_remove("SIM_BUG"),
    };
    command.spawn().map_err(|e| {
        HuntError::Target {
            path: bin.display().to_string(),
            reason: e.to_string(),
        }
        .into()
    })
}

/// Waits until one job writes a crash (then stops the others) or every job ends; returns the
/// job that found one.
fn wait_for_first_crash(jobs: &mut [(Child, PathBuf)]) -> Result<Option<usize>, CliError> {
    let mut running: Vec<bool> = vec![true; jobs.len()];
    loop {
        for (i, (child, log)) in jobs.iter_mut().enumerate() {
            if !running[i] {
                continue;
            }
            if child.try_wait()?.is_some() {
                running[i] = false;
                if lines_of(log).any(|l| failing_input(&l).is_some()) {
                    stop_all(jobs);
                    return Ok(Some(i));
                }
            }
        }
        if running.iter().all(|r| !r) {
            return Ok(None);
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// Asks every job still running to stop (libFuzzer prints its final stats on SIGTERM), and
/// waits for it.
fn stop_all(jobs: &mut [(Child, PathBuf)]) {
    for (child, _) in jobs.iter_mut() {
        if matches!(child.try_wait(), Ok(None)) {
            terminate(child);
            let _ = child.wait();
        }
    }
}

#[cfg(unix)]
fn terminate(child: &mut Child) {
    let Ok(pid) = libc::pid_t::try_from(child.id()) else {
        let _ = child.kill();
        return;
    };
    // SAFETY: kill(2) on a child this process started and has not yet reaped, so the pid
    // still names that child; no memory is touched.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
}

#[cfg(not(unix))]
fn terminate(child: &mut Child) {
    let _ = child.kill();
}

/// The input a libFuzzer log line says it wrote because the run failed (a crash, a leak, a
/// timeout, out of memory), or `None`.
///
/// libFuzzer prints the same "Test unit written to" for a *slow* input (`slow-unit-`, over
/// `-report_slow_units` seconds, 10 by default) and goes on fuzzing. On a loaded machine a
/// fuzzer at low priority meets one without any failure, so it must not end a hunt as found.
fn failing_input(line: &str) -> Option<&str> {
    let path = written_input(line)?;
    let file_name = Path::new(path).file_name()?.to_str()?;
    (!file_name.starts_with("slow-unit-")).then_some(path)
}

/// The input a libFuzzer log line says it wrote, for whatever reason, or `None`.
fn written_input(line: &str) -> Option<&str> {
    Some(line.split("Test unit written to ").nth(1)?.trim())
}

/// libFuzzer's count of executions, from its final stats (0 if it printed none).
fn executed_units(log: &Path) -> u64 {
    lines_of(log)
        .filter_map(|l| {
            l.strip_prefix("stat::number_of_executed_units:")
                .and_then(|n| n.trim().parse::<u64>().ok())
        })
        .last()
        .unwrap_or(0)
}

fn lines_of(path: &Path) -> impl Iterator<Item = String> {
    let reader = std::fs::File::open(path).ok().map(std::io::BufReader::new);
    reader
        .into_iter()
        .flat_map(|r| r.split(b'\n'))
        .map_while(Result::ok)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

fn finish(out: &mut dyn Write, found: bool, execs: u64, wall: Duration) -> std::io::Result<()> {
    writeln!(
        out,
        "found={} execs={execs} wall_s={:.2}",
        u8::from(found),
        wall.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::failing_input;

    #[test]
    fn a_slow_input_is_not_a_failure() {
        let crash =
            "artifact_prefix='fuzz/artifacts/t/'; Test unit written to fuzz/artifacts/t/crash-3f2a";
        assert_eq!(failing_input(crash), Some("fuzz/artifacts/t/crash-3f2a"));
        let timeout = "artifact_prefix='a/'; Test unit written to a/timeout-77";
        assert_eq!(failing_input(timeout), Some("a/timeout-77"));
        let slow = "artifact_prefix='a/'; Test unit written to a/slow-unit-b9bb";
        assert_eq!(failing_input(slow), None);
        assert_eq!(failing_input("#1024 NEW cov: 12"), None);
    }
}
