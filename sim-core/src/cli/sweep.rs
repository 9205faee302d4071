//! `sim sweep`: a range of seeds on one variant, or on every system and bug (`--all`); one
//! summary line per variant, and for `--all` the campaign's verdict.

use std::io::Write;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::files::{self, print_files};
use super::{bug_label, Cli, CliError, OutputArgs, VariantArgs};
use crate::choice::Input;
use crate::report::Outcome;
use crate::repro::{self, FailureFiles};
use crate::run_spec::{RunSpec, Variant};

#[derive(Args, Debug)]
pub(super) struct SweepArgs {
    /// The system to sweep.
    #[arg(long)]
    system: Option<String>,
    /// Sweep every system, correct and with each planted bug.
    #[arg(long)]
    all: bool,
    /// Seeds to run, START..END (END excluded) [default: 0..1000]. With --all and no
    /// --seeds, each planted bug is swept from seed 0 until its first failure (at most
    /// 200,000 seeds), so a deep bug is found too; correct variants run 0..1000.
    #[arg(long)]
    seeds: Option<String>,
    #[command(flatten)]
    variant: VariantArgs,
    #[command(flatten)]
    output: OutputArgs,
}

/// What one variant's sweep found.
struct Swept {
    runs: u64,
    failures: u64,
    first_failure: Option<(u64, Outcome)>,
    files: Option<FailureFiles>,
    runs_per_sec: f64,
}

/// Seeds of a sweep when `--seeds` is not given.
const DEFAULT_SEEDS: std::ops::Range<u64> = 0..1000;
/// With `--all` and no `--seeds`: the most seeds a planted bug is swept for its first failure.
const CAMPAIGN_BUG_SEEDS_MAX: u64 = 200_000;

pub(super) fn execute(cli: &Cli, args: &SweepArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let seeds = match &args.seeds {
        Some(text) => parse_seeds(text)?,
        None => DEFAULT_SEEDS,
    };
    // The campaign's question for a planted bug is "is it found?": sweep until it is.
    let hunt_bugs = args.all && args.seeds.is_none();
    let variants = variants(cli, args)?;
    files::check_dir_writable(&args.output.failures_dir)?;
    let mut any_failure = false;
    // For --all: correct variants that failed, and planted bugs that were (not) found.
    let (mut correct_failed, mut bugs_found, mut bugs) = (0u64, 0u64, 0u64);
    for variant in &variants {
        let swept = if hunt_bugs && variant.bug.is_some() {
            sweep_one(cli, args, variant, 0..CAMPAIGN_BUG_SEEDS_MAX, true, out)?
        } else {
            sweep_one(cli, args, variant, seeds.clone(), false, out)?
        };
        any_failure |= swept.failures > 0;
        if variant.bug.is_some() {
            bugs += 1;
            bugs_found += u64::from(swept.failures > 0);
        } else {
            correct_failed += swept.failures;
        }
        print_summary(args, variant, &swept, out)?;
    }
    if args.all {
        print_verdict(args.output.json, correct_failed, bugs_found, bugs, out)?;
    }
    Ok(i32::from(any_failure))
}

/// The variants to sweep: one, or (with `--all`) every system, correct and with each bug.
fn variants(cli: &Cli, args: &SweepArgs) -> Result<Vec<Variant>, CliError> {
    match (&args.system, args.all) {
        (Some(name), false) => Ok(vec![cli.variant(name, &args.variant)?]),
        (None, true) => {
            if let Some(bug) = &args.variant.bug {
                return Err(CliError::BugWithAll(bug.clone()));
            }
            let mut all = Vec::new();
            for s in &cli.systems {
                let bugs = std::iter::once(None).chain(s.bugs.iter().map(|b| Some(b.name)));
                for bug in bugs {
                    all.push(Variant::new(s, bug, args.variant.flags.clone())?);
                }
            }
            Ok(all)
        }
        _ => Err(CliError::SweepTarget),
    }
}

fn progress_bar(variant: &Variant, runs: u64) -> ProgressBar {
    let bar = ProgressBar::new(runs);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:30} [{bar:30}] {pos}/{len} seeds, {per_sec}, failures shown below",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let bug = variant.bug.unwrap_or("(correct)");
    bar.set_message(format!("{} {bug}", variant.system.name));
    bar
}

