//! Shared helpers for the acceptance tests.

use sim_core::choice::Input;
use sim_core::report::Outcome;
use sim_core::system::SystemSpec;

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
