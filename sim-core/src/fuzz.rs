//! The fuzz harness: input bytes → one run → a verdict, shared by libFuzzer, AFL++ and tests.
//!
//! A fuzz target is one line around [`Harness::fuzz_one`]; the engine only supplies bytes.
//! The bytes are the run's choice sequence ([`crate::choice::Bytes`]): any length is valid,
//! the empty input is the plainest run, and the harness itself never panics — only the
//! system under test can fail.
//!
//! What a target does with each input:
//!
//! 1. runs the system (the planted bug chosen by `SIM_BUG`, the extra signal by `SIM_SIGNAL`,
//!    see [`crate::signal`]);
//! 2. on a failure ([`Class::is_failure`]), re-runs the input twice in process with recording
//!    on ([`crate::determinism::self_check`]); if a history hash differs the failure becomes
//!    [`Class::Diverged`], naming the first differing event;
//! 3. prints the replay command, the class and the tail of the trace to stderr, and aborts,
//!    so the engine saves the input as a crash;
//! 4. otherwise tells the engine whether to keep the input ([`Verdict::Reject`] when the
//!    `reject` signal is on and the history was seen before).
//!
//! `SIM_BUG` takes the names `sim list` shows; unset (or empty) means the correct system, and
//! an unknown name is an error at start-up ([`Harness::from_env_or_exit`]).
//!
//! ```
//! use sim_core::fuzz::{Engine, Harness};
//! use sim_core::report::Class;
//! use sim_core::sim::Sim;
//! use sim_core::system::{BugSpec, RunOptions, SystemSpec};
//!
//! fn build(opts: &RunOptions) -> Sim {
//!     let mut sim = Sim::new(opts.config.clone());
//!     let buggy = opts.bug_is("fail");
//!     sim.client("c", |_| async {});
//!     sim.invariant("ok", move || if buggy { Err("planted".into()) } else { Ok(()) });
//!     sim
//! }
//! const TOY: SystemSpec =
//!     SystemSpec::new("toy", "", build).with_bugs(&[BugSpec { name: "fail", about: "" }]);
//!
//! let correct = Harness::new(&TOY, None, "toy", Engine::Test).unwrap();
//! assert!(correct.check(b"any bytes at all").outcome.class.is_pass());
//! let buggy = Harness::new(&TOY, Some("fail"), "toy", Engine::Test).unwrap();
//! let checked = buggy.check(&[]);
//! assert_eq!(checked.outcome.class, Class::Correctness);
//! assert!(buggy.failure_report(&[], &checked).contains("--bug fail --input"));
//! assert!(Harness::new(&TOY, Some("nope"), "toy", Engine::Test).is_err());
//! ```

use std::fmt::Write as _;
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use crate::choice::Input;
use crate::determinism::{self_check_runs, Divergence};
use crate::mutate::MutatorChoice;
use crate::report::{Class, Outcome};
use crate::run_spec::{RunFlags, RunSpec, Variant};
use crate::signal::{self, SignalError, Signals};
use crate::system::{RunOptions, SpecError, SystemSpec};
use crate::trace::{render_lines, Event};

/// How many trace lines a failure report shows.
pub const TRACE_TAIL_LINES: usize = 25;

/// The hunt's libFuzzer flags (`sim hunt`, and a `sim_fuzz_target!` run as typed without any
/// of them): the vanilla corpus schedule (1.7-2.9x less time to the same bug), no mutations
/// from comparison tables (keyed by code address, so any rebuild would run another search),
/// and no length ramp. Measured in `fuzz/README.md`.
pub const HUNT_FLAGS: [&str; 3] = ["-entropic=0", "-use_cmp=0", "-len_control=0"];

/// How many seeded runs a hunt starts from: the sweep's variety, recorded as byte inputs.
pub const HUNT_SEED_RUNS: u64 = 32;

/// The `-max_len` a hunt gives libFuzzer: room to grow to 4x the longest input it starts
/// from, and never under 4,096 bytes.
///
/// ```
/// assert_eq!(sim_core::fuzz::hunt_max_len_bytes(100), 4096);
/// assert_eq!(sim_core::fuzz::hunt_max_len_bytes(2000), 8000);
/// ```
pub fn hunt_max_len_bytes(longest_input_bytes: usize) -> usize {
    longest_input_bytes.saturating_mul(4).max(4096)
}

