//! The `sim` command line, as a builder systems register with.
//!
//! Output is `key=value` lines (or one JSON object per line with `--json`), so scripts and
//! tests read results without parsing prose. Exit codes: 0 = no failure found, 1 = a failure
//! found, 2 = a usage or input error, with a message that says what to fix; 141 = standard
//! output closed (`| head`), ended quietly (see `output.rs`); a sweep stopped by a signal,
//! 130 (Ctrl-C, no failure found), 143 (SIGTERM) or 129 (SIGHUP), see `interrupt.rs`.
//!
//! ```no_run
//! use sim_core::cli::Cli;
//! # let systems = Vec::new();
//! std::process::exit(Cli::new(systems).replay_prefix("sim").main());
//! ```
//!
//! One module per command: `list`, `run` (one input), `sweep` (a range of
//! seeds), `replay` (a repro file, or raw input bytes with `--system`), `shrink` (a failing
//! input made small, see [`crate::shrink`]) and `render` (a trace as a space-time diagram and
//! a ShiViz log, see [`crate::render`]), `merge` (shard results), `corpus` (seeded runs as
//! fuzz inputs), `hunt` (libFuzzer with the hunt's settings, on the crate's own fuzz
//! target) and `determinism` (one seed run many times, here and in fresh processes).
//! What a run is — system, bug, every flag, input — is
//! [`crate::run_spec`]'s, so replay commands, identities, repro files and file names are
//! built there once; file formats are [`crate::repro`]'s.
//!
//! Every failure is reported with its replay command (printed *before* the run starts, so it
//! survives a panic or a kill), its run identity (input, commit, toolchain, target, the flags
//! that affect the run) and files under `--failures-dir` (default `target/sim-failures`):
//! the readable trace, the JSON trace and a repro file; the last lines of the trace are
//! printed where the whole trace is not.
//!
//! The wall clock is read here, and only here, to report runs per second and shrink time: it
//! is outside every simulation and never reaches a decision.

mod corpus;
mod determinism;
mod files;
mod hunt;
mod interrupt;
mod list;
mod merge;
mod output;
mod progress;
mod render;
mod replay;
mod run;
mod shrink;
mod sweep;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};

use crate::repro::{BuildInfo, Repro, ReproError};
use crate::run_spec::{RunFlags, Variant};
use crate::shrink::ShrinkError;
use crate::system::{self, SpecError, SystemSpec};

pub use hunt::HuntError;
pub use sweep::parse_seeds;

