//! Choosing faults: which kinds a run may inject, fixed or drawn per run (swarm).
//!
//! Every fault the simulator can inject has a [`FaultKind`] with a short name. A
//! [`FaultSelection`] picks a set of kinds and how they are used, so a user stays inside the
//! fault model their system is designed for:
//!
//! | text | meaning |
//! |---|---|
//! | `off` | no fault of any kind |
//! | `swarm` | network faults, a profile drawn per run (as always) |
//! | `all` | every network fault, at the upper end of its swarm range, in every run |
//! | `partition,clog,crash` | exactly these kinds, each at the upper end of its range |
//! | `swarm:partition,clog,disk` | a profile drawn per run over these kinds only |
//!
//! Group names stand for several kinds: `net` (every network fault), `clock` (`skew`, `jump`,
//! `late-timer`), `lifecycle` (`crash`, `stop`, `pause`). [`FaultSelection::apply`] writes a
//! selection into a run's [`Config`]: the network's [`Faults`], the clocks'
//! [`ClockFaults`], the nemesis' [`LifecycleFaults`], and the disk's settings.
//!
//! A kind left out costs no draw: a selection without clock or lifecycle kinds runs exactly
//! as a run did before those faults existed (same draws, same history hash).
//!
//! How often the selected kinds fire is an [`Intensity`]: at the odds the scenario sets, or
//! at a profile drawn per seed (`--intensity swarm`, the swarm sweep).
//!
//! ```
//! use sim_core::faults::{FaultKind, FaultSelection};
//!
//! let chosen: FaultSelection = "swarm:partition,clog,crash".parse().unwrap();
//! assert_eq!(chosen.to_string(), "swarm:partition,clog,crash");
//! assert!(chosen.kinds().contains(FaultKind::Crash));
//! assert!(!chosen.kinds().contains(FaultKind::Loss));
//! let err = "partition,flood".parse::<FaultSelection>().unwrap_err();
//! assert!(err.to_string().contains("flood"), "{err}");
//! assert!(err.to_string().contains("partition"), "the error lists the valid kinds: {err}");
//! ```

use std::fmt;
use std::str::FromStr;

use crate::disk::{DiskFaultProfile, DiskFaults};
use crate::nemesis::LifecycleFaults;
use crate::net::Faults;
use crate::sim::Config;
use crate::time::ClockFaults;

/// How a run's input is drawn is the input's business ([`crate::choice::intensity`]); these
/// paths stay.
pub use crate::choice::intensity::{Intensity, UnknownIntensity};
/// The vocabulary of fault kinds lives in [`crate::fault_kinds`], at the bottom of the crate,
/// so the parts that use it need not import the selection (which knows every part's profile).
pub use crate::fault_kinds::{valid_names, FaultKind, FaultKinds, FaultSelectionError};

/// Which faults a run injects, and whether their profile is fixed or drawn per run.
///
/// Parse one from text with [`str::parse`] (see the [module docs](self) for the forms), and
/// write it into a run's [`Config`] with [`FaultSelection::apply`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultSelection {
    /// No fault of any kind.
    Off,
    /// These kinds, each at the upper end of its swarm range, in every run.
    Fixed(FaultKinds),
    /// A profile drawn per run over these kinds: each kind on or off, and its rate, drawn
    /// from the run's input.
    Swarm(FaultKinds),
}

impl FaultSelection {
    /// The kinds the selection may inject.
    pub fn kinds(&self) -> FaultKinds {
        match *self {
            FaultSelection::Off => FaultKinds::NONE,
            FaultSelection::Fixed(k) | FaultSelection::Swarm(k) => k,
        }
    }