/// Which engine drives the harness; decides only how the replay command names the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// libFuzzer through `cargo fuzz`: crashes land in `fuzz/artifacts/TARGET/crash-SHA1`.
    LibFuzzer,
    /// AFL++ through `cargo afl`: crashes land in `OUT/NAME/crashes/`.
    Afl,
    /// Tests and tools: the caller knows where the input is.
    Test,
}

/// What the engine should do with an input that did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Keep it if it found new coverage.
    Keep,
    /// Do not add it to the corpus (its history was seen before).
    Reject,
}

/// Errors at start-up: a bad `SIM_BUG` or `SIM_SIGNAL`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FuzzError {
    /// `SIM_BUG` names no planted bug of the target's system.
    #[error("SIM_BUG: {0}")]
    Bug(#[from] SpecError),
    /// `SIM_SIGNAL` is malformed.
    #[error(transparent)]
    Signal(#[from] SignalError),
}

/// The result of [`Harness::check`].
#[derive(Clone, Debug)]
pub struct Checked {
    /// How the run ended; [`Class::Diverged`] if the self-check failed.
    pub outcome: Outcome,
    /// For a failure that replayed: the recorded re-run's events (for the trace).
    pub trace: Vec<Event>,
    /// For a divergence: what differed.
    pub divergence: Option<Box<Divergence>>,
    /// False when the `reject` signal is on and this history was seen before.
    pub new_history: bool,
}

/// A fuzz target's state: the system, its options and the signals. Build one per process.
pub struct Harness {
    variant: Variant,
    opts: RunOptions,
    target: String,
    engine: Engine,
    signals: Signals,
    replay_prefix: String,
    /// Where libFuzzer saves crashes when told (`-artifact_prefix=`, `-exact_artifact_path=`,
    /// as `cargo fuzz run` and the hunt pass them); read from the process arguments.
    artifacts: ArtifactPath,
    seen: Mutex<SeenHistories>,
}

/// The mutator a libFuzzer target installed, noted by `sim_fuzz::sim_fuzz_target!` before the
/// harness starts; unset in a target that installs none (one written with
/// `libfuzzer_sys::fuzz_target!` around [`Harness::fuzz_one`]), which runs libFuzzer's byte
/// mutations only and says so in its first line.
static MUTATOR: OnceLock<MutatorChoice> = OnceLock::new();

/// Notes which mutator this fuzz target installed (called by `sim_fuzz::sim_fuzz_target!`).
pub fn note_mutator(choice: MutatorChoice) {
    let _ = MUTATOR.set(choice);
}

/// What the first line of a libFuzzer target says of its mutator.
fn mutator_line() -> &'static str {
    match MUTATOR.get() {
        Some(MutatorChoice::Lanes) => "lanes",
        Some(MutatorChoice::Bytes) => "bytes (SIM_MUTATOR=bytes)",
        Some(MutatorChoice::Fresh) => "fresh (SIM_MUTATOR=fresh: fresh runs only)",
        None => {
            "bytes: this target installs no lane mutator or crossover; define it with \
             sim_fuzz::sim_fuzz_target!(NAME, SPEC) to get them (deep bugs are found in several \
             times fewer executions)"
        }
    }
}

/// Where libFuzzer writes a crashing input, from its command-line flags: a prefix glued to
/// `crash-SHA1` (`-artifact_prefix=`, default the working directory) or one exact path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArtifactPath {
    /// `-artifact_prefix=` (the last one given).
    pub prefix: Option<String>,
    /// `-exact_artifact_path=` (the last one given).
    pub exact: Option<String>,
}

