//! The description of a run: which system, which planted bug, every flag that changes the
//! run, and the input.
//!
//! One description serves every producer and consumer of runs: `sim run`, `sweep`, `shrink`
//! and `replay`, the fuzz harness, repro files, run identities, replay commands and the names
//! of failure files. A flag lives in [`RunFlags`] once; everything else derives from it, so no
//! place can record a flag that another place forgot.
//!
//! * [`RunFlags`]: the flags beyond system and bug (`--pinned`, `--strategy`, `--faults`, ...),
//!   parsed by clap, stored in repro files by serde, applied to [`RunOptions`] in one method.
//! * [`Variant`]: a system, its bug and its flags — what a sweep or a fuzzer holds fixed.
//! * [`RunSpec`]: a variant and one [`Input`] — one run, nameable, replayable, recordable.
//!
//! # Adding a flag
//!
//! 1. Add a field to [`RunFlags`] with its `#[arg(long, ...)]` (how the command line spells it;
//!    a `value_parser` that refuses bad values with a message that names the fix) and its
//!    `#[serde(default, ...)]` (repro files written before the flag existed lack it). A flag
//!    that takes a value must serialise (serde) to the text the command line takes, so the
//!    replay command can be written back from the stored value; a plain switch is a `bool`.
//! 2. Say what it does in [`RunFlags::apply`] — the compiler points there, because it
//!    destructures every field.
//! 3. Give its values in [`RunFlags::EXAMPLES`] (the repro round-trip test runs every
//!    command over them and fails for a flag that has none).
//! 4. If only some systems read it, list it in [`RunFlags::SYSTEM_SPECIFIC`]; a system that
//!    reads it names it in its [`SystemSpec::flags`], and the others refuse it rather than
//!    silently ignore it.
//!
//! Nothing else changes: the replay command, the run identity, the repro file, failure-file
//! names and the conflict check between a repro file and the command line walk the fields
//! generically (clap gives their order and spelling, serde their values).
//!
//! ```
//! use sim_core::choice::Input;
//! use sim_core::run_spec::{RunFlags, RunSpec, Variant};
//! use sim_core::sim::Sim;
//! use sim_core::system::{RunOptions, SystemSpec};
//!
//! fn build(opts: &RunOptions) -> Sim { Sim::new(opts.config.clone()) }
//! const TOY: SystemSpec = SystemSpec::new("toy", "", build);
//!
//! let flags = RunFlags::parse_args(["--strategy", "pct", "--faults", "all"]).unwrap();
//! let run = RunSpec::new(Variant::new(&TOY, None, flags).unwrap(), Input::Seed(5));
//! assert_eq!(run.variant.args(), "--system toy --strategy pct --faults all");
//! assert_eq!(run.run_command("sim", None), "sim run --system toy --strategy pct --faults all --seed 5");
//! assert_eq!(run.stem(), "toy-correct-strategy-pct-faults-all-seed-5");
//! let repro = sim_core::repro::Repro::of_run(&run, vec![1, 2], "seed:5");
//! assert_eq!(repro.flags, run.variant.flags, "a repro records every flag");
//! ```

use std::fmt;

use clap::{Args, FromArgMatches};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::choice::Input;
use crate::faults::{FaultSelection, Intensity};
use crate::hash::stable_hash_bytes;
use crate::rt::Strategy;
use crate::sim::Report;
use crate::system::{RunOptions, SpecError, SystemSpec};
use crate::trace::Recording;

