//! One raft peer: its `RawNode`, its WAL, its key-value state machine, and the loop that
//! drives them.
//!
//! The loop waits for a raft message, a client request or the next tick, hands it to raft,
//! and then works through raft's `Ready`s as the library's documentation orders it: send
//! what may go at once (raft 0.6.0: a leader's appends), append the entries and the hard
//! state to the WAL — **synced when and only when `Ready::must_sync()` is true**, the
//! library's word on whether an asynchronous write is permissible — update the storage image,
//! send the messages that had to wait for persistence, apply the committed entries, serve
//! read-index reads whose index is applied, and advance.
//!
//! Ticks come from virtual time, one every 5 to 15 ms (drawn per tick). raft randomises its
//! election timeout with `rand::thread_rng()`, which reads OS entropy; the harness makes that
//! draw constant (`min_election_tick = election_tick`, `max_election_tick = election_tick +
//! 1`, so the range holds one value) and takes the randomness from its tick lengths instead,
//! all drawn from the run's input.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use raft::eraftpb::{Entry, Message};
use raft::{Config, RawNode, ReadOnlyOption, StateRole};
use sim_core::check::kv::{KvInput, KvOutput};
use sim_core::choice::Choices;
use sim_core::net::{Addr, Foreign, Socket};
use sim_core::time::{now, sleep_until};
use sim_core::{node, sim};

use crate::client::{Answer, Command, Wire};
use crate::compat;
use crate::observer::{EntryId, Observer};
use crate::store::SimStorage;
use crate::wal::Wal;
use crate::{Setup, CLIENT_PORT, NODES, RAFT_PORT};

const TICK_MS_MIN: u64 = 5;
const TICK_MS_MAX: u64 = 15;
const ELECTION_TICK: usize = 10;
const HEARTBEAT_TICK: usize = 2;

/// The address of the node with raft id `id`.
fn raft_addr(id: u64) -> Addr {
    Addr::named(NODES[(id - 1) as usize], RAFT_PORT)
}

/// A digest of an entry's data (FNV-1a), for the observer.
fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn entry_id(e: &Entry) -> EntryId {
    EntryId {
        term: e.term,
        digest: digest(&e.data[..]),
    }
}

enum Event {
    Raft(Message),
    Client(Addr, Wire),
    Tick,
}

struct Peer {
    id: u64,
    raw: RawNode<SimStorage>,
    storage: SimStorage,
    wal: Wal,
    raft_sock: Socket<Foreign<Message>>,
    client_sock: Socket<Wire>,
    observer: Rc<RefCell<Observer>>,
    setup: Setup,
    /// The state machine.
    kv: BTreeMap<u64, u64>,
    /// Per client: its last applied request and the result (each request applied once).
    sessions: BTreeMap<u32, (u64, KvOutput)>,
    /// The last index applied to `kv`.
    applied: u64,
    /// Clients waiting for a proposal, by (client, seq).
    waiting: BTreeMap<(u32, u64), Addr>,
    /// Reads waiting for their read index, by (client, seq).
    reads: BTreeMap<(u32, u64), (Addr, u64)>,
    /// Read indexes raft confirmed: (index, client, seq).
    confirmed_reads: Vec<(u64, u32, u64)>,
    /// The term this node last reported leading.
    led: u64,
}

/// A peer's whole life from one start: recover from the disk, then run.
pub async fn peer(id: u64, setup: Setup, observer: Rc<RefCell<Observer>>) {
    let (wal, recovered) = Wal::open().await;
    let voters: Vec<u64> = (1..=u64::from(setup.nodes)).collect();
    let storage = SimStorage::new(voters, recovered.hard_state, recovered.entries);
    let config = Config {
        id,
        election_tick: ELECTION_TICK,
        heartbeat_tick: HEARTBEAT_TICK,
        min_election_tick: ELECTION_TICK,
        max_election_tick: ELECTION_TICK + 1,
        applied: 0,
        max_size_per_msg: 1024,
        max_inflight_msgs: 16,
        pre_vote: setup.pre_vote,
        check_quorum: setup.check_quorum,
        read_only_option: ReadOnlyOption::Safe,
        ..Config::default()
    };
    let raw = compat::raw_node(&config, storage.clone());
    let mut peer = Peer {
        id,
        raw,
        storage,
        wal,
        raft_sock: Socket::bind(RAFT_PORT).expect("the raft port is free"),
        client_sock: Socket::bind(CLIENT_PORT).expect("the client port is free"),
        observer,
        setup,
        kv: BTreeMap::new(),
        sessions: BTreeMap::new(),
        applied: 1,
        waiting: BTreeMap::new(),
        reads: BTreeMap::new(),
        confirmed_reads: Vec::new(),
        led: 0,
    };
    peer.run().await;
}