impl ArtifactPath {
    /// Reads the flags from libFuzzer's arguments (any others are ignored).
    ///
    /// ```
    /// use sim_core::fuzz::ArtifactPath;
    ///
    /// let args = ["fuzz/target/raft_kv", "-runs=100", "-artifact_prefix=/tmp/hunt/"];
    /// let path = ArtifactPath::from_args(args.iter().map(|a| a.to_string()));
    /// assert_eq!(path.crash_file("raft_kv", "3f2a"), "/tmp/hunt/crash-3f2a");
    /// assert_eq!(ArtifactPath::default().crash_file("raft_kv", "3f2a"), "fuzz/artifacts/raft_kv/crash-3f2a");
    /// ```
    pub fn from_args(args: impl IntoIterator<Item = String>) -> ArtifactPath {
        let mut path = ArtifactPath::default();
        for arg in args {
            if let Some(prefix) = arg.strip_prefix("-artifact_prefix=") {
                path.prefix = Some(prefix.to_string());
            } else if let Some(exact) = arg.strip_prefix("-exact_artifact_path=") {
                path.exact = Some(exact.to_string());
            }
        }
        path
    }

    /// The file a crash of `target` with input digest `sha1` is saved in. Without either
    /// flag: where `cargo fuzz run`'s default puts it, relative to the crate's root.
    pub fn crash_file(&self, target: &str, sha1: &str) -> String {
        match (&self.exact, &self.prefix) {
            (Some(exact), _) => exact.clone(),
            (None, Some(prefix)) => format!("{prefix}crash-{sha1}"),
            (None, None) => format!("fuzz/artifacts/{target}/crash-{sha1}"),
        }
    }
}

/// The replay command's prefix for a binary built the way this fuzz target was. `cargo fuzz`
/// builds with debug assertions (and overflow checks) unless `-O`: a crash that is a failed
/// `debug_assert!` in the system, or an overflow, replays only in a build that has them, so
/// a `cargo run --release ...` prefix gets cargo's profile overrides for them.
fn as_built(prefix: &str, debug_assertions: bool) -> String {
    if debug_assertions && prefix.starts_with("cargo ") && prefix.contains("--release") {
        format!(
            "CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true {prefix}"
        )
    } else {
        prefix.to_string()
    }
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness")
            .field("variant", &self.variant.args())
            .field("target", &self.target)
            .field("signals", &self.signals)
            .finish()
    }
}

impl Harness {
    /// A harness for `spec` with `bug` (checked against its planted bugs) and the default
    /// signals. Does not install the signals: [`Harness::from_env`] does.
    pub fn new(
        spec: &SystemSpec,
        bug: Option<&str>,
        target: &str,
        engine: Engine,
    ) -> Result<Harness, FuzzError> {
        let variant = Variant::new(spec, bug, RunFlags::default())?;
        Ok(Harness {
            opts: variant.options(),
            variant,
            target: target.to_string(),
            engine,
            signals: Signals::NONE,
            replay_prefix: "sim".to_string(),
            artifacts: if engine == Engine::LibFuzzer {
                ArtifactPath::from_args(std::env::args())
            } else {
                ArtifactPath::default()
            },
            seen: Mutex::new(SeenHistories::default()),
        })
    }

    /// A harness configured from `SIM_BUG` and `SIM_SIGNAL`, with its signals installed.
    pub fn from_env(spec: &SystemSpec, target: &str, engine: Engine) -> Result<Harness, FuzzError> {
        let bug = std::env::var("SIM_BUG")
            .ok()
            .filter(|b| !b.trim().is_empty());
        let signals = Signals::from_env()?;
        let mut h = Harness::new(spec, bug.as_deref().map(str::trim), target, engine)?;
        h.signals = signals;
        signals.install();
        Ok(h)
    }

    /// [`Harness::from_env`], or a clear message and exit code 2 (a start-up error, not a
    /// crash the engine would save).
    pub fn from_env_or_exit(spec: &SystemSpec, target: &str, engine: Engine) -> Harness {
        match Harness::from_env(spec, target, engine) {
            Ok(h) => {
                let mutator = if engine == Engine::LibFuzzer {
                    format!(" mutator={}", mutator_line())
                } else {
                    String::new()
                };
                eprintln!(
                    "sim fuzz target {target}: system={} bug={} signals={}{mutator}",
                    spec.name,
                    h.opts.bug.unwrap_or("none (the correct system)"),
                    h.signals
                );
                h
            }
            Err(e) => {
                eprintln!("error: fuzz target {target}: {e}");
                std::process::exit(2);
            }
        }
    }

