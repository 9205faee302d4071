//! `sim sweep`: a range of seeds on one variant, or on every system and bug (`--all`), on
//! every core (`--jobs`) and optionally one shard of the range (`--shard I/N`, results in
//! `--out FILE` for `sim merge`); one summary line per variant, and for `--all` the verdict.
//!
//! A variant with failures also gets a `classes=CLASS:COUNT,...` line (most first), just
//! before its summary line, so a harness panic is never read as a protocol failure; with
//! `--list`, one `failure seed=N class=CLASS` line per failing seed comes before that, in seed
//! order (the words are [`crate::report::failure_class`]'s). The summary line stays last.
//!
//! The results do not depend on `--jobs` (see [`crate::campaign`]): the same failures, the
//! same first failing seed, the same classes, the same lines but `runs_per_sec`.
//!
//! Nothing found is lost to a kill, a full disk or a closed pipe. Each failure is recorded the
//! moment it is found: a JSON line (flushed) in `--out FILE`, or else appended to the
//! variant's failure log `<failures-dir>/<variant>.failures.jsonl`, then its failure files
//! (traces and repro) if it is kept: the first `--keep N` failures found, the first of each
//! failure class, and every failure lower than any before it. A failure that cannot be
//! recorded is printed (`failure seed=N class=C` and its replay line) before the error.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use clap::Args;

use super::files::{self, print_files};
use super::interrupt::{self, Stopped};
use super::output::{self, Watched};
use super::progress::Progress;
use super::{Cli, CliError, OutputArgs, VariantArgs};
use crate::campaign::{classes_text, Campaign, Event, Failure, Shard, ShardLine, Tally};
use crate::choice::Input;
use crate::repro::{self, FailureFiles};
use crate::run_spec::{RunSpec, Variant};
use crate::sim::Report;

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
    /// 1,000,000 seeds), so a deep bug is found too; correct variants run 0..1000.
    #[arg(long)]
    seeds: Option<String>,
    /// Worker threads, one world each (default: every core); 1 runs on the main thread.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    jobs: Option<u64>,
    /// Run only part I of N of the seeds (seeds START+I, START+I+N, ...), e.g. 0/4.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<Shard>,
    /// Write one JSON line per failure, as found, and a summary per variant to FILE, for
    /// `sim merge` (instead of the failure log in --failures-dir).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Write failure files (traces and repro) for the first N failures found; the first
    /// failure of each class and the lowest failing seed get theirs too. Every failing seed
    /// is in the failure log (or --out FILE) whatever N is.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_KEEP)]
    keep: u64,
    /// Stop at the first (lowest) failing seed: `seeds=` then counts the runs up to and
    /// including it, on any number of workers (how a benchmark measures runs to a bug).
    #[arg(long)]
    until_first: bool,
    /// After the sweep, print every failing seed with its failure class, in seed order:
    /// `failure seed=N class=CLASS` (the seeds `classes=` counts).
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    variant: VariantArgs,
    #[command(flatten)]
    output: OutputArgs,
}

fn parse_shard(text: &str) -> Result<Shard, String> {
    Shard::parse(text).map_err(|e| e.to_string())
}

/// What one variant's sweep found, and where its first failure's files went.
struct Swept {
    tally: Tally,
    /// Every failing seed and its failure class, in the order found.
    failing: Vec<(u64, String)>,
    first: Option<Recorded>,
    /// Failures whose files were written.
    kept: u64,
    /// Where the failing seeds were logged, without `--out`.
    log: Option<PathBuf>,
    runs_per_sec: f64,
    complete: bool,
    /// Standard output's reader went away while the sweep ran.
    stdout_gone: bool,
}

/// The lowest failure recorded so far: its run with every event, and its files.
struct Recorded {
    seed: u64,
    report: Report,
    files: FailureFiles,
}

/// Seeds of a sweep when `--seeds` is not given.
const DEFAULT_SEEDS: std::ops::Range<u64> = 0..1000;
/// With `--all` and no `--seeds`: the most seeds a planted bug is swept for its first failure.
const CAMPAIGN_BUG_SEEDS_MAX: u64 = 1_000_000;
/// Failures found first whose files are written (`--keep`).
const DEFAULT_KEEP: u64 = 10;

