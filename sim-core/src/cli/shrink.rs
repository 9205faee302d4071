//! `sim shrink`: a failing input made small (see [`crate::shrink`]); the shrunk trace, its
//! story (narrowed by `--node`, `--kind`, `--from-ms`, `--to-ms`, `--causal`), the files
//! written, and a summary line (whose `story_lines=` counts the whole story).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::files::{self, print_files, write_json, write_text};
use super::{bug_label, print_story, Cli, CliError, OutputArgs, StoryArgs, VariantArgs};
use crate::choice::Input;
use crate::render::{self, StoryFilter};
use crate::repro::{FailureFiles, InputFile, Repro, RunIdentity, TraceFile};
use crate::run_spec::RunSpec;
use crate::shrink::{Shrinker, Shrunk};
use crate::trace::render_lines;

#[derive(Args, Debug)]
pub(super) struct ShrinkArgs {
    /// The system (see `sim list`); not needed for a repro file, which names its own.
    #[arg(long, required_unless_present = "input")]
    system: Option<String>,
    /// Shrink the run of this seed.
    #[arg(long, conflicts_with = "input", required_unless_present = "input")]
    seed: Option<u64>,
    /// Shrink the run of these input bytes, or of a repro file's input with its flags.
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
    #[arg(long, default_value_t = crate::shrink::DEFAULT_MAX_RUNS)]
    max_runs: u64,
    /// At most this many events over every candidate run: the budget in the runs' own cost,
    /// which ends a long run's shrink first.
    #[arg(long, default_value_t = crate::shrink::DEFAULT_MAX_STEPS)]
    max_steps: u64,
    #[command(flatten)]
    story: StoryArgs,
    #[command(flatten)]
    variant: VariantArgs,
    #[command(flatten)]
    output: OutputArgs,
}

pub(super) fn execute(cli: &Cli, args: &ShrinkArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    if !args.output.json {
        return shrink(cli, args, out).map(|_| 1);
    }
    // stdout stays one JSON object; the trace, the story and the lines go to stderr.
    let done = shrink(cli, args, &mut std::io::stderr())?;
    let (shrunk, outcome) = (&done.shrunk, &done.shrunk.outcome);
    let json = serde_json::json!({
        "replay": done.replay, "class": outcome.class.name(), "invariant": outcome.invariant,
        "message": outcome.message,
        "bytes_before": shrunk.bytes_before.len(), "bytes_after": shrunk.bytes.len(),
        "events_before": shrunk.outcome_before.steps, "events_after": outcome.steps,
        "ops_before": shrunk.ops_before, "ops_after": shrunk.ops_after,
        "story_lines": render::story_lines(&shrunk.trace), "verified": shrunk.verified,
        "improved": shrunk.improved, "shrink_runs": shrunk.runs, "shrink_ms": done.wall_ms,
        "history_hash": format!("{:016x}", outcome.history_hash),
        "shrunk_input": done.bin.display().to_string(),
        "trace_file": done.files.trace_txt.display().to_string(),
        "trace_json_file": done.files.trace_json.display().to_string(),
        "repro_file": done.files.repro.display().to_string(),
        "replay_shrunk": format!("{} replay {}", cli.replay_prefix, done.files.repro.display()),
    });
    writeln!(out, "{json}")?;
    Ok(1)
}

/// A finished shrink and where its results went.
struct Done {
    replay: String,
    shrunk: Shrunk,
    files: FailureFiles,
    bin: PathBuf,
    wall_ms: u128,
}

/// Shrinks, writing the text lines to `out`.
fn shrink(cli: &Cli, args: &ShrinkArgs, out: &mut dyn Write) -> Result<Done, CliError> {
    let (original, replay) = original(cli, args)?;
    let filter = args.story.filter();
    if !filter.keeps_all() {
        // Checked on the original run before the shrink, so a misspelt node costs no search:
        // a shrunk run has the same nodes.
        filter.events(original.run_traced().history.events())?;
    }
    files::check_outputs(&[&args.out, &args.trace_json, &args.svg])?;
    files::check_dir_writable(&args.output.failures_dir)?;
    // The original's replay line first, so it survives a crash or a kill.
    writeln!(out, "replay={replay}")?;
    out.flush()?;
    // Wall clock for shrink_ms only, outside every run (see the module docs).
    let started = std::time::Instant::now();
    let opts = original.variant.options();
    let build = original.variant.system.build;
    let shrinker = if original.variant.system.thread_per_run {
        Shrinker::thread_per_run(|| build(&opts))
    } else {
        Shrinker::new(|| build(&opts))
    };
    let shrunk = shrinker
        .max_runs(args.max_runs)
        .max_steps(args.max_steps)
        .run(&original.input)?;
    let wall_ms = started.elapsed().as_millis();
    print_trace(&shrunk, &filter, out)?;
    let small = RunSpec::new(original.variant.clone(), Input::Bytes(shrunk.bytes.clone()));
    let (files, bin) = write_outputs(args, &original, &small, &shrunk, out)?;
    writeln!(out, "{}", RunIdentity::of(&small, cli.build))?;
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
        cli.replay_prefix,
        files.repro.display()
    )?;
    writeln!(
        out,
        "shrink_runs={} shrink_ms={wall_ms} improved={}",
        shrunk.runs, shrunk.improved
    )?;
    print_summary(&shrunk, out)?;
    Ok(Done {
        replay,
        shrunk,
        files,
        bin,
        wall_ms,
    })
}

