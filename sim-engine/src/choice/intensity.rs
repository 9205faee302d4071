//! How often the faults of a seed's run fire: at the odds the scenario sets, or at a profile
//! drawn per seed (the swarm sweep). It decides how a seed becomes the run's input, so it
//! lives with the input; [`crate::faults`] re-exports it.

use std::fmt;
use std::str::FromStr;

use super::lanes::{Future, FAULT_PROFILES, LONGEST_WORKLOAD_BIT};
use super::{Seeded, Source};

/// How often the faults a seed's run may inject fire: `--intensity` on the command line,
/// [`crate::sim::Config::intensity`] in code.
///
/// A seed sweep fires every fault at the odds its scenario sets. A bug that needs several
/// faults of one kind close together is far likelier at a higher rate, and which rate is
/// best differs from bug to bug, so [`Intensity::Swarm`] draws a profile per seed: every
/// fault group at 1, 2, 4 or 8 times its odds, or one group (network, lifecycle, disk,
/// clock) at 8 or 64 times its odds and the others at theirs — the twelve profiles of
/// [`FAULT_PROFILES`], picked uniformly — and runs the longest workload (every operation count
/// at its largest), as the mutator's fresh runs do (`sim_core::mutate::fresh_run`). Which
/// kinds may fire at all is still the [`crate::faults::FaultSelection`]'s.
///
/// The profile and every draw of the run are a pure function of the seed, so a failure
/// replays from its seed and `--intensity swarm`, and its recorded input replays as bytes
/// (bytes say every decision themselves: the intensity does not change them).
///
/// ```
/// use sim_core::faults::Intensity;
///
/// assert_eq!(Intensity::default(), Intensity::Configured);
/// let swarm: Intensity = "swarm".parse().unwrap();
/// assert_eq!(swarm.to_string(), "swarm");
/// assert_eq!("1".parse::<Intensity>().unwrap(), Intensity::Configured);
/// let err = "x8".parse::<Intensity>().unwrap_err();
/// assert!(err.to_string().contains("swarm"), "{err}");
/// // The profile is the seed's own: the same seed, the same profile.
/// let (profile, _) = Intensity::swarm_profile(7);
/// assert_eq!(profile, Intensity::swarm_profile(7).0);
/// assert!(profile.longest_workload());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Intensity {
    /// Every fault at the odds the scenario sets (`1`, the default): a seed's run is what
    /// it has always been.
    #[default]
    Configured,
    /// A fault profile drawn per seed from the twelve of [`FAULT_PROFILES`], and the longest
    /// workload (`swarm`).
    Swarm,
}

/// Seeds [`Intensity::swarm_profile`]'s stream: a swarm run of seed `n` and the plain run of
/// seed `n` are unrelated.
const SWARM_STREAM: u64 = 0x7377_6172_6d00_0000;

impl Intensity {
    /// The value's name on the command line: `1` or `swarm`.
    pub fn name(self) -> &'static str {
        match self {
            Intensity::Configured => "1",
            Intensity::Swarm => "swarm",
        }
    }

    /// The profile of `seed`'s run at [`Intensity::Swarm`], as a future from the first draw
    /// on (its fault intensity, focus and longest workload; [`Future::fault_scale`]), and
    /// the stream the run draws from after the profile was drawn from its head.
    pub fn swarm_profile(seed: u64) -> (Future, Seeded) {
        let mut stream = Seeded::new(seed ^ SWARM_STREAM);
        let arm = stream.draw("swarm.profile", FAULT_PROFILES.len() as u64) as usize;
        let profile = Future {
            cut: 0,
            seed: FAULT_PROFILES[arm] | LONGEST_WORKLOAD_BIT,
        };
        (profile, stream)
    }
}

impl fmt::Display for Intensity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An `--intensity` value that names no intensity.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--intensity {0:?} is unknown; use 1 (every fault at the odds its scenario sets, the default) or swarm (a fault profile drawn per seed: every fault at 1 to 8 times its odds, or one group at 8 or 64 times)")]
pub struct UnknownIntensity(pub String);

impl FromStr for Intensity {
    type Err = UnknownIntensity;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim() {
            "1" => Ok(Intensity::Configured),
            "swarm" => Ok(Intensity::Swarm),
            other => Err(UnknownIntensity(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Swarm seeds spread over all twelve profiles, each about as often, every one with the
    /// longest workload; consecutive seeds are not one profile's.
    #[test]
    fn swarm_profiles_cover_all_twelve_uniformly() {
        let mut counts = [0u32; FAULT_PROFILES.len()];
        for seed in 0..12_000u64 {
            let (profile, _) = Intensity::swarm_profile(seed);
            assert!(profile.longest_workload());
            assert_eq!(profile.cut, 0);
            let arm = FAULT_PROFILES
                .iter()
                .position(|&bits| bits == profile.seed & !LONGEST_WORKLOAD_BIT)
                .expect("one of the twelve");
            counts[arm] += 1;
        }
        assert!(
            counts.iter().all(|&n| (850..1150).contains(&n)),
            "{counts:?}"
        );
        let first: Vec<u32> = (0..8).map(|s| Intensity::swarm_profile(s).0.seed).collect();
        assert!(first.windows(2).any(|w| w[0] != w[1]), "{first:?}");
    }
}
