//! What must hold: the replicated log's safety, read through omnipaxos's public API, and
//! linearizability of what the clients saw.
//!
//! After every event a server handles (and right after every start, so a restart is checked
//! against what the server decided before its crash), it hands its `OmniPaxos` to the
//! [`Observer`], which reads the log with `read_entries` and `get_decided_idx` and checks:
//!
//! * `decided-logs-agree`: no two servers decide different entries at one index (every
//!   entry a server reads as decided equals the first entry any server decided there).
//! * `decided-entries-stay`: a server's decided entries never change or disappear: below the
//!   highest decided index it ever reported (kept here, outside the node, so across its
//!   crashes and restarts), its log holds the same entries. A decided index that goes back
//!   down is not itself flagged as long as the entries below the old one are still there
//!   unchanged (see NOTES.md); a decided index past the end of the log is.
//! * `accept-sync-within-log` (releases up to 0.2.2): a follower that accepts an AcceptSync
//!   holds the log prefix the leader's suffix extends (checked by the server on the message
//!   and its answer).
//! * `linearizable` (once every client is done): the client history has a linearization
//!   under the key-value register model ([`sim_core::check`]).

use std::collections::BTreeMap;

use omnipaxos::util::LogEntry;
use omnipaxos::OmniPaxos;
use sim_core::check::kv::Kv;
use sim_core::check::ClientHistory;

use crate::storage::SimStorage;
use crate::{idx, wide, Cmd};

/// The invariants' names, in the order the scenario registers them.
pub const LOG_INVARIANTS: [&str; 2] = ["decided-logs-agree", "decided-entries-stay"];

/// A follower accepts an AcceptSync only if it holds the prefix it extends (see
/// `server::SyncCheck`; releases up to 0.2.2, whose AcceptSync names its sync index).
pub const ACCEPT_SYNC_INVARIANT: &str = "accept-sync-within-log";

/// Everything the checks know, reported by the servers and clients; lives outside the nodes.
#[derive(Debug, Default)]
pub struct Observer {
    /// Index → (the server that first read it decided, the entry).
    decided: BTreeMap<u64, (u64, Cmd)>,
    /// Server → the highest decided index it ever reported.
    high: BTreeMap<u64, u64>,
    violations: BTreeMap<&'static str, String>,
    /// The clients' history, judged once every client has finished.
    pub clients: ClientHistory<Kv>,
}

impl Observer {
    /// Nothing observed yet; `clients` clients about to run.
    pub fn new(clients: usize) -> Self {
        Observer {
            clients: ClientHistory::new(Kv, clients),
            ..Observer::default()
        }
    }

    /// Records a violation of `name` (the first one of each name is kept).
    pub fn violate(&mut self, name: &'static str, message: String) {
        self.violations.entry(name).or_insert(message);
    }

    /// The first violation of `name`, if any.
    pub fn check(&self, name: &str) -> Result<(), String> {
        match self.violations.get(name) {
            Some(message) => Err(message.clone()),
            None => Ok(()),
        }
    }

    /// Checks server `pid`'s log and returns its decided entries (indices `0..decided`).
    pub fn check_server(&mut self, pid: u64, op: &OmniPaxos<Cmd, SimStorage<Cmd>>) -> Vec<Cmd> {
        let decided = wide(op.get_decided_idx());
        let before = self.high.get(&pid).copied().unwrap_or(0);
        let high = before.max(decided);
        self.high.insert(pid, high);
        if high == 0 {
            return Vec::new();
        }
        // One read of the whole prefix; entry by entry only when it is not all there.
        let entries: Vec<Option<LogEntry<Cmd>>> = match op.read_entries(0..idx(high)) {
            Some(all) if all.len() as u64 == high => all.into_iter().map(Some).collect(),
            _ => (0..high).map(|i| op.read(idx(i))).collect(),
        };
        let mut out = Vec::with_capacity(decided as usize);
        for (i, entry) in entries.into_iter().enumerate() {
            let i = i as u64;
            let cmd = match entry {
                Some(LogEntry::Decided(c)) | Some(LogEntry::Undecided(c)) => Some(c),
                _ => None,
            };
            let Some(cmd) = cmd else {
                let why = if i < decided {
                    format!(
                        "s{pid} reports decided index {decided} but holds no entry at index {i}"
                    )
                } else {
                    format!(
                        "s{pid} decided index {i} before (its decided index reached {before}, now {decided}) but no longer holds an entry there"
                    )
                };
                self.violate("decided-entries-stay", why);
                break;
            };
            match self.decided.get(&i) {
                Some((first, earlier)) if *earlier != cmd => {
                    let (first, earlier) = (*first, *earlier);
                    if i < before {
                        self.violate(
                            "decided-entries-stay",
                            format!(
                                "s{pid} decided {earlier:?} at index {i} before, and now holds {cmd:?} there"
                            ),
                        );
                    }
                    if i < decided {
                        self.violate(
                            "decided-logs-agree",
                            format!(
                                "s{pid} decided {cmd:?} at index {i}, but s{first} decided {earlier:?} there"
                            ),
                        );
                    }
                }
                Some(_) => {}
                None if i < decided => {
                    self.decided.insert(i, (pid, cmd));
                }
                None => {}
            }
            if i < decided {
                out.push(cmd);
            }
        }
        out
    }
}
