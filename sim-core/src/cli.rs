//! The `sim` command line, as a builder systems register with.
//!
//! Output is `key=value` lines (or one JSON object per line with `--json`), so scripts and
//! tests read results without parsing prose. Exit codes: 0 = no failure found, 1 = a failure
//! found, 2 = a usage or input error, with a message that says what to fix.
//!
//! ```no_run
//! use sim_core::cli::Cli;
//! # let systems = Vec::new();
//! std::process::exit(Cli::new(systems).replay_prefix("sim").main());
//! ```
//!
//! The wall clock is read here, and only here, to report runs per second: it is outside
//! every simulation and never reaches a decision.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::choice::Input;
use crate::report::Outcome;
use crate::rt::Strategy;
use crate::system::{self, RunOptions, SpecError, SystemSpec};
use crate::trace::{render_lines, stable_hash_bytes};

/// Errors the command line reports with exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad system or bug name.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// `--seeds` is not `A..B`.
    #[error("--seeds {0:?} is not a range; write it as START..END, e.g. --seeds 0..1000")]
    BadSeeds(String),
    /// `--strategy` is unknown.
    #[error("--strategy {0:?} is unknown; use uniform, pct or fifo")]
    BadStrategy(String),
    /// A file could not be read or written.
    #[error("cannot {action} {path}: {source}; check the path and its permissions")]
    File {
        /// "read" or "write".
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Neither or both of `--system` and `--all`.
    #[error("sweep needs exactly one of --system NAME or --all")]
    SweepTarget,
    /// Output failed.
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

#[derive(Parser, Debug)]
#[command(
    name = "sim",
    about = "Deterministic simulation of distributed systems",
    version
)]
struct Command {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand, Debug)]
enum Action {
    /// List the systems and their planted bugs.
    List {
        /// One JSON object per system.
        #[arg(long)]
        json: bool,
    },
    /// Run one input; print the replay line, the trace on failure, and a summary line.
    Run(RunArgs),
    /// Run a range of seeds and count failures.
    Sweep(SweepArgs),
}

#[derive(Args, Debug, Clone)]
struct Common {
    /// The planted bug to enable (see `sim list`); unset = the correct system.
    #[arg(long)]
    bug: Option<String>,
    /// Fix the workload so only the schedule varies.
    #[arg(long)]
    pinned: bool,
    /// Scheduling strategy: uniform, pct or fifo.
    #[arg(long, default_value = "uniform")]
    strategy: String,
    /// Print JSON instead of key=value lines.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// The system to run (see `sim list`).
    #[arg(long)]
    system: String,
    /// Run on this seed.
    #[arg(long, conflicts_with = "input", required_unless_present = "input")]
    seed: Option<u64>,
    /// Run on the bytes of this file (a fuzz input or a saved run).
    #[arg(long)]
    input: Option<PathBuf>,
    /// Write the bytes that replay this run under --input to FILE.
    #[arg(long, value_name = "FILE")]
    save_input: Option<PathBuf>,
    /// Print the whole trace even when the run passes.
    #[arg(long)]
    trace: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Args, Debug)]
struct SweepArgs {
    /// The system to sweep.
    #[arg(long)]
    system: Option<String>,
    /// Sweep every system, correct and with each planted bug.
    #[arg(long)]
    all: bool,
    /// Seeds to run, START..END (END excluded).
    #[arg(long, default_value = "0..1000")]
    seeds: String,
    #[command(flatten)]
    common: Common,
}

/// The `sim` command line over a set of systems.
pub struct Cli {
    systems: Vec<SystemSpec>,
    replay_prefix: String,
}

impl Cli {
    /// A command line for `systems`.
    pub fn new(systems: Vec<SystemSpec>) -> Self {
        Cli {
            systems,
            replay_prefix: "sim".to_string(),
        }
    }

    /// How replay lines start, e.g. `cargo run --release -p systems --bin sim --`.
    pub fn replay_prefix(mut self, prefix: &str) -> Self {
        self.replay_prefix = prefix.to_string();
        self
    }

    /// Parses the process arguments, runs, and returns the exit code.
    pub fn main(self) -> i32 {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        self.execute(std::env::args_os(), &mut out)
    }

