//! A Raft replica: leader election, log replication, commitment, and the key-value state
//! machine it drives. Section numbers are the Raft paper's (Ongaro & Ousterhout, 2014);
//! "Figure 2" rules are named where they are enforced.
//!
//! One task runs the protocol and owns the replica's state. It waits for a message, a timer
//! (the election timeout, or the leader's heartbeat), or the completion of the leader's log
//! sync, which runs in a task of its own so the leader replicates while it syncs (§10.2.1):
//! the leader counts its own log in a majority only up to what is synced. Followers and
//! voters persist before they answer (Figure 2, "Persistent state ... updated on stable
//! storage before responding to RPCs").

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use futures::channel::mpsc;
use futures::StreamExt;
use sim_core::check::kv::{KvInput, KvOutput};
use sim_core::choice::Choices;
use sim_core::net::{Addr, Socket};
use sim_core::time::{now, sleep_until, Instant};
use sim_core::{node, sim};

use super::invariants::Observer;
use super::log::{Command, Entry, Log};
use super::storage::Storage;
use super::{Bugs, PORT, REPLICAS};

const HEARTBEAT: Duration = Duration::from_millis(50);
const ELECTION_MS_MIN: u64 = 150;
const ELECTION_MS_MAX: u64 = 300;
/// Most entries in one AppendEntries. Small enough that the scenario's logs (three clients of
/// up to six operations, plus retries) often outgrow one batch: a follower far behind is then
/// caught up over several requests, each vouching for only part of the leader's log, as in a
/// deployment whose requests are capped by size. With 16, a log longer than one batch was
/// rare enough (4 workloads in 216) that this path was nearly dead code.
const BATCH_MAX: usize = 8;

/// Messages between replicas and clients.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Msg {
    /// RequestVote RPC.
    Vote {
        /// Candidate's term.
        term: u64,
        /// Index of the candidate's last log entry.
        last_index: u64,
        /// Term of the candidate's last log entry.
        last_term: u64,
    },
    /// RequestVote reply.
    VoteReply {
        /// The voter's term.
        term: u64,
        /// Whether the vote was granted.
        granted: bool,
    },
    /// AppendEntries RPC (a heartbeat when `entries` is empty).
    Append {
        /// Leader's term.
        term: u64,
        /// Index of the entry before the new ones.
        prev_index: u64,
        /// Its term.
        prev_term: u64,
        /// Entries to store.
        entries: Vec<Entry>,
        /// Leader's commit index.
        commit: u64,
    },
    /// AppendEntries reply.
    AppendReply {
        /// The follower's term.
        term: u64,
        /// Whether the log matched at `prev_index`.
        success: bool,
        /// On success, the last index known to match; on failure, where to retry from.
        match_index: u64,
    },
    /// Client → replica.
    Request(Command),
    /// Replica → client.
    Reply {
        /// The request answered.
        seq: u64,
        /// Its answer.
        answer: Answer,
    },
}

/// A replica's answer to a client.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Answer {
    /// Applied, with this result.
    Done(KvOutput),
    /// Not the leader; try this one (if known).
    NotLeader(Option<u32>),
}

enum Role {
    Follower,
    Candidate {
        votes: BTreeSet<u32>,
    },
    Leader {
        /// Per replica: next index to send, and highest index known replicated.
        next: Vec<u64>,
        matched: Vec<u64>,
        /// The leader's own log is synced up to here (it counts itself only that far).
        synced: u64,
    },
}

enum Event {
    Message(Addr, Msg),
    Synced { term: u64, index: u64 },
    Timer,
}

/// A replica's address. Replicas are the scenario's first nodes, so a replica's number is
/// its node id (`from.node.0` of a message it sent).
pub fn addr(replica: u32) -> Addr {
    Addr::named(REPLICAS[replica as usize], PORT)
}

