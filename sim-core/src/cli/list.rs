//! `sim list`: the systems, their planted bugs and the system-specific flags they read.

use std::io::Write;

use clap::Args;

use super::{Cli, CliError};

#[derive(Args, Debug)]
pub(super) struct ListArgs {
    /// One JSON object per system.
    #[arg(long)]
    json: bool,
}

pub(super) fn execute(cli: &Cli, args: &ListArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    for s in &cli.systems {
        if args.json {
            let bugs: Vec<_> = s
                .bugs
                .iter()
                .map(|b| serde_json::json!({"name": b.name, "about": b.about}))
                .collect();
            let json = serde_json::json!({"system": s.name, "about": s.about, "bugs": bugs, "flags": s.flags});
            writeln!(out, "{json}")?;
        } else {
            writeln!(out, "system={} about={:?}", s.name, s.about)?;
            for b in s.bugs {
                writeln!(out, "system={} bug={} about={:?}", s.name, b.name, b.about)?;
            }
        }
    }
    Ok(0)
}
