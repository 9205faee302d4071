//! Repro files, trace files and run identity: what a failure leaves behind.
//!
//! # The repro file (`*.repro.json`)
//!
//! A failing input is only useful with the system it ran against. A repro file holds both, so
//! `sim replay FILE` needs nothing else. It is JSON, self-describing and versioned:
//!
//! ```json
//! {
//!   "format": "sim-repro",
//!   "version": 2,
//!   "system": "two-pc",
//!   "bug": "first-vote-wins",
//!   "pinned": false,
//!   "strategy": "uniform",
//!   "faults": "all",
//!   "input_hex": "0300000001",
//!   "input_hash": "59635947ef281541",
//!   "origin": "seed:11",
//!   "history_hash": "082921fbc28ee40a",
//!   "class": "correctness",
//!   "invariant": "atomicity",
//!   "steps": 49
//! }
//! ```
//!
//! * `pinned`, `strategy`, `faults` (and any later flag) are the run's
//!   [`crate::run_spec::RunFlags`], written wherever a repro is written; an absent
//!   flag takes its default.
//! * `input_hex` is the byte input (always bytes: a seed is re-encoded through its draw log,
//!   see [`crate::choice::Recorder`]); `origin` says where it came from and is informational.
//!   Version 2 inputs are in the lane encoding ([`crate::choice::lanes`]); a version-1 file's
//!   input is in the flat encoding that came before, and is read as
//!   [`crate::choice::Input::FlatBytes`], so it still replays the run it recorded.
//! * `history_hash` is the pinned hash: a replay that does not reproduce it exactly is a
//!   diverged replay, not the same failure. `class`, `invariant` and `steps` are what the run
//!   ended with when the file was written.
//! * `input_hash` is the input's stable hash: a replay whose `input_hex` no longer matches it
//!   says the input was edited instead of blaming nondeterminism.
//! * A reader rejects another `format`, a `version` it never wrote (0) or newer than it knows,
//!   a `history_hash` that is not 16 hex digits (either case), a `class` that is not an
//!   outcome class, and unknown flag values, each with a message that says so. Unknown fields
//!   are ignored, so later versions may add fields.
//! * Files are recognised by parsing ([`InputFile::recognise`]): a byte-order mark,
//!   surrounding whitespace and any field order are fine.
//!
//! A plain byte file (a fuzzer's input, or `--save-input`) is the same input without the
//! system: replay it with `sim replay --system NAME [--bug B] FILE`. It has no version either:
//! any bytes are an input in every encoding, so nothing in them tells which wrote them.
//! `sim replay` and `sim run --input` read one in the lanes, and refuse one that passes so,
//! is not in the exact form the lane encoder writes, and fails in the flat encoding (a
//! failure recorded before the lanes, most likely), naming `--encoding flat` to replay or
//! convert it and `--encoding lanes` to keep the pass.
//!
//! # The trace file (`*.trace.json`)
//!
//! `--trace-json PATH` writes a [`TraceFile`]: format `sim-trace`, version 1, the system, bug
//! and input identity, the [`Outcome`], and every [`Event`] as serde serialises it. Failures
//! also get a readable `*.trace.txt`, one line per event.
//!
//! ```
//! use sim_core::repro::Repro;
//!
//! let repro = Repro::new("two-pc", Some("first-vote-wins"), vec![3, 0, 0, 0, 1]);
//! let text = repro.to_json();
//! let back = Repro::from_json(&text).unwrap();
//! assert_eq!(back, repro);
//! assert_eq!(back.input().unwrap(), [3, 0, 0, 0, 1]);
//! assert!(Repro::from_json(r#"{"format":"other"}"#).is_err());
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::choice::Input;
use crate::report::{hash_hex, Class, Outcome};
use crate::run_spec::{RunFlags, RunSpec, Variant};
use crate::sim::Report;
use crate::system::{SpecError, SystemSpec};
use crate::trace::{render_lines, stable_hash_bytes, Event};

/// The repro format's name.
pub const REPRO_FORMAT: &str = "sim-repro";
/// The newest repro version this crate reads and the one it writes.
pub const REPRO_VERSION: u32 = 2;

