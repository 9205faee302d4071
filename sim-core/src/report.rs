//! Outcomes: how a run ended, in a class a person and a script can both act on.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Every check held and the workload finished.
    Pass,
    /// A safety invariant was violated.
    Correctness,
    /// System code panicked.
    Panic,
    /// Nothing runnable, nothing scheduled, and the workload was not finished.
    Deadlock,
    /// An `eventually` property did not hold within its bound of virtual time.
    Liveness,
    /// Two runs of one input produced different histories.
    Diverged,
    /// A step or time budget ran out before the run could conclude.
    Inconclusive,
    /// A precondition of the scenario broke (not the system's fault).
    Excused,
}

impl Class {
    /// True for [`Class::Pass`].
    pub fn is_pass(self) -> bool {
        self == Class::Pass
    }

    /// True for classes that mean the system under test is wrong.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Class::Correctness | Class::Panic | Class::Deadlock | Class::Liveness | Class::Diverged
        )
    }

    /// The lower-case name used on command lines and in files.
    pub fn name(self) -> &'static str {
        match self {
            Class::Pass => "pass",
            Class::Correctness => "correctness",
            Class::Panic => "panic",
            Class::Deadlock => "deadlock",
            Class::Liveness => "liveness",
            Class::Diverged => "diverged",
            Class::Inconclusive => "inconclusive",
            Class::Excused => "excused",
        }
    }

    /// Parses [`Class::name`].
    pub fn parse(name: &str) -> Option<Class> {
        [
            Class::Pass,
            Class::Correctness,
            Class::Panic,
            Class::Deadlock,
            Class::Liveness,
            Class::Diverged,
            Class::Inconclusive,
            Class::Excused,
        ]
        .into_iter()
        .find(|c| c.name() == name)
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// How it ended.
    pub class: Class,
    /// The invariant or property that failed, if one did.
    pub invariant: Option<String>,
    /// What went wrong, in words (empty on a pass).
    pub message: String,
    /// Events in the history.
    pub steps: u64,
    /// Virtual time at the end, nanoseconds.
    pub sim_time_ns: u64,
    /// The stable history hash.
    pub history_hash: u64,
    /// True if a byte input ran out before the run ended (the rest ran on defaults).
    pub input_exhausted: bool,
}

impl Outcome {
    /// `class=... invariant=... steps=... sim_time_ms=... history_hash=...`
    pub fn summary_line(&self) -> String {
        format!(
            "class={} invariant={} steps={} sim_time_ms={} history_hash={:016x}",
            self.class,
            self.invariant.as_deref().unwrap_or("none"),
            self.steps,
            self.sim_time_ns / 1_000_000,
            self.history_hash
        )
    }

    /// True when `other` is the same failure: same class and same invariant.
    pub fn same_failure(&self, other: &Outcome) -> bool {
        self.class == other.class && self.invariant == other.invariant
    }
}
