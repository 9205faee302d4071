//! `sim replay`: a repro file (or raw input bytes with `--system`) run again with its full
//! trace, checked strictly against the history hash the file pinned.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::files::{self, write_json};
use super::{Cli, CliError, StoryArgs, VariantArgs};
use crate::repro::{InputFile, Repro, RunIdentity, TraceFile};
use crate::run_spec::RunSpec;
use crate::sim::Report;
use crate::trace::render_lines;

#[derive(Args, Debug)]
pub(super) struct ReplayArgs {
    /// A repro file (*.repro.json), or a raw input file together with --system.
    file: PathBuf,
    /// The system, for a raw input file (a repro file names its own).
    #[arg(long)]
    system: Option<String>,
    /// Write the machine-readable (JSON) trace to PATH.
    #[arg(long, value_name = "PATH")]
    trace_json: Option<PathBuf>,
    /// Print one JSON object instead of the trace and key=value lines: the outcome, the
    /// strict check and the (filtered) trace's events.
    #[arg(long)]
    json: bool,
    /// How a raw input file's bytes are read: lanes (every input written now) or flat (an
    /// input recorded before the lane encoding). Unset: lanes, and a raw input that passes
    /// so but fails when read flat is refused, since it was most likely recorded before.
    #[arg(long, value_enum, value_name = "ENCODING")]
    encoding: Option<files::Encoding>,
    #[command(flatten)]
    variant: VariantArgs,
    /// Print only the trace lines these select (the strict check still covers the whole run).
    #[command(flatten)]
    filter: StoryArgs,
}

/// What a repro file pinned, for the strict check.
struct Pinned {
    repro: Option<Box<Repro>>,
}

pub(super) fn execute(cli: &Cli, args: &ReplayArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let (run, pinned) = run_spec(cli, args)?;
    files::check_outputs(&[&args.trace_json])?;
    let file = args.file.display();
    let replay = match pinned.repro {
        Some(_) => format!("{} replay {file}", cli.replay_prefix),
        None => format!("{} replay {} {file}", cli.replay_prefix, run.variant.args()),
    };
    if !args.json {
        // First, so it survives a crash or a kill of this process.
        writeln!(out, "replay={replay}")?;
        out.flush()?;
    }
    let report = run.run_traced();
    let outcome = &report.outcome;
    if pinned.repro.is_none() {
        let passed = !outcome.class.is_failure();
        files::check_raw_encoding(&cli.replay_prefix, &args.file, &run, args.encoding, passed)?;
    }
    let events = report.history.events();
    let filter = args.filter.filter();
    if args.json {
        return print_json(cli, args, (&run, &replay, &pinned, &report), out);
    }
    if filter.keeps_all() {
        write!(out, "{}", render_lines(events))?;
    } else {
        let kept: Vec<_> = filter.trace_events(events)?.into_iter().cloned().collect();
        write!(out, "{}", render_lines(&kept))?;
        writeln!(out, "trace_lines={} of={}", kept.len(), events.len())?;
    }
    if outcome.class.is_failure() {
        writeln!(out, "message={:?}", outcome.message)?;
    }
    if let Some(path) = &args.trace_json {
        write_json(
            path,
            &TraceFile::of_run(&run, outcome, report.history.events()),
        )?;
        writeln!(out, "trace_json={}", path.display())?;
    }
    writeln!(out, "{}", RunIdentity::of(&run, cli.build))?;
    let strict = check_strict(&pinned, &report, out)?;
    writeln!(out, "input={}", run.input_identity())?;
    writeln!(out, "{}", outcome.summary_line())?;
    Ok(i32::from(outcome.class.is_failure() || !strict))
}

/// The run the file describes: a repro's variant and input, or raw bytes on `--system`.
fn run_spec(cli: &Cli, args: &ReplayArgs) -> Result<(RunSpec, Pinned), CliError> {
    let path = &args.file;
    match files::read_input(path)? {
        InputFile::Repro(repro) => {
            files::refuse_encoding_for_repro(path, args.encoding)?;
            let variant =
                cli.variant_of_repro(path, &repro, args.system.as_deref(), &args.variant)?;
            let input = files::repro_input(path, &repro)?;
            let run = RunSpec::new(variant, input);
            Ok((run, Pinned { repro: Some(repro) }))
        }
        InputFile::Raw(bytes) => {
            let name = args
                .system
                .as_deref()
                .ok_or_else(|| CliError::ReplayNeedsSystem(path.display().to_string()))?;
            let variant = cli.variant(name, &args.variant)?;
            Ok((
                RunSpec::new(variant, files::raw_input(bytes, args.encoding)),
                Pinned { repro: None },
            ))
        }
        other => Err(super::not_an_input(path, other)),
    }
}

/// `--json`: one object with what the text lines say; exit code as without it.
fn print_json(
    cli: &Cli,
    args: &ReplayArgs,
    (run, replay, pinned, report): (&RunSpec, &str, &Pinned, &Report),
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let outcome = &report.outcome;
    let events = report.history.events();
    let kept: Vec<_> = args.filter.filter().trace_events(events)?;
    if let Some(path) = &args.trace_json {
        write_json(path, &TraceFile::of_run(run, outcome, events))?;
    }
    let checked = pinned
        .repro
        .as_ref()
        .map(|repro| repro.check_replay(outcome));
    let strict = checked.as_ref().is_none_or(|c| c.is_ok());
    let json = serde_json::json!({
        "replay": replay, "outcome": outcome,
        "history_hash_hex": format!("{:016x}", outcome.history_hash),
        "pinned_history_hash": pinned.repro.as_ref().and_then(|r| r.history_hash.clone()),
        "strict": strict, "strict_message": checked.and_then(|c| c.err()),
        "input": run.input_identity(), "identity": RunIdentity::of(run, cli.build).to_string(),
        "trace_json": args.trace_json.as_ref().map(|p| p.display().to_string()),
        "trace_lines": kept.len(), "of": events.len(), "trace": kept,
    });
    writeln!(out, "{json}")?;
    Ok(i32::from(outcome.class.is_failure() || !strict))
}

/// Prints the strict check against the pinned hash, if any; false if it diverged.
fn check_strict(pinned: &Pinned, report: &Report, out: &mut dyn Write) -> Result<bool, CliError> {
    let Some(repro) = &pinned.repro else {
        return Ok(true);
    };
    let checked = repro.check_replay(&report.outcome);
    let strict = checked.is_ok();
    if let Some(hash) = &repro.history_hash {
        writeln!(out, "pinned_history_hash={hash} strict={strict}")?;
    } else if !strict {
        writeln!(out, "strict=false")?;
    }
    if let Err(why) = checked {
        writeln!(out, "message={why:?}")?;
    }
    Ok(strict)
}
