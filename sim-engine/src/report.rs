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
    /// The stable history hash; in JSON the 16 hex digits of the summary line (a number
    /// above 2^53 loses precision in most JSON parsers). Older files' numbers still read.
    #[serde(with = "hash_hex")]
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

    /// This outcome's [`failure_class`]: the word sweeps count and list it under.
    pub fn failure_class(&self) -> String {
        failure_class(self.class, self.invariant.as_deref())
    }
}

/// One word naming a kind of failure, so failures of different causes are counted apart: the
/// class, then the invariant or property after a slash when one failed
/// (`correctness/atomicity`, `liveness/all-decided`, `panic`, `deadlock`). A harness panic
/// and a violated invariant never share a word.
///
/// The word goes into `key=value` lines and into `classes=A:1,B:2` lists, so a character of
/// the invariant's name that would split either (whitespace, `,`, `:`, `=`) is written `_`.
///
/// ```
/// use sim_core::report::{failure_class, Class};
/// assert_eq!(failure_class(Class::Correctness, Some("at most two")), "correctness/at_most_two");
/// assert_eq!(failure_class(Class::Panic, None), "panic");
/// ```
pub fn failure_class(class: Class, invariant: Option<&str>) -> String {
    match invariant {
        None => class.name().to_string(),
        Some(name) => {
            let word: String = name
                .chars()
                .map(|c| {
                    if c.is_whitespace() || matches!(c, ',' | ':' | '=') {
                        '_'
                    } else {
                        c
                    }
                })
                .collect();
            format!("{}/{word}", class.name())
        }
    }
}

/// Serde for a 64-bit hash as 16 lower-case hex digits; reads that, or a JSON number.
pub mod hash_hex {
    use serde::{de, Deserialize, Deserializer, Serializer};

    /// Writes `hash` as 16 lower-case hex digits.
    pub fn serialize<S: Serializer>(hash: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{hash:016x}"))
    }

    /// Reads 16 hex digits, or a JSON number (files written before hashes were hex).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Hex(String),
            Number(u64),
        }
        match Either::deserialize(d)? {
            Either::Number(n) => Ok(n),
            Either::Hex(text) => parse(&text).ok_or_else(|| {
                de::Error::custom(format!("history_hash {text:?} is not 16 hex digits"))
            }),
        }
    }

    /// 16 hex digits, either case.
    pub fn parse(text: &str) -> Option<u64> {
        (text.len() == 16 && text.chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| u64::from_str_radix(text, 16).ok())
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_hex_in_json_and_old_numbers_still_read() {
        let outcome = Outcome {
            class: Class::Pass,
            invariant: None,
            message: String::new(),
            steps: 1,
            sim_time_ns: 0,
            history_hash: u64::MAX - 1,
            input_exhausted: false,
        };
        let json = serde_json::to_value(&outcome).unwrap();
        assert_eq!(json["history_hash"], "fffffffffffffffe");
        assert_eq!(
            serde_json::from_value::<Outcome>(json.clone()).unwrap(),
            outcome
        );
        let mut old = json;
        old["history_hash"] = serde_json::json!(7u64);
        assert_eq!(
            serde_json::from_value::<Outcome>(old).unwrap().history_hash,
            7
        );
    }
}
