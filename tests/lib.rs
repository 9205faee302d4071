//! Shared helpers for the acceptance tests.

use std::cell::RefCell;
use std::rc::Rc;

use sim_core::choice::Input;
use sim_core::net::{FaultProfile, Faults, NetConfig};
use sim_core::report::Outcome;
use sim_core::sim::Config;
use sim_core::system::SystemSpec;
use sim_core::trace::Recording;

/// Runs the `sim` command line in process on `args` (without the program name) with every
/// example system registered: the exit code and everything printed.
pub fn sim_cli(args: &[&str]) -> (i32, String) {
    let mut out = Vec::new();
    let mut argv = vec!["sim"];
    argv.extend_from_slice(args);
    let code = sim_core::cli::Cli::new(systems::all()).execute(argv, &mut out);
    (code, String::from_utf8(out).expect("utf-8 output"))
}

/// The value of `key=` on the last line of `text` that has it (the command line's output is
/// `key=value` lines; the summary comes last).
pub fn key_value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .rev()
        .flat_map(|l| l.split_whitespace())
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")).map(str::to_string))
}

/// An empty scratch directory for one test, unique to this process.
pub fn scratch_dir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-test-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a writable temporary directory");
    dir
}

/// The two-phase-commit system.
pub fn two_pc() -> SystemSpec {
    systems::two_pc::SPEC
}

/// Runs `spec` with `bug` (and `pinned`) on `input`.
pub fn run(spec: &SystemSpec, bug: Option<&str>, pinned: bool, input: &Input) -> Outcome {
    let mut opts = spec.options(bug).expect("known bug");
    opts.pinned = pinned;
    spec.run(&opts, input).outcome
}

/// A log that tasks of a scenario append to and the test reads afterwards.
pub type Log<T> = Rc<RefCell<Vec<T>>>;

/// An empty [`Log`].
pub fn log<T>() -> Log<T> {
    Rc::new(RefCell::new(Vec::new()))
}

/// A run configuration with exactly `faults` on the network, recording every event.
pub fn net_config(faults: FaultProfile) -> Config {
    Config {
        net: NetConfig {
            faults: Faults::Fixed(faults),
            ..NetConfig::default()
        },
        recording: Recording::Full,
        ..Config::default()
    }
}