// A repro file's version names its input's encoding (`Repro::encoding`): a new encoding
// needs a new version, and `Repro::encoding` a case for the old one.
const _: () = assert!(REPRO_VERSION == crate::choice::ENCODING);
/// The trace file format's name.
pub const TRACE_FORMAT: &str = "sim-trace";
/// The trace file version this crate reads and writes.
pub const TRACE_VERSION: u32 = 1;

/// Errors reading a repro or trace file.
#[derive(Debug, thiserror::Error)]
pub enum ReproError {
    /// Not JSON of the expected shape.
    #[error("not a {expected} file ({source}); repro and trace files are JSON written by `sim run`, `sim sweep` and `sim shrink` (traces with --trace-json)")]
    Parse {
        /// The format that was expected.
        expected: &'static str,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// JSON, but another format.
    #[error("the file's format is {found:?}, not {expected:?}")]
    WrongFormat {
        /// What the file says.
        found: String,
        /// What was expected.
        expected: &'static str,
    },
    /// Written by a newer version.
    #[error(
        "repro version {found} is newer than this build reads (up to {REPRO_VERSION}); update sim"
    )]
    TooNew {
        /// The file's version.
        found: u32,
    },
    /// A version this crate never wrote (0).
    #[error("repro version {found} is not a version of the format (1 to {REPRO_VERSION}); the file was edited or damaged: write it again with `sim run`")]
    BadVersion {
        /// The file's version.
        found: u32,
    },
    /// `history_hash` is not 16 hex digits.
    #[error("history_hash {found:?} is not 16 hex digits; the file was edited or damaged: write it again with `sim run`, or remove the field to replay without a strict check")]
    BadHash {
        /// What the file says.
        found: String,
    },
    /// `class` names no outcome class.
    #[error("class {found:?} is not an outcome class (pass, correctness, panic, deadlock, liveness, diverged, inconclusive, excused); the file was edited or damaged")]
    BadClass {
        /// What the file says.
        found: String,
    },
    /// A trace file of a version this build does not read.
    #[error("trace version {found} is not one this build reads ({TRACE_VERSION}); the file was edited, damaged or written by another sim: write it again with `sim run --trace-json PATH`")]
    TraceVersion {
        /// The file's version.
        found: u32,
    },
    /// A trace event that contradicts the history it is in.
    #[error("event {position} of the trace {problem}; the file was edited or damaged: write it again with `sim run --trace-json PATH`")]
    BadEvent {
        /// Its position in the file's events, from 0.
        position: usize,
        /// What is wrong, in words.
        problem: String,
    },
    /// `input_hex` is not hex.
    #[error("input_hex is not an even-length string of hex digits (bad at character {at})")]
    BadHex {
        /// Where it went wrong.
        at: usize,
    },
}

/// A self-describing failing (or interesting) input: system, bug, flags, bytes, pinned hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repro {
    /// Always [`REPRO_FORMAT`].
    pub format: String,
    /// [`REPRO_VERSION`] when written by this crate.
    pub version: u32,
    /// The system's registered name.
    pub system: String,
    /// The planted bug, if any.
    pub bug: Option<String>,
    /// Every other flag of the run (`pinned`, `strategy`, `faults`, ...), as
    /// [`RunFlags`] names them; absent fields take their defaults.
    #[serde(flatten)]
    pub flags: RunFlags,
    /// The byte input, hex.
    pub input_hex: String,
    /// The input's stable hash (16 hex digits), so a replay tells an edited input from a
    /// diverged run. Absent in files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_hash: Option<String>,
    /// Where the input came from (`seed:11`, `shrunk from seed:11`, a file hash).
    #[serde(default)]
    pub origin: String,
    /// The history hash a strict replay must reproduce (16 hex digits), if pinned.
    #[serde(default)]
    pub history_hash: Option<String>,
    /// How the run ended when written.
    #[serde(default)]
    pub class: Option<String>,
    /// The failed invariant, if any.
    #[serde(default)]
    pub invariant: Option<String>,
    /// History length when written.
    #[serde(default)]
    pub steps: Option<u64>,
}

