//! `sim corpus`: seeded runs written as byte inputs, the starting corpus of a fuzz hunt.
//!
//! A fuzzer that starts from an empty input spends its first minutes growing inputs long
//! enough to reach anything; a seed sweep has variety from its first run. Each seed's run is
//! recorded and its draws re-encoded ([`crate::choice::encode`]) into the bytes that replay
//! it, so the fuzzer starts where the sweep is strong. The runs are real executions of the
//! system: a hunt counts them, and if one fails the command stops there and reports it like a
//! sweep does (exit 1), since the bug is found.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::files;
use super::{Cli, CliError, VariantArgs};
use crate::choice::Input;
use crate::run_spec::RunSpec;

#[derive(Args, Debug)]
pub(super) struct CorpusArgs {
    /// The system to run (see `sim list`).
    #[arg(long)]
    system: String,
    /// Seeds to run, START..END (END excluded).
    #[arg(long)]
    seeds: String,
    /// Directory to write `seed-N.bin` into (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Overwrite `seed-N.bin` files that exist (without it, an existing one is refused
    /// before any run).
    #[arg(long)]
    force: bool,
    /// Print one JSON object instead of key=value lines.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    variant: VariantArgs,
}

pub(super) fn execute(cli: &Cli, args: &CorpusArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let seeds = super::sweep::parse_seeds(&args.seeds)?;
    let variant = cli.variant(&args.system, &args.variant)?;
    std::fs::create_dir_all(&args.out).map_err(|source| CliError::File {
        action: "create",
        path: args.out.clone(),
        source,
    })?;
    let entry = |seed: u64| args.out.join(format!("seed-{seed}.bin"));
    if !args.force {
        // Checked before the first run: a corpus a fuzzer grew is not replaced half-way.
        if let Some(path) = seeds.clone().map(entry).find(|p| p.exists()) {
            return Err(CliError::WouldOverwrite(path));
        }
    }
    let (mut runs, mut bytes_max, mut first_failure) = (0u64, 0usize, None);
    for seed in seeds {
        let run = RunSpec::new(variant.clone(), Input::Seed(seed));
        let (report, bytes) = run.run_encoded();
        runs += 1;
        files::write_text_bytes(&entry(seed), &bytes)?;
        bytes_max = bytes_max.max(bytes.len());
        if report.outcome.class.is_failure() {
            let replay = run.run_command(&cli.replay_prefix, None);
            first_failure = Some((seed, replay, report.outcome));
            break;
        }
    }
    if args.json {
        let failure = first_failure.as_ref();
        let json = serde_json::json!({
            "runs": runs, "failures": u8::from(failure.is_some()),
            "first_failure_seed": failure.map(|f| f.0), "replay": failure.map(|f| &f.1),
            "first_failure": failure.map(|f| &f.2), "bytes_max": bytes_max,
            "dir": args.out.display().to_string(),
        });
        writeln!(out, "{json}")?;
        return Ok(i32::from(failure.is_some()));
    }
    if let Some((_, replay, outcome)) = &first_failure {
        writeln!(out, "replay={replay}")?;
        writeln!(out, "{}", outcome.summary_line())?;
    }
    let first_failure = first_failure.map(|f| f.0);
    writeln!(
        out,
        "runs={runs} failures={} first_failure_seed={} bytes_max={bytes_max} dir={}",
        u8::from(first_failure.is_some()),
        first_failure.map_or("none".to_string(), |seed| seed.to_string()),
        args.out.display()
    )?;
    Ok(i32::from(first_failure.is_some()))
}