    /// Sets and installs the signals (tests and measurements; targets use `SIM_SIGNAL`).
    pub fn with_signals(mut self, signals: Signals) -> Harness {
        self.signals = signals;
        signals.install();
        self
    }

    /// How replay commands start: your `sim` binary (default `sim`), e.g.
    /// `cargo run --release --bin sim --`.
    pub fn replay_prefix(mut self, prefix: &str) -> Harness {
        self.replay_prefix = prefix.to_string();
        self
    }

    /// The options every run uses.
    pub fn options(&self) -> &RunOptions {
        &self.opts
    }

    /// The system under test.
    pub fn spec(&self) -> &SystemSpec {
        &self.variant.system
    }

    /// System, bug and flags of every run.
    pub fn variant(&self) -> &Variant {
        &self.variant
    }

    /// One run of `data`, with signal collection, and the self-check if it failed. Never
    /// panics and never aborts.
    pub fn check(&self, data: &[u8]) -> Checked {
        let input = Input::Bytes(data.to_vec());
        let thread_per_run = self.variant.system.thread_per_run;
        let (report, first_hits, trace) = crate::os::run_maybe_isolated(thread_per_run, || {
            // The signal's per-run state lives on the thread that runs.
            signal::begin_run();
            let report = (self.variant.system.build)(&self.opts).run_input(&input);
            (
                report,
                signal::take_first_hits(),
                crate::choice::take_draw_trace(),
            )
        });
        crate::mutate::observe_run(data, first_hits, trace);
        let mut outcome = report.outcome;
        if self.signals.hash {
            signal::on_history(outcome.history_hash);
        }
        let new_history = !self.signals.reject
            || self
                .seen
                .lock()
                .map_or(true, |mut s| s.insert(outcome.history_hash));

        if !outcome.class.is_failure() {
            return Checked {
                outcome,
                trace: Vec::new(),
                divergence: None,
                new_history,
            };
        }
        let run = |recording| {
            crate::os::run_maybe_isolated(thread_per_run, || {
                let mut opts = self.opts.clone();
                opts.config.recording = recording;
                (self.variant.system.build)(&opts).run_input(&input)
            })
        };
        match self_check_runs(run, outcome.history_hash) {
            Ok(rerun) => Checked {
                outcome,
                trace: rerun.history.into_events(),
                divergence: None,
                new_history,
            },
            Err(divergence) => {
                outcome.message = format!(
                    "{divergence} (the first run ended: {}: {})",
                    outcome.summary_line(),
                    outcome.message
                );
                outcome.class = Class::Diverged;
                Checked {
                    outcome,
                    trace: Vec::new(),
                    divergence: Some(divergence),
                    new_history,
                }
            }
        }
    }

    /// What a fuzz target calls: [`Harness::check`]; on a failure, print
    /// [`Harness::failure_report`] and abort so the engine saves the input.
    pub fn fuzz_one(&self, data: &[u8]) -> Verdict {
        let checked = self.check(data);
        if checked.outcome.class.is_failure() {
            eprintln!("{}", self.failure_report(data, &checked));
            std::process::abort();
        }
        if checked.new_history {
            Verdict::Keep
        } else {
            Verdict::Reject
        }
    }

    /// Where the engine saves this input, as the replay command should name it.
    pub fn input_path_hint(&self, data: &[u8]) -> String {
        match self.engine {
            Engine::LibFuzzer => self.artifacts.crash_file(&self.target, &sha1_hex(data)),
            Engine::Afl => "CRASH_FILE".to_string(),
            Engine::Test => "INPUT_FILE".to_string(),
        }
    }

    /// The command that replays `data` with a readable trace.
    pub fn replay_command(&self, data: &[u8]) -> String {
        let prefix = if self.engine == Engine::Test {
            self.replay_prefix.clone()
        } else {
            as_built(&self.replay_prefix, cfg!(debug_assertions))
        };
        RunSpec::new(self.variant.clone(), Input::Bytes(data.to_vec()))
            .run_command(&prefix, Some(&self.input_path_hint(data)))
    }

