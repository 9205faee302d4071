//! What the command line, fuzz targets and tests need to know about a system under test.
//!
//! A system registers a [`SystemSpec`]: its name, its planted bugs, and a function that
//! builds a fresh [`Sim`] for one run from [`RunOptions`]. Planted bugs are chosen at run
//! time by name (`--bug`, or `SIM_BUG` for fuzz targets), never by editing code.
//!
//! ```
//! use sim_core::sim::Sim;
//! use sim_core::system::{BugSpec, RunOptions, SystemSpec};
//!
//! fn build(opts: &RunOptions) -> Sim {
//!     let mut sim = Sim::new(opts.config.clone());
//!     let buggy = opts.bug_is("always-fails");
//!     sim.invariant("ok", move || if buggy { Err("planted".into()) } else { Ok(()) });
//!     sim
//! }
//! const SPEC: SystemSpec = SystemSpec::new("toy", "a toy", build)
//!     .with_bugs(&[BugSpec { name: "always-fails", about: "fails at once" }]);
//! let opts = SPEC.options(Some("always-fails")).unwrap();
//! assert!(SPEC.run(&opts, &sim_core::choice::Input::Seed(0)).outcome.class.is_failure());
//! assert!(SPEC.options(Some("nope")).is_err());
//! ```

use crate::choice::Input;
use crate::faults::FaultSelection;
use crate::sim::{Config, Report, Sim};
use crate::trace::Recording;

/// A planted bug, selectable by name.
#[derive(Clone, Copy, Debug)]
pub struct BugSpec {
    /// Its name on command lines (`--bug NAME`, `SIM_BUG=NAME`).
    pub name: &'static str,
    /// One line on what it does.
    pub about: &'static str,
}

/// Options for one run of a system.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The planted bug to enable (`None` = the correct system). Private so that system code
    /// asks with [`RunOptions::bug_is`], which catches a misspelt name; a by-hand comparison
    /// would turn a typo into a bug that is never on. [`RunOptions::bug_name`] reads it for
    /// display.
    pub(crate) bug: Option<&'static str>,
    /// The bugs the system declares (filled in by [`SystemSpec::options`]; empty for
    /// options made by hand): the names [`RunOptions::bug_is`] accepts.
    pub declared_bugs: &'static [BugSpec],
    /// Fix the workload; only the schedule varies.
    pub pinned: bool,
    /// Network faults for this run; `None` = the system's own choice (see its docs). Set
    /// with the other dimensions of a fault choice by [`RunOptions::apply_faults`].
    pub faults: Option<crate::net::Faults>,
    /// Whether the workload may leave the system quiet between operations (see
    /// [`crate::workload::Quiet`]); on by default, `--quiet off` turns it off.
    pub quiet: bool,
    /// Budgets, strategy, network, recording.
    pub config: Config,
}

/// A system under test, as registered with the command line.
///
/// Built with [`SystemSpec::new`] and the `with_*` methods, all `const`, so a registration
/// stays a `const` item. The struct is `#[non_exhaustive]`: a field added later (with its
/// default in [`SystemSpec::new`]) breaks no registration, because none is a struct literal.
/// The fields stay public to read.
///
/// ```compile_fail,E0639
/// // Outside sim-core a struct literal does not compile (E0639): use SystemSpec::new.
/// # use sim_core::system::{RunOptions, SystemSpec};
/// # fn build(_: &RunOptions) -> sim_core::sim::Sim { unimplemented!() }
/// const SPEC: SystemSpec = SystemSpec {
///     name: "kv",
///     about: "a store",
///     bugs: &[],
///     flags: &[],
///     thread_per_run: false,
///     build,
/// };
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct SystemSpec {
    /// Its name on command lines.
    pub name: &'static str,
    /// One line on what it is.
    pub about: &'static str,
    /// Its planted bugs.
    pub bugs: &'static [BugSpec],
    /// The system-specific run flags it reads (clap ids among
    /// [`crate::run_spec::RunFlags::SYSTEM_SPECIFIC`], e.g. `&["pinned"]`); a run that sets
    /// another is refused rather than silently run without it.
    pub flags: &'static [&'static str],
    /// Give every run an OS thread of its own ([`crate::os::isolated`]). Set it when system
    /// code creates std `HashMap`s or `HashSet`s with their default `RandomState`: std's
    /// hash keys belong to a thread and count up from run to run, so without it a run's
    /// iteration order depends on the runs before it. Needs the OS hooks (`sim-os`) linked,
    /// which fix each fresh thread's keys; costs one thread spawn per run.
    pub thread_per_run: bool,
    /// Builds the scenario for one run.
    pub build: fn(&RunOptions) -> Sim,
}