/// A replica's whole life from one start: recover from the disk, then run the protocol.
pub async fn replica(me: u32, count: u32, observer: Rc<RefCell<Observer>>, bugs: Bugs) {
    let (storage, durable) = Storage::open().await;
    observer.borrow_mut().wrote(me, 1, 0, durable.log.entries());
    let sock = Socket::<Msg>::bind(PORT).expect("the replica port is free");
    let (synced_tx, synced_rx) = mpsc::unbounded();
    let mut replica = Replica {
        me,
        count,
        sock,
        storage,
        term: durable.term,
        vote: durable.vote,
        log: durable.log,
        role: Role::Follower,
        leader: None,
        commit: 0,
        applied: 0,
        kv: BTreeMap::new(),
        sessions: BTreeMap::new(),
        waiting: BTreeMap::new(),
        election_at: Instant::from_nanos(0),
        deadline: Instant::from_nanos(0),
        synced_tx,
        observer,
        bugs,
    };
    replica.reset_election_timer();
    replica.run(synced_rx).await;
}

struct Replica {
    me: u32,
    count: u32,
    sock: Socket<Msg>,
    storage: Storage,
    // Persistent state (Figure 2): on disk before any answer depends on it.
    term: u64,
    vote: Option<u32>,
    log: Log,
    // Volatile state.
    role: Role,
    leader: Option<u32>,
    commit: u64,
    applied: u64,
    kv: BTreeMap<u64, u64>,
    /// Per client: its last applied request and the result (each request applied once).
    sessions: BTreeMap<u32, (u64, KvOutput)>,
    /// Leader only: log index → the client waiting for it.
    waiting: BTreeMap<u64, (Addr, Command)>,
    /// When the election timeout passes (followers, candidates).
    election_at: Instant,
    /// The next wake-up: the election timeout, a candidate's next retry of its vote
    /// requests, or the leader's next heartbeat.
    deadline: Instant,
    synced_tx: mpsc::UnboundedSender<(u64, u64)>,
    observer: Rc<RefCell<Observer>>,
    bugs: Bugs,
}

impl Replica {
    /// This replica's state in the terms Raft's correctness argument uses, in 11 bits: its
    /// role; whom it voted for in its term (nobody, itself, another); whether its log holds
    /// an entry of its term; whether term and vote, and whether the log, are ahead of what
    /// the disk has synced; and the shape of replication — how long its uncommitted tail is
    /// (none, within one AppendEntries batch, longer), whether that tail was written in an
    /// older term (a deposed leader's, not yet overwritten), and, for a leader, whether a
    /// peer is more than a batch behind it (caught up over several requests, each vouching
    /// for only part of the log). Named to sim-core after every event ([`node::abstract_state`]):
    /// a fuzzer is rewarded for a transition, or a crash in a state, that no input reached
    /// before (a replica crashing with an answered vote not yet durable, say) without being
    /// told which of them is a bug.
    fn abstract_state(&self) -> u64 {
        let role = match self.role {
            Role::Follower => 0,
            Role::Candidate { .. } => 1,
            Role::Leader { .. } => 2,
        };
        let vote = match self.vote {
            None => 0,
            Some(v) if v == self.me => 1,
            Some(_) => 2,
        };
        let own_term_entry = u64::from(self.log.last_term() == self.term);
        let meta_unsynced = u64::from(self.storage.meta_unsynced());
        let log_unsynced = u64::from(self.storage.synced_entries() < self.log.last_index());
        let last = self.log.last_index();
        let tail = last - self.commit.min(last);
        let tail_class = match tail {
            0 => 0,
            t if t <= BATCH_MAX as u64 => 1,
            _ => 2,
        };
        let stale_tail = u64::from(tail > 0 && self.log.last_term() < self.term);
        let peer_lags_past_batch = match &self.role {
            Role::Leader { next, .. } => u64::from(
                self.peers()
                    .any(|p| last + 1 - next[p as usize].min(last + 1) > BATCH_MAX as u64),
            ),
            _ => 0,
        };
        role | vote << 2
            | own_term_entry << 4
            | meta_unsynced << 5
            | log_unsynced << 6
            | tail_class << 7
            | stale_tail << 9
            | peer_lags_past_batch << 10
    }