/// Every flag that changes a run besides the system and its bug. See the module docs for how
/// to add one.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFlags {
    /// Fix the workload so only the schedule varies (systems that read it: `sim list --json`).
    #[arg(long)]
    #[serde(default)]
    pub pinned: bool,
    /// Scheduling strategy: uniform, pct or fifo.
    #[arg(long, default_value = "uniform", value_parser = parse_strategy)]
    #[serde(default, with = "strategy_text")]
    pub strategy: Strategy,
    /// Faults: off; swarm (network faults, a profile drawn per run); all (every network
    /// fault); a list of kinds, e.g. partition,clog,crash (each at its swarm maximum); or
    /// swarm:LIST, e.g. swarm:partition,clog,disk (drawn per run over those kinds only).
    /// Kinds: loss dup reorder partition clog stall reset silent refuse blackhole (group
    /// net); skew jump late-timer (group clock: per-node wall clocks, late timers); crash
    /// stop pause (group lifecycle: the nemesis); disk. Clock, lifecycle and disk faults are
    /// on only when listed. Unset = the system's own choice.
    #[arg(long, value_parser = FaultsFlag::parse)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<FaultsFlag>,
    /// How often faults fire in a seed's run: 1 (the default: at the odds the system sets)
    /// or swarm (a fault profile drawn per seed, as the fuzzer's fresh runs draw it: every
    /// fault at 1, 2, 4 or 8 times its odds, or one group, network, lifecycle, disk or clock,
    /// at 8 or 64 times; with every operation count at its largest). It scales the faults
    /// --faults turns on; a byte input (--input) is run as it is.
    #[arg(long, default_value = "1", value_parser = parse_intensity)]
    #[serde(
        default,
        skip_serializing_if = "is_configured",
        with = "intensity_text"
    )]
    pub intensity: Intensity,
    /// Quiet periods in the workload: on (the default; drawn from the input) or off, to
    /// measure what leaving the system alone finds (systems that read it: `sim list --json`).
    #[arg(long, default_value = "on", value_parser = parse_on_off)]
    #[serde(default, with = "on_off_text")]
    pub quiet: OnOff,
}

/// A switch the command line spells `on` or `off`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnOff {
    /// On (the default).
    #[default]
    On,
    /// Off.
    Off,
}

impl OnOff {
    /// `on` or `off`.
    pub fn name(self) -> &'static str {
        match self {
            OnOff::On => "on",
            OnOff::Off => "off",
        }
    }
}

fn parse_on_off(text: &str) -> Result<OnOff, String> {
    match text {
        "on" => Ok(OnOff::On),
        "off" => Ok(OnOff::Off),
        _ => Err(format!(
            "{text:?} is neither on nor off; use --quiet on or --quiet off"
        )),
    }
}

