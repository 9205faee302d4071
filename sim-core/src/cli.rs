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
//! Commands: `list`, `run` (one input), `sweep` (a range of seeds), `replay` (a repro file, or
//! raw input bytes with `--system`), `shrink` (a failing input made small, see
//! [`crate::shrink`]) and `render` (a trace as a space-time diagram and a ShiViz log, see
//! [`crate::render`]). File formats are described in [`crate::repro`].
//!
//! Every failure is reported with its replay command (printed *before* the run starts, so it
//! survives a panic or a kill), its run identity (input, commit, toolchain, target, the flags
//! that affect the run) and files under `--failures-dir` (default `target/sim-failures`):
//! the readable trace, the JSON trace and a repro file; the last lines of the trace are
//! printed where the whole trace is not.
//!
//! The wall clock is read here, and only here, to report runs per second and shrink time: it
//! is outside every simulation and never reaches a decision.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::choice::Input;
use crate::net::Faults;
use crate::render;
use crate::report::Outcome;
use crate::repro::{self, BuildInfo, Repro, ReproError, RunIdentity, TraceFile};
use crate::rt::Strategy;
use crate::shrink::{ShrinkError, Shrinker};
use crate::system::{self, RunOptions, SpecError, SystemSpec};
use crate::trace::{render_lines, Event};

/// Errors the command line reports with exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad system or bug name.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// `--seeds` is not `A..B`.
    #[error("--seeds {0:?} is not a range; write it as START..END, e.g. --seeds 0..1000")]
    BadSeeds(String),
    /// `--faults` is unknown.
    #[error("--faults {0:?} is unknown; use off, swarm or all")]
    BadFaults(String),
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
    /// A repro or trace file is malformed.
    #[error("{path}: {source}")]
    Repro {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: ReproError,
    },
    /// A raw input file was given to `replay` without saying which system runs it.
    #[error("{0} holds raw input bytes, not a repro file; say which system runs them: sim replay --system NAME [--bug BUG] {0}")]
    ReplayNeedsSystem(String),
    /// A flag disagrees with the repro file it accompanies.
    #[error("{0}; drop the flag (the repro file says how to run it) or use the matching value")]
    ReproConflict(String),
    /// The shrinker could not start.
    #[error(transparent)]
    Shrink(#[from] ShrinkError),
    /// `--json` on a command that prints traces.
    #[error(
        "--json is not supported by `sim {0}`; use --trace-json PATH for a machine-readable trace"
    )]
    JsonUnsupported(&'static str),
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
    /// Replay a repro file (or raw input bytes with --system) and print its full trace.
    Replay(ReplayArgs),
    /// Shrink a failing input; print the shrunk trace, write the shrunk input, summarise.
    Shrink(ShrinkArgs),
    /// Draw a trace as a space-time diagram (SVG) and export it for ShiViz.
    Render(RenderArgs),
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
    /// Network faults: off, swarm (a profile drawn per run) or all; unset = the system's own.
    #[arg(long)]
    faults: Option<String>,
    /// Print JSON instead of key=value lines.
    #[arg(long)]
    json: bool,
    /// Where failures' traces and repro files are written.
    #[arg(long, value_name = "DIR", default_value = "target/sim-failures")]
    failures_dir: PathBuf,
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
    /// Write the machine-readable (JSON) trace to PATH.
    #[arg(long, value_name = "PATH")]
    trace_json: Option<PathBuf>,
    #[command(flatten)]
    common: Common,
}

#[derive(Args, Debug)]
struct ReplayArgs {
    /// A repro file (*.repro.json), or a raw input file together with --system.
    file: PathBuf,
    /// The system, for a raw input file (a repro file names its own).
    #[arg(long)]
    system: Option<String>,
    /// Write the machine-readable (JSON) trace to PATH.
    #[arg(long, value_name = "PATH")]
    trace_json: Option<PathBuf>,
    #[command(flatten)]
    common: Common,
}

