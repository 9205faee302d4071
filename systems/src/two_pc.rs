//! Two-phase commit: a coordinator and three participants.
//!
//! The client submits transactions to the coordinator one at a time. The coordinator sends
//! `Prepare` to every participant; each votes. A participant that votes no aborts at once
//! (2PC allows it); one that votes yes is prepared and waits for the decision. The correct
//! coordinator commits only when every vote is yes, aborts on the first no, and aborts if the
//! votes are not all in within a timeout.
//!
//! How a participant votes stands for its local conditions (locks, constraints): the workload
//! plans it per transaction, so the plan is part of the input and shrinks with it.
//!
//! **Invariant** `atomicity`: no transaction is committed at one participant and aborted at
//! another, and no participant that voted no ever commits.
//! **Liveness** `all-decided`: once the workload is done, every participant that prepared a
//! transaction learns its outcome.
//!
//! **Planted bug** `first-vote-wins`: the coordinator decides on the first vote to arrive — a
//! yes commits. Whether it bites depends on which vote the network delivers first, so the
//! same workload fails on some schedules and passes on others (`--pinned` fixes the workload
//! to one transaction voted yes, yes, no to show exactly that).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;

use arbitrary::Arbitrary;
use futures::channel::mpsc;
use futures::StreamExt;
use sim_core::choice::Choices;
use sim_core::net::{Addr, Faults, Socket};
use sim_core::node::NodeId;
use sim_core::sim::{self, Sim};
use sim_core::system::{BugSpec, RunOptions, SystemSpec};
use sim_core::time::timeout;

/// The registration of this system.
pub const SPEC: SystemSpec = SystemSpec::new(
    "two-pc",
    "two-phase commit, coordinator + 3 participants; invariant: atomicity",
    build,
)
.with_bugs(&[BugSpec {
    name: "first-vote-wins",
    about: "the coordinator decides on the first vote to arrive",
}])
.with_flags(&["pinned"]);

const PORT: u16 = 1;
const PARTICIPANTS: [&str; 3] = ["p1", "p2", "p3"];
const VOTE_TIMEOUT: Duration = Duration::from_secs(1);
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a prepared participant waits for the decision before asking for it.
const QUERY_AFTER: Duration = Duration::from_millis(300);

/// The protocol's messages.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Msg {
    /// Client → coordinator: run transaction `tx`.
    Begin {
        /// Transaction id.
        tx: u64,
    },
    /// Coordinator → participant: prepare `tx` and vote.
    Prepare {
        /// Transaction id.
        tx: u64,
    },
    /// Participant → coordinator.
    Vote {
        /// Transaction id.
        tx: u64,
        /// Whether it can commit.
        yes: bool,
    },
    /// Coordinator → participant: the outcome.
    Decide {
        /// Transaction id.
        tx: u64,
        /// Commit or abort.
        commit: bool,
    },
    /// Coordinator → client: the outcome.
    Outcome {
        /// Transaction id.
        tx: u64,
        /// Commit or abort.
        commit: bool,
    },
    /// Participant in doubt → coordinator: what was decided for `tx`?
    Query {
        /// Transaction id.
        tx: u64,
    },
}

/// A workload operation: one transaction and how each participant will vote on it.
#[derive(Clone, Debug, Hash, PartialEq, Eq, Arbitrary)]
pub struct TxPlan {
    /// Whether p1, p2, p3 vote no (all false, the default, commits).
    pub no_votes: [bool; 3],
}

/// A participant's view of one transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxState {
    /// Voted yes, waiting for the decision.
    Prepared,
    /// Committed.
    Committed,
    /// Aborted (voted no, or told to abort).
    Aborted,
}

/// Out-of-band state the checks read: what each participant holds, and what it voted.
#[derive(Debug, Default)]
pub struct Model {
    /// Per participant, per transaction.
    pub state: [BTreeMap<u64, TxState>; 3],
    /// Per participant, per transaction: its vote.
    pub votes: [BTreeMap<u64, bool>; 3],
    /// The workload's plan per transaction.
    pub plans: BTreeMap<u64, TxPlan>,
}