fn sweep_one(
    cli: &Cli,
    args: &SweepArgs,
    variant: &Variant,
    seeds: std::ops::Range<u64>,
    stop_at_first_failure: bool,
    out: &mut dyn Write,
) -> Result<Swept, CliError> {
    let bar = progress_bar(variant, seeds.end - seeds.start);
    // Before the sweep starts, so it survives a panic or a kill: how to replay a seed.
    eprintln!(
        "sweep {} {}: replay any seed with: {} run {} --seed N",
        variant.system.name,
        bug_label(variant.bug),
        cli.replay_prefix,
        variant.args()
    );
    // Wall clock for runs_per_sec only, outside every run (see the module docs).
    let started = std::time::Instant::now();
    let mut swept = Swept {
        runs: seeds.end - seeds.start,
        failures: 0,
        first_failure: None,
        files: None,
        runs_per_sec: 0.0,
    };
    let opts = variant.options();
    let swept_start = seeds.start;
    for seed in seeds {
        let outcome = (variant.system.build)(&opts)
            .run_input(&Input::Seed(seed))
            .outcome;
        if outcome.class.is_failure() {
            swept.failures += 1;
            if swept.first_failure.is_none() {
                bar.suspend(|| eprintln!("first failure: seed {seed}: {}", outcome.summary_line()));
                let run = RunSpec::new(variant.clone(), Input::Seed(seed));
                // Written as soon as it is found, so a killed sweep still leaves it behind.
                swept.files = record_first_failure(cli, args, &run, out)?;
                swept.first_failure = Some((seed, outcome));
                if stop_at_first_failure {
                    swept.runs = seed + 1 - swept_start;
                    bar.inc(1);
                    break;
                }
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    swept.runs_per_sec = swept.runs as f64 / started.elapsed().as_secs_f64().max(1e-9);
    Ok(swept)
}

/// Runs the first failure again with recording on and leaves its files behind; prints its
/// trace tail, identity, files and replay line.
fn record_first_failure(
    cli: &Cli,
    args: &SweepArgs,
    run: &RunSpec,
    out: &mut dyn Write,
) -> Result<Option<FailureFiles>, CliError> {
    let dir = &args.output.failures_dir;
    let (report, files) = repro::record_failure(run, dir).map_err(|source| CliError::File {
        action: "write failure files into",
        path: dir.clone(),
        source,
    })?;
    let Some(files) = files else {
        eprintln!(
            "first failure: {} passed when run again with recording on ({}): \
             the run depends on something outside its input; check with `sim run` twice",
            run.input_identity(),
            report.outcome.summary_line()
        );
        return Ok(None);
    };
    let mut text = Vec::new();
    let seed = run.input_identity().replace("seed:", "");
    writeln!(
        text,
        "first_failure=seed:{seed} {}",
        report.outcome.summary_line()
    )?;
    for line in repro::last_lines(report.history.events(), 8).lines() {
        writeln!(text, "  | {line}")?;
    }
    writeln!(text, "{}", run.identity(cli.build))?;
    print_files(&mut text, &files)?;
    writeln!(text, "replay={}", run.run_command(&cli.replay_prefix, None))?;
    if args.output.json {
        // stdout stays one JSON object per line; the details go to stderr.
        std::io::stderr().write_all(&text)?;
    } else {
        out.write_all(&text)?;
    }
    Ok(Some(files))
}

fn print_summary(
    args: &SweepArgs,
    variant: &Variant,
    swept: &Swept,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let bug_name = variant.bug.unwrap_or("none");
    let (runs, failures) = (swept.runs, swept.failures);
    if args.output.json {
        let files = swept.files.as_ref();
        let json = serde_json::json!({
            "system": variant.system.name, "bug": bug_name, "seeds": runs, "failures": failures,
            "first_failure_seed": swept.first_failure.as_ref().map(|(s, _)| *s),
            "first_failure": swept.first_failure.as_ref().map(|(_, o)| o),
            "runs_per_sec": swept.runs_per_sec.round(),
            "trace_file": files.map(|f| f.trace_txt.display().to_string()),
            "repro_file": files.map(|f| f.repro.display().to_string()),
        });
        writeln!(out, "{json}")?;
        return Ok(());
    }
    let prefix = if args.all {
        format!("system={} bug={bug_name} ", variant.system.name)
    } else {
        String::new()
    };
    let first_seed = swept
        .first_failure
        .as_ref()
        .map_or("none".to_string(), |(s, _)| s.to_string());
    writeln!(
        out,
        "{prefix}seeds={runs} failures={failures} first_failure_seed={first_seed} runs_per_sec={:.0}",
        swept.runs_per_sec
    )?;
    Ok(())
}

/// One line a person can act on: the campaign is as expected when every correct variant
/// passed every seed and every planted bug was found.
fn print_verdict(
    json: bool,
    correct_failed: u64,
    bugs_found: u64,
    bugs: u64,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let verdict = if correct_failed == 0 && bugs_found == bugs {
        "as-expected"
    } else {
        "UNEXPECTED"
    };
    if json {
        let json = serde_json::json!({"campaign": verdict, "correct_runs_failed": correct_failed,
            "planted_bugs_found": bugs_found, "planted_bugs": bugs});
        writeln!(out, "{json}")?;
    } else {
        writeln!(
            out,
            "campaign={verdict} correct_runs_failed={correct_failed} planted_bugs_found={bugs_found}/{bugs}"
        )?;
    }
    Ok(())
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