pub(super) fn execute(cli: &Cli, args: &SweepArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let seeds = match &args.seeds {
        Some(text) => parse_seeds(text)?,
        None => DEFAULT_SEEDS,
    };
    // The campaign's question for a planted bug is "is it found?": sweep until it is.
    let hunt_bugs = args.all && args.seeds.is_none();
    if hunt_bugs && (args.shard.is_some() || args.out.is_some()) {
        return Err(CliError::ShardNeedsSeeds);
    }
    let variants = variants(cli, args)?;
    files::check_dir_writable(&args.output.failures_dir)?;
    if cli.whole_process {
        if let Err(e) = interrupt::install(&cli.stop) {
            output::to_stderr(&format!(
                "warning: Ctrl-C and SIGTERM will end the sweep without a summary ({e})"
            ));
        }
    }
    let mut results = match &args.out {
        Some(path) => Some(LineFile::create(path)?),
        None => None,
    };
    let mut out = Watched::new(out);
    let mut verdict = Verdict::default();
    for variant in &variants {
        let hunt = hunt_bugs && variant.bug.is_some();
        let range = if hunt {
            0..CAMPAIGN_BUG_SEEDS_MAX
        } else {
            seeds.clone()
        };
        let until_first = hunt || args.until_first;
        let swept = sweep_one(
            cli,
            args,
            variant,
            &range,
            until_first,
            &mut results,
            &mut out,
        )?;
        verdict.count(variant, &swept.tally);
        print_kept(args, &swept);
        if let Some(w) = results.as_mut() {
            let run = (
                campaign_words(args, &variants),
                variants.len() as u64,
                cli.build.commit,
            );
            w.write(&summary_line(args, variant, &seeds, &swept, run))?;
        }
        // For stdout, or (`for_stdout` false) for stderr when stdout has gone: there without
        // the --list lines (every failing seed is in the log) and, with --json, without the
        // first failure's details (already on stderr).
        let lines = |for_stdout: bool| -> Result<Vec<u8>, CliError> {
            let mut lines = Vec::new();
            if for_stdout || !args.output.json {
                print_first_failure(cli, args, variant, &swept, &mut lines)?;
            }
            print_summary(args, for_stdout && args.list, variant, &swept, &mut lines)?;
            if !swept.complete {
                print_interrupted(cli, args, variant, &swept, &mut lines)?;
            }
            Ok(lines)
        };
        out.write_all(&lines(true)?)?;
        out.flush()?;
        if (swept.stdout_gone || out.closed()) && results.is_none() {
            // Nobody reads the results and no file takes them: stop, and say what was found
            // where someone may still see it.
            output::bytes_to_stderr(&lines(false)?);
            return Ok(output::PIPE_CLOSED);
        }
        if !swept.complete {
            let stopped = interrupt::received().unwrap_or(Stopped::Interrupt);
            return Ok(stopped.exit_code(verdict.any_failure));
        }
    }
    if args.all {
        verdict.print(args.output.json, &mut out)?;
    }
    Ok(i32::from(verdict.any_failure))
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

/// A file of JSON lines, each flushed as written: `--out FILE`, or a failure log.
struct LineFile {
    path: PathBuf,
    writer: BufWriter<File>,
}

impl LineFile {
    /// Creates (or empties) `path`.
    fn create(path: &Path) -> Result<LineFile, CliError> {
        LineFile::open(
            path,
            OpenOptions::new().write(true).create(true).truncate(true),
        )
    }

    /// Opens `path` to add lines after those it has.
    fn append(path: &Path) -> Result<LineFile, CliError> {
        LineFile::open(path, OpenOptions::new().create(true).append(true))
    }

    fn open(path: &Path, options: &OpenOptions) -> Result<LineFile, CliError> {
        let file = options
            .open(path)
            .map_err(|source| write_error(path, source))?;
        Ok(LineFile {
            path: path.to_path_buf(),
            writer: BufWriter::new(file),
        })
    }

    /// Writes `line`, whole on disk before the next run: a killed sweep keeps what it found.
    fn write(&mut self, line: &ShardLine) -> Result<(), CliError> {
        let json = serde_json::to_string(line).expect("a shard line serialises");
        writeln!(self.writer, "{json}")
            .and_then(|()| self.writer.flush())
            .map_err(|source| write_error(&self.path, source))
    }
}

fn write_error(path: &Path, source: std::io::Error) -> CliError {
    CliError::File {
        action: "write",
        path: path.to_path_buf(),
        source,
    }
}

/// The failure log of `variant` in `dir`: every failing seed a sweep without `--out` finds,
/// appended as found.
fn log_path(dir: &Path, variant: &Variant) -> PathBuf {
    dir.join(format!("{}.failures.jsonl", variant.stem()))
}

/// Where one variant's failures are recorded as they arrive, and which keep their files.
struct Recorder<'a> {
    cli: &'a Cli,
    args: &'a SweepArgs,
    variant: &'a Variant,
    shard: Shard,
    /// `--out FILE`, shared by every variant; without it, the variant's log, opened at its
    /// first failure.
    results: &'a mut Option<LineFile>,
    log: Option<LineFile>,
    found: u64,
    classes: BTreeSet<String>,
    first: Option<Recorded>,
    kept: u64,
}