/// Serde for an [`OnOff`] as its command-line name.
mod on_off_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::OnOff;

    pub fn serialize<S: Serializer>(value: &OnOff, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(value.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<OnOff, D::Error> {
        let text = String::deserialize(d)?;
        super::parse_on_off(&text).map_err(serde::de::Error::custom)
    }
}

impl RunFlags {
    /// Flags only some systems read; a system lists the ones it reads in
    /// [`SystemSpec::flags`], and a run that sets another is refused.
    pub const SYSTEM_SPECIFIC: &'static [&'static str] = &["pinned", "quiet"];

    /// The values of each flag (clap id) that tests run every command over. A switch is
    /// listed with `"true"`.
    pub const EXAMPLES: &'static [(&'static str, &'static [&'static str])] = &[
        ("pinned", &["true"]),
        ("quiet", &["off"]),
        ("strategy", &["uniform", "pct", "fifo"]),
        ("intensity", &["1", "swarm"]),
        (
            "faults",
            &["off", "swarm", "all", "swarm:partition,skew,pause"],
        ),
    ];

    /// Sets what each flag does on the options a system builds its run from.
    pub fn apply(&self, opts: &mut RunOptions) {
        // Destructured, so a new field cannot be forgotten here.
        let RunFlags {
            pinned,
            strategy,
            faults,
            intensity,
            quiet,
        } = self;
        opts.pinned = *pinned;
        opts.quiet = *quiet == OnOff::On;
        opts.config.strategy = *strategy;
        opts.config.intensity = *intensity;
        opts.faults = None;
        if let Some(faults) = faults {
            opts.apply_faults(faults.selection());
        }
    }

    /// Parses flags as the command line spells them (`["--faults", "all"]`).
    pub fn parse_args<I, T>(args: I) -> Result<RunFlags, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let argv = std::iter::once(std::ffi::OsString::from("flags"))
            .chain(args.into_iter().map(Into::into));
        let matches = Self::command().try_get_matches_from(argv)?;
        RunFlags::from_arg_matches(&matches)
    }

    /// The flags set away from their default, in declared order, as `--name [value]` words.
    pub fn to_args(&self) -> Vec<String> {
        let (values, defaults) = (self.values(), RunFlags::default().values());
        let mut words = Vec::new();
        for arg in Self::command().get_arguments() {
            let id = arg.get_id().as_str();
            let value = values.get(id).unwrap_or(&Value::Null);
            if value == defaults.get(id).unwrap_or(&Value::Null) {
                continue;
            }
            words.push(format!("--{}", arg.get_long().unwrap_or(id)));
            if arg.get_action().takes_values() {
                words.push(value_text(value));
            }
        }
        words
    }

    /// Where a command line's flags (`self`) contradict the flags a repro file recorded: one
    /// message per flag set away from its default to another value than the file's.
    pub fn conflicts_with(&self, recorded: &RunFlags) -> Vec<String> {
        let (ours, theirs) = (self.values(), recorded.values());
        let defaults = RunFlags::default().values();
        let get = |m: &Map<String, Value>, id: &str| m.get(id).cloned().unwrap_or(Value::Null);
        Self::command()
            .get_arguments()
            .map(|arg| arg.get_id().as_str().to_string())
            .filter(|id| get(&ours, id) != get(&defaults, id) && get(&ours, id) != get(&theirs, id))
            .map(|id| {
                format!(
                    "--{id} {} but the file says {}",
                    value_text(&get(&ours, &id)),
                    value_text(&get(&theirs, &id))
                )
            })
            .collect()
    }

    /// The flags among [`RunFlags::SYSTEM_SPECIFIC`] set away from their default.
    pub fn system_specific_set(&self) -> Vec<&'static str> {
        let (values, defaults) = (self.values(), RunFlags::default().values());
        Self::SYSTEM_SPECIFIC
            .iter()
            .copied()
            .filter(|id| values.get(*id) != defaults.get(*id))
            .collect()
    }

    fn command() -> clap::Command {
        RunFlags::augment_args(clap::Command::new("flags").no_binary_name(false))
    }

    fn values(&self) -> Map<String, Value> {
        match serde_json::to_value(self).expect("run flags serialise") {
            Value::Object(map) => map,
            other => unreachable!("run flags serialise to an object, not {other}"),
        }
    }
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "unset".to_string(),
        other => other.to_string(),
    }
}

fn parse_strategy(text: &str) -> Result<Strategy, String> {
    Strategy::parse(text)
        .ok_or_else(|| format!("--strategy {text:?} is unknown; use uniform, pct or fifo"))
}