    /// The corpus metadata of `data`'s run (for `corpus/TARGET/NAME.json`).
    pub fn metadata(&self, checked: &Checked) -> CorpusMeta {
        CorpusMeta {
            target: self.target.clone(),
            system: self.variant.system.name.to_string(),
            bug: self.variant.bug.map(str::to_string),
            class: checked.outcome.class,
            invariant: checked.outcome.invariant.clone(),
            history_hash: format!("{:016x}", checked.outcome.history_hash),
            encoding: crate::choice::ENCODING,
        }
    }

    /// The report printed before aborting: replay command, class, trace tail, metadata.
    pub fn failure_report(&self, data: &[u8], checked: &Checked) -> String {
        let o = &checked.outcome;
        let mut r = String::new();
        let _ = writeln!(
            r,
            "==== sim: {} failure in fuzz target {} ({} input bytes) ====",
            o.class,
            self.target,
            data.len()
        );
        let _ = writeln!(
            r,
            "system={} bug={}",
            self.variant.system.name,
            self.variant.bug.unwrap_or("none")
        );
        let _ = writeln!(r, "{}", o.summary_line());
        let _ = writeln!(r, "message={:?}", o.message);
        let _ = writeln!(r, "replay: {}", self.replay_command(data));
        if self.engine == Engine::LibFuzzer {
            // cargo-fuzz's own hints below omit SIM_BUG (the correct system does not crash)
            // and, on stable, `-s none` is needed whatever the hint says.
            let bug = self
                .variant
                .bug
                .map(|b| format!("SIM_BUG={b} "))
                .unwrap_or_default();
            let artifact = self.input_path_hint(data);
            for (what, verb) in [("reproduce", "run"), ("minimize", "tmin")] {
                let _ = writeln!(
                    r,
                    "{what}: {bug}cargo fuzz {verb} -s none {} {artifact}",
                    self.target
                );
            }
        }
        if self.engine == Engine::Afl {
            let _ = writeln!(
                r,
                "        (CRASH_FILE: the file AFL++ saved under OUT/NAME/crashes/)"
            );
        }
        match &checked.divergence {
            Some(d) => {
                let _ = writeln!(r, "self-check: DIVERGED: {d}");
            }
            None => {
                let _ = writeln!(r, "self-check: re-ran twice in process, same history hash");
                let skip = checked.trace.len().saturating_sub(TRACE_TAIL_LINES);
                let _ = writeln!(
                    r,
                    "trace (last {} of {} events):",
                    checked.trace.len() - skip,
                    checked.trace.len()
                );
                r.push_str(&render_lines(&checked.trace[skip..]));
            }
        }
        let meta = serde_json::to_string(&self.metadata(checked)).expect("metadata serialises");
        let _ = write!(r, "corpus_meta={meta}");
        r
    }
}

/// The histories a harness has seen, for the `reject` signal: a direct-mapped table of
/// [`SeenHistories::SLOTS`] hashes (8 MiB, allocated on first use), so memory stays bounded in
/// campaigns of billions of runs. A collision evicts the older hash, and a later repeat of it
/// is then kept once more — what the fuzzer would do without `reject`.
#[derive(Debug, Default)]
pub struct SeenHistories {
    slots: Vec<u64>,
}

impl SeenHistories {
    /// Table size.
    pub const SLOTS: usize = 1 << 20;

    /// Records `hash`; true if it was not in the table.
    ///
    /// ```
    /// let mut seen = sim_core::fuzz::SeenHistories::default();
    /// assert!(seen.insert(42));
    /// assert!(!seen.insert(42));
    /// ```
    pub fn insert(&mut self, hash: u64) -> bool {
        if self.slots.is_empty() {
            self.slots = vec![0; Self::SLOTS];
        }
        // Slot 0 marks an empty slot, so hash 0 is stored as 1 (a harmless merge).
        let stored = hash.max(1);
        let slot = &mut self.slots[(hash % Self::SLOTS as u64) as usize];
        let new = *slot != stored;
        *slot = stored;
        new
    }
}