    /// Writes the selection into `config`: the network's, the clocks', the nemesis' and the
    /// disk's fault settings. Every dimension the selection leaves out is switched off.
    ///
    /// ```
    /// use sim_core::faults::FaultSelection;
    /// use sim_core::net::Faults;
    /// use sim_core::nemesis::LifecycleFaults;
    /// use sim_core::sim::Config;
    ///
    /// let mut config = Config::default();
    /// "swarm".parse::<FaultSelection>().unwrap().apply(&mut config);
    /// assert_eq!(config.net.faults, Faults::Swarm, "swarm keeps its meaning");
    /// "crash,pause".parse::<FaultSelection>().unwrap().apply(&mut config);
    /// assert_eq!(config.net.faults, Faults::Off);
    /// assert!(matches!(config.lifecycle, LifecycleFaults::Fixed(_)));
    /// "swarm:partition,disk".parse::<FaultSelection>().unwrap().apply(&mut config);
    /// assert_eq!(config.disk.faults, sim_core::disk::DiskFaults::Swarm);
    /// ```
    pub fn apply(&self, config: &mut Config) {
        let kinds = self.kinds();
        let swarm = matches!(self, FaultSelection::Swarm(_));
        let net = kinds.intersect(FaultKinds::NET);
        config.net.faults = if net.is_empty() {
            Faults::Off
        } else if swarm {
            if net == FaultKinds::NET {
                Faults::Swarm
            } else {
                Faults::SwarmOver(net)
            }
        } else {
            Faults::Fixed(crate::net::FaultProfile::EVERYTHING.only(net))
        };
        let clock = kinds.intersect(FaultKinds::CLOCK);
        config.clock_faults = if clock.is_empty() {
            ClockFaults::Off
        } else if swarm {
            ClockFaults::Swarm(clock)
        } else {
            ClockFaults::Fixed(crate::time::ClockProfile::EVERYTHING.only(clock))
        };
        let lifecycle = kinds.intersect(FaultKinds::LIFECYCLE);
        config.lifecycle = if lifecycle.is_empty() {
            LifecycleFaults::Off
        } else if swarm {
            LifecycleFaults::Swarm(lifecycle)
        } else {
            LifecycleFaults::Fixed(crate::nemesis::LifecycleProfile::EVERYTHING.only(lifecycle))
        };
        config.disk.faults = if !kinds.contains(FaultKind::Disk) {
            DiskFaults::Off
        } else if swarm {
            DiskFaults::Swarm
        } else {
            DiskFaults::Fixed(DiskFaultProfile::EVERYTHING)
        };
    }
}

impl FromStr for FaultSelection {
    type Err = FaultSelectionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        match text {
            "off" => return Ok(FaultSelection::Off),
            "swarm" => return Ok(FaultSelection::Swarm(FaultKinds::NET)),
            "all" => return Ok(FaultSelection::Fixed(FaultKinds::NET)),
            _ => {}
        }
        match text.strip_prefix("swarm:") {
            Some(list) => Ok(FaultSelection::Swarm(list.parse()?)),
            None => Ok(FaultSelection::Fixed(text.parse()?)),
        }
    }
}

impl fmt::Display for FaultSelection {
    /// The text that parses back to this selection.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FaultSelection::Off => f.write_str("off"),
            FaultSelection::Swarm(k) if k == FaultKinds::NET => f.write_str("swarm"),
            FaultSelection::Fixed(k) if k == FaultKinds::NET => f.write_str("all"),
            FaultSelection::Swarm(k) => write!(f, "swarm:{k}"),
            FaultSelection::Fixed(k) if k.is_empty() => f.write_str("off"),
            FaultSelection::Fixed(k) => write!(f, "{k}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_parses_and_prints_back() {
        for text in [
            "off",
            "swarm",
            "all",
            "partition,clog,crash",
            "swarm:partition,clog,disk",
            "swarm:skew,jump,late-timer,crash,stop,pause",
        ] {
            let sel: FaultSelection = text.parse().unwrap();
            assert_eq!(sel.to_string(), text);
        }
        let grouped: FaultSelection = "swarm:clock,lifecycle".parse().unwrap();
        assert_eq!(
            grouped.kinds(),
            FaultKinds::CLOCK.union(FaultKinds::LIFECYCLE)
        );
    }

    #[test]
    fn bad_lists_are_typed_errors() {
        assert!(matches!(
            "swarm:".parse::<FaultSelection>(),
            Err(FaultSelectionError::EmptyKind { .. })
        ));
        assert!(matches!(
            "crash,,pause".parse::<FaultSelection>(),
            Err(FaultSelectionError::EmptyKind { .. })
        ));
        match "Crash".parse::<FaultSelection>() {
            Err(FaultSelectionError::UnknownKind { kind, valid }) => {
                assert_eq!(kind, "Crash");
                assert!(valid.contains("late-timer") && valid.contains("lifecycle"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn kind_bits_match_the_groups() {
        assert_eq!(FaultKinds::NET.iter().count(), 10);
        assert!(FaultKinds::NET.iter().all(|k| k < FaultKind::Skew));
        assert_eq!(FaultKinds::ALL.iter().count(), FaultKind::ALL.len());
        assert_eq!(FaultKinds::CLOCK.to_string(), "skew,jump,late-timer");
        assert_eq!(FaultKinds::DISK.to_string(), "disk");
    }
}