/// Errors choosing a system or bug.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// No registered system has that name.
    #[error("unknown system {name:?}; known systems: {known}")]
    UnknownSystem {
        /// What was asked for.
        name: String,
        /// What exists.
        known: String,
    },
    /// The system has no planted bug of that name.
    #[error("system {system:?} has no planted bug {bug:?}; its bugs: {known} (leave the bug unset for the correct system)")]
    UnknownBug {
        /// The system.
        system: String,
        /// What was asked for.
        bug: String,
        /// What exists.
        known: String,
    },
    /// A system-specific flag the system does not read.
    #[error("system {system:?} does not read --{flag}; drop the flag (it would change nothing)")]
    UnsupportedFlag {
        /// The system.
        system: String,
        /// The flag's name.
        flag: String,
    },
    /// The system needs a thread per run, whose hash keys only the OS hooks can fix.
    #[error("system {system:?} runs each run on a thread of its own (thread_per_run), which is deterministic only with the OS hooks linked; add `use sim_os as _;` to the binary's or test's crate root (see sim_core::os)")]
    HooksNotLinked {
        /// The system.
        system: String,
    },
}

impl RunOptions {
    /// True if this run enables the planted bug `name`.
    ///
    /// The only way system code reads the planted bug: a by-hand comparison of names would
    /// turn a typo into a bug that is never on, and a sweep that can never fail; this asks
    /// the same question and checks the name.
    ///
    /// # Panics
    ///
    /// If the options came from [`SystemSpec::options`] and `name` is not one of the
    /// system's declared bugs.
    ///
    /// ```
    /// use sim_core::system::{BugSpec, SystemSpec};
    /// # fn build(_: &sim_core::system::RunOptions) -> sim_core::sim::Sim { unimplemented!() }
    ///
    /// const SPEC: SystemSpec = SystemSpec::new("kv", "a store", build)
    ///     .with_bugs(&[BugSpec { name: "ack-early", about: "acks before the write is durable" }]);
    /// let opts = SPEC.options(Some("ack-early")).unwrap();
    /// assert!(opts.bug_is("ack-early"));
    /// assert!(!SPEC.options(None).unwrap().bug_is("ack-early"));
    /// let typo = std::panic::catch_unwind(|| opts.bug_is("ack-erly"));
    /// assert!(typo.is_err());
    /// ```
    pub fn bug_is(&self, name: &str) -> bool {
        assert!(
            self.declared_bugs.is_empty() || self.declared_bugs.iter().any(|b| b.name == name),
            "bug_is({name:?}): the system declares no such bug (it declares: {}); a misspelt \
             name would leave the bug off in every run",
            self.declared_bugs
                .iter()
                .map(|b| b.name)
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.bug == Some(name)
    }

    /// The planted bug's name, for messages and file names (`None` = the correct system).
    /// To decide what the system does, ask [`RunOptions::bug_is`], which checks the name.
    ///
    /// ```
    /// use sim_core::system::{BugSpec, SystemSpec};
    /// # fn build(_: &sim_core::system::RunOptions) -> sim_core::sim::Sim { unimplemented!() }
    /// const SPEC: SystemSpec = SystemSpec::new("kv", "a store", build)
    ///     .with_bugs(&[BugSpec { name: "ack-early", about: "acks early" }]);
    /// assert_eq!(SPEC.options(Some("ack-early")).unwrap().bug_name(), Some("ack-early"));
    /// assert_eq!(SPEC.options(None).unwrap().bug_name(), None);
    /// ```
    pub fn bug_name(&self) -> Option<&'static str> {
        self.bug
    }

