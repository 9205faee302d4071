//! The fault atlas: which copies of which data a run may still damage.
//!
//! Damage is granted first come, first served, in the run's (deterministic) order: the first
//! `damaged_copies_max` copies of a region that a damaging fault picks may be damaged, for the
//! rest of the run; every other copy of that region is spared. So however the faults fall, at
//! least `copies - damaged_copies_max` copies of every region stay as the system wrote them.
//! See [`super::AtlasConfig`] for what a copy and a region are.

use std::collections::BTreeMap;

use super::config::AtlasConfig;

/// One copy of some data: a node and a path on it.
type Copy = (u32, String);

pub(crate) struct Atlas {
    config: AtlasConfig,
    /// Per (copy key, region): the copies damaged there so far, in the order they were.
    damaged: BTreeMap<(String, u64), Vec<Copy>>,
}

impl Atlas {
    pub fn new(config: AtlasConfig) -> Self {
        assert!(
            config.region_bytes > 0,
            "AtlasConfig::region_bytes must be positive"
        );
        Atlas {
            config,
            damaged: BTreeMap::new(),
        }
    }

    /// True when damaging faults may fire at all (so a run without them draws nothing).
    pub fn allows_damage(&self) -> bool {
        self.config.damaged_copies_max > 0
    }

    /// The copy key of `path`: the first path of its mirror set, or itself.
    fn key(&self, path: &str) -> String {
        self.config
            .mirrors
            .iter()
            .find(|set| set.iter().any(|p| p == path))
            .and_then(|set| set.first())
            .map_or_else(|| path.to_string(), Clone::clone)
    }

    /// Grants damage to bytes `offset..offset + len` of `path` on `node` if every region they
    /// touch may be damaged on this copy; records the grant. All or nothing.
    pub fn grant(&mut self, node: u32, path: &str, offset: u64, len: u64) -> bool {
        if !self.allows_damage() {
            return false;
        }
        let key = self.key(path);
        let first = offset / self.config.region_bytes;
        let last = (offset + len.max(1) - 1) / self.config.region_bytes;
        let copy: Copy = (node, path.to_string());
        let max = self.config.damaged_copies_max as usize;
        let allowed = (first..=last).all(|region| {
            self.damaged
                .get(&(key.clone(), region))
                .is_none_or(|copies| copies.contains(&copy) || copies.len() < max)
        });
        if allowed {
            for region in first..=last {
                let copies = self.damaged.entry((key.clone(), region)).or_default();
                if !copies.contains(&copy) {
                    copies.push(copy.clone());
                }
                debug_assert!(
                    copies.len() <= max,
                    "atlas granted {} damaged copies of {key:?} region {region}, max {max}",
                    copies.len()
                );
            }
        }
        allowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atlas(max: u32) -> Atlas {
        Atlas::new(AtlasConfig {
            damaged_copies_max: max,
            region_bytes: 100,
            mirrors: vec![vec!["a".into(), "b".into()]],
        })
    }

    #[test]
    fn one_copy_per_region_across_mirrors_and_nodes() {
        let mut a = atlas(1);
        assert!(a.grant(0, "a", 0, 10), "first copy of region 0");
        assert!(a.grant(0, "a", 50, 10), "same copy again");
        assert!(!a.grant(0, "b", 0, 10), "mirror of a damaged region");
        assert!(!a.grant(1, "a", 0, 10), "same path on another node");
        assert!(a.grant(0, "b", 100, 10), "another region");
        assert!(
            !a.grant(0, "a", 50, 100),
            "spans a region b holds: all or nothing"
        );
        assert!(a.grant(0, "x", 0, 10), "unrelated path");
    }

    #[test]
    fn zero_grants_nothing() {
        let mut a = atlas(0);
        assert!(!a.grant(0, "a", 0, 1));
    }
}
