//! `sim run`: one input; the replay line first, the trace on failure, the summary line last.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::files::{self, print_files, write_json};
use super::{Cli, CliError, OutputArgs, VariantArgs};
use crate::choice::Input;
use crate::report::Outcome;
use crate::repro::{FailureFiles, InputFile, Repro, RunIdentity, TraceFile};
use crate::run_spec::RunSpec;
use crate::sim::Report;
use crate::trace::{render_lines, Event};

#[derive(Args, Debug)]
pub(super) struct RunArgs {
    /// The system to run (see `sim list`).
    #[arg(long)]
    system: String,
    /// Run on this seed.
    #[arg(long, conflicts_with = "input", required_unless_present = "input")]
    seed: Option<u64>,
    /// Run on the bytes of this file (a fuzz input or a saved run), or on a repro file's input
    /// with its flags.
    #[arg(long)]
    input: Option<PathBuf>,
    /// How a raw --input file's bytes are read: lanes (every input written now) or flat (an
    /// input recorded before the lane encoding; with --save-input, the run is saved in the
    /// lanes). Unset: lanes, and a raw input that passes so but fails when read flat is
    /// refused, since it was most likely recorded before.
    #[arg(long, value_enum, value_name = "ENCODING", requires = "input")]
    encoding: Option<files::Encoding>,
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
    variant: VariantArgs,
    #[command(flatten)]
    output: OutputArgs,
}

/// A finished run and where its results went.
struct Done<'a> {
    run: &'a RunSpec,
    replay: String,
    report: Report,
    bytes: Vec<u8>,
    files: Option<FailureFiles>,
}

pub(super) fn execute(cli: &Cli, args: &RunArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let (run, raw) = run_spec(cli, args)?;
    let input_file = args.input.as_ref().map(|p| p.display().to_string());
    let replay = run.run_command(&cli.replay_prefix, input_file.as_deref());
    files::check_outputs(&[&args.save_input, &args.trace_json])?;
    files::check_dir_writable(&args.output.failures_dir)?;
    // The replay line goes out first, so it survives a crash or a kill of this process.
    if !args.output.json {
        writeln!(out, "replay={replay}")?;
        out.flush()?;
    }
    let (report, bytes) = run.run_encoded();
    let outcome = &report.outcome;
    if let Some(path) = args.input.as_ref().filter(|_| raw) {
        let passed = !outcome.class.is_failure();
        files::check_raw_encoding(&cli.replay_prefix, path, &run, args.encoding, passed)?;
    }
    let events = report.history.events();
    if let Some(path) = &args.save_input {
        files::write_text_bytes(path, &bytes)?;
    }
    if let Some(path) = &args.trace_json {
        write_json(path, &TraceFile::of_run(&run, outcome, events))?;
    }
    let files = if outcome.class.is_failure() {
        let repro = Repro::of_run(&run, bytes.clone(), &run.input_identity()).pin(outcome);
        let trace = TraceFile::of_run(&run, outcome, events);
        let dir = &args.output.failures_dir;
        Some(files::write_failure(dir, &run.stem(), &repro, &trace)?)
    } else {
        None
    };
    let done = Done {
        run: &run,
        replay,
        report,
        bytes,
        files,
    };
    if args.output.json {
        print_json(cli, args, &done, out)?;
    } else {
        print_text(cli, args, &done, out)?;
    }
    Ok(i32::from(done.report.outcome.class.is_failure()))
}

/// The run the arguments describe: `--seed`, raw bytes, or a repro file's input and flags;
/// and whether its input came from a raw file.
fn run_spec(cli: &Cli, args: &RunArgs) -> Result<(RunSpec, bool), CliError> {
    let path = match (&args.seed, &args.input) {
        (Some(seed), _) => {
            let variant = cli.variant(&args.system, &args.variant)?;
            return Ok((RunSpec::new(variant, Input::Seed(*seed)), false));
        }
        (None, Some(path)) => path,
        (None, None) => unreachable!("clap requires --seed or --input"),
    };
    match files::read_input(path)? {
        InputFile::Raw(bytes) => Ok((
            RunSpec::new(
                cli.variant(&args.system, &args.variant)?,
                files::raw_input(bytes, args.encoding),
            ),
            true,
        )),
        InputFile::Repro(repro) => {
            files::refuse_encoding_for_repro(path, args.encoding)?;
            let variant = cli.variant_of_repro(path, &repro, Some(&args.system), &args.variant)?;
            let input = files::repro_input(path, &repro)?;
            Ok((RunSpec::new(variant, input), false))
        }
        other => Err(super::not_an_input(path, other)),
    }
}

fn print_text(cli: &Cli, args: &RunArgs, done: &Done, out: &mut dyn Write) -> Result<(), CliError> {
    let outcome = &done.report.outcome;
    let failed = outcome.class.is_failure();
    if failed || args.trace {
        write!(out, "{}", render_lines(done.report.history.events()))?;
        if failed {
            writeln!(out, "message={:?}", outcome.message)?;
        }
    }
    if let Some(files) = &done.files {
        writeln!(out, "{}", RunIdentity::of(done.run, cli.build))?;
        print_files(out, files)?;
    }
    if let Some(path) = &args.trace_json {
        writeln!(out, "trace_json={}", path.display())?;
    }
    writeln!(out, "input={}", done.run.input_identity())?;
    if let Some(path) = &args.save_input {
        let len = done.bytes.len();
        writeln!(out, "saved_input={} bytes={len}", path.display())?;
    }
    writeln!(out, "{}", outcome.summary_line())?;
    Ok(())
}

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
    trace: Option<&'a [Event]>,
}

fn print_json(cli: &Cli, args: &RunArgs, done: &Done, out: &mut dyn Write) -> Result<(), CliError> {
    let outcome = &done.report.outcome;
    let show_trace = outcome.class.is_failure() || args.trace;
    let json = RunJson {
        replay: &done.replay,
        outcome,
        history_hash_hex: format!("{:016x}", outcome.history_hash),
        input: done.run.input_identity(),
        identity: RunIdentity::of(done.run, cli.build).to_string(),
        trace_file: done
            .files
            .as_ref()
            .map(|f| f.trace_txt.display().to_string()),
        repro_file: done.files.as_ref().map(|f| f.repro.display().to_string()),
        trace: show_trace.then_some(done.report.history.events()),
    };
    let line = serde_json::to_string(&json).expect("outcome serialises");
    writeln!(out, "{line}")?;
    Ok(())
}