    /// The run's configuration, with `--faults` (if given) or else the system's own default
    /// network setting `default_faults` (clock and lifecycle faults stay as the options
    /// have them: off unless chosen). Systems build their `Sim` from this.
    pub fn config_with_faults(&self, default_faults: crate::net::Faults) -> Config {
        let mut config = self.config.clone();
        config.net.faults = self.faults.unwrap_or(default_faults);
        config
    }

    /// Like [`RunOptions::config_with_faults`], for a system that uses the disk: unless the
    /// run made its own fault choice ([`RunOptions::apply_faults`], `--faults`), the network
    /// gets `default_net` and the disk `default_disk`.
    ///
    /// ```
    /// use sim_core::disk::{DiskFaultProfile, DiskFaults};
    /// use sim_core::net::Faults;
    /// use sim_core::system::RunOptions;
    ///
    /// let all = DiskFaults::Fixed(DiskFaultProfile::EVERYTHING);
    /// let opts = RunOptions::default();
    /// assert_eq!(opts.config_with_disk_faults(Faults::Off, all).disk.faults, all);
    /// let mut chosen = RunOptions::default();
    /// chosen.apply_faults("crash".parse().unwrap());
    /// assert_eq!(chosen.config_with_disk_faults(Faults::Off, all).disk.faults, DiskFaults::Off);
    /// ```
    pub fn config_with_disk_faults(
        &self,
        default_net: crate::net::Faults,
        default_disk: crate::disk::DiskFaults,
    ) -> Config {
        let mut config = self.config_with_faults(default_net);
        if self.faults.is_none() {
            config.disk.faults = default_disk;
        }
        config
    }

    /// Makes `selection` this run's fault choice (`--faults`): its network part goes to
    /// [`RunOptions::faults`], its clock, lifecycle and disk parts into the configuration, so
    /// the system's own default no longer applies to any of them.
    ///
    /// ```
    /// use sim_core::faults::FaultSelection;
    /// use sim_core::nemesis::LifecycleFaults;
    /// use sim_core::net::Faults;
    /// use sim_core::system::RunOptions;
    ///
    /// let mut opts = RunOptions::default();
    /// opts.apply_faults("swarm:partition,crash".parse::<FaultSelection>().unwrap());
    /// assert!(matches!(opts.faults, Some(Faults::SwarmOver(_))));
    /// let config = opts.config_with_faults(Faults::Off);
    /// assert!(matches!(config.lifecycle, LifecycleFaults::Swarm(_)));
    /// ```
    pub fn apply_faults(&mut self, selection: FaultSelection) {
        selection.apply(&mut self.config);
        self.faults = Some(self.config.net.faults);
    }

    /// The run's configuration for a system whose default fault choice spans more than the
    /// network (say, disk faults and the nemesis): `default` unless the run made its own
    /// choice with [`RunOptions::apply_faults`].
    pub fn config_with_default_faults(&self, default: FaultSelection) -> Config {
        let mut config = self.config.clone();
        match self.faults {
            Some(net) => config.net.faults = net,
            None => default.apply(&mut config),
        }
        config
    }
}

impl Default for RunOptions {
    /// The correct system, workload drawn, the system's own faults, default configuration.
    fn default() -> Self {
        RunOptions {
            bug: None,
            declared_bugs: &[],
            pinned: false,
            faults: None,
            quiet: true,
            config: Config::default(),
        }
    }
}