/// Errors the command line reports with exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad system or bug name, or a flag the system does not read.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// `--seeds` is not `A..B` with `A < B`.
    #[error("{}", bad_seeds(.0))]
    BadSeeds(String),
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
    /// An input file is larger than any input a run could use.
    #[error("{path} is larger than {limit_bytes} bytes, more than any run reads; give a repro file or a fuzz input, not {path}")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The cap.
        limit_bytes: u64,
    },
    /// Neither or both of `--system` and `--all`.
    #[error("sweep needs exactly one of --system NAME or --all")]
    SweepTarget,
    /// `--bug` with `--all`.
    #[error("--bug {0} selects one variant, but --all sweeps every system and bug; drop --bug, or sweep one with --system NAME --bug {0}")]
    BugWithAll(String),
    /// `--shard`/`--out` with a campaign that hunts each bug until its first failure.
    #[error(
        "--shard and --out split a fixed range: with --all, give one (e.g. --seeds 0..100000)"
    )]
    ShardNeedsSeeds,
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
    /// A raw input file was given to `shrink` without saying which system runs it.
    #[error("{0} holds raw input bytes, not a repro file; say which system runs them: sim shrink --system NAME [--bug BUG] --input {0}")]
    ShrinkNeedsSystem(String),
    /// A raw input that passes in the lane encoding and fails in the flat one it replaced.
    #[error("{path} passes when read in the lane encoding (class=pass) but fails when read in the flat encoding of inputs recorded before it ({flat}): it was most likely recorded before the lane encoding. Replay it as recorded with: {prefix} replay {args} --encoding flat {path}; convert it with: {prefix} run {args} --encoding flat --input {path} --save-input NEW.bin; or, if it is a current input that should pass, add --encoding lanes")]
    StaleEncoding {
        /// The file.
        path: String,
        /// How the flat reading ended.
        flat: String,
        /// How the user runs `sim`.
        prefix: String,
        /// The variant's flags (`--system S [--bug B] ...`).
        args: String,
    },
    /// A trace file was given where an input is expected.
    #[error("{0} is a trace file (a recorded history), not an input; replay the repro file written next to it, or draw the trace with: sim render {0}")]
    TraceNotInput(String),
    /// A readable trace (`*.trace.txt`) was given where an input is expected.
    #[error("{path} is a readable trace (the lines `sim run` prints), not an input; {fix}")]
    TraceTextNotInput {
        /// The file.
        path: String,
        /// What to run instead.
        fix: String,
    },
    /// JSON that is not a repro file was given where an input is expected.
    #[error("{path} is JSON but not a repro file: {what}; give a repro file (*.repro.json, written by sim run, sweep and shrink) or a raw input file (a fuzz input, or --save-input of sim run)")]
    JsonNotRepro {
        /// The file.
        path: String,
        /// What it is or lacks.
        what: String,
    },
    /// A flag disagrees with the repro file it accompanies.
    #[error("{0}; drop the flag (the repro file says how to run it) or use the matching value")]
    ReproConflict(String),
    /// The shrinker could not start.
    #[error(transparent)]
    Shrink(#[from] ShrinkError),
    /// Shard results that do not add up to one campaign.
    #[error(transparent)]
    Merge(crate::campaign::MergeError),
    /// A fresh process for `sim determinism` could not be run or said nothing usable.
    #[error("cannot check determinism in a fresh process ({exe}): {reason}; run with --processes 0 to check this process only")]
    Child {
        /// The program started.
        exe: String,
        /// What went wrong.
        reason: String,
    },
    /// `sim determinism` asked for fewer than two runs in all.
    #[error("--runs {runs} --processes {processes} is {} run(s) in all, and one run has nothing to agree with; give at least two, e.g. --runs 2 --processes 0 (default: --runs 10 --processes 3)", .runs + .processes)]
    TooFewRuns {
        /// `--runs`.
        runs: u64,
        /// `--processes`.
        processes: u64,
    },
    /// `sim corpus` would overwrite an entry.
    #[error("{0} exists, and sim corpus does not overwrite corpus entries; write into an empty directory, or add --force to overwrite")]
    WouldOverwrite(PathBuf),
    /// `sim hunt` could not start.
    #[error(transparent)]
    Hunt(#[from] HuntError),
    /// `SIM_OS_HOOKS` holds something other than `on` or `off`.
    #[error(transparent)]
    HooksSetting(#[from] crate::os::BadHooksSetting),
    /// A story filter names a node or kind the trace does not have.
    #[error(transparent)]
    StoryFilter(#[from] crate::render::StoryFilterError),
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
    List(list::ListArgs),
    /// Run one input; print the replay line, the trace on failure, and a summary line.
    Run(run::RunArgs),
    /// Run a range of seeds and count failures.
    Sweep(sweep::SweepArgs),
    /// Replay a repro file (or raw input bytes with --system) and print its full trace.
    Replay(replay::ReplayArgs),
    /// Shrink a failing input; print the shrunk trace, write the shrunk input, summarise.
    Shrink(shrink::ShrinkArgs),
    /// Draw a trace as a space-time diagram (SVG) and export it for ShiViz.
    Render(render::RenderArgs),
    /// Combine the results of every shard of a sweep into the unsharded summary.
    Merge(merge::MergeArgs),
    /// Write seeded runs as byte inputs: a fuzzer's starting corpus with the sweep's variety.
    Corpus(corpus::CorpusArgs),
    /// Hunt for a failure with libFuzzer (the crate's own fuzz target, built with the best
    /// settings we know) from seeded runs; ends with `found=0|1 execs=N wall_s=S`.
    Hunt(hunt::HuntArgs),
    /// Run one seed many times, here and in fresh processes: do the history hashes agree?
    Determinism(determinism::DeterminismArgs),
}

/// The variant a command runs: `--bug` and every run flag (see [`crate::run_spec`]).
#[derive(Args, Debug, Clone)]
struct VariantArgs {
    /// The planted bug to enable (see `sim list`); unset = the correct system.
    #[arg(long)]
    bug: Option<String>,
    #[command(flatten)]
    flags: RunFlags,
}

/// Where results go.
#[derive(Args, Debug, Clone)]
struct OutputArgs {
    /// Print JSON instead of key=value lines.
    #[arg(long)]
    json: bool,
    /// Where failures' traces and repro files are written.
    #[arg(long, value_name = "DIR", default_value = "target/sim-failures")]
    failures_dir: PathBuf,
}

/// Which lines of a story to print: the flags of [`crate::render::StoryFilter`].
#[derive(Args, Debug, Clone, Default)]
struct StoryArgs {
    /// Story lines at node NAME, messages sent to or from it, and lines of no node
    /// (repeatable: any of the nodes).
    #[arg(long = "node", value_name = "NAME")]
    nodes: Vec<String>,
    /// Story lines of kind KIND, by the name the story prints: op, result, send, drop, crash,
    /// FAILED, ... (repeatable: any of the kinds).
    #[arg(long = "kind", value_name = "KIND")]
    kinds: Vec<String>,
    /// Story lines at or after T milliseconds of virtual time.
    #[arg(long, value_name = "T")]
    from_ms: Option<u64>,
    /// Story lines before T milliseconds of virtual time.
    #[arg(long, value_name = "T")]
    to_ms: Option<u64>,
    /// Only the causal past of the failure (the failed check's operations, or the last
    /// event), by the vector clocks of the ShiViz export.
    #[arg(long)]
    causal: bool,
}

impl StoryArgs {
    fn filter(&self) -> crate::render::StoryFilter {
        let mut filter = crate::render::StoryFilter::new();
        for node in &self.nodes {
            filter = filter.node(node);
        }
        for kind in &self.kinds {
            filter = filter.kind(kind);
        }
        if let Some(ms) = self.from_ms {
            filter = filter.from_ms(ms);
        }
        if let Some(ms) = self.to_ms {
            filter = filter.to_ms(ms);
        }
        if self.causal {
            filter = filter.causal();
        }
        filter
    }
}

/// Writes the story lines `filter` keeps, each as `  | line`, under a `story:` line.
fn print_story(
    events: &[crate::trace::Event],
    filter: &crate::render::StoryFilter,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    writeln!(out, "story:")?;
    for line in filter.story(events)?.lines() {
        writeln!(out, "  | {line}")?;
    }
    Ok(())
}

/// The `sim` command line over a set of systems.
pub struct Cli {
    systems: Vec<SystemSpec>,
    replay_prefix: String,
    build: BuildInfo,
    /// Set by Ctrl-C or SIGTERM during a sweep (run from [`Cli::main`]): the sweep stops and
    /// prints what it found so far.
    stop: Arc<AtomicBool>,
    /// Run from [`Cli::main`]: `out` is this process's standard output and its signals are
    /// the command's. A sweep then stops on a signal, and checks while it runs whether its
    /// standard output's reader has gone.
    whole_process: bool,
}

impl Cli {
    /// A command line for `systems`.
    pub fn new(systems: Vec<SystemSpec>) -> Self {
        Cli {
            systems,
            replay_prefix: "sim".to_string(),
            build: BuildInfo::UNKNOWN,
            stop: Arc::new(AtomicBool::new(false)),
            whole_process: false,
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

    /// Parses the process arguments, runs, and returns the exit code. During a sweep, Ctrl-C,
    /// SIGTERM or SIGHUP stops it cleanly: it prints the summary so far and the replay line
    /// of each failure found; a second signal ends the process at once (other commands end
    /// at the first, as any process does). A closed standard output (`| head`) ends a command
    /// quietly with exit status 141.
    pub fn main(mut self) -> i32 {
        self.whole_process = true;
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
        if let Err(e) = crate::os::hooks_setting() {
            output::to_stderr(&format!("error: {e}"));
            return 2;
        }
        let result = match command.action {
            Action::List(args) => list::execute(self, &args, out),
            Action::Run(args) => run::execute(self, &args, out),
            Action::Sweep(args) => sweep::execute(self, &args, out),
            Action::Replay(args) => replay::execute(self, &args, out),
            Action::Shrink(args) => shrink::execute(self, &args, out),
            Action::Render(args) => render::execute(self, &args, out),
            Action::Merge(args) => merge::execute(self, &args, out),
            Action::Corpus(args) => corpus::execute(self, &args, out),
            Action::Hunt(args) => hunt::execute(self, &args, out),
            Action::Determinism(args) => determinism::execute(self, &args, out),
        };
        match result {
            Ok(code) => code,
            // The reader has gone: nobody is left to tell.
            Err(e) if output::is_closed_pipe(&e) => output::PIPE_CLOSED,
            Err(e) => {
                output::to_stderr(&format!("error: {e}"));
                2
            }
        }
    }

    /// The variant `--system NAME` with `args`' bug and flags.
    fn variant(&self, system: &str, args: &VariantArgs) -> Result<Variant, CliError> {
        let spec = system::find(&self.systems, system)?;
        Ok(Variant::new(spec, args.bug.as_deref(), args.flags.clone())?)
    }

    /// The variant the repro file at `path` describes. The command line may repeat what the
    /// file says; a system, bug or flag it sets to something else is refused.
    fn variant_of_repro(
        &self,
        path: &Path,
        repro: &Repro,
        system: Option<&str>,
        args: &VariantArgs,
    ) -> Result<Variant, CliError> {
        let file = path.display();
        let mut conflicts = Vec::new();
        if let Some(system) = system.filter(|s| *s != repro.system) {
            conflicts.push(format!(
                "--system {system} but the file says {}",
                repro.system
            ));
        }
        if let Some(bug) = args
            .bug
            .as_deref()
            .filter(|b| Some(*b) != repro.bug.as_deref())
        {
            let theirs = repro.bug.as_deref().unwrap_or("none");
            conflicts.push(format!("--bug {bug} but the file says {theirs}"));
        }
        conflicts.extend(args.flags.conflicts_with(&repro.flags));
        if !conflicts.is_empty() {
            let what = conflicts.join("; ");
            return Err(CliError::ReproConflict(format!("{file}: {what}")));
        }
        Ok(repro.variant(&self.systems)?)
    }
}

fn bug_label(bug: Option<&str>) -> &str {
    bug.unwrap_or("correct")
}

/// The error for a file given as an input that holds no input: a trace (JSON or readable),
/// or JSON that is not a repro file.
fn not_an_input(path: &Path, file: crate::repro::InputFile) -> CliError {
    use crate::repro::InputFile;
    let name = path.display().to_string();
    match file {
        InputFile::Json(what) => CliError::JsonNotRepro { path: name, what },
        InputFile::TraceText => {
            let repro = name
                .strip_suffix(".trace.txt")
                .map(|stem| format!("{stem}.repro.json"));
            let fix = match repro {
                Some(repro) => format!("replay the repro file written next to it: sim replay {repro}"),
                None => "replay the repro file written next to it (sim replay FILE.repro.json), or draw its JSON trace with sim render FILE.trace.json".to_string(),
            };
            CliError::TraceTextNotInput { path: name, fix }
        }
        InputFile::Trace(_) | InputFile::Repro(_) | InputFile::Raw(_) => {
            CliError::TraceNotInput(name)
        }
    }
}

/// What is wrong with a `--seeds` value that is not a range `START..END` with `START < END`.
fn bad_seeds(text: &str) -> String {
    let bounds = text
        .split_once("..")
        .and_then(|(a, b)| Some((a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?)));
    match bounds {
        Some((a, b)) if a == b => format!(
            "--seeds {text} is empty: END is excluded, so it holds no seed; for seed {a} alone write --seeds {a}..{}",
            a.saturating_add(1)
        ),
        Some((a, b)) if a > b => format!(
            "--seeds {text} is reversed: START must be below END; write --seeds {b}..{a}"
        ),
        _ => format!("--seeds {text:?} is not a range; write it as START..END, e.g. --seeds 0..1000"),
    }
}
