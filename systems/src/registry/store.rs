//! The store every member commits through: the table of record, one version per batch.

use super::*;

/// The store: committed state, the log of batches, and the leader lease.
#[derive(Debug, Clone)]
pub struct Store {
    /// The lease's epoch; bumped by every grant.
    pub epoch: u64,
    /// The lease holder: member index and the incarnation that took it.
    pub leader: (usize, u32),
    /// Each member's latest incarnation (a member says hello at every start).
    pub incarnations: [u32; 3],
    /// The committed version (number of batches).
    pub version: u64,
    /// The committed table.
    pub table: Table,
    /// Every committed batch, `log[v - 1]` being version `v`'s operations.
    pub log: Vec<Vec<Op>>,
}

impl Default for Store {
    fn default() -> Self {
        Store {
            epoch: 1,
            leader: (0, 0),
            incarnations: [0; 3],
            version: 0,
            table: Table::new(),
            log: Vec::new(),
        }
    }
}

impl Store {
    /// Takes the lease for `member` (in `incarnation`), if the epoch it saw is current and
    /// the holder's session ended. Returns the new epoch, or the current lease.
    pub(super) fn claim(
        &mut self,
        member: usize,
        incarnation: u32,
        seen_epoch: u64,
    ) -> Result<u64, (u64, usize)> {
        let (holder, holder_inc) = self.leader;
        let holder_alive = node::is_up(MEMBERS[holder]) && self.incarnations[holder] == holder_inc;
        if self.epoch != seen_epoch
            || (holder_alive && (holder, holder_inc) != (member, incarnation))
        {
            return Err((self.epoch, holder));
        }
        self.epoch += 1;
        self.leader = (member, incarnation);
        Ok(self.epoch)
    }

    /// Commits a batch from the leader of `epoch`; returns the new version and the answers.
    pub(super) fn commit(&mut self, epoch: u64, ops: &[Op]) -> Option<(u64, Vec<bool>)> {
        if epoch != self.epoch {
            return None;
        }
        let answers = ops.iter().map(|op| apply(&mut self.table, op)).collect();
        self.version += 1;
        self.log.push(ops.to_vec());
        Some((self.version, answers))
    }

    /// The table as of `version` (replayed from the log).
    pub fn table_at(&self, version: u64) -> Table {
        let mut table = Table::new();
        for ops in self.log.iter().take(version as usize) {
            for op in ops {
                apply(&mut table, op);
            }
        }
        table
    }
}