    async fn run(&mut self, mut synced_rx: mpsc::UnboundedReceiver<(u64, u64)>) {
        loop {
            let event = {
                let mut recv = pin!(self.sock.recv());
                let mut timer = pin!(sleep_until(self.deadline));
                poll_fn(|cx| {
                    if let Poll::Ready(Some((term, index))) = synced_rx.poll_next_unpin(cx) {
                        return Poll::Ready(Event::Synced { term, index });
                    }
                    if let Poll::Ready((from, msg)) = recv.as_mut().poll(cx) {
                        return Poll::Ready(Event::Message(from, msg));
                    }
                    timer.as_mut().poll(cx).map(|()| Event::Timer)
                })
                .await
            };
            match event {
                Event::Message(from, msg) => self.handle(from, msg).await,
                Event::Synced { term, index } => {
                    if let Role::Leader { synced, .. } = &mut self.role {
                        if term == self.term {
                            *synced = (*synced).max(index);
                            self.advance_commit();
                        }
                    }
                }
                Event::Timer => match &self.role {
                    Role::Leader { .. } => {
                        self.broadcast_append();
                        self.deadline = now() + HEARTBEAT;
                    }
                    _ if now() >= self.election_at => self.start_election().await,
                    Role::Candidate { votes } => {
                        // RPCs are retried while unanswered (§5.1): ask again who has not
                        // voted yet.
                        let silent: Vec<u32> =
                            self.peers().filter(|p| !votes.contains(p)).collect();
                        for peer in silent {
                            self.send(peer, self.vote_request());
                        }
                        self.deadline = self.election_at.min(now() + HEARTBEAT);
                    }
                    Role::Follower => self.deadline = self.election_at,
                },
            }
            node::abstract_state_at(self.term, self.abstract_state());
        }
    }

    fn majority(&self) -> usize {
        self.count as usize / 2 + 1
    }

    fn send(&self, to: u32, msg: Msg) {
        self.sock.send(addr(to), msg);
    }