impl Model {
    /// The atomicity invariant.
    pub fn check_atomicity(&self) -> Result<(), String> {
        for tx in self.plans.keys() {
            let states: Vec<Option<TxState>> =
                self.state.iter().map(|s| s.get(tx).copied()).collect();
            let committed = states.iter().position(|s| *s == Some(TxState::Committed));
            let aborted = states.iter().position(|s| *s == Some(TxState::Aborted));
            if let (Some(c), Some(a)) = (committed, aborted) {
                return Err(format!(
                    "tx {tx} committed at {} but aborted at {} (states {states:?})",
                    PARTICIPANTS[c], PARTICIPANTS[a]
                ));
            }
            for (i, votes) in self.votes.iter().enumerate() {
                if votes.get(tx) == Some(&false) && states[i] == Some(TxState::Committed) {
                    return Err(format!(
                        "tx {tx} committed at {} which voted no",
                        PARTICIPANTS[i]
                    ));
                }
            }
        }
        Ok(())
    }

    fn all_decided(&self) -> bool {
        self.state
            .iter()
            .all(|s| s.values().all(|st| *st != TxState::Prepared))
    }
}

fn build(opts: &RunOptions) -> Sim {
    // Faults are off unless the run turns them on (`--faults swarm`): the protocol tolerates
    // loss, duplication, reordering and partitions, and liveness is judged after the heal.
    let mut sim = Sim::new(opts.config_with_faults(Faults::Off));
    let model = Rc::new(RefCell::new(Model::default()));
    let first_vote_wins = opts.bug_is("first-vote-wins");
    let pinned = opts.pinned;

    sim.node("coord", move |_| coordinator(first_vote_wins));
    for (i, name) in PARTICIPANTS.iter().enumerate() {
        let model = model.clone();
        sim.node(name, move |_| participant(i, model.clone()));
    }
    let m = model.clone();
    sim.client("client", move |_| client(m.clone(), pinned));

    let m = model.clone();
    sim.invariant("atomicity", move || m.borrow().check_atomicity());
    let m = model;
    sim.eventually("all-decided", Duration::from_secs(5), move || {
        m.borrow().all_decided()
    });
    sim
}

async fn client(model: Rc<RefCell<Model>>, pinned: bool) {
    let sock = Socket::<Msg>::bind(PORT).expect("client port is free");
    let coord = Addr::named("coord", PORT);
    let count = if pinned {
        1
    } else {
        1 + sim::draw(|s| s.below("2pc.tx_count", 4))
    };
    for tx in 0..count {
        let plan = if pinned {
            TxPlan {
                no_votes: [false, false, true],
            }
        } else {
            sim::draw(|s| s.arbitrary::<TxPlan>("2pc.plan", 3))
                .expect("a TxPlan builds from any bytes")
        };
        let op = sim::op_start(&(tx, &plan));
        model.borrow_mut().plans.insert(tx, plan);
        sock.send(coord, Msg::Begin { tx });
        let result = timeout(CLIENT_TIMEOUT, async {
            loop {
                if let (_, Msg::Outcome { tx: t, commit }) = sock.recv().await {
                    if t == tx {
                        return commit;
                    }
                }
            }
        })
        .await;
        sim::op_result(op, &result.ok());
        // Leaving the system quiet is a choice too: what constant traffic hides shows here.
        if sim::draw(|s| s.chance("2pc.quiet", 1, 4)) {
            let quiet_ms = sim::draw(|s| s.range_inclusive("2pc.quiet_ms", 1, 3000));
            sim_core::time::sleep(Duration::from_millis(quiet_ms)).await;
        }
    }
}

