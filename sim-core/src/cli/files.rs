//! The command line's file I/O: input files read with a size cap and recognised by parsing,
//! output files written with errors that name the path, and output locations checked before
//! any work starts.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::CliError;
use crate::choice::Input;
use crate::repro::{self, FailureFiles, InputFile, Repro, TraceFile};
use crate::run_spec::RunSpec;

/// The largest input file read: far above any input a run consumes (a run of a million draws
/// re-encodes to a few megabytes), far below what would exhaust memory (`--input /dev/zero`).
pub(super) const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Reads at most [`MAX_INPUT_BYTES`] of `path`; a longer file is refused.
pub(super) fn read_capped(path: &Path) -> Result<Vec<u8>, CliError> {
    let read_error = |source| CliError::File {
        action: "read",
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let mut data = Vec::new();
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(read_error)?;
    if data.len() as u64 > MAX_INPUT_BYTES {
        return Err(CliError::TooLarge {
            path: path.to_path_buf(),
            limit_bytes: MAX_INPUT_BYTES,
        });
    }
    Ok(data)
}

/// Reads `path` and recognises what it holds (see [`InputFile::recognise`]).
pub(super) fn read_input(path: &Path) -> Result<InputFile, CliError> {
    InputFile::recognise(read_capped(path)?).map_err(|source| CliError::Repro {
        path: path.to_path_buf(),
        source,
    })
}

/// The input bytes of `repro`, or an error naming its file.
pub(super) fn repro_input(path: &Path, repro: &Repro) -> Result<Input, CliError> {
    repro.run_input().map_err(|source| CliError::Repro {
        path: path.to_path_buf(),
        source,
    })
}

/// How a raw input file's bytes are read (`--encoding`): raw bytes carry no version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Encoding {
    /// The lane encoding, every input written now ([`crate::choice::ENCODING`]).
    Lanes,
    /// The flat encoding of inputs recorded before the lanes
    /// ([`crate::choice::FLAT_ENCODING`]).
    Flat,
}

/// The input of a raw file's `bytes`, read in `encoding` (the lanes when unsaid).
pub(super) fn raw_input(bytes: Vec<u8>, encoding: Option<Encoding>) -> Input {
    match encoding {
        Some(Encoding::Flat) => Input::FlatBytes(bytes),
        Some(Encoding::Lanes) | None => Input::Bytes(bytes),
    }
}

/// Refuses `--encoding` for a repro file: its version names its encoding.
pub(super) fn refuse_encoding_for_repro(
    path: &Path,
    encoding: Option<Encoding>,
) -> Result<(), CliError> {
    match encoding {
        Some(_) => Err(CliError::ReproConflict(format!(
            "--encoding is for raw input files; {} is a repro file, whose version names its encoding",
            path.display()
        ))),
        None => Ok(()),
    }
}

/// Refuses a raw input that was read in the lanes without `--encoding`, passed, is not an
/// input this crate wrote, and fails when read in the flat encoding: most likely a failure
/// recorded before the lanes, which would otherwise be reported as a silent pass.
///
/// Raw bytes carry no version and every byte string is a valid input in both encodings, so
/// nothing in the file can prove which wrote it, and no input can be refused for its bytes
/// alone (a fuzzer's inputs must all run). The check takes the evidence there is: a file
/// that holds a failure in the flat reading and none in the lanes. That alone is not enough
/// — a lane input read flat is a random run, and a planted bug fails many random runs — so
/// inputs in the exact form the lane encoder writes ([`LaneBuffers::is_canonical`]: every
/// `--save-input`, shrunk input and corpus entry; a flat input almost never is) are
/// trusted. What is left, a fuzzer's input that passes in the lanes and fails flat, is
/// refused with both readings and the flag that settles it either way.
///
/// [`LaneBuffers::is_canonical`]: crate::choice::lanes::LaneBuffers::is_canonical
pub(super) fn check_raw_encoding(
    prefix: &str,
    path: &Path,
    run: &RunSpec,
    encoding: Option<Encoding>,
    passed: bool,
) -> Result<(), CliError> {
    let Input::Bytes(bytes) = &run.input else {
        return Ok(());
    };
    if encoding.is_some() || !passed || crate::choice::lanes::LaneBuffers::is_canonical(bytes) {
        return Ok(());
    }
    let flat = run.variant.run(&Input::FlatBytes(bytes.clone())).outcome;
    if !flat.class.is_failure() {
        return Ok(());
    }
    Err(CliError::StaleEncoding {
        path: path.display().to_string(),
        flat: format!(
            "class={} invariant={}",
            flat.class.name(),
            flat.invariant.as_deref().unwrap_or("none")
        ),
        prefix: prefix.to_string(),
        args: run.variant.args(),
    })
}

pub(super) fn write_text(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text).map_err(|source| CliError::File {
        action: "write",
        path: path.to_path_buf(),
        source,
    })
}

pub(super) fn write_json(path: &Path, value: &impl Serialize) -> Result<(), CliError> {
    write_text(path, &serde_json::to_string(value).expect("serialises"))
}

/// Writes a failure's three files into `dir`.
pub(super) fn write_failure(
    dir: &Path,
    stem: &str,
    repro: &Repro,
    trace: &TraceFile,
) -> Result<FailureFiles, CliError> {
    repro::write_failure(dir, stem, repro, trace).map_err(|source| CliError::File {
        action: "write failure files into",
        path: dir.to_path_buf(),
        source,
    })
}

/// Checks, before any run, that `dir` can take failure files: creates it and writes and
/// removes a probe file, so an unwritable directory is an error up front, not after hours.
pub(super) fn check_dir_writable(dir: &Path) -> Result<(), CliError> {
    let error = |source| CliError::File {
        action: "write failure files into",
        path: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(error)?;
    let probe = dir.join(format!(".sim-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(error)?;
    std::fs::remove_file(&probe).map_err(error)
}

/// Checks, before any run, that an output file can be written (creating or truncating it
/// is what writing it later will do anyway).
pub(super) fn check_file_writable(path: &Path) -> Result<(), CliError> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(drop)
        .map_err(|source| CliError::File {
            action: "write",
            path: path.to_path_buf(),
            source,
        })
}

/// Checks every optional output file.
pub(super) fn check_outputs(paths: &[&Option<PathBuf>]) -> Result<(), CliError> {
    paths
        .iter()
        .filter_map(|p| p.as_deref())
        .try_for_each(check_file_writable)
}

pub(super) fn print_files(out: &mut dyn Write, files: &FailureFiles) -> std::io::Result<()> {
    writeln!(out, "trace_file={}", files.trace_txt.display())?;
    writeln!(out, "trace_json_file={}", files.trace_json.display())?;
    writeln!(out, "repro_file={}", files.repro.display())
}

pub(super) fn write_text_bytes(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    std::fs::write(path, bytes).map_err(|source| CliError::File {
        action: "write",
        path: path.to_path_buf(),
        source,
    })
}