impl Recorder<'_> {
    /// Records a failure as it arrives: its line, then its files if it is kept (see the
    /// module docs).
    fn record(&mut self, failure: &Failure) -> Result<(), CliError> {
        let run = RunSpec::new(self.variant.clone(), Input::Seed(failure.seed));
        let class = failure.outcome.failure_class();
        self.found += 1;
        let line = ShardLine::Failure {
            variant: self.variant.args(),
            shard: self.shard.to_string(),
            seed: failure.seed,
            class: failure.outcome.class.name().to_string(),
            invariant: failure.outcome.invariant.clone(),
            history_hash: format!("{:016x}", failure.outcome.history_hash),
            replay: run.run_command(&self.cli.replay_prefix, None),
        };
        match self.results.as_mut() {
            Some(results) => results.write(&line)?,
            None => {
                if self.log.is_none() {
                    let path = log_path(&self.args.output.failures_dir, self.variant);
                    self.log = Some(LineFile::append(&path)?);
                }
                self.log.as_mut().expect("opened above").write(&line)?;
            }
        }
        let lowest = self.first.as_ref().is_none_or(|f| failure.seed < f.seed);
        let new_class = self.classes.insert(class);
        if !(lowest || new_class || self.found <= self.args.keep) {
            return Ok(());
        }
        let dir = &self.args.output.failures_dir;
        let (report, files) =
            repro::record_failure(&run, dir).map_err(|source| CliError::File {
                action: "write failure files into",
                path: dir.clone(),
                source,
            })?;
        match files {
            Some(files) => {
                self.kept += 1;
                if lowest {
                    self.first = Some(Recorded {
                        seed: failure.seed,
                        report,
                        files,
                    });
                }
            }
            None => output::to_stderr(&format!(
                "failure: seed {} passed when run again with recording on ({}): \
                 the run depends on something outside its input; check with `sim run` twice",
                failure.seed,
                report.outcome.summary_line()
            )),
        }
        Ok(())
    }
}

fn sweep_one(
    cli: &Cli,
    args: &SweepArgs,
    variant: &Variant,
    seeds: &std::ops::Range<u64>,
    until_first_failure: bool,
    results: &mut Option<LineFile>,
    out: &mut Watched,
) -> Result<Swept, CliError> {
    let shard = args.shard.unwrap_or(Shard::WHOLE);
    let jobs = args.jobs.map_or_else(Campaign::all_cores, |j| j as usize);
    // Before the sweep starts, so it survives a panic or a kill: how to replay a seed, and
    // where each failing seed is recorded as it is found.
    let recorded_in = results.as_ref().map_or_else(
        || log_path(&args.output.failures_dir, variant),
        |r| r.path.clone(),
    );
    output::to_stderr(&format!(
        "sweep {} on {jobs} worker(s), shard {shard}: replay any seed with: {} run {} --seed N; \
         failing seeds are recorded in {}",
        variant.stem(),
        cli.replay_prefix,
        variant.args(),
        recorded_in.display()
    ));
    let progress = Progress::new(variant, shard.len(seeds), jobs);
    // Wall clock for runs_per_sec only, outside every run (see the module docs).
    let started = std::time::Instant::now();
    let mut failing = Vec::new();
    let mut recorder = Recorder {
        cli,
        args,
        variant,
        shard,
        results,
        log: None,
        found: 0,
        classes: BTreeSet::new(),
        first: None,
        kept: 0,
    };
    let mut error = None;
    let mut stdout_gone = false;
    let mut campaign = Campaign::new(variant, seeds.clone(), shard, jobs);
    if until_first_failure {
        campaign = campaign.until_first_failure();
    }
    let tally = campaign.run(&cli.stop, |event| match event {
        Event::Progress {
            worker,
            runs,
            failures,
        } => {
            progress.advance(worker, runs, failures);
            if cli.whole_process && !stdout_gone && output::stdout_reader_gone() {
                stdout_gone = true;
                // Asked to keep results in a file, the sweep goes on; else nobody would see them.
                if recorder.results.is_none() {
                    cli.stop.store(true, Ordering::Relaxed);
                }
            }
        }
        Event::Failure(failure) => {
            failing.push((failure.seed, failure.outcome.failure_class()));
            if error.is_none() {
                if let Err(e) = recorder.record(&failure) {
                    error = Some(e);
                    cli.stop.store(true, Ordering::Relaxed);
                }
            }
            if error.is_some() {
                // Not recorded: say it before the error does, where it is seen.
                print_unrecorded(cli, args, variant, &failure, out);
            }
        }
    });
    progress.finish();
    if let Some(e) = error {
        return Err(e);
    }
    let elapsed = started.elapsed().as_secs_f64().max(1e-9);
    Ok(Swept {
        runs_per_sec: tally.runs as f64 / elapsed,
        complete: !cli.stop.load(Ordering::Relaxed),
        tally,
        failing,
        first: recorder.first,
        kept: recorder.kept,
        log: recorder.log.map(|log| log.path),
        stdout_gone,
    })
}