fn next_tick() -> sim_core::time::Instant {
    let ms = sim::draw(|s| s.range_inclusive("raftrs.tick_ms", TICK_MS_MIN, TICK_MS_MAX));
    now() + Duration::from_millis(ms)
}

impl Peer {
    async fn run(&mut self) {
        let mut tick_at = next_tick();
        // Committed entries a restarted node must apply again come in its first ready.
        self.process_readies().await;
        loop {
            let event = {
                let mut raft_recv = pin!(self.raft_sock.recv());
                let mut client_recv = pin!(self.client_sock.recv());
                let mut timer = pin!(sleep_until(tick_at));
                poll_fn(|cx| {
                    if let Poll::Ready((_, m)) = raft_recv.as_mut().poll(cx) {
                        let m = m.into_inner().unwrap_or_else(|shared| shared.get().clone());
                        return Poll::Ready(Event::Raft(m));
                    }
                    if let Poll::Ready((from, w)) = client_recv.as_mut().poll(cx) {
                        return Poll::Ready(Event::Client(from, w));
                    }
                    timer.as_mut().poll(cx).map(|()| Event::Tick)
                })
                .await
            };
            match event {
                Event::Raft(m) => {
                    // Errors are raft refusing a message (a local type from the wire, a peer
                    // it does not know): nothing to do.
                    let _ = self.raw.step(m);
                }
                Event::Client(from, Wire::Request(cmd)) => self.request(from, cmd),
                Event::Client(_, Wire::Reply { .. }) => {}
                Event::Tick => {
                    self.raw.tick();
                    tick_at = next_tick();
                }
            }
            self.report_leadership();
            self.process_readies().await;
            let role = match self.raw.raft.state {
                StateRole::Follower => 0,
                StateRole::PreCandidate => 1,
                StateRole::Candidate => 2,
                StateRole::Leader => 3,
            };
            node::abstract_state_at(self.raw.raft.term, role);
        }
    }

    fn report_leadership(&mut self) {
        let raft = &self.raw.raft;
        if raft.state != StateRole::Leader || raft.term == self.led {
            return;
        }
        self.led = raft.term;
        sim::note(&format!("n{} leads term {}", self.id, raft.term));
        let log = &raft.raft_log;
        self.observer
            .borrow_mut()
            .became_leader(self.id, raft.term, |index| {
                #[cfg(not(feature = "storage-v07"))]
                let entries = log.entries(index, 0);
                #[cfg(feature = "storage-v07")]
                let entries = log.entries(index, 0, raft::GetEntriesContext::empty(false));
                let e = entries.ok()?.into_iter().next()?;
                (e.index == index).then(|| entry_id(&e))
            });
    }

    fn send(&self, msgs: Vec<Message>) {
        for m in msgs {
            let to = raft_addr(m.to);
            self.raft_sock.send(to, Foreign::by_debug(m));
        }
    }

    async fn process_readies(&mut self) {
        while self.raw.has_ready() {
            let (round, pending) = compat::take(&mut self.raw);
            self.send(round.send_now);
            if !round.entries.is_empty() || round.hard_state.is_some() || round.must_sync {
                self.wal
                    .append(&round.entries, round.hard_state.as_ref(), round.must_sync)
                    .await;
            }
            self.storage.append(&round.entries);
            if let Some(hs) = &round.hard_state {
                self.storage.set_hard_state(hs);
            }
            self.send(round.send_after);
            self.apply(round.committed);
            for rs in round.read_states {
                if let Some((client, seq)) = decode_ctx(&rs.request_ctx) {
                    self.confirmed_reads.push((rs.index, client, seq));
                }
            }
            let (msgs, committed) = compat::finish(&mut self.raw, pending);
            self.send(msgs);
            self.apply(committed);
            compat::finish_apply(&mut self.raw);
            self.serve_reads();
        }
    }