/// The metadata next to each corpus input (`corpus/TARGET/NAME.json`): what the input is
/// expected to do when replayed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CorpusMeta {
    /// The fuzz target it belongs to.
    pub target: String,
    /// The system (as `sim list` names it).
    pub system: String,
    /// The planted bug enabled, or `null` for the correct system.
    pub bug: Option<String>,
    /// The class the run must end in.
    pub class: Class,
    /// The failing invariant, if any.
    pub invariant: Option<String>,
    /// The history hash, 16 hex digits.
    pub history_hash: String,
    /// The byte encoding the input is in ([`crate::choice::ENCODING`] when written). A
    /// corpus entry of another encoding is converted (its draws re-encoded), never re-pinned:
    /// the same bytes read in a new encoding are another run.
    #[serde(default = "CorpusMeta::encoding_before_the_field")]
    pub encoding: u32,
}

impl CorpusMeta {
    /// Entries written before the field were all converted to the lane encoding (2) first,
    /// so an absent field means 2 whatever [`crate::choice::ENCODING`] is now.
    fn encoding_before_the_field() -> u32 {
        2
    }
}

/// SHA-1 of `data` in hex: libFuzzer names crash files `crash-<sha1>`, so the replay command
/// can name the file before libFuzzer writes it.
///
/// ```
/// assert_eq!(sim_core::fuzz::sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
/// ```
pub fn sha1_hex(data: &[u8]) -> String {
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xefcd_ab89,
        0x98ba_dcfe,
        0x1032_5476,
        0xc3d2_e1f0,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, &wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5a82_7999),
                20..=39 => (b ^ c ^ d, 0x6ed9_eba1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8f1b_bcdc),
                _ => (b ^ c ^ d, 0xca62_c1d6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_replay_prefix_gets_the_fuzz_builds_assertions() {
        let cargo = "cargo run --release --bin sim --";
        assert_eq!(
            as_built(cargo, true),
            format!(
                "CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true {cargo}"
            )
        );
        assert_eq!(
            as_built(cargo, false),
            cargo,
            "a -O build replays in release as it is"
        );
        assert_eq!(
            as_built("sim", true),
            "sim",
            "an installed binary is what it is"
        );
    }

    #[test]
    fn a_target_without_the_lane_mutator_says_so_at_start() {
        // Nothing in sim-core's tests installs a mutator: this is the pre-macro target form.
        let line = mutator_line();
        assert!(line.starts_with("bytes: "), "{line}");
        assert!(
            line.contains("sim_fuzz_target!"),
            "the fix is named: {line}"
        );
    }

    #[test]
    fn the_crash_file_follows_libfuzzers_flags() {
        let args = |a: &[&str]| ArtifactPath::from_args(a.iter().map(|s| s.to_string()));
        let hunt = args(&["t", "-artifact_prefix=hunt/out/", "-max_len=4096"]);
        assert_eq!(hunt.crash_file("kv", "ab"), "hunt/out/crash-ab");
        let exact = args(&["t", "-artifact_prefix=x/", "-exact_artifact_path=the-crash"]);
        assert_eq!(exact.crash_file("kv", "ab"), "the-crash");
        assert_eq!(
            args(&["t"]).crash_file("kv", "ab"),
            "fuzz/artifacts/kv/crash-ab"
        );
    }

    #[test]
    fn seen_histories_are_bounded_and_evict_on_collision() {
        let mut seen = SeenHistories::default();
        let (a, b) = (7u64, 7 + SeenHistories::SLOTS as u64);
        assert!(seen.insert(a) && !seen.insert(a), "a repeat is seen");
        assert!(
            seen.insert(b),
            "a colliding hash is new and evicts the first"
        );
        assert!(seen.insert(a), "the evicted hash counts as new again");
        assert!(seen.insert(0) && !seen.insert(0), "hash 0 is stored too");
        assert_eq!(
            seen.slots.len(),
            SeenHistories::SLOTS,
            "memory is the table, not the runs"
        );
    }

    #[test]
    fn sha1_matches_known_vectors() {
        assert_eq!(sha1_hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(
            sha1_hex(&[b'a'; 1000]),
            "291e9a6c66994949b57ba5e650361e98fc36b1ba"
        );
        assert_eq!(
            sha1_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
    }
}
