//! `sim merge FILE...`: the results of every shard of a campaign (`sim sweep --shard I/N
//! --out FILE`) combined into the summary the unsharded campaign prints.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

use clap::Args;

use super::{Cli, CliError};
use crate::campaign::{self, Merged, ShardLine};

#[derive(Args, Debug)]
pub(super) struct MergeArgs {
    /// The shards' result files (`--out FILE` of each `sim sweep --shard I/N`).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print every failing seed with its failure class, in seed order, as `sim sweep --list`.
    #[arg(long)]
    list: bool,
}

pub(super) fn execute(_cli: &Cli, args: &MergeArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let mut lines = Vec::new();
    for path in &args.files {
        lines.extend(read_lines(path)?);
    }
    let merged = campaign::merge(&lines).map_err(CliError::Merge)?;
    let mut any_failure = false;
    let (mut correct_failed, mut bugs_found, mut bugs) = (0u64, 0u64, 0u64);
    for m in &merged {
        any_failure |= m.failures > 0;
        if m.bug == "none" {
            correct_failed += m.failures;
        } else {
            bugs += 1;
            bugs_found += u64::from(m.failures > 0);
        }
        print_merged(m, args.list, out)?;
    }
    if merged.first().is_some_and(|m| m.all) {
        let verdict = if correct_failed == 0 && bugs_found == bugs {
            "as-expected"
        } else {
            "UNEXPECTED"
        };
        writeln!(
            out,
            "campaign={verdict} correct_runs_failed={correct_failed} planted_bugs_found={bugs_found}/{bugs}"
        )?;
    }
    Ok(i32::from(any_failure))
}

fn read_lines(path: &PathBuf) -> Result<Vec<ShardLine>, CliError> {
    let read_error = |source| CliError::File {
        action: "read",
        path: path.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let mut lines = Vec::new();
    for (n, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(read_error)?;
        if line.trim().is_empty() {
            continue;
        }
        let parsed = serde_json::from_str(&line).map_err(|e| {
            CliError::Merge(campaign::MergeError(format!(
                "{}:{}: not a shard result line ({e}); give the files `sim sweep --shard I/N --out FILE` wrote",
                path.display(),
                n + 1
            )))
        })?;
        lines.push(parsed);
    }
    Ok(lines)
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