    fn apply(&mut self, entries: Vec<Entry>) {
        for e in entries {
            if e.index <= self.applied {
                continue;
            }
            assert_eq!(
                e.index,
                self.applied + 1,
                "invariant: raft hands out committed entries in order"
            );
            self.applied = e.index;
            self.observer
                .borrow_mut()
                .applied(self.id, e.index, entry_id(&e), self.raw.raft.term);
            let Some(cmd) = Command::decode(&e.data[..]) else {
                continue;
            };
            let out = match self.sessions.get(&cmd.client) {
                Some(&(seq, out)) if seq == cmd.seq => Some(out),
                Some(&(seq, _)) if seq > cmd.seq => None,
                _ => {
                    let out = self.execute(cmd.op);
                    self.sessions.insert(cmd.client, (cmd.seq, out));
                    Some(out)
                }
            };
            if let (Some(out), Some(to)) = (out, self.waiting.remove(&(cmd.client, cmd.seq))) {
                self.reply(to, cmd.seq, Answer::Done(out));
            }
        }
    }

    fn execute(&mut self, op: KvInput) -> KvOutput {
        match op {
            KvInput::Get { key } => KvOutput::Value(self.kv.get(&key).copied()),
            KvInput::Put { key, value } => {
                self.kv.insert(key, value);
                KvOutput::Done
            }
            KvInput::Cas { key, from, to } => {
                let hit = self.kv.get(&key) == Some(&from);
                if hit {
                    self.kv.insert(key, to);
                }
                KvOutput::Swapped(hit)
            }
        }
    }

    fn serve_reads(&mut self) {
        let applied = self.applied;
        let (ready, later): (Vec<_>, Vec<_>) = self
            .confirmed_reads
            .drain(..)
            .partition(|&(index, _, _)| index <= applied);
        self.confirmed_reads = later;
        for (_, client, seq) in ready {
            if let Some((to, key)) = self.reads.remove(&(client, seq)) {
                let value = self.kv.get(&key).copied();
                self.reply(to, seq, Answer::Done(KvOutput::Value(value)));
            }
        }
    }

    fn reply(&self, to: Addr, seq: u64, answer: Answer) {
        self.client_sock.send(to, Wire::Reply { seq, answer });
    }

    fn request(&mut self, from: Addr, cmd: Command) {
        let raft = &self.raw.raft;
        if raft.state != StateRole::Leader {
            let hint = (raft.leader_id != 0).then(|| (raft.leader_id - 1) as u32);
            self.reply(from, cmd.seq, Answer::NotLeader(hint));
            return;
        }
        match cmd.op {
            KvInput::Get { key } if self.setup.read_index => {
                self.reads.insert((cmd.client, cmd.seq), (from, key));
                self.raw.read_index(encode_ctx(cmd.client, cmd.seq));
            }
            _ => {
                self.waiting.insert((cmd.client, cmd.seq), from);
                if self.raw.propose(Vec::new(), cmd.encode()).is_err() {
                    // Dropped (a leadership transfer in progress): the client tries again.
                    self.waiting.remove(&(cmd.client, cmd.seq));
                    self.reply(from, cmd.seq, Answer::NotLeader(None));
                }
            }
        }
    }
}

fn encode_ctx(client: u32, seq: u64) -> Vec<u8> {
    let mut ctx = client.to_le_bytes().to_vec();
    ctx.extend_from_slice(&seq.to_le_bytes());
    ctx
}

fn decode_ctx(ctx: &[u8]) -> Option<(u32, u64)> {
    if ctx.len() != 12 {
        return None;
    }
    let client = u32::from_le_bytes(ctx[..4].try_into().ok()?);
    let seq = u64::from_le_bytes(ctx[4..].try_into().ok()?);
    Some((client, seq))
}