impl Repro {
    /// A repro of `run`'s variant on `bytes` (the run's input re-encoded), nothing pinned yet.
    pub fn of_run(run: &RunSpec, bytes: Vec<u8>, origin: &str) -> Repro {
        let mut repro = Repro::new(run.variant.system.name, run.variant.bug, bytes);
        repro.flags = run.variant.flags.clone();
        repro.origin = origin.to_string();
        repro
    }

    /// The variant this repro describes, its system found among `systems`.
    pub fn variant(&self, systems: &[SystemSpec]) -> Result<Variant, SpecError> {
        let system = crate::system::find(systems, &self.system)?;
        Variant::new(system, self.bug.as_deref(), self.flags.clone())
    }

    /// A repro of `input` for `system` with `bug`, default flags, nothing pinned yet.
    pub fn new(system: &str, bug: Option<&str>, input: Vec<u8>) -> Repro {
        Repro {
            format: REPRO_FORMAT.to_string(),
            version: REPRO_VERSION,
            system: system.to_string(),
            bug: bug.map(str::to_string),
            flags: RunFlags::default(),
            input_hash: Some(format!("{:016x}", stable_hash_bytes(&input))),
            input_hex: to_hex(&input),
            origin: String::new(),
            history_hash: None,
            class: None,
            invariant: None,
            steps: None,
        }
    }

    /// Pins the outcome a strict replay must reproduce.
    pub fn pin(mut self, outcome: &Outcome) -> Repro {
        self.history_hash = Some(format!("{:016x}", outcome.history_hash));
        self.class = Some(outcome.class.name().to_string());
        self.invariant = outcome.invariant.clone();
        self.steps = Some(outcome.steps);
        self
    }

    /// The input bytes.
    pub fn input(&self) -> Result<Vec<u8>, ReproError> {
        from_hex(&self.input_hex)
    }

    /// The input to run: lane-encoded [`Input::Bytes`], or [`Input::FlatBytes`] for a file of
    /// version 1 (written before byte inputs had lanes).
    pub fn run_input(&self) -> Result<Input, ReproError> {
        let bytes = self.input()?;
        Ok(match self.encoding() {
            crate::choice::FLAT_ENCODING => Input::FlatBytes(bytes),
            _ => Input::Bytes(bytes),
        })
    }

    /// The byte encoding of `input_hex` ([`crate::choice::ENCODING`]), named by the file's
    /// version: version 1 is the flat encoding, version 2 the lanes. A change of encoding
    /// bumps [`REPRO_VERSION`] with it, so a file never replays its bytes under an encoding
    /// it was not written in.
    pub fn encoding(&self) -> u32 {
        if self.version <= 1 {
            crate::choice::FLAT_ENCODING
        } else {
            crate::choice::ENCODING
        }
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a repro serialises")
    }

    /// Parses and checks format and version.
    pub fn from_json(text: &str) -> Result<Repro, ReproError> {
        #[derive(Deserialize)]
        struct Head {
            format: Option<String>,
            version: Option<u32>,
        }
        let head: Head = serde_json::from_str(text).map_err(|source| ReproError::Parse {
            expected: REPRO_FORMAT,
            source,
        })?;
        let found = head.format.unwrap_or_default();
        if found != REPRO_FORMAT {
            return Err(ReproError::WrongFormat {
                found,
                expected: REPRO_FORMAT,
            });
        }
        if let Some(v) = head.version.filter(|&v| v > REPRO_VERSION) {
            return Err(ReproError::TooNew { found: v });
        }
        let mut repro: Repro = serde_json::from_str(text).map_err(|source| ReproError::Parse {
            expected: REPRO_FORMAT,
            source,
        })?;
        repro.validate()?;
        Ok(repro)
    }

    /// Checks every field a reader relies on, and writes the pinned hash in lower case.
    fn validate(&mut self) -> Result<(), ReproError> {
        if self.version == 0 {
            return Err(ReproError::BadVersion {
                found: self.version,
            });
        }
        if let Some(hash) = &self.history_hash {
            if hash_hex::parse(hash).is_none() {
                return Err(ReproError::BadHash {
                    found: hash.clone(),
                });
            }
            self.history_hash = Some(hash.to_ascii_lowercase());
        }
        if let Some(class) = self.class.as_deref().filter(|c| Class::parse(c).is_none()) {
            return Err(ReproError::BadClass {
                found: class.to_string(),
            });
        }
        self.input().map(drop)
    }