#[derive(Args, Debug)]
struct ShrinkArgs {
    /// The system (see `sim list`).
    #[arg(long)]
    system: String,
    /// Shrink the run of this seed.
    #[arg(long, conflicts_with = "input", required_unless_present = "input")]
    seed: Option<u64>,
    /// Shrink the run of these input bytes (a raw input or a repro file).
    #[arg(long)]
    input: Option<PathBuf>,
    /// Write the shrunk input bytes to FILE (default: under --failures-dir).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Write the shrunk run's JSON trace to PATH.
    #[arg(long, value_name = "PATH")]
    trace_json: Option<PathBuf>,
    /// Draw the shrunk run as an SVG space-time diagram at PATH.
    #[arg(long, value_name = "PATH")]
    svg: Option<PathBuf>,
    /// At most this many candidate runs.
    #[arg(long, default_value = "10000")]
    max_runs: u64,
    #[command(flatten)]
    common: Common,
}

#[derive(Args, Debug)]
struct RenderArgs {
    /// A JSON trace (--trace-json), a JSON array of events, or a repro file (replayed).
    file: PathBuf,
    /// Write the SVG space-time diagram here (default: FILE with extension .svg).
    #[arg(long, value_name = "PATH")]
    svg: Option<PathBuf>,
    /// Write the ShiViz log here (default: FILE with extension .shiviz.log).
    #[arg(long, value_name = "PATH")]
    shiviz: Option<PathBuf>,
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
    build: BuildInfo,
}

impl Cli {
    /// A command line for `systems`.
    pub fn new(systems: Vec<SystemSpec>) -> Self {
        Cli {
            systems,
            replay_prefix: "sim".to_string(),
            build: BuildInfo::UNKNOWN,
        }
    }