/// A failure that could not be recorded: its seed, class and replay line, on standard output
/// (standard error with `--json`), best-effort.
fn print_unrecorded(
    cli: &Cli,
    args: &SweepArgs,
    variant: &Variant,
    failure: &Failure,
    out: &mut dyn Write,
) {
    let run = RunSpec::new(variant.clone(), Input::Seed(failure.seed));
    let text = format!(
        "failure seed={} class={}\nreplay={}\n",
        failure.seed,
        failure.outcome.failure_class(),
        run.run_command(&cli.replay_prefix, None)
    );
    if args.output.json {
        output::bytes_to_stderr(text.as_bytes());
    } else {
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    }
}

/// On standard error: how many failures kept their files, and where every one is listed.
fn print_kept(args: &SweepArgs, swept: &Swept) {
    let failures = swept.failing.len();
    if failures == 0 {
        return;
    }
    let listed = match (&swept.log, &args.out) {
        (Some(log), _) => format!("; every failing seed is in {}", log.display()),
        (None, Some(out)) => format!("; every failing seed is in {}", out.display()),
        (None, None) => String::new(),
    };
    output::to_stderr(&format!(
        "kept failure files for {} of {failures} failing seeds in {}{listed}",
        swept.kept,
        args.output.failures_dir.display()
    ));
}

fn summary_line(
    args: &SweepArgs,
    variant: &Variant,
    seeds: &std::ops::Range<u64>,
    swept: &Swept,
    (campaign, variants, commit): (String, u64, &str),
) -> ShardLine {
    let tally = &swept.tally;
    ShardLine::Summary {
        variant: variant.args(),
        system: variant.system.name.to_string(),
        bug: variant.bug.unwrap_or("none").to_string(),
        seeds: format!("{}..{}", seeds.start, seeds.end),
        shard: args.shard.unwrap_or(Shard::WHOLE).to_string(),
        runs: tally.runs,
        failures: tally.failures,
        first_failure_seed: tally.first_failure.as_ref().map(|f| f.seed),
        complete: swept.complete,
        all: args.all,
        elapsed_s: tally.runs as f64 / swept.runs_per_sec.max(1e-9),
        campaign: Some(campaign),
        variants: Some(variants),
        commit: Some(commit.to_string()),
    }
}

/// The sweep's words but `--seeds`, `--shard` and where output goes: what `sim merge`
/// requires every shard to share.
fn campaign_words(args: &SweepArgs, variants: &[Variant]) -> String {
    let mut words = match variants {
        [one] if !args.all => one.arg_words(),
        _ => std::iter::once("--all".to_string())
            .chain(args.variant.flags.to_args())
            .collect(),
    };
    if args.until_first {
        words.push("--until-first".to_string());
    }
    words.join(" ")
}

/// The lowest failure's trace tail, identity, files and replay line.
fn print_first_failure(
    cli: &Cli,
    args: &SweepArgs,
    variant: &Variant,
    swept: &Swept,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let Some(first) = &swept.first else {
        return Ok(());
    };
    let run = RunSpec::new(variant.clone(), Input::Seed(first.seed));
    let mut text = Vec::new();
    let summary = first.report.outcome.summary_line();
    writeln!(text, "first_failure=seed:{} {summary}", first.seed)?;
    for line in repro::last_lines(first.report.history.events(), 8).lines() {
        writeln!(text, "  | {line}")?;
    }
    writeln!(text, "{}", repro::RunIdentity::of(&run, cli.build))?;
    print_files(&mut text, &first.files)?;
    writeln!(text, "replay={}", run.run_command(&cli.replay_prefix, None))?;
    if args.output.json {
        // stdout stays one JSON object per line; the details go to stderr.
        output::bytes_to_stderr(&text);
    } else {
        out.write_all(&text)?;
    }
    Ok(())
}