    /// True when `input_hex` still hashes to `input_hash` (or the file predates that field).
    pub fn input_intact(&self) -> bool {
        match (&self.input_hash, self.input()) {
            (None, _) => true,
            (Some(hash), Ok(bytes)) => {
                hash.eq_ignore_ascii_case(&format!("{:016x}", stable_hash_bytes(&bytes)))
            }
            (Some(_), Err(_)) => false,
        }
    }

    /// Checks a replay's `outcome` against what the file pinned: `Ok` if it reproduced the
    /// history hash and the recorded class, invariant and steps exactly; otherwise the most
    /// likely reason, in words. A file without a pinned hash has nothing to check.
    pub fn check_replay(&self, outcome: &Outcome) -> Result<(), String> {
        let reproduced = self
            .history_hash
            .as_ref()
            .map(|pinned| *pinned == format!("{:016x}", outcome.history_hash));
        if !self.input_intact() {
            // The history the input_hex produced is the pinned one: the input is the one
            // recorded, and the hash field is what changed.
            if reproduced == Some(true) {
                return Err("the replay reproduces the pinned history_hash, so input_hex is the input recorded, but the file's input_hash field does not match it: input_hash was edited or damaged; remove it, or write the repro again".to_string());
            }
            return Err("the file's input_hex no longer matches its input_hash: the input itself was edited, so this is another run; write the repro again from its origin".to_string());
        }
        let Some(reproduced) = reproduced else {
            return Ok(());
        };
        if !reproduced {
            let edited = if self.input_hash.is_none() {
                " or the file's input_hex was edited,"
            } else {
                ""
            };
            return Err(format!("the replay diverged from the pinned history: the system or the framework changed since the file was written,{edited} or a run depends on something outside its input"));
        }
        let recorded = (self.class.as_deref(), self.invariant.as_deref(), self.steps);
        let got = (
            Some(outcome.class.name()),
            outcome.invariant.as_deref(),
            Some(outcome.steps),
        );
        let same = |a: Option<&str>, b: Option<&str>| a.is_none() || a == b;
        if !same(recorded.0, got.0)
            || (recorded.0.is_some() && recorded.1 != got.1)
            || recorded.2.is_some_and(|s| Some(s) != got.2)
        {
            return Err(format!("the run reproduces the pinned hash but not the file's class={} invariant={} steps={}: those fields were edited", recorded.0.unwrap_or("none"), recorded.1.unwrap_or("none"), recorded.2.map_or("none".to_string(), |s| s.to_string())));
        }
        Ok(())
    }
}

/// What a file given as input holds, recognised by parsing it (a byte-order mark and
/// surrounding whitespace allowed, fields in any order), never by peeking at its start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputFile {
    /// A repro file: system, bug, flags, input and pinned hash.
    Repro(Box<Repro>),
    /// A trace file (`--trace-json`): a history, not an input.
    Trace(Box<TraceFile>),
    /// A readable trace or story (`*.trace.txt`, the lines `sim run` prints): a history as
    /// text, not an input.
    TraceText,
    /// JSON that is neither a repro nor a trace file (`{}`, `null`, an array, a repro without
    /// `format`): what it is, in words. `sim render` reads an array as events.
    Json(String),
    /// Anything else: raw input bytes (a fuzz input, `--save-input`).
    Raw(Vec<u8>),
}