    /// What built this binary (commit, toolchain, target), printed with every failure.
    pub fn build_info(mut self, build: BuildInfo) -> Self {
        self.build = build;
        self
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
            Action::Replay(args) => self.replay(&args, out),
            Action::Shrink(args) => self.shrink(&args, out),
            Action::Render(args) => self.render(&args, out),
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
        opts.faults = match &common.faults {
            None => None,
            Some(name) => {
                Some(Faults::parse(name).ok_or_else(|| CliError::BadFaults(name.clone()))?)
            }
        };
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
        if let Some(faults) = &common.faults {
            f += &format!(" --faults {faults}");
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
        let events = report.history.events();
        let flags = format!("--system {}{}", spec.name, Self::flags(&args.common));
        if let Some(path) = &args.trace_json {
            let file = TraceFile::new(
                spec.name,
                opts.bug,
                &input_identity(&input),
                outcome,
                events,
            );
            write_json(path, &file)?;
        }
        let files = if failed {
            let repro = self
                .repro_of(
                    spec,
                    &opts,
                    &args.common,
                    bytes.clone(),
                    &input_identity(&input),
                )
                .pin(outcome);
            let trace = TraceFile::new(
                spec.name,
                opts.bug,
                &input_identity(&input),
                outcome,
                events,
            );
            Some(self.write_failure(&args.common, &stem(spec, &opts, &input), &repro, &trace)?)
        } else {
            None
        };
        let identity = RunIdentity {
            input: input_identity(&input),
            build: self.build,
            flags,
        };
        if args.common.json {
            #[derive(Serialize)]
            struct RunJson<'a> {
                replay: &'a str,
                #[serde(flatten)]
                outcome: &'a Outcome,
                history_hash_hex: String,
                input: String,
                identity: String,
                trace_file: Option<String>,
                repro_file: Option<String>,
                trace: Option<&'a [crate::trace::Event]>,
            }
            let json = RunJson {
                replay: &replay,
                outcome,
                history_hash_hex: format!("{:016x}", outcome.history_hash),
                input: input_identity(&input),
                identity: identity.to_string(),
                trace_file: files.as_ref().map(|f| f.trace_txt.display().to_string()),
                repro_file: files.as_ref().map(|f| f.repro.display().to_string()),
                trace: (failed || args.trace).then_some(events),
            };
            writeln!(
                out,
                "{}",
                serde_json::to_string(&json).expect("outcome serialises")
            )?;
        } else {
            if failed || args.trace {
                write!(out, "{}", render_lines(events))?;
                if failed {
                    writeln!(out, "message={:?}", outcome.message)?;
                }
            }
            if let Some(files) = &files {
                writeln!(out, "{identity}")?;
                print_files(out, files)?;
            }
            if let Some(path) = &args.trace_json {
                writeln!(out, "trace_json={}", path.display())?;
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
        // For --all: correct variants that failed, and planted bugs that were (not) found.
        let (mut correct_failed, mut bugs_found, mut bugs) = (0u64, 0u64, 0u64);
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
            let replay_of = |seed: u64| {
                format!(
                    "{} run --system {}{} --seed {seed}",
                    self.replay_prefix,
                    spec.name,
                    Self::flags(&common)
                )
            };
            // Before the sweep starts, so it survives a panic or a kill: how to replay a seed.
            eprintln!(
                "sweep {} {}: replay any seed with: {}",
                spec.name,
                bug_label(opts.bug),
                replay_of(0).replace("--seed 0", "--seed N")
            );
            // Wall clock for runs_per_sec only, outside every run (see the module docs).
            let started = std::time::Instant::now();
            let mut failures = 0u64;
            let mut first_failure: Option<(u64, Outcome)> = None;
            for seed in seeds.clone() {
                let report = spec.run(&opts, &Input::Seed(seed));
                if report.outcome.class.is_failure() {
                    failures += 1;
                    if first_failure.is_none() {
                        bar.suspend(|| {
                            eprintln!(
                                "first failure: seed {seed}: {}",
                                report.outcome.summary_line()
                            )
                        });
                        first_failure = Some((seed, report.outcome));
                    }
                }
                bar.inc(1);
            }
            bar.finish_and_clear();
            // The first failure, run again with recording on, leaves its files behind.
            let mut failure_files = None;
            if let Some((seed, _)) = &first_failure {
                let input = Input::Seed(*seed);
                let (report, files) =
                    repro::record_failure(spec, &opts, &input, &common.failures_dir).map_err(
                        |source| CliError::File {
                            action: "write failure files into",
                            path: common.failures_dir.clone(),
                            source,
                        },
                    )?;
                match files {
                    None => eprintln!(
                        "first failure: seed {seed} passed when run again with recording on ({}): \
                         the run depends on something outside its input; check with `sim run` twice",
                        report.outcome.summary_line()
                    ),
                    Some(files) => {
                        let identity = RunIdentity {
                            input: input_identity(&input),
                            build: self.build,
                            flags: format!("--system {}{}", spec.name, Self::flags(&common)),
                        };
                        let mut text = Vec::new();
                        writeln!(text, "first_failure=seed:{seed} {}", report.outcome.summary_line())?;
                        for line in repro::last_lines(report.history.events(), 8).lines() {
                            writeln!(text, "  | {line}")?;
                        }
                        writeln!(text, "{identity}")?;
                        print_files(&mut text, &files)?;
                        writeln!(text, "replay={}", replay_of(*seed))?;
                        if args.common.json {
                            // stdout stays one JSON object per line; the details go to stderr.
                            std::io::stderr().write_all(&text)?;
                        } else {
                            out.write_all(&text)?;
                        }
                        failure_files = Some(files);
                    }
                }
            }
            let elapsed = started.elapsed().as_secs_f64().max(1e-9);
            let runs = seeds.end - seeds.start;
            any_failure |= failures > 0;
            if common.bug.is_some() {
                bugs += 1;
                bugs_found += u64::from(failures > 0);
            } else {
                correct_failed += failures;
            }
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
                    "trace_file": failure_files.as_ref().map(|f| f.trace_txt.display().to_string()),
                    "repro_file": failure_files.as_ref().map(|f| f.repro.display().to_string()),
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
        if args.all {
            // One line a person can act on: the campaign is as expected when every correct
            // variant passed every seed and every planted bug was found.
            let verdict = if correct_failed == 0 && bugs_found == bugs {
                "as-expected"
            } else {
                "UNEXPECTED"
            };
            if args.common.json {
                let json = serde_json::json!({"campaign": verdict, "correct_runs_failed": correct_failed,
                    "planted_bugs_found": bugs_found, "planted_bugs": bugs});
                writeln!(out, "{json}")?;
            } else {
                writeln!(
                    out,
                    "campaign={verdict} correct_runs_failed={correct_failed} planted_bugs_found={bugs_found}/{bugs}"
                )?;
            }
        }
        Ok(i32::from(any_failure))
    }

    /// A repro of `bytes` with this run's system, bug and flags.
    fn repro_of(
        &self,
        spec: &SystemSpec,
        opts: &RunOptions,
        common: &Common,
        bytes: Vec<u8>,
        origin: &str,
    ) -> Repro {
        let mut repro = Repro::new(spec.name, opts.bug, bytes);
        repro.pinned = common.pinned;
        repro.strategy = common.strategy.clone();
        repro.faults = common.faults.clone();
        repro.origin = origin.to_string();
        repro
    }

    fn write_failure(
        &self,
        common: &Common,
        stem: &str,
        repro: &Repro,
        trace: &TraceFile,
    ) -> Result<repro::FailureFiles, CliError> {
        repro::write_failure(&common.failures_dir, stem, repro, trace).map_err(|source| {
            CliError::File {
                action: "write failure files into",
                path: common.failures_dir.clone(),
                source,
            }
        })
    }

    fn replay(&self, args: &ReplayArgs, out: &mut dyn Write) -> Result<i32, CliError> {
        if args.common.json {
            return Err(CliError::JsonUnsupported("replay"));
        }
        let data = read_file(&args.file)?;
        let file = args.file.display().to_string();
        let (spec, common, bytes, pinned_hash) = if Repro::sniff(&data) {
            let text = String::from_utf8_lossy(&data);
            let repro = Repro::from_json(&text).map_err(|source| CliError::Repro {
                path: args.file.clone(),
                source,
            })?;
            let conflict = |what: String| Err(CliError::ReproConflict(what));
            if let Some(system) = args.system.as_deref().filter(|s| *s != repro.system) {
                return conflict(format!(
                    "--system {system} but {file} is a repro for system {}",
                    repro.system
                ));
            }
            if args.common.bug.is_some() && args.common.bug != repro.bug {
                return conflict(format!(
                    "--bug {} but {file} says bug {}",
                    args.common.bug.as_deref().unwrap_or(""),
                    repro.bug.as_deref().unwrap_or("none")
                ));
            }
            if args.common.pinned && !repro.pinned {
                return conflict(format!("--pinned but {file} was not run pinned"));
            }
            if args.common.faults.is_some() && args.common.faults != repro.faults {
                return conflict(format!(
                    "--faults {} but {file} says {}",
                    args.common.faults.as_deref().unwrap_or(""),
                    repro.faults.as_deref().unwrap_or("the system's default")
                ));
            }
            if args.common.strategy != "uniform" && args.common.strategy != repro.strategy {
                return conflict(format!(
                    "--strategy {} but {file} says {}",
                    args.common.strategy, repro.strategy
                ));
            }
            let spec = system::find(&self.systems, &repro.system)?;
            let common = Common {
                bug: repro.bug.clone(),
                pinned: repro.pinned,
                strategy: repro.strategy.clone(),
                faults: repro.faults.clone(),
                ..args.common.clone()
            };
            let bytes = repro.input().map_err(|source| CliError::Repro {
                path: args.file.clone(),
                source,
            })?;
            (spec, common, bytes, repro.history_hash.clone())
        } else {
            let name = args
                .system
                .as_deref()
                .ok_or_else(|| CliError::ReplayNeedsSystem(file.clone()))?;
            (
                system::find(&self.systems, name)?,
                args.common.clone(),
                data,
                None,
            )
        };
        let opts = self.options(spec, &common)?;
        let replay = match pinned_hash {
            Some(_) => format!("{} replay {file}", self.replay_prefix),
            None => format!(
                "{} replay --system {}{} {file}",
                self.replay_prefix,
                spec.name,
                Self::flags(&common)
            ),
        };
        writeln!(out, "replay={replay}")?;
        out.flush()?;
        let input = Input::Bytes(bytes);
        let report = spec.run_recorded_trace(&opts, &input);
        let outcome = &report.outcome;
        let events = report.history.events();
        write!(out, "{}", render_lines(events))?;
        if outcome.class.is_failure() {
            writeln!(out, "message={:?}", outcome.message)?;
        }
        if let Some(path) = &args.trace_json {
            write_json(
                path,
                &TraceFile::new(
                    spec.name,
                    opts.bug,
                    &input_identity(&input),
                    outcome,
                    events,
                ),
            )?;
            writeln!(out, "trace_json={}", path.display())?;
        }
        let identity = RunIdentity {
            input: input_identity(&input),
            build: self.build,
            flags: format!("--system {}{}", spec.name, Self::flags(&common)),
        };
        writeln!(out, "{identity}")?;
        let mut strict = true;
        if let Some(pinned) = &pinned_hash {
            let got = format!("{:016x}", outcome.history_hash);
            strict = *pinned == got;
            writeln!(out, "pinned_history_hash={pinned} strict={strict}")?;
            if !strict {
                writeln!(out, "message=\"the replay diverged from the pinned history: the system or the framework changed since the file was written, or a run depends on something outside its input\"")?;
            }
        }
        writeln!(out, "input={}", input_identity(&input))?;
        writeln!(out, "{}", outcome.summary_line())?;
        Ok(i32::from(outcome.class.is_failure() || !strict))
    }

    fn shrink(&self, args: &ShrinkArgs, out: &mut dyn Write) -> Result<i32, CliError> {
        if args.common.json {
            return Err(CliError::JsonUnsupported("shrink"));
        }
        let spec = system::find(&self.systems, &args.system)?;
        let opts = self.options(spec, &args.common)?;
        let (input, input_flag) = match (&args.seed, &args.input) {
            (Some(seed), _) => (Input::Seed(*seed), format!("--seed {seed}")),
            (None, Some(path)) => {
                let data = read_file(path)?;
                let bytes = if Repro::sniff(&data) {
                    let repro =
                        Repro::from_json(&String::from_utf8_lossy(&data)).map_err(|source| {
                            CliError::Repro {
                                path: path.clone(),
                                source,
                            }
                        })?;
                    if repro.system != spec.name || repro.bug.as_deref() != opts.bug {
                        return Err(CliError::ReproConflict(format!(
                            "{} is a repro for system {} bug {}, not --system {} --bug {}",
                            path.display(),
                            repro.system,
                            repro.bug.as_deref().unwrap_or("none"),
                            spec.name,
                            opts.bug.unwrap_or("none")
                        )));
                    }
                    repro.input().map_err(|source| CliError::Repro {
                        path: path.clone(),
                        source,
                    })?
                } else {
                    data
                };
                (Input::Bytes(bytes), format!("--input {}", path.display()))
            }
            (None, None) => unreachable!("clap requires --seed or --input"),
        };
        let flags = format!("--system {}{}", spec.name, Self::flags(&args.common));
        // The original's replay line first, so it survives a crash or a kill.
        writeln!(
            out,
            "replay={} run {flags} {input_flag}",
            self.replay_prefix
        )?;
        out.flush()?;
        // Wall clock for shrink_ms only, outside every run (see the module docs).
        let started = std::time::Instant::now();
        let shrunk = Shrinker::new(|| (spec.build)(&opts))
            .max_runs(args.max_runs)
            .run(&input)?;
        let wall_ms = started.elapsed().as_millis();
        let outcome = &shrunk.outcome;
        write!(out, "{}", render_lines(&shrunk.trace))?;
        writeln!(out, "message={:?}", outcome.message)?;
        writeln!(out, "story:")?;
        for line in render::story(&shrunk.trace).lines() {
            writeln!(out, "  | {line}")?;
        }
        if !shrunk.improved {
            writeln!(
                out,
                "note=\"nothing smaller fails the same way; the original input is returned\""
            )?;
        }
        let origin = format!("shrunk from {}", input_identity(&input));
        let shrunk_input = Input::Bytes(shrunk.bytes.clone());
        let stem = format!("{}.shrunk", stem(spec, &opts, &input));
        let repro = self
            .repro_of(spec, &opts, &args.common, shrunk.bytes.clone(), &origin)
            .pin(outcome);
        let trace = TraceFile::new(
            spec.name,
            opts.bug,
            &input_identity(&shrunk_input),
            outcome,
            &shrunk.trace,
        );
        let files = self.write_failure(&args.common, &stem, &repro, &trace)?;
        let bin = args
            .out
            .clone()
            .unwrap_or_else(|| args.common.failures_dir.join(format!("{stem}.bin")));
        std::fs::write(&bin, &shrunk.bytes).map_err(|source| CliError::File {
            action: "write",
            path: bin.clone(),
            source,
        })?;
        if let Some(path) = &args.trace_json {
            write_json(path, &trace)?;
            writeln!(out, "trace_json={}", path.display())?;
        }
        if let Some(path) = &args.svg {
            let title = format!(
                "{} {} — shrunk from {}",
                spec.name,
                bug_label(opts.bug),
                input_identity(&input)
            );
            write_text(path, &render::svg(&shrunk.trace, &title))?;
            writeln!(out, "svg={}", path.display())?;
        }
        let identity = RunIdentity {
            input: input_identity(&shrunk_input),
            build: self.build,
            flags: flags.clone(),
        };
        writeln!(out, "{identity}")?;
        print_files(out, &files)?;
        writeln!(
            out,
            "shrunk_input={} bytes={}",
            bin.display(),
            shrunk.bytes.len()
        )?;
        writeln!(
            out,
            "replay_shrunk={} replay {}",
            self.replay_prefix,
            files.repro.display()
        )?;
        writeln!(
            out,
            "shrink_runs={} shrink_ms={wall_ms} improved={}",
            shrunk.runs, shrunk.improved
        )?;
        writeln!(
            out,
            "class={} invariant={} bytes_before={} bytes_after={} events_before={} events_after={} ops_before={} ops_after={} verified={}",
            outcome.class,
            outcome.invariant.as_deref().unwrap_or("none"),
            shrunk.bytes_before.len(),
            shrunk.bytes.len(),
            shrunk.outcome_before.steps,
            outcome.steps,
            shrunk.ops_before,
            shrunk.ops_after,
            shrunk.verified
        )?;
        Ok(1)
    }

    fn render(&self, args: &RenderArgs, out: &mut dyn Write) -> Result<i32, CliError> {
        let data = read_file(&args.file)?;
        let text = String::from_utf8_lossy(&data);
        let (events, title): (Vec<Event>, String) = if Repro::sniff(&data) {
            let repro = Repro::from_json(&text).map_err(|source| CliError::Repro {
                path: args.file.clone(),
                source,
            })?;
            let spec = system::find(&self.systems, &repro.system)?;
            let common = Common {
                bug: repro.bug.clone(),
                pinned: repro.pinned,
                strategy: repro.strategy.clone(),
                faults: repro.faults.clone(),
                json: false,
                failures_dir: PathBuf::new(),
            };
            let opts = self.options(spec, &common)?;
            let bytes = repro.input().map_err(|source| CliError::Repro {
                path: args.file.clone(),
                source,
            })?;
            let report = spec.run_recorded_trace(&opts, &Input::Bytes(bytes));
            (
                report.history.into_events(),
                format!(
                    "{} {} — {}",
                    repro.system,
                    bug_label(opts.bug),
                    repro.origin
                ),
            )
        } else {
            let events = TraceFile::events_from_json(&text).map_err(|source| CliError::Repro {
                path: args.file.clone(),
                source,
            })?;
            (
                events,
                args.file
                    .file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
            )
        };
        let base = args.file.with_extension("");
        let base = base.with_extension("");
        let svg_path = args
            .svg
            .clone()
            .unwrap_or_else(|| base.with_extension("svg"));
        let shiviz_path = args
            .shiviz
            .clone()
            .unwrap_or_else(|| base.with_extension("shiviz.log"));
        write_text(&svg_path, &render::svg(&events, &title))?;
        write_text(&shiviz_path, &render::shiviz(&events))?;
        let rows = events.iter().filter(|e| render::is_story_event(e)).count();
        writeln!(
            out,
            "svg={} rows={rows} events={}",
            svg_path.display(),
            events.len()
        )?;
        writeln!(
            out,
            "shiviz={} regex={:?}",
            shiviz_path.display(),
            render::SHIVIZ_REGEX
        )?;
        Ok(0)
    }
}

/// `system-bug-input`, a file stem for a failure's files.
fn stem(spec: &SystemSpec, opts: &RunOptions, input: &Input) -> String {
    repro::failure_stem(spec.name, opts.bug, input)
}

fn bug_label(bug: Option<&str>) -> &str {
    bug.unwrap_or("correct")
}

fn print_files(out: &mut dyn Write, files: &repro::FailureFiles) -> std::io::Result<()> {
    writeln!(out, "trace_file={}", files.trace_txt.display())?;
    writeln!(out, "trace_json_file={}", files.trace_json.display())?;
    writeln!(out, "repro_file={}", files.repro.display())
}

fn write_text(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text).map_err(|source| CliError::File {
        action: "write",
        path: path.to_path_buf(),
        source,
    })
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<(), CliError> {
    write_text(path, &serde_json::to_string(value).expect("serialises"))
}

fn read_file(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|source| CliError::File {
        action: "read",
        path: path.to_path_buf(),
        source,
    })
}

fn input_identity(input: &Input) -> String {
    repro::input_identity(input)
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
