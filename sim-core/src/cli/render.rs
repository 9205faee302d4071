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
    /// Print one JSON object instead of key=value lines (the story as `story`, a list of
    /// lines).
    #[arg(long)]
    json: bool,
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
    let with_story = args.story || !filter.keeps_all();
    if args.json {
        let story: Option<Vec<String>> = if with_story {
            Some(filter.story(&events)?.lines().map(str::to_string).collect())
        } else {
            None
        };
        let json = serde_json::json!({
            "svg": svg_path.display().to_string(), "rows": rows, "events": events.len(),
            "shiviz": shiviz_path.display().to_string(), "regex": render::SHIVIZ_REGEX,
            "story": story, "story_lines": with_story.then_some(shown),
            "of": with_story.then(|| render::story_lines(&events)),
        });
        writeln!(out, "{json}")?;
        return Ok(0);
    }
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
    if with_story {
        print_story(&events, &filter, out)?;
        let total = render::story_lines(&events);
        writeln!(out, "story_lines={shown} of={total}")?;
    }
    Ok(0)
}

/// The events to draw and the diagram's title: a trace file's, or a repro file's run.
fn events_of(cli: &Cli, path: &Path) -> Result<(Vec<Event>, String), CliError> {
    let data = files::read_capped(path)?;
    let recognised = InputFile::recognise(data.clone()).map_err(|source| CliError::Repro {
        path: path.to_path_buf(),
        source,
    });
    let events = match recognised? {
        InputFile::Repro(repro) => return replayed(cli, path, &repro),
        InputFile::Trace(trace) => trace.events,
        InputFile::TraceText => {
            let name = path.display().to_string();
            let json = name.strip_suffix(".trace.txt").unwrap_or("FILE");
            return Err(CliError::TraceTextNotInput {
                fix: format!(
                    "render draws the JSON trace written next to it: sim render {json}.trace.json"
                ),
                path: name,
            });
        }
        // A bare JSON array of events, or an error that says what is wrong with the file.
        InputFile::Json(_) | InputFile::Raw(_) => {
            TraceFile::events_from_json(&String::from_utf8_lossy(&data)).map_err(|source| {
                CliError::Repro {
                    path: path.to_path_buf(),
                    source,
                }
            })?
        }
    };
    Ok((events, file_name(path)))
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