impl InputFile {
    /// Recognises `data`. A JSON object naming [`REPRO_FORMAT`] or [`TRACE_FORMAT`] must then
    /// be a valid file of that format (an error says what is wrong); any other JSON object,
    /// an array or `null` is [`InputFile::Json`] with what it lacks; the text of a readable
    /// trace is [`InputFile::TraceText`]; everything else is raw input, since any bytes are a
    /// valid input.
    ///
    /// ```
    /// use sim_core::repro::{InputFile, Repro};
    ///
    /// let text = format!("\u{feff}\n  {}", Repro::new("s", None, vec![7]).to_json());
    /// assert!(matches!(InputFile::recognise(text.into_bytes()), Ok(InputFile::Repro(_))));
    /// assert_eq!(InputFile::recognise(vec![1, 2]).unwrap(), InputFile::Raw(vec![1, 2]));
    /// assert!(InputFile::recognise(br#"{"format": "sim-repro", "version": 1}"#.to_vec()).is_err());
    /// for json in ["{}", "null", "[1,2,3]", r#"{"system": "s", "version": 2, "input_hex": "07"}"#] {
    ///     assert!(matches!(InputFile::recognise(json.into()), Ok(InputFile::Json(_))), "{json}");
    /// }
    /// let trace = "     0       0.000ms coord    start   incarnation 0\n";
    /// assert_eq!(InputFile::recognise(trace.into()).unwrap(), InputFile::TraceText);
    /// ```
    pub fn recognise(data: Vec<u8>) -> Result<InputFile, ReproError> {
        let Ok(text) = std::str::from_utf8(&data) else {
            return Ok(InputFile::Raw(data));
        };
        let text = text.trim_start_matches('\u{feff}').trim();
        if is_trace_text(text) {
            return Ok(InputFile::TraceText);
        }
        if !(text.starts_with('{') || text.starts_with('[') || text == "null") {
            return Ok(InputFile::Raw(data));
        }
        let value = match serde_json::from_str::<serde_json::Value>(text) {
            Ok(value) => value,
            // Broken JSON that names one of our formats is a damaged file, not an input.
            Err(source) => {
                return match [REPRO_FORMAT, TRACE_FORMAT]
                    .into_iter()
                    .find(|f| text.contains(f))
                {
                    Some(expected) => Err(ReproError::Parse { expected, source }),
                    None => Ok(InputFile::Raw(data)),
                }
            }
        };
        let object = match &value {
            serde_json::Value::Object(object) => object,
            serde_json::Value::Array(_) => {
                return Ok(InputFile::Json("it is a JSON array".to_string()))
            }
            _ => return Ok(InputFile::Json("it is JSON null".to_string())),
        };
        match object.get("format").map(|f| f.as_str()) {
            Some(Some(REPRO_FORMAT)) => Ok(InputFile::Repro(Box::new(Repro::from_json(text)?))),
            Some(Some(TRACE_FORMAT)) => Ok(InputFile::Trace(Box::new(TraceFile::from_json(text)?))),
            Some(format) => Ok(InputFile::Json(format!(
                "its format is {}, not {REPRO_FORMAT:?}",
                format.map_or("not a string".to_string(), |f| format!("{f:?}"))
            ))),
            None => {
                let missing: Vec<&str> = ["format", "version", "system", "input_hex"]
                    .into_iter()
                    .filter(|field| !object.contains_key(*field))
                    .collect();
                Ok(InputFile::Json(if missing == ["format"] {
                    format!("it has every field of a repro file but \"format\": add \"format\": \"{REPRO_FORMAT}\"")
                } else {
                    format!("it has no {} field", missing.join(", "))
                }))
            }
        }
    }
}

/// True if `text` starts with the lines of a readable trace (`render_lines`, a `*.trace.txt`
/// or a story, `  | ` prefixes allowed): index, time in ms, node, kind.
fn is_trace_text(text: &str) -> bool {
    let mut lines = text
        .lines()
        .map(|l| l.trim_start().trim_start_matches('|').trim_start())
        .filter(|l| !l.is_empty())
        .take(3)
        .peekable();
    lines.peek().is_some()
        && lines.all(|line| {
            let mut words = line.split_whitespace();
            let index = words
                .next()
                .is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit()));
            let time = words
                .next()
                .and_then(|w| w.strip_suffix("ms"))
                .is_some_and(|t| {
                    t.split_once('.').is_some_and(|(ms, us)| {
                        !ms.is_empty()
                            && ms.bytes().all(|b| b.is_ascii_digit())
                            && us.len() == 3
                            && us.bytes().all(|b| b.is_ascii_digit())
                    })
                });
            index && time && words.count() >= 2
        })
}