/// Serde for a [`Strategy`] as its command-line name, refusing unknown names.
mod strategy_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::rt::Strategy;

    pub fn serialize<S: Serializer>(strategy: &Strategy, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(strategy.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Strategy, D::Error> {
        let text = String::deserialize(d)?;
        super::parse_strategy(&text).map_err(serde::de::Error::custom)
    }
}

fn parse_intensity(text: &str) -> Result<Intensity, String> {
    text.parse()
        .map_err(|e: crate::faults::UnknownIntensity| e.to_string())
}

fn is_configured(intensity: &Intensity) -> bool {
    *intensity == Intensity::Configured
}

/// Serde for an [`Intensity`] as its command-line name, refusing unknown names.
mod intensity_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::faults::Intensity;

    pub fn serialize<S: Serializer>(intensity: &Intensity, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(intensity.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Intensity, D::Error> {
        let text = String::deserialize(d)?;
        super::parse_intensity(&text).map_err(serde::de::Error::custom)
    }
}

/// A `--faults` value as written (`off`, `swarm`, `all`, a list of kinds, `swarm:<list>`: see
/// [`FaultSelection`]), checked when made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct FaultsFlag(String);

impl FaultsFlag {
    /// Checks `text` names a fault setting.
    pub fn parse(text: &str) -> Result<FaultsFlag, String> {
        text.parse::<FaultSelection>()
            .map(|_| FaultsFlag(text.to_string()))
            .map_err(|e| format!("--faults {text:?}: {e}"))
    }

    /// The selection it names.
    pub fn selection(&self) -> FaultSelection {
        self.0.parse().expect("a FaultsFlag is checked when made")
    }

    /// The text as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for FaultsFlag {
    type Error = String;
    fn try_from(text: String) -> Result<FaultsFlag, String> {
        FaultsFlag::parse(&text)
    }
}

impl From<FaultsFlag> for String {
    fn from(flag: FaultsFlag) -> String {
        flag.0
    }
}

/// A system, its planted bug and its flags: everything of a run but the input.
#[derive(Clone, Debug)]
pub struct Variant {
    /// The system under test.
    pub system: SystemSpec,
    /// The planted bug (`None` = the correct system), checked against the system's bugs.
    pub bug: Option<&'static str>,
    /// Every other flag.
    pub flags: RunFlags,
}

impl Variant {
    /// A variant of `system`; refuses a bug it does not have and a system-specific flag it
    /// does not read.
    pub fn new(
        system: &SystemSpec,
        bug: Option<&str>,
        flags: RunFlags,
    ) -> Result<Variant, SpecError> {
        let bug = system.options(bug)?.bug;
        if let Some(flag) = flags
            .system_specific_set()
            .into_iter()
            .find(|f| !system.flags.contains(f))
        {
            return Err(SpecError::UnsupportedFlag {
                system: system.name.to_string(),
                flag: flag.to_string(),
            });
        }
        Ok(Variant {
            system: *system,
            bug,
            flags,
        })
    }

    /// The options the system builds its run from.
    pub fn options(&self) -> RunOptions {
        let mut opts = self
            .system
            .options(self.bug)
            .expect("the bug was checked when made");
        self.flags.apply(&mut opts);
        opts
    }

    /// The same options with every event recorded (for traces).
    pub fn recording_options(&self) -> RunOptions {
        let mut opts = self.options();
        opts.config.recording = Recording::Full;
        opts
    }

    /// `--system S [--bug B] [flags...]`: the command-line words that select this variant.
    pub fn args(&self) -> String {
        self.arg_words().join(" ")
    }

    /// [`Variant::args`] as separate words, for starting a process.
    pub fn arg_words(&self) -> Vec<String> {
        let mut words = vec!["--system".to_string(), self.system.name.to_string()];
        if let Some(bug) = self.bug {
            words.extend(["--bug".to_string(), bug.to_string()]);
        }
        words.extend(self.flags.to_args());
        words
    }

    /// `system-bug[-flag-value...]`: the start of failure-file names, distinct per flag set.
    pub fn stem(&self) -> String {
        let mut stem = format!("{}-{}", self.system.name, self.bug.unwrap_or("correct"));
        for word in self.flags.to_args() {
            stem.push('-');
            stem.extend(word.trim_start_matches('-').chars().map(file_safe));
        }
        stem
    }

    /// One run of `input`.
    pub fn run(&self, input: &Input) -> Report {
        crate::os::run_maybe_isolated(self.system.thread_per_run, || {
            (self.system.build)(&self.options()).run_input(input)
        })
    }
}

fn file_safe(c: char) -> char {
    if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '+' | '_') {
        c
    } else {
        '_'
    }
}

/// One run: a [`Variant`] and its input.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// System, bug and flags.
    pub variant: Variant,
    /// The input.
    pub input: Input,
}

impl RunSpec {
    /// The run of `input` on `variant`.
    ///
    /// A [`Input::FlatBytes`] input (a version-1 repro's) is converted here, once, to the
    /// lane encoding: its run is replayed through a recorder and the draws re-encoded, which
    /// gives the same draws and so the same run under [`crate::choice::Bytes`].
    pub fn new(variant: Variant, input: Input) -> RunSpec {
        let input = match input {
            Input::FlatBytes(_) => {
                let (_, bytes) = (variant.system.build)(&variant.options()).run_encoded(&input);
                Input::Bytes(bytes)
            }
            other => other,
        };
        RunSpec { variant, input }
    }