    /// Runs one command line, writing results to `out`; returns the exit code.
    pub fn execute(
        &self,
        args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
        out: &mut dyn Write,
    ) -> i32 {
        let command = match Command::try_parse_from(args) {
            Ok(c) => c,
            Err(e) => {
                let code = if e.use_stderr() { 2 } else { 0 };
                let _ = e.print();
                return code;
            }
        };
        let result = match command.action {
            Action::List { json } => self.list(json, out),
            Action::Run(args) => self.run(&args, out),
            Action::Sweep(args) => self.sweep(&args, out),
        };
        match result {
            Ok(code) => code,
            Err(e) => {
                eprintln!("error: {e}");
                2
            }
        }
    }

    fn list(&self, json: bool, out: &mut dyn Write) -> Result<i32, CliError> {
        for s in &self.systems {
            if json {
                let bugs: Vec<_> = s
                    .bugs
                    .iter()
                    .map(|b| serde_json::json!({"name": b.name, "about": b.about}))
                    .collect();
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"system": s.name, "about": s.about, "bugs": bugs})
                )?;
            } else {
                writeln!(out, "system={} about={:?}", s.name, s.about)?;
                for b in s.bugs {
                    writeln!(out, "system={} bug={} about={:?}", s.name, b.name, b.about)?;
                }
            }
        }
        Ok(0)
    }

    fn options(&self, spec: &SystemSpec, common: &Common) -> Result<RunOptions, CliError> {
        let mut opts = spec.options(common.bug.as_deref())?;
        opts.pinned = common.pinned;
        opts.config.strategy = Strategy::parse(&common.strategy)
            .ok_or_else(|| CliError::BadStrategy(common.strategy.clone()))?;
        Ok(opts)
    }

    fn flags(common: &Common) -> String {
        let mut f = String::new();
        if let Some(b) = &common.bug {
            f += &format!(" --bug {b}");
        }
        if common.pinned {
            f += " --pinned";
        }
        if common.strategy != "uniform" {
            f += &format!(" --strategy {}", common.strategy);
        }
        f
    }

    fn run(&self, args: &RunArgs, out: &mut dyn Write) -> Result<i32, CliError> {
        let spec = system::find(&self.systems, &args.system)?;
        let opts = self.options(spec, &args.common)?;
        let (input, input_flag) = match (&args.seed, &args.input) {
            (Some(seed), _) => (Input::Seed(*seed), format!("--seed {seed}")),
            (None, Some(path)) => (
                Input::Bytes(read_file(path)?),
                format!("--input {}", path.display()),
            ),
            (None, None) => unreachable!("clap requires --seed or --input"),
        };
        let replay = format!(
            "{} run --system {}{} {input_flag}",
            self.replay_prefix,
            spec.name,
            Self::flags(&args.common)
        );
        // The replay line goes out first, so it survives a crash or a kill of this process.
        if !args.common.json {
            writeln!(out, "replay={replay}")?;
            out.flush()?;
        }
        let mut record_opts = opts.clone();
        record_opts.config.recording = crate::trace::Recording::Full;
        let (report, bytes) = (spec.build)(&record_opts).run_recorded(&input);
        if let Some(path) = &args.save_input {
            std::fs::write(path, &bytes).map_err(|source| CliError::File {
                action: "write",
                path: path.clone(),
                source,
            })?;
        }
        let outcome = &report.outcome;
        let failed = outcome.class.is_failure();
        if args.common.json {
            #[derive(Serialize)]
            struct RunJson<'a> {
                replay: &'a str,
                #[serde(flatten)]
                outcome: &'a Outcome,
                history_hash_hex: String,
                input: String,
                trace: Option<&'a [crate::trace::Event]>,
            }
            let json = RunJson {
                replay: &replay,
                outcome,
                history_hash_hex: format!("{:016x}", outcome.history_hash),
                input: input_identity(&input),
                trace: (failed || args.trace).then(|| report.history.events()),
            };
            writeln!(
                out,
                "{}",
                serde_json::to_string(&json).expect("outcome serialises")
            )?;
        } else {
            if failed || args.trace {
                write!(out, "{}", render_lines(report.history.events()))?;
                if failed {
                    writeln!(out, "message={:?}", outcome.message)?;
                }
            }
            writeln!(out, "input={}", input_identity(&input))?;
            if let Some(path) = &args.save_input {
                writeln!(out, "saved_input={} bytes={}", path.display(), bytes.len())?;
            }
            writeln!(out, "{}", outcome.summary_line())?;
        }
        Ok(i32::from(failed))
    }

    fn sweep(&self, args: &SweepArgs, out: &mut dyn Write) -> Result<i32, CliError> {
        let seeds = parse_seeds(&args.seeds)?;
        let targets: Vec<(&SystemSpec, Option<String>)> = match (&args.system, args.all) {
            (Some(name), false) => {
                vec![(system::find(&self.systems, name)?, args.common.bug.clone())]
            }
            (None, true) => self
                .systems
                .iter()
                .flat_map(|s| {
                    std::iter::once((s, None))
                        .chain(s.bugs.iter().map(move |b| (s, Some(b.name.to_string()))))
                })
                .collect(),
            _ => return Err(CliError::SweepTarget),
        };
        let mut any_failure = false;
        for (spec, bug) in targets {
            let common = Common {
                bug,
                ..args.common.clone()
            };
            let opts = self.options(spec, &common)?;
            let bar = ProgressBar::new(seeds.end - seeds.start);
            bar.set_style(
                ProgressStyle::with_template(
                    "{msg:30} [{bar:30}] {pos}/{len} seeds, {per_sec}, failures shown below",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.set_message(format!(
                "{} {}",
                spec.name,
                common.bug.as_deref().unwrap_or("(correct)")
            ));
            let started = std::time::Instant::now();
            let mut failures = 0u64;
            let mut first_failure: Option<(u64, Outcome)> = None;
            for seed in seeds.clone() {
                let report = spec.run(&opts, &Input::Seed(seed));
                if report.outcome.class.is_failure() {
                    failures += 1;
                    if first_failure.is_none() {
                        bar.println(format!(
                            "first failure: seed {seed}: {} — replay: {} run --system {}{} --seed {seed}",
                            report.outcome.summary_line(),
                            self.replay_prefix,
                            spec.name,
                            Self::flags(&common)
                        ));
                        first_failure = Some((seed, report.outcome));
                    }
                }
                bar.inc(1);
            }
            bar.finish_and_clear();
            let elapsed = started.elapsed().as_secs_f64().max(1e-9);
            let runs = seeds.end - seeds.start;
            any_failure |= failures > 0;
            let first_seed = first_failure
                .as_ref()
                .map_or("none".to_string(), |(s, _)| s.to_string());
            let runs_per_sec = runs as f64 / elapsed;
            let bug_name = common.bug.as_deref().unwrap_or("none");
            if args.common.json {
                let json = serde_json::json!({
                    "system": spec.name, "bug": bug_name, "seeds": runs, "failures": failures,
                    "first_failure_seed": first_failure.as_ref().map(|(s, _)| *s),
                    "first_failure": first_failure.as_ref().map(|(_, o)| o),
                    "runs_per_sec": runs_per_sec.round(),
                });
                writeln!(out, "{json}")?;
            } else {
                let prefix = if args.all {
                    format!("system={} bug={bug_name} ", spec.name)
                } else {
                    String::new()
                };
                writeln!(
                    out,
                    "{prefix}seeds={runs} failures={failures} first_failure_seed={first_seed} runs_per_sec={:.0}",
                    runs_per_sec
                )?;
            }
        }
        Ok(i32::from(any_failure))
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|source| CliError::File {
        action: "read",
        path: path.to_path_buf(),
        source,
    })
}

fn input_identity(input: &Input) -> String {
    match input {
        Input::Seed(seed) => format!("seed:{seed}"),
        Input::Bytes(b) => format!("bytes:{}:{:016x}", b.len(), stable_hash_bytes(b)),
    }
}

/// Parses `A..B`.
pub fn parse_seeds(text: &str) -> Result<std::ops::Range<u64>, CliError> {
    let bad = || CliError::BadSeeds(text.to_string());
    let (a, b) = text.split_once("..").ok_or_else(bad)?;
    let (a, b): (u64, u64) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a >= b {
        return Err(bad());
    }
    Ok(a..b)
}