/// A machine-readable trace: format, identity, outcome and events.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceFile {
    /// Always [`TRACE_FORMAT`].
    pub format: String,
    /// 1.
    pub version: u32,
    /// The system.
    pub system: String,
    /// The bug, if any.
    pub bug: Option<String>,
    /// The input's identity (`seed:11`, `bytes:5:<hash>`).
    pub input: String,
    /// How the run ended.
    pub outcome: Outcome,
    /// Every event.
    pub events: Vec<Event>,
}

impl TraceFile {
    /// A trace file for one run.
    pub fn new(
        system: &str,
        bug: Option<&str>,
        input: &str,
        outcome: &Outcome,
        events: &[Event],
    ) -> TraceFile {
        TraceFile {
            format: TRACE_FORMAT.to_string(),
            version: TRACE_VERSION,
            system: system.to_string(),
            bug: bug.map(str::to_string),
            input: input.to_string(),
            outcome: outcome.clone(),
            events: events.to_vec(),
        }
    }

    /// The trace file of `run`, which ended in `outcome` after `events`.
    pub fn of_run(run: &RunSpec, outcome: &Outcome, events: &[Event]) -> TraceFile {
        TraceFile::new(
            run.variant.system.name,
            run.variant.bug,
            &run.input_identity(),
            outcome,
            events,
        )
    }

    /// Parses a trace file and checks its format, its version and its events (see
    /// [`check_events`]).
    pub fn from_json(text: &str) -> Result<TraceFile, ReproError> {
        let file: TraceFile = serde_json::from_str(text).map_err(|source| ReproError::Parse {
            expected: TRACE_FORMAT,
            source,
        })?;
        if file.format != TRACE_FORMAT {
            return Err(ReproError::WrongFormat {
                found: file.format,
                expected: TRACE_FORMAT,
            });
        }
        if file.version != TRACE_VERSION {
            return Err(ReproError::TraceVersion {
                found: file.version,
            });
        }
        check_events(&file.events)?;
        Ok(file)
    }

    /// Reads a trace file, or a bare JSON array of a whole history's events; either is
    /// checked with [`check_events`].
    pub fn events_from_json(text: &str) -> Result<Vec<Event>, ReproError> {
        let text = text.trim_start_matches('\u{feff}').trim();
        if text.starts_with('[') {
            let events: Vec<Event> =
                serde_json::from_str(text).map_err(|source| ReproError::Parse {
                    expected: TRACE_FORMAT,
                    source,
                })?;
            check_events(&events)?;
            return Ok(events);
        }
        Ok(TraceFile::from_json(text)?.events)
    }
}

/// Checks that `events` can be a whole history: each event's `index` is its position, each
/// event's node was introduced by a `start` event at or before it, and each message goes to
/// a node that started (node ids count the nodes in the order they first start).
///
/// ```
/// use sim_core::repro::check_events;
/// use sim_core::trace::{Event, EventKind};
/// let ev = |index, node: &str, kind| Event { index, time_ns: 0, node: Some(node.into()), kind, detail: String::new() };
/// let ok = [ev(0, "a", EventKind::Start { incarnation: 0 }), ev(1, "a", EventKind::Crash)];
/// assert!(check_events(&ok).is_ok());
/// assert!(check_events(&[ev(0, "a", EventKind::Start { incarnation: 0 }), ev(2, "a", EventKind::Crash)]).is_err());
/// assert!(check_events(&[ev(0, "a", EventKind::Start { incarnation: 0 }), ev(1, "zz", EventKind::Crash)]).is_err());
/// ```
pub fn check_events(events: &[Event]) -> Result<(), ReproError> {
    let mut started: Vec<&str> = Vec::new();
    for (position, e) in events.iter().enumerate() {
        let bad = |problem: String| ReproError::BadEvent { position, problem };
        if e.index != position as u64 {
            return Err(bad(format!(
                "has index {}, but events are numbered 0, 1, 2, ... in order",
                e.index
            )));
        }
        if let Some(node) = e.node.as_deref() {
            if matches!(e.kind, crate::trace::EventKind::Start { .. }) && !started.contains(&node) {
                started.push(node);
            }
            if !started.contains(&node) {
                return Err(bad(format!(
                    "is on node {node:?}, which no earlier start event introduced (nodes: {})",
                    started.join(", ")
                )));
            }
        }
        if let crate::trace::EventKind::Send { to, .. } = e.kind {
            if to as usize >= started.len() {
                return Err(bad(format!(
                    "sends to node id {to}, but only {} nodes had started",
                    started.len()
                )));
            }
        }
    }
    Ok(())
}

