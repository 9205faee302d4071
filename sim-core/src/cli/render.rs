//! `sim render`: a trace as a space-time diagram (SVG) and a ShiViz log; with `--story` or a
//! story filter (`--node`, `--kind`, `--from-ms`, `--to-ms`, `--causal`), also the story's
//! lines the filter keeps. The filters choose story lines only: the pictures stay whole.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::files::{self, write_text};
use super::{bug_label, print_story, Cli, CliError, StoryArgs, VariantArgs};
use crate::render;
use crate::repro::{InputFile, Repro, TraceFile};
use crate::run_spec::RunSpec;
use crate::trace::Event;

#[derive(Args, Debug)]
pub(super) struct RenderArgs {
    /// A JSON trace (--trace-json), a JSON array of events, or a repro file (replayed).
    file: PathBuf,
    /// Write the SVG space-time diagram here (default: FILE with extension .svg).
    #[arg(long, value_name = "PATH")]
    svg: Option<PathBuf>,
    /// Write the ShiViz log here (default: FILE with extension .shiviz.log).
    #[arg(long, value_name = "PATH")]
    shiviz: Option<PathBuf>,
    /// Print the story (implied by any story filter).
    #[arg(long)]
    story: bool,
    #[command(flatten)]
    filter: StoryArgs,
}

pub(super) fn execute(cli: &Cli, args: &RenderArgs, out: &mut dyn Write) -> Result<i32, CliError> {
    let (events, title) = events_of(cli, &args.file)?;
    let filter = args.filter.filter();
    // Checked before anything is written: a misspelt node is an error, not an empty story.
    let shown = filter.events(&events)?.len();
    let base = args.file.with_extension("").with_extension("");
    let svg_path = args
        .svg
        .clone()
        .unwrap_or_else(|| base.with_extension("svg"));
    let shiviz_path = args
        .shiviz
        .clone()
        .unwrap_or_else(|| base.with_extension("shiviz.log"));
    write_text(&svg_path, &render::svg(&events, &title))?;
    write_text(&shiviz_path, &render::shiviz(&events))?;
    let rows = events.iter().filter(|e| render::is_story_event(e)).count();
    writeln!(
        out,
        "svg={} rows={rows} events={}",
        svg_path.display(),
        events.len()
    )?;
    writeln!(
        out,
        "shiviz={} regex={:?}",
        shiviz_path.display(),
        render::SHIVIZ_REGEX
    )?;
    if args.story || !filter.keeps_all() {
        print_story(&events, &filter, out)?;
        let total = render::story_lines(&events);
        writeln!(out, "story_lines={shown} of={total}")?;
    }
    Ok(0)
}

/// The events to draw and the diagram's title: a trace file's, or a repro file's run.
fn events_of(cli: &Cli, path: &Path) -> Result<(Vec<Event>, String), CliError> {
    match files::read_input(path)? {
        InputFile::Repro(repro) => replayed(cli, path, &repro),
        InputFile::Trace(trace) => Ok((trace.events, file_name(path))),
        InputFile::Raw(data) => {
            let text = String::from_utf8_lossy(&data);
            let events = TraceFile::events_from_json(&text).map_err(|source| CliError::Repro {
                path: path.to_path_buf(),
                source,
            })?;
            Ok((events, file_name(path)))
        }
    }
}

fn replayed(cli: &Cli, path: &Path, repro: &Repro) -> Result<(Vec<Event>, String), CliError> {
    let no_flags = VariantArgs {
        bug: None,
        flags: Default::default(),
    };
    let variant = cli.variant_of_repro(path, repro, None, &no_flags)?;
    let input = files::repro_input(path, repro)?;
    let title = format!(
        "{} {} — {}",
        repro.system,
        bug_label(variant.bug),
        repro.origin
    );
    let run = RunSpec::new(variant, input);
    Ok((run.run_traced().history.into_events(), title))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned())
}