impl SystemSpec {
    /// A system named `name` (its name on command lines), described in one line by `about`,
    /// whose runs `build` makes; with no planted bugs, no system-specific flags and every
    /// run on the calling thread. The `with_*` methods change those defaults.
    ///
    /// Every field added to `SystemSpec` gets its default here, so a registration written
    /// this way keeps compiling, and keeps its meaning, when one is added:
    ///
    /// ```
    /// use sim_core::choice::Input;
    /// use sim_core::sim::Sim;
    /// use sim_core::system::{BugSpec, RunOptions, SystemSpec};
    ///
    /// fn build(opts: &RunOptions) -> Sim {
    ///     let mut sim = Sim::new(opts.config.clone());
    ///     let early = opts.bug_is("ack-early");
    ///     sim.invariant("acked-is-durable", move || if early { Err("lost".into()) } else { Ok(()) });
    ///     sim
    /// }
    ///
    /// pub const SPEC: SystemSpec = SystemSpec::new("kv", "a store; invariant: acked-is-durable", build)
    ///     .with_bugs(&[BugSpec { name: "ack-early", about: "acks before the write is durable" }]);
    ///
    /// assert_eq!(SPEC.name, "kv");
    /// assert!(SPEC.flags.is_empty() && !SPEC.thread_per_run, "the documented defaults");
    /// let correct = SPEC.options(None).unwrap();
    /// assert!(!SPEC.run(&correct, &Input::Seed(0)).outcome.class.is_failure());
    /// let buggy = SPEC.options(Some("ack-early")).unwrap();
    /// assert!(SPEC.run(&buggy, &Input::Seed(0)).outcome.class.is_failure());
    /// ```
    pub const fn new(
        name: &'static str,
        about: &'static str,
        build: fn(&RunOptions) -> Sim,
    ) -> Self {
        SystemSpec {
            name,
            about,
            bugs: &[],
            flags: &[],
            thread_per_run: false,
            build,
        }
    }

    /// The system's planted bugs, selectable by name (`--bug`, `SIM_BUG`).
    pub const fn with_bugs(mut self, bugs: &'static [BugSpec]) -> Self {
        self.bugs = bugs;
        self
    }

    /// The system-specific run flags it reads (see [`SystemSpec::flags`]), e.g. `&["pinned"]`.
    pub const fn with_flags(mut self, flags: &'static [&'static str]) -> Self {
        self.flags = flags;
        self
    }

    /// Gives every run an OS thread of its own (see [`SystemSpec::thread_per_run`]): for
    /// system code that iterates std `HashMap`s or `HashSet`s with their default hasher.
    pub const fn with_thread_per_run(mut self) -> Self {
        self.thread_per_run = true;
        self
    }

    /// Options for `bug` (checked against this system's bugs), with default config.
    pub fn options(&self, bug: Option<&str>) -> Result<RunOptions, SpecError> {
        if self.thread_per_run && !crate::os::hooks_linked() {
            return Err(SpecError::HooksNotLinked {
                system: self.name.to_string(),
            });
        }
        let bug = match bug {
            None => None,
            Some(name) => Some(
                self.bugs
                    .iter()
                    .find(|b| b.name == name)
                    .map(|b| b.name)
                    .ok_or_else(|| SpecError::UnknownBug {
                        system: self.name.to_string(),
                        bug: name.to_string(),
                        known: self
                            .bugs
                            .iter()
                            .map(|b| b.name)
                            .collect::<Vec<_>>()
                            .join(", "),
                    })?,
            ),
        };
        Ok(RunOptions {
            faults: None,
            bug,
            declared_bugs: self.bugs,
            pinned: false,
            quiet: true,
            config: Config::default(),
        })
    }

    /// Builds and runs one scenario.
    pub fn run(&self, opts: &RunOptions, input: &Input) -> Report {
        crate::os::run_maybe_isolated(self.thread_per_run, || (self.build)(opts).run_input(input))
    }

    /// Runs with every event recorded (for traces).
    pub fn run_traced(&self, opts: &RunOptions, input: &Input) -> Report {
        let mut opts = opts.clone();
        opts.config.recording = Recording::Full;
        self.run(&opts, input)
    }
}

/// Finds `name` among `systems`.
pub fn find<'a>(systems: &'a [SystemSpec], name: &str) -> Result<&'a SystemSpec, SpecError> {
    systems
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| SpecError::UnknownSystem {
            name: name.to_string(),
            known: systems
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(opts: &RunOptions) -> Sim {
        Sim::new(opts.config.clone())
    }

    #[test]
    fn without_the_hooks_a_thread_per_run_system_is_refused() {
        // sim-core's own tests do not link sim-os.
        assert!(!crate::os::hooks_linked());
        let spec = SystemSpec::new("maps", "", build).with_thread_per_run();
        assert!(matches!(
            spec.options(None),
            Err(SpecError::HooksNotLinked { .. })
        ));
        let same_thread = SystemSpec::new("maps", "", build);
        assert!(same_thread.options(None).is_ok());
    }
}