/// What was built, and from what: printed with every failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildInfo {
    /// `git rev-parse --short HEAD`, with `-dirty` if the tree had changes; `unknown` without git.
    pub commit: &'static str,
    /// `rustc -V` of the toolchain that built the binary.
    pub rustc: &'static str,
    /// The target triple.
    pub target: &'static str,
}

/// The [`BuildInfo`] the `sim-build` crate's build script captured for the crate this is
/// written in (each field `unknown` without one).
///
/// ```
/// let build = sim_core::build_info!();
/// assert!(!build.commit.is_empty());
/// ```
#[macro_export]
macro_rules! build_info {
    () => {
        $crate::repro::BuildInfo {
            commit: match option_env!("SIM_BUILD_COMMIT") {
                Some(v) => v,
                None => "unknown",
            },
            rustc: match option_env!("SIM_BUILD_RUSTC") {
                Some(v) => v,
                None => "unknown",
            },
            target: match option_env!("SIM_BUILD_TARGET") {
                Some(v) => v,
                None => "unknown",
            },
        }
    };
}

impl BuildInfo {
    /// For binaries that do not capture their build (no build script): every field `unknown`.
    pub const UNKNOWN: BuildInfo = BuildInfo {
        commit: "unknown",
        rustc: "unknown",
        target: "unknown",
    };
}

/// The identity of one run: enough to reproduce it and to know what produced it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunIdentity {
    /// `seed:N` or `bytes:LEN:HASH`.
    pub input: String,
    /// The build.
    pub build: BuildInfo,
    /// The flags that affect the run (`--system two-pc --bug first-vote-wins ...`).
    pub flags: String,
}

impl RunIdentity {
    /// The identity printed with a failure of `run`, built by `build`.
    pub fn of(run: &RunSpec, build: BuildInfo) -> RunIdentity {
        RunIdentity {
            input: run.input_identity(),
            build,
            flags: run.variant.args(),
        }
    }
}

impl fmt::Display for RunIdentity {
    /// One `key=value` line: `input=... commit=... toolchain="..." target=... flags="..."`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "identity input={} commit={} toolchain={:?} target={} flags={:?}",
            self.input, self.build.commit, self.build.rustc, self.build.target, self.flags
        )
    }
}

/// Where a failure's files went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailureFiles {
    /// Readable trace, one line per event.
    pub trace_txt: PathBuf,
    /// [`TraceFile`] JSON.
    pub trace_json: PathBuf,
    /// [`Repro`] JSON.
    pub repro: PathBuf,
}

/// Writes a failure's readable trace, JSON trace and repro into `dir` (created if needed), as
/// `STEM.trace.txt`, `STEM.trace.json` and `STEM.repro.json`. For sweeps, fuzz runs and tests.
pub fn write_failure(
    dir: &Path,
    stem: &str,
    repro: &Repro,
    trace: &TraceFile,
) -> std::io::Result<FailureFiles> {
    std::fs::create_dir_all(dir)?;
    let files = FailureFiles {
        trace_txt: dir.join(format!("{stem}.trace.txt")),
        trace_json: dir.join(format!("{stem}.trace.json")),
        repro: dir.join(format!("{stem}.repro.json")),
    };
    std::fs::write(&files.trace_txt, render_lines(&trace.events))?;
    std::fs::write(
        &files.trace_json,
        serde_json::to_string(trace).expect("a trace serialises"),
    )?;
    std::fs::write(&files.repro, repro.to_json() + "\n")?;
    Ok(files)
}

/// How an input is named lives with the run ([`crate::run_spec::input_identity`]); this path
/// stays for code written against it.
pub use crate::run_spec::input_identity;

