//! `sim determinism`: one seed run many times in this process and once in each of several
//! fresh processes; the history hashes must all agree.
//!
//! In-process runs catch state that survives between runs (a global counter, a cache, std's
//! per-thread hash keys); fresh processes catch what differs between processes (addresses,
//! OS entropy, the wall clock, environment). A disagreement exits with 1 and lists the hashes.
//! Each fresh process is this same binary running the seed once (`determinism ... --child`).
//! Fewer than two runs in all is refused: one hash agrees with itself.

use std::io::Write;
use std::process::Command;

use clap::Args;

use super::{Cli, CliError, VariantArgs};
use crate::choice::Input;

#[derive(Args, Debug)]
pub(super) struct DeterminismArgs {
    /// The system to run (see `sim list`).
    #[arg(long)]
    system: String,
    /// The seed to run.
    #[arg(long)]
    seed: u64,
    /// Runs in this process.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    runs: u64,
    /// Fresh processes, each running the seed once (0: this process only). Runs and
    /// processes together must be at least two: one run has nothing to agree with.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(0..=1000))]
    processes: u64,
    /// Print one JSON object instead of key=value lines.
    #[arg(long)]
    json: bool,
    /// Run once and print the summary line: what each fresh process does.
    #[arg(long, hide = true)]
    child: bool,
    #[command(flatten)]
    variant: VariantArgs,
}

pub(super) fn execute(
    cli: &Cli,
    args: &DeterminismArgs,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let variant = cli.variant(&args.system, &args.variant)?;
    let input = Input::Seed(args.seed);
    if args.child {
        writeln!(out, "{}", variant.run(&input).outcome.summary_line())?;
        return Ok(0);
    }
    if args.runs + args.processes < 2 {
        return Err(CliError::TooFewRuns {
            runs: args.runs,
            processes: args.processes,
        });
    }
    let mut hashes: Vec<u64> = (0..args.runs)
        .map(|_| variant.run(&input).outcome.history_hash)
        .collect();
    let mut words = vec!["determinism".to_string()];
    words.extend(variant.arg_words());
    words.extend(["--seed", &args.seed.to_string(), "--child"].map(String::from));
    for _ in 0..args.processes {
        hashes.push(fresh_process_hash(&words)?);
    }
    let first = hashes[0];
    let mut distinct = hashes.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let agree = distinct.len() == 1;
    if args.json {
        let listed: Vec<String> = hashes.iter().map(|h| format!("{h:016x}")).collect();
        let json = serde_json::json!({
            "runs": args.runs, "processes": args.processes, "distinct_hashes": distinct.len(),
            "history_hash": format!("{first:016x}"), "deterministic": agree, "hashes": listed,
        });
        writeln!(out, "{json}")?;
        return Ok(i32::from(!agree));
    }
    if !agree {
        let listed: Vec<String> = hashes.iter().map(|h| format!("{h:016x}")).collect();
        writeln!(out, "hashes={}", listed.join(","))?;
        writeln!(
            out,
            "note=something outside the input reached the run; if system code reads the OS clock or entropy, link the OS hooks (see sim_core::os); replay with `sim run --trace` twice and compare"
        )?;
    }
    writeln!(
        out,
        "runs={} processes={} distinct_hashes={} history_hash={first:016x} deterministic={}",
        args.runs,
        args.processes,
        distinct.len(),
        if agree { "yes" } else { "no" }
    )?;
    Ok(i32::from(!agree))
}

/// Runs this binary with `words` and reads the `history_hash=` of its summary line.
fn fresh_process_hash(words: &[String]) -> Result<u64, CliError> {
    let exe = std::env::current_exe().map_err(|e| CliError::Child {
        exe: "this program".into(),
        reason: e.to_string(),
    })?;
    let child_error = |reason: String| CliError::Child {
        exe: exe.display().to_string(),
        reason,
    };
    let output = Command::new(&exe)
        .args(words)
        .output()
        .map_err(|e| child_error(e.to_string()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .split_whitespace()
        .find_map(|word| word.strip_prefix("history_hash="))
        .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        .ok_or_else(|| {
            child_error(format!(
                "it printed no history_hash= (exit status {}; stderr: {})",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        })
}
