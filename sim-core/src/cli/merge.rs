//! `sim merge FILE...`: the results of every shard of a campaign (`sim sweep --shard I/N
//! --out FILE`) combined into the summary the unsharded campaign prints.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::{Cli, CliError};
use crate::campaign::{self, MergeReport, Merged, ShardFile};

#[derive(Args, Debug)]
pub(super) struct MergeArgs {
    /// The shards' result files (`--out FILE` of each `sim sweep --shard I/N`).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print every failing seed with its failure class, in seed order, as `sim sweep --list`.
    #[arg(long)]
    list: bool,
    /// Merge what exists even if shards are missing, killed or stopped: every failure line is
    /// counted, and a `missing shard=I/N ...` line names each part of the seeds not covered.
    #[arg(long)]
    partial: bool,
    /// Print one JSON object per variant (and the verdict) instead of key=value lines.
    #[arg(long)]
    json: bool,
}

pub(super) fn execute(_cli: &Cli, args: &MergeArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let mut files = Vec::new();
    for path in &args.files {
        files.push(read_file(path)?);
    }
    let report = campaign::merge(&files, args.partial).map_err(CliError::Merge)?;
    for skipped in &report.skipped {
        eprintln!("warning: merging without {skipped}");
    }
    let mut any_failure = false;
    let (mut correct_failed, mut bugs_found, mut bugs) = (0u64, 0u64, 0u64);
    for m in &report.merged {
        any_failure |= m.failures > 0;
        if m.bug == "none" {
            correct_failed += m.failures;
        } else {
            bugs += 1;
            bugs_found += u64::from(m.failures > 0);
        }
        if args.json {
            print_json(m, args.list, out)?;
        } else {
            print_merged(m, args.list, out)?;
        }
    }
    if args.json {
        if report.merged.first().is_some_and(|m| m.all) || report.missing_variants > 0 {
            let json = serde_json::json!({"campaign": verdict(correct_failed, (bugs_found, bugs), &report),
                "correct_runs_failed": correct_failed, "planted_bugs_found": bugs_found,
                "planted_bugs": bugs, "missing_variants": report.missing_variants});
            writeln!(out, "{json}")?;
        }
        return Ok(i32::from(any_failure));
    }
    if report.missing_variants > 0 {
        writeln!(out, "missing variants={}", report.missing_variants)?;
    }
    if report.merged.first().is_some_and(|m| m.all) {
        let verdict = verdict(correct_failed, (bugs_found, bugs), &report);
        writeln!(
            out,
            "campaign={verdict} correct_runs_failed={correct_failed} planted_bugs_found={bugs_found}/{bugs}"
        )?;
    }
    Ok(i32::from(any_failure))
}

/// `as-expected` when no correct run failed and every planted bug was found; `INCOMPLETE`
/// when no correct run failed but seeds are missing (an unfound bug may be in them).
fn verdict(correct_failed: u64, (found, bugs): (u64, u64), report: &MergeReport) -> &'static str {
    if correct_failed > 0 {
        "UNEXPECTED"
    } else if report.is_partial() {
        "INCOMPLETE"
    } else if found == bugs {
        "as-expected"
    } else {
        "UNEXPECTED"
    }
}

/// One variant as `sim sweep --json` prints it, with the parts missing.
fn print_json(m: &Merged, list: bool, out: &mut dyn Write) -> Result<(), CliError> {
    if list {
        for (seed, class) in &m.failing {
            let json = serde_json::json!({"system": m.system, "bug": m.bug,
                "failure": {"seed": seed, "class": class}});
            writeln!(out, "{json}")?;
        }
    }
    let missing: Vec<String> = m.missing.iter().map(|g| g.words()).collect();
    let json = serde_json::json!({
        "system": m.system, "bug": m.bug, "seeds": m.runs, "failures": m.failures,
        "first_failure_seed": m.first_failure.as_ref().map(|f| f.0),
        "replay": m.first_failure.as_ref().map(|f| &f.1), "classes": m.classes,
        "runs_per_sec": m.runs_per_sec.round(), "missing": missing,
    });
    writeln!(out, "{json}")?;
    Ok(())
}

fn read_file(path: &PathBuf) -> Result<ShardFile, CliError> {
    let data = std::fs::read(path).map_err(|source| CliError::File {
        action: "read",
        path: path.clone(),
        source,
    })?;
    ShardFile::parse(&path.display().to_string(), &data).map_err(CliError::Merge)
}

/// The lines `sim sweep` prints for the unsharded campaign: list, class counts, summary.
fn print_merged(m: &Merged, list: bool, out: &mut dyn Write) -> Result<(), CliError> {
    if let Some((_, replay)) = &m.first_failure {
        writeln!(out, "replay={replay}")?;
    }
    let prefix = if m.all {
        format!("system={} bug={} ", m.system, m.bug)
    } else {
        String::new()
    };
    if list {
        for (seed, class) in &m.failing {
            writeln!(out, "{prefix}failure seed={seed} class={class}")?;
        }
    }
    for gap in &m.missing {
        writeln!(out, "{prefix}missing {}", gap.words())?;
    }
    if m.failures > 0 {
        writeln!(
            out,
            "{prefix}classes={}",
            campaign::classes_text(&m.classes)
        )?;
    }
    let first = m
        .first_failure
        .as_ref()
        .map_or("none".to_string(), |(s, _)| s.to_string());
    writeln!(
        out,
        "{prefix}seeds={} failures={} first_failure_seed={first} runs_per_sec={:.0}",
        m.runs, m.failures, m.runs_per_sec
    )?;
    Ok(())
}