/// Runs `run` with every event recorded and, if it fails, writes its files into `dir` (see
/// [`write_failure`]), named by [`RunSpec::stem`], its repro recording every flag of the run.
/// For sweeps, tests and fuzz targets: the failure outlives the process.
///
/// ```
/// # use sim_core::{choice::Input, run_spec::{RunFlags, RunSpec, Variant}, sim::Sim, system::{RunOptions, SystemSpec}};
/// # fn build(o: &RunOptions) -> Sim { let mut s = Sim::new(o.config.clone()); s.invariant("ok", || Err("no".into())); s }
/// # const SPEC: SystemSpec = SystemSpec::new("toy", "", build);
/// let dir = std::env::temp_dir().join(format!("doc-record-failure-{}", std::process::id()));
/// let run = RunSpec::new(Variant::new(&SPEC, None, RunFlags::default()).unwrap(), Input::Seed(3));
/// let (report, files) = sim_core::repro::record_failure(&run, &dir).unwrap();
/// assert!(report.outcome.class.is_failure());
/// let files = files.expect("a failure leaves files");
/// assert!(std::fs::read_to_string(&files.trace_txt).unwrap().contains("FAILED"));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn record_failure(
    run: &RunSpec,
    dir: &Path,
) -> std::io::Result<(Report, Option<FailureFiles>)> {
    let (report, bytes) = run.run_encoded();
    if !report.outcome.class.is_failure() {
        return Ok((report, None));
    }
    let identity = run.input_identity();
    let repro = Repro::of_run(run, bytes, &identity).pin(&report.outcome);
    let trace = TraceFile::of_run(run, &report.outcome, report.history.events());
    let files = write_failure(dir, &run.stem(), &repro, &trace)?;
    Ok((report, Some(files)))
}

/// The last `n` lines of a readable trace.
pub fn last_lines(events: &[Event], n: usize) -> String {
    render_lines(&events[events.len().saturating_sub(n)..])
}

/// Lower-case hex.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses [`to_hex`]'s output (either case).
pub fn from_hex(text: &str) -> Result<Vec<u8>, ReproError> {
    let text = text.trim();
    let digits = text.as_bytes();
    if digits.len() % 2 != 0 {
        return Err(ReproError::BadHex { at: digits.len() });
    }
    let value = |i: usize| {
        (digits[i] as char)
            .to_digit(16)
            .ok_or(ReproError::BadHex { at: i })
    };
    (0..digits.len() / 2)
        .map(|k| Ok((value(2 * k)? * 16 + value(2 * k + 1)?) as u8))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_junk() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(from_hex(&to_hex(&bytes)).unwrap(), bytes);
        assert_eq!(from_hex("0A0b").unwrap(), [10, 11]);
        assert!(matches!(from_hex("abc"), Err(ReproError::BadHex { at: 3 })));
        assert!(matches!(from_hex("zz"), Err(ReproError::BadHex { at: 0 })));
    }

    #[test]
    fn the_documented_example_hashes_its_input() {
        let r = Repro::new("two-pc", Some("first-vote-wins"), vec![3, 0, 0, 0, 1]);
        assert_eq!(r.input_hash.as_deref(), Some("59635947ef281541"));
    }

    #[test]
    fn repro_round_trips_and_checks_version() {
        let r = Repro::new("s", None, vec![1, 2]);
        assert_eq!(Repro::from_json(&r.to_json()).unwrap(), r);
        let newer = r.to_json().replace("\"version\": 2", "\"version\": 3");
        assert!(matches!(
            Repro::from_json(&newer),
            Err(ReproError::TooNew { found: 3 })
        ));
        // A version-1 file's bytes are in the flat encoding; a current one's have lanes.
        let old = Repro::from_json(&r.to_json().replace("\"version\": 2", "\"version\": 1"));
        assert_eq!(
            old.unwrap().run_input().unwrap(),
            Input::FlatBytes(vec![1, 2])
        );
        assert_eq!(r.run_input().unwrap(), Input::Bytes(vec![1, 2]));
        let padded = format!("\u{feff}  \n{}", r.to_json());
        assert!(matches!(
            InputFile::recognise(padded.into_bytes()),
            Ok(InputFile::Repro(_))
        ));
        assert_eq!(
            InputFile::recognise(vec![0, 1, 2]).unwrap(),
            InputFile::Raw(vec![0, 1, 2])
        );
    }
}