/// The run to shrink and the command that replays it: a seed, raw bytes, or a repro file
/// (its own input and flags; replayed with `sim replay FILE`).
fn original(cli: &Cli, args: &ShrinkArgs) -> Result<(RunSpec, String), CliError> {
    let prefix = &cli.replay_prefix;
    let path = match (&args.seed, &args.input) {
        (Some(seed), _) => {
            let system = args
                .system
                .as_deref()
                .expect("clap requires --system with --seed");
            let run = RunSpec::new(cli.variant(system, &args.variant)?, Input::Seed(*seed));
            let replay = run.run_command(prefix, None);
            return Ok((run, replay));
        }
        (None, Some(path)) => path,
        (None, None) => unreachable!("clap requires --seed or --input"),
    };
    let file = path.display().to_string();
    match files::read_input(path)? {
        InputFile::Raw(bytes) => {
            let system = args
                .system
                .as_deref()
                .ok_or_else(|| CliError::ShrinkNeedsSystem(file.clone()))?;
            let run = RunSpec::new(cli.variant(system, &args.variant)?, Input::Bytes(bytes));
            let replay = run.run_command(prefix, Some(&file));
            Ok((run, replay))
        }
        InputFile::Repro(repro) => {
            let variant =
                cli.variant_of_repro(path, &repro, args.system.as_deref(), &args.variant)?;
            let input = files::repro_input(path, &repro)?;
            Ok((
                RunSpec::new(variant, input),
                format!("{prefix} replay {file}"),
            ))
        }
        other => Err(super::not_an_input(path, other)),
    }
}

fn print_trace(shrunk: &Shrunk, filter: &StoryFilter, out: &mut dyn Write) -> Result<(), CliError> {
    write!(out, "{}", render_lines(&shrunk.trace))?;
    writeln!(out, "message={:?}", shrunk.outcome.message)?;
    print_story(&shrunk.trace, filter, out)?;
    if !shrunk.improved {
        writeln!(
            out,
            "note=\"nothing smaller fails the same way; the original input is returned\""
        )?;
    }
    Ok(())
}

/// Writes the failure files, the shrunk input and the optional trace and SVG.
fn write_outputs(
    args: &ShrinkArgs,
    original: &RunSpec,
    small: &RunSpec,
    shrunk: &Shrunk,
    out: &mut dyn Write,
) -> Result<(FailureFiles, PathBuf), CliError> {
    let outcome = &shrunk.outcome;
    let origin = format!("shrunk from {}", original.input_identity());
    let stem = format!("{}.shrunk", original.stem());
    let repro = Repro::of_run(small, shrunk.bytes.clone(), &origin).pin(outcome);
    let trace = TraceFile::of_run(small, outcome, &shrunk.trace);
    let dir = &args.output.failures_dir;
    let files = files::write_failure(dir, &stem, &repro, &trace)?;
    let bin = args
        .out
        .clone()
        .unwrap_or_else(|| dir.join(format!("{stem}.bin")));
    files::write_text_bytes(&bin, &shrunk.bytes)?;
    if let Some(path) = &args.trace_json {
        write_json(path, &trace)?;
        writeln!(out, "trace_json={}", path.display())?;
    }
    if let Some(path) = &args.svg {
        let variant = &original.variant;
        let title = format!(
            "{} {} — {origin}",
            variant.system.name,
            bug_label(variant.bug)
        );
        write_text(path, &render::svg(&shrunk.trace, &title))?;
        writeln!(out, "svg={}", path.display())?;
    }
    Ok((files, bin))
}

fn print_summary(shrunk: &Shrunk, out: &mut dyn Write) -> Result<(), CliError> {
    let outcome = &shrunk.outcome;
    writeln!(
        out,
        "class={} invariant={} bytes_before={} bytes_after={} events_before={} events_after={} ops_before={} ops_after={} story_lines={} verified={}",
        outcome.class,
        outcome.invariant.as_deref().unwrap_or("none"),
        shrunk.bytes_before.len(),
        shrunk.bytes.len(),
        shrunk.outcome_before.steps,
        outcome.steps,
        shrunk.ops_before,
        shrunk.ops_after,
        render::story_lines(&shrunk.trace),
        shrunk.verified
    )?;
    Ok(())
}