fn print_summary(
    args: &SweepArgs,
    list: bool,
    variant: &Variant,
    swept: &Swept,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let bug_name = variant.bug.unwrap_or("none");
    let (runs, failures) = (swept.tally.runs, swept.tally.failures);
    let first = swept.tally.first_failure.as_ref();
    if args.output.json {
        if list {
            for (seed, class) in counted_failures(swept) {
                let json = serde_json::json!({
                    "system": variant.system.name, "bug": bug_name,
                    "failure": {"seed": seed, "class": class},
                });
                writeln!(out, "{json}")?;
            }
        }
        let files = swept.first.as_ref().map(|f| &f.files);
        let json = serde_json::json!({
            "system": variant.system.name, "bug": bug_name, "seeds": runs, "failures": failures,
            "first_failure_seed": first.map(|f| f.seed),
            "first_failure": first.map(|f| &f.outcome),
            "classes": swept.tally.classes,
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
    // The list and the class counts come before the summary line, which stays last.
    if list {
        for (seed, class) in counted_failures(swept) {
            writeln!(out, "{prefix}failure seed={seed} class={class}")?;
        }
    }
    if failures > 0 {
        writeln!(
            out,
            "{prefix}classes={}",
            classes_text(&swept.tally.classes)
        )?;
    }
    let first_seed = first.map_or("none".to_string(), |f| f.seed.to_string());
    writeln!(
        out,
        "{prefix}seeds={runs} failures={failures} first_failure_seed={first_seed} runs_per_sec={:.0}",
        swept.runs_per_sec
    )?;
    Ok(())
}

/// The failures the tally counts, in seed order. A sweep until the first failure counts only
/// the lowest: failures of higher seeds, run by other workers meanwhile, are left out so the
/// list does not depend on the number of workers.
fn counted_failures(swept: &Swept) -> Vec<(u64, &str)> {
    let last = swept
        .tally
        .first_failure
        .as_ref()
        .filter(|_| swept.tally.failures == 1)
        .map_or(u64::MAX, |f| f.seed);
    let mut failing: Vec<(u64, &str)> = swept
        .failing
        .iter()
        .filter(|(seed, _)| *seed <= last)
        .map(|(seed, class)| (*seed, class.as_str()))
        .collect();
    failing.sort_unstable();
    debug_assert_eq!(
        failing.len() as u64,
        swept.tally.failures,
        "the list holds every failure the tally counts"
    );
    failing
}

/// After Ctrl-C or SIGTERM: how far the sweep got, and the replay line of every failure it
/// found (up to a screenful; the failure log or `--out FILE` has them all).
fn print_interrupted(
    cli: &Cli,
    args: &SweepArgs,
    variant: &Variant,
    swept: &Swept,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    const SHOWN: usize = 100;
    let mut seeds: Vec<u64> = swept.failing.iter().map(|(seed, _)| *seed).collect();
    seeds.sort_unstable();
    writeln!(
        out,
        "interrupted=true seeds_run={} failures={}",
        swept.tally.runs,
        seeds.len()
    )?;
    for seed in seeds.iter().take(SHOWN) {
        let run = RunSpec::new(variant.clone(), Input::Seed(*seed));
        writeln!(out, "replay={}", run.run_command(&cli.replay_prefix, None))?;
    }
    if seeds.len() > SHOWN {
        let listed = args.out.as_ref().or(swept.log.as_ref());
        let listed = listed.map_or("--out FILE".to_string(), |p| p.display().to_string());
        writeln!(
            out,
            "more_failures={} (every one is in {listed})",
            seeds.len() - SHOWN
        )?;
    }
    Ok(())
}

/// For `--all`: correct variants that failed, and planted bugs that were (not) found.
#[derive(Default)]
struct Verdict {
    any_failure: bool,
    correct_failed: u64,
    bugs_found: u64,
    bugs: u64,
}

impl Verdict {
    fn count(&mut self, variant: &Variant, tally: &Tally) {
        self.any_failure |= tally.failures > 0;
        if variant.bug.is_some() {
            self.bugs += 1;
            self.bugs_found += u64::from(tally.failures > 0);
        } else {
            self.correct_failed += tally.failures;
        }
    }

    /// One line a person can act on: the campaign is as expected when every correct variant
    /// passed every seed and every planted bug was found.
    fn print(&self, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
        let (correct_failed, bugs_found, bugs) = (self.correct_failed, self.bugs_found, self.bugs);
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
}

/// Parses `A..B`.
pub fn parse_seeds(text: &str) -> Result<std::ops::Range<u64>, CliError> {
    crate::campaign::parse_range(text).ok_or_else(|| CliError::BadSeeds(text.to_string()))
}