async fn coordinator(first_vote_wins: bool) {
    let sock = Rc::new(Socket::<Msg>::bind(PORT).expect("coordinator port is free"));
    // Votes of each open transaction go to that transaction's decision task, tagged with the
    // voter: a duplicated vote must not count twice.
    let mut ballots: BTreeMap<u64, mpsc::UnboundedSender<(NodeId, bool)>> = BTreeMap::new();
    // Outcomes decided so far, for participants in doubt that ask again.
    let decided: Rc<RefCell<BTreeMap<u64, bool>>> = Rc::default();
    loop {
        let (from, msg) = sock.recv().await;
        match msg {
            // A duplicated Begin must not start a second round (which would time out and abort
            // a transaction the first round may have committed).
            Msg::Begin { tx } if !ballots.contains_key(&tx) => {
                let (votes_tx, votes_rx) = mpsc::unbounded();
                ballots.insert(tx, votes_tx);
                for p in PARTICIPANTS {
                    sock.send(Addr::named(p, PORT), Msg::Prepare { tx });
                }
                let (sock, decided) = (sock.clone(), decided.clone());
                sim_core::rt::spawn(async move {
                    let outcome = timeout(VOTE_TIMEOUT, decide(votes_rx, first_vote_wins)).await;
                    let commit = outcome.unwrap_or(false);
                    decided.borrow_mut().insert(tx, commit);
                    for p in PARTICIPANTS {
                        sock.send(Addr::named(p, PORT), Msg::Decide { tx, commit });
                    }
                    sock.send(from, Msg::Outcome { tx, commit });
                });
            }
            Msg::Vote { tx, yes } => {
                if let Some(ballot) = ballots.get(&tx) {
                    // A closed ballot (already decided) ignores late votes.
                    let _ = ballot.unbounded_send((from.node, yes));
                }
            }
            Msg::Query { tx } => {
                // Undecided yet: the participant asks again later.
                if let Some(&commit) = decided.borrow().get(&tx) {
                    sock.send(from, Msg::Decide { tx, commit });
                }
            }
            _ => {}
        }
    }
}

/// Collects votes until they decide the transaction.
async fn decide(mut votes: mpsc::UnboundedReceiver<(NodeId, bool)>, first_vote_wins: bool) -> bool {
    let mut yes_voters = BTreeSet::new();
    while let Some((voter, yes)) = votes.next().await {
        if first_vote_wins {
            // Planted bug: the first vote to arrive decides.
            return yes;
        }
        if !yes {
            return false;
        }
        yes_voters.insert(voter);
        if yes_voters.len() == PARTICIPANTS.len() {
            return true;
        }
    }
    false
}

async fn participant(index: usize, model: Rc<RefCell<Model>>) {
    let sock = Socket::<Msg>::bind(PORT).expect("participant port is free");
    loop {
        let in_doubt: Vec<u64> = model.borrow().state[index]
            .iter()
            .filter(|(_, state)| **state == TxState::Prepared)
            .map(|(tx, _)| *tx)
            .collect();
        let received = if in_doubt.is_empty() {
            Some(sock.recv().await)
        } else {
            timeout(QUERY_AFTER, sock.recv()).await.ok()
        };
        let Some((from, msg)) = received else {
            // Prepared and no decision yet: the decision may have been lost. Ask for it (2PC's
            // cooperative termination; a participant that voted yes may not decide alone).
            for tx in in_doubt {
                sock.send(Addr::named("coord", PORT), Msg::Query { tx });
            }
            continue;
        };
        match msg {
            Msg::Prepare { tx } => {
                // The network may reorder: a decision can overtake its Prepare. A transaction
                // already decided here is not prepared again.
                if model.borrow().state[index].contains_key(&tx) {
                    continue;
                }
                let yes = !model
                    .borrow()
                    .plans
                    .get(&tx)
                    .is_some_and(|p| p.no_votes[index]);
                {
                    let mut m = model.borrow_mut();
                    m.votes[index].insert(tx, yes);
                    m.state[index].insert(
                        tx,
                        if yes {
                            TxState::Prepared
                        } else {
                            TxState::Aborted
                        },
                    );
                }
                sock.send(from, Msg::Vote { tx, yes });
            }
            Msg::Decide { tx, commit } => {
                let mut m = model.borrow_mut();
                m.state[index].insert(
                    tx,
                    if commit {
                        TxState::Committed
                    } else {
                        TxState::Aborted
                    },
                );
            }
            _ => {}
        }
    }
}