    /// `seed:N` or `bytes:LEN:HASH`.
    pub fn input_identity(&self) -> String {
        input_identity(&self.input)
    }

    /// The command that runs this again: `PREFIX run --system S ... --seed N`, or
    /// `... --input FILE` for bytes (`FILE` = `input_file`, or `INPUT_FILE` if unknown).
    pub fn run_command(&self, prefix: &str, input_file: Option<&str>) -> String {
        let input = match &self.input {
            Input::Seed(seed) => format!("--seed {seed}"),
            Input::Bytes(_) | Input::FlatBytes(_) => {
                format!("--input {}", input_file.unwrap_or("INPUT_FILE"))
            }
        };
        format!("{prefix} run {} {input}", self.variant.args())
    }

    /// `system-bug[-flags]-seed-N` or `...-bytes-HASH`: the stem of this run's failure files.
    pub fn stem(&self) -> String {
        let input = match &self.input {
            Input::Seed(seed) => format!("seed-{seed}"),
            Input::Bytes(b) | Input::FlatBytes(b) => {
                format!("bytes-{:016x}", crate::trace::stable_hash_bytes(b))
            }
        };
        format!("{}-{input}", self.variant.stem())
    }

    /// Runs with every event recorded (for traces).
    pub fn run_traced(&self) -> Report {
        crate::os::run_maybe_isolated(self.variant.system.thread_per_run, || {
            (self.variant.system.build)(&self.variant.recording_options()).run_input(&self.input)
        })
    }

    /// Runs with every event recorded; also returns the input re-encoded as bytes.
    pub fn run_encoded(&self) -> (Report, Vec<u8>) {
        crate::os::run_maybe_isolated(self.variant.system.thread_per_run, || {
            (self.variant.system.build)(&self.variant.recording_options()).run_encoded(&self.input)
        })
    }
}

/// `seed:N` or `bytes:LEN:HASH`: how an input is named in output, trace files and repros.
pub fn input_identity(input: &Input) -> String {
    match input {
        Input::Seed(seed) => format!("seed:{seed}"),
        Input::Bytes(b) => format!("bytes:{}:{:016x}", b.len(), stable_hash_bytes(b)),
        Input::FlatBytes(b) => format!("flat-bytes:{}:{:016x}", b.len(), stable_hash_bytes(b)),
    }
}

impl fmt::Display for RunSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.variant.args(), self.input_identity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_what_the_command_line_gives_without_flags() {
        assert_eq!(
            RunFlags::parse_args::<[&str; 0], &str>([]).unwrap(),
            RunFlags::default()
        );
        assert!(RunFlags::default().to_args().is_empty());
    }

    #[test]
    fn every_flag_has_examples_and_round_trips_through_args_and_serde() {
        let command = RunFlags::command();
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            let (_, values) = RunFlags::EXAMPLES
                .iter()
                .find(|(name, _)| *name == id)
                .unwrap_or_else(|| panic!("--{id} has no EXAMPLES"));
            for value in *values {
                let words: Vec<String> = if arg.get_action().takes_values() {
                    vec![format!("--{id}"), value.to_string()]
                } else {
                    vec![format!("--{id}")]
                };
                let flags = RunFlags::parse_args(&words).unwrap();
                let again = RunFlags::parse_args(flags.to_args()).unwrap();
                assert_eq!(again, flags, "{words:?}");
                let json = serde_json::to_string(&flags).unwrap();
                assert_eq!(serde_json::from_str::<RunFlags>(&json).unwrap(), flags);
            }
        }
    }

    #[test]
    fn conflicts_name_only_flags_set_to_another_value() {
        let file = RunFlags::parse_args(["--faults", "all", "--pinned"]).unwrap();
        assert!(RunFlags::default().conflicts_with(&file).is_empty());
        assert!(file.conflicts_with(&file).is_empty());
        let other = RunFlags::parse_args(["--faults", "off"]).unwrap();
        let said = other.conflicts_with(&file);
        assert_eq!(said, ["--faults off but the file says all"]);
    }
}