    fn peers(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.count).filter(move |&p| p != self.me)
    }

    fn reset_election_timer(&mut self) {
        let ms =
            sim::draw(|s| s.range_inclusive("raft.election_ms", ELECTION_MS_MIN, ELECTION_MS_MAX));
        self.election_at = now() + Duration::from_millis(ms);
        self.deadline = match self.role {
            Role::Leader { .. } => self.deadline,
            Role::Candidate { .. } => self.election_at.min(now() + HEARTBEAT),
            Role::Follower => self.election_at,
        };
    }

    /// Rules for all servers (Figure 2): a higher term seen in any message makes this replica
    /// a follower of that term, persisted before anything else is answered.
    async fn observe_term(&mut self, term: u64) {
        if term > self.term {
            self.term = term;
            self.vote = None;
            self.become_follower(None);
            self.storage.save_meta(self.term, self.vote).await;
        }
    }

    fn become_follower(&mut self, leader: Option<u32>) {
        let was_leader = matches!(self.role, Role::Leader { .. });
        self.role = Role::Follower;
        self.leader = leader;
        if was_leader {
            // Clients waiting on this leader retry elsewhere.
            self.waiting.clear();
            self.reset_election_timer();
        }
    }

    async fn start_election(&mut self) {
        // §5.2: a follower whose election timeout passes starts an election in a new term,
        // voting for itself (persisted before it asks for votes).
        self.term += 1;
        self.vote = Some(self.me);
        self.role = Role::Candidate {
            votes: BTreeSet::from([self.me]),
        };
        self.leader = None;
        self.reset_election_timer();
        self.storage.save_meta(self.term, self.vote).await;
        for peer in self.peers() {
            self.send(peer, self.vote_request());
        }
    }

    fn vote_request(&self) -> Msg {
        Msg::Vote {
            term: self.term,
            last_index: self.log.last_index(),
            last_term: self.log.last_term(),
        }
    }

    fn become_leader(&mut self) {
        let last = self.log.last_index();
        self.role = Role::Leader {
            next: vec![last + 1; self.count as usize],
            matched: vec![0; self.count as usize],
            // It counts itself only for what a completed sync covered: a sync it began as
            // an earlier term's leader may still be running.
            synced: self.storage.synced_entries(),
        };
        self.leader = Some(self.me);
        self.observer
            .borrow_mut()
            .became_leader(self.me, self.term, &self.log);
        sim::note(&format!("r{} leads term {}", self.me, self.term));
        self.broadcast_append();
        self.deadline = now() + HEARTBEAT;
    }

    async fn handle(&mut self, from: Addr, msg: Msg) {
        match msg {
            Msg::Vote {
                term,
                last_index,
                last_term,
            } => {
                self.observe_term(term).await;
                let candidate = from.node.0;
                // RequestVote rule 2: grant if the vote is free (or already this candidate's)
                // and the candidate's log is at least as up to date (§5.4.1).
                let granted = term == self.term
                    && self.vote.is_none_or(|v| v == candidate)
                    && self.log.candidate_is_up_to_date(last_term, last_index);
                if granted {
                    self.vote = Some(candidate);
                    self.reset_election_timer();
                    if self.bugs.vote_not_persisted {
                        // Planted bug: the vote is written but not synced before the answer; a
                        // crash can lose it, and the restarted replica may vote again in this
                        // term.
                        self.storage.write_meta(self.term, self.vote).await;
                    } else {
                        self.storage.save_meta(self.term, self.vote).await;
                    }
                }
                self.send(
                    candidate,
                    Msg::VoteReply {
                        term: self.term,
                        granted,
                    },
                );
            }
            Msg::VoteReply { term, granted } => {
                self.observe_term(term).await;
                let voter = from.node.0;
                let majority = self.majority();
                if let Role::Candidate { votes } = &mut self.role {
                    if term == self.term && granted {
                        votes.insert(voter);
                        if votes.len() >= majority {
                            self.become_leader();
                        }
                    }
                }
            }
            Msg::Append {
                term,
                prev_index,
                prev_term,
                entries,
                commit,
            } => {
                self.observe_term(term).await;
                let leader = from.node.0;
                if term < self.term {
                    // AppendEntries rule 1: reply false to a stale leader.
                    let reply = Msg::AppendReply {
                        term: self.term,
                        success: false,
                        match_index: 0,
                    };
                    self.send(leader, reply);
                    return;
                }
                // A current leader exists: candidates step down (§5.2).
                self.become_follower(Some(leader));
                self.reset_election_timer();
                let reply = self.append(prev_index, prev_term, &entries, commit).await;
                self.send(leader, reply);
            }
            Msg::AppendReply {
                term,
                success,
                match_index,
            } => {
                self.observe_term(term).await;
                let follower = (from.node.0) as usize;
                let current = term == self.term;
                let Role::Leader { next, matched, .. } = &mut self.role else {
                    return;
                };
                if !current {
                    return;
                }
                if success {
                    matched[follower] = matched[follower].max(match_index);
                    next[follower] = next[follower].max(match_index + 1);
                    self.advance_commit();
                } else {
                    // Back off to where the follower's log may match (§5.3), and retry now.
                    next[follower] = (match_index + 1)
                        .min(next[follower].saturating_sub(1))
                        .max(1);
                    self.send_append(follower as u32);
                }
            }
            Msg::Request(command) => self.request(from, command).await,
            Msg::Reply { .. } => {}
        }
    }

    /// AppendEntries rules 2-5 (Figure 2), with the log persisted before the reply.
    async fn append(
        &mut self,
        prev_index: u64,
        prev_term: u64,
        entries: &[Entry],
        commit: u64,
    ) -> Msg {
        // Rule 2: reply false if the log has no entry at prev_index with prev_term.
        if self.log.term_at(prev_index) != Some(prev_term) {
            return Msg::AppendReply {
                term: self.term,
                success: false,
                match_index: self.log.last_index().min(prev_index.saturating_sub(1)),
            };
        }
        // Rules 3-4: drop a conflicting suffix (only from the first conflict: a late or
        // duplicated AppendEntries must not cut entries a newer one added), append the rest.
        let first_new = entries
            .iter()
            .enumerate()
            .find(|(i, e)| self.log.term_at(prev_index + 1 + *i as u64) != Some(e.term))
            .map(|(i, _)| i);
        if let Some(i) = first_new {
            let index = prev_index + 1 + i as u64;
            self.log.truncate_from(index);
            for entry in &entries[i..] {
                self.log.push(*entry);
            }
            self.storage.write_log(index, &entries[i..]).await;
            let before = self.log.term_at(index - 1).expect("the prefix matched");
            self.observer
                .borrow_mut()
                .wrote(self.me, index, before, &entries[i..]);
            self.storage.sync_log().await;
        }
        let last_new = prev_index + entries.len() as u64;
        // Rule 5: commit up to the leader's commit, within what this request covered.
        if commit > self.commit {
            // The request vouches only for the log up to its last entry: a suffix past it may
            // be a deposed leader's, not yet overwritten.
            let vouched = if self.bugs.commit_past_request {
                // Planted bug: commits up to the leader's commit within the whole log.
                self.log.last_index()
            } else {
                last_new
            };
            self.commit = commit.min(vouched).max(self.commit);
            self.apply();
        }
        Msg::AppendReply {
            term: self.term,
            success: true,
            match_index: last_new,
        }
    }

    async fn request(&mut self, from: Addr, command: Command) {
        if !matches!(self.role, Role::Leader { .. }) {
            let reply = Msg::Reply {
                seq: command.seq,
                answer: Answer::NotLeader(self.leader),
            };
            self.sock.send(from, reply);
            return;
        }
        match self.sessions.get(&command.client) {
            // Applied already (a retry): the same answer again.
            Some(&(seq, output)) if seq == command.seq => {
                let reply = Msg::Reply {
                    seq,
                    answer: Answer::Done(output),
                };
                self.sock.send(from, reply);
                return;
            }
            // Older than what the client already moved past: nobody waits for it.
            Some(&(seq, _)) if seq > command.seq => return,
            _ => {}
        }
        if let (true, KvInput::Get { key }) = (self.bugs.stale_read, command.op) {
            // Planted bug: a read served from this leader's state without confirming it is
            // still the leader (no log entry, no heartbeat round): a deposed leader answers.
            let value = self.kv.get(&key).copied();
            let reply = Msg::Reply {
                seq: command.seq,
                answer: Answer::Done(KvOutput::Value(value)),
            };
            self.sock.send(from, reply);
            return;
        }
        let index = match self.log.find(command.client, command.seq) {
            Some(index) => index,
            None => {
                // Leader rule: append the command to the local log (Figure 2), sync it in the
                // background, and replicate at once.
                let entry = Entry {
                    term: self.term,
                    command,
                };
                let prev_term = self.log.last_term();
                let index = self.log.push(entry);
                self.storage.write_log(index, &[entry]).await;
                self.observer
                    .borrow_mut()
                    .wrote(self.me, index, prev_term, &[entry]);
                self.sync_in_background();
                if self.bugs.ack_before_fsync {
                    // Planted bug: the leader counts its own copy before it is on disk.
                    if let Role::Leader { synced, .. } = &mut self.role {
                        *synced = index;
                    }
                }
                self.broadcast_append();
                index
            }
        };
        self.waiting.insert(index, (from, command));
    }

    /// Syncs the log in a task of its own; the protocol task hears when it is done.
    fn sync_in_background(&self) {
        let sync = self.storage.sync_log();
        let done = self.synced_tx.clone();
        let term = self.term;
        sim_core::rt::spawn(async move {
            let index = sync.await;
            let _ = done.unbounded_send((term, index));
        });
    }

    fn broadcast_append(&self) {
        for peer in self.peers() {
            self.send_append(peer);
        }
    }

    fn send_append(&self, to: u32) {
        let Role::Leader { next, .. } = &self.role else {
            return;
        };
        let next = next[to as usize];
        let prev_index = next - 1;
        let entries: Vec<Entry> = self
            .log
            .from(next)
            .iter()
            .take(BATCH_MAX)
            .copied()
            .collect();
        let msg = Msg::Append {
            term: self.term,
            prev_index,
            prev_term: self
                .log
                .term_at(prev_index)
                .expect("next index within the log"),
            entries,
            commit: self.commit,
        };
        self.send(to, msg);
    }

    /// Leader rule (Figure 2): commit N if a majority holds it and log[N] is of the current
    /// term (§5.4.2: entries of earlier terms are committed only through one of this term).
    fn advance_commit(&mut self) {
        let Role::Leader {
            matched, synced, ..
        } = &self.role
        else {
            return;
        };
        let majority = self.majority();
        let me = self.me as usize;
        let held = |n: u64| {
            let others = matched
                .iter()
                .enumerate()
                .filter(|&(i, &m)| i != me && m >= n)
                .count();
            others + usize::from(*synced >= n) >= majority
        };
        let mut n = self.log.last_index();
        while n > self.commit {
            let current_term = self.log.term_at(n) == Some(self.term);
            if held(n) && (current_term || self.bugs.old_term_commit) {
                break;
            }
            n -= 1;
        }
        if n > self.commit {
            let mut observer = self.observer.borrow_mut();
            for index in self.commit + 1..=n {
                let entry = *self.log.get(index).expect("committed within the log");
                observer.committed(self.me, self.term, index, entry);
            }
            drop(observer);
            self.commit = n;
            self.apply();
        }
    }

    /// Applies committed entries in order (Figure 2, rules for all servers), each client
    /// request once; a leader answers the client waiting for it.
    fn apply(&mut self) {
        while self.applied < self.commit {
            self.applied += 1;
            let index = self.applied;
            let entry = *self.log.get(index).expect("applied within the log");
            self.observer.borrow_mut().applied(self.me, index, entry);
            let command = entry.command;
            let output = match self.sessions.get(&command.client) {
                Some(&(seq, output)) if seq == command.seq => Some(output),
                Some(&(seq, _)) if seq > command.seq => None,
                _ => {
                    let output = execute(&mut self.kv, command.op);
                    self.sessions.insert(command.client, (command.seq, output));
                    Some(output)
                }
            };
            if let Some((client, waiting)) = self.waiting.remove(&index) {
                if let (Some(output), true) = (output, waiting == command) {
                    let reply = Msg::Reply {
                        seq: command.seq,
                        answer: Answer::Done(output),
                    };
                    self.sock.send(client, reply);
                }
            }
        }
    }
}

/// The state machine: one operation on the store.
fn execute(kv: &mut BTreeMap<u64, u64>, op: KvInput) -> KvOutput {
    match op {
        KvInput::Get { key } => KvOutput::Value(kv.get(&key).copied()),
        KvInput::Put { key, value } => {
            kv.insert(key, value);
            KvOutput::Done
        }
        KvInput::Cas { key, from, to } => {
            let swapped = kv.get(&key) == Some(&from);
            if swapped {
                kv.insert(key, to);
            }
            KvOutput::Swapped(swapped)
        }
    }
}
