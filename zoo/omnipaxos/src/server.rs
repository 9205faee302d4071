//! One server: an `OmniPaxos` instance fed from sim-core's network and virtual time, and the
//! key-value state machine it drives from the decided log.
//!
//! The server's one task waits for the first of: a peer message or session break, a client
//! request, or the next tick. After each, it sends what `outgoing_messages()` holds, has the
//! [`Observer`] check its log, and applies newly decided commands, answering the clients that
//! asked this server. Everything in memory here (the `OmniPaxos` struct, the state machine,
//! who waits for what) is lost at a crash; the log, promise and decided index are in the
//! server's [`Durable`] record, from which a restart rebuilds everything (the state machine
//! by replaying the decided log from index 0).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::pin::pin;
use std::rc::Rc;
use std::time::Duration;

use omnipaxos::messages::Message;
use omnipaxos::{ClusterConfig, OmniPaxos, OmniPaxosConfig, ServerConfig};
use sim_core::check::kv::{KvInput, KvOutput};
use sim_core::net::{reachable, Addr, Foreign, SessionEvent, SessionSocket, Socket};
use sim_core::select::first_ready;
use sim_core::time::{now, sleep_until};
use sim_core::{rt, sim};

use crate::invariants::Observer;
use crate::storage::{Durable, SimStorage};
use crate::{Cmd, SERVERS};

/// The port servers talk to each other on.
pub const PEER_PORT: u16 = 1;
/// The port servers take client requests on.
pub const CLIENT_PORT: u16 = 2;
/// Virtual time between two calls to `tick()`.
pub const TICK: Duration = Duration::from_millis(10);
/// Ticks per leader-election round (omnipaxos's `election_tick_timeout`).
pub const ELECTION_TICKS: u64 = 10;
/// Ticks before omnipaxos resends what it considers lost (`resend_message_tick_timeout`).
pub const RESEND_TICKS: u64 = 20;

/// What travels between servers: omnipaxos's own message, hashed by its `Debug` text.
pub type PeerMsg = Foreign<Message<Cmd>>;

/// Between clients and servers.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum ClientMsg {
    /// Client → server: append this command and answer once it is applied.
    Request(Cmd),
    /// Server → client: the command `seq` was applied with this result.
    Reply {
        /// The command's operation number.
        seq: u64,
        /// Its result.
        out: KvOutput,
    },
}

/// Server `pid`'s address for its peers.
pub fn peer_addr(pid: u64) -> Addr {
    Addr::named(SERVERS[pid as usize - 1], PEER_PORT)
}

/// Server `pid`'s address for clients.
pub fn client_addr(pid: u64) -> Addr {
    Addr::named(SERVERS[pid as usize - 1], CLIENT_PORT)
}

enum Event {
    Peer(SessionEvent<PeerMsg>),
    Client(Addr, ClientMsg),
    Tick,
}

/// Server `pid` of `n`'s whole life from one start.
pub async fn server(
    pid: u64,
    n: u64,
    durable: Rc<RefCell<Durable<Cmd>>>,
    observer: Rc<RefCell<Observer>>,
) {
    let config = OmniPaxosConfig {
        cluster_config: ClusterConfig {
            configuration_id: 1,
            nodes: (1..=n).collect(),
            flexible_quorum: None,
        },
        server_config: ServerConfig {
            pid,
            election_tick_timeout: ELECTION_TICKS,
            resend_message_tick_timeout: RESEND_TICKS,
            ..ServerConfig::default()
        },
    };
    let op = config
        .build(SimStorage(durable.clone()))
        .expect("a valid omnipaxos configuration");
    let mut server = Server {
        pid,
        n,
        op,
        peers: SessionSocket::bind(PEER_PORT).expect("the peer port is free"),
        clients: Socket::bind(CLIENT_PORT).expect("the client port is free"),
        kv: BTreeMap::new(),
        sessions: BTreeMap::new(),
        applied: 0,
        waiting: BTreeMap::new(),
        reconnecting: BTreeSet::new(),
        reconnected: Rc::new(RefCell::new(Vec::new())),
        observer,
        durable,
        #[cfg(not(feature = "atomic-storage"))]
        sync_check: None,
    };
    // A restarted server's log is checked against what it decided before its crash.
    server.after_event();
    let mut next_tick = now() + TICK;
    loop {
        let event = {
            let mut peer = pin!(async { Event::Peer(server.peers.recv().await) });
            let mut client = pin!(async {
                let (from, msg) = server.clients.recv().await;
                Event::Client(from, msg)
            });
            let mut tick = pin!(async {
                sleep_until(next_tick).await;
                Event::Tick
            });
            first_ready([peer.as_mut(), client.as_mut(), tick.as_mut()])
                .await
                .1
        };
        match event {
            Event::Peer(SessionEvent::Message { msg, .. }) => {
                #[cfg(not(feature = "atomic-storage"))]
                {
                    let log_len = server.durable.borrow().log.len() as u64;
                    server.sync_check = SyncCheck::of(msg.get(), log_len);
                }
                server.op.handle_incoming(msg.get().clone());
            }
            Event::Peer(SessionEvent::Broken { peer }) => {
                // Server `s{pid}` is node id `pid - 1`.
                server.broken(u64::from(peer.node.0) + 1);
            }
            Event::Client(from, ClientMsg::Request(cmd)) => server.request(from, cmd),
            Event::Client(_, ClientMsg::Reply { .. }) => {}
            Event::Tick => {
                let back: Vec<u64> = std::mem::take(&mut *server.reconnected.borrow_mut());
                for pid in back {
                    server.reconnecting.remove(&pid);
                    server.op.reconnected(pid);
                }
                server.op.tick();
                next_tick += TICK;
            }
        }
        server.after_event();
    }
}

struct Server {
    pid: u64,
    n: u64,
    op: OmniPaxos<Cmd, SimStorage<Cmd>>,
    peers: SessionSocket<PeerMsg>,
    clients: Socket<ClientMsg>,
    /// The state machine.
    kv: BTreeMap<u64, u64>,
    /// Per client: its last applied command and its result (each command applied once).
    sessions: BTreeMap<u32, (u64, KvOutput)>,
    /// Decided entries applied so far.
    applied: u64,
    /// (client, seq) → where to answer.
    waiting: BTreeMap<(u32, u64), Addr>,
    /// Peers whose session broke and that are not reachable again yet.
    reconnecting: BTreeSet<u64>,
    /// Peers reachable again since the last tick: told to omnipaxos at the next one.
    reconnected: Rc<RefCell<Vec<u64>>>,
    observer: Rc<RefCell<Observer>>,
    /// The server's durable record (read by the AcceptSync check only).
    #[cfg_attr(feature = "atomic-storage", allow(dead_code))]
    durable: Rc<RefCell<Durable<Cmd>>>,
    /// The AcceptSync being handled, if it starts past the end of this server's log.
    #[cfg(not(feature = "atomic-storage"))]
    sync_check: Option<SyncCheck>,
}

/// The `accept-sync-within-log` check (releases up to 0.2.2, whose `AcceptSync` carries
/// `sync_idx`): a follower that accepts an AcceptSync (answers it with an Accepted of the same
/// ballot) must hold the prefix the leader's suffix extends. With `sync_idx` past the end of
/// its log, `append_on_prefix` writes the suffix at the end of the log instead: every entry of
/// the suffix lands at a lower index than on the leader.
#[cfg(not(feature = "atomic-storage"))]
struct SyncCheck {
    leader: u64,
    n: omnipaxos::ballot_leader_election::Ballot,
    sync_idx: u64,
    log_len: u64,
}

#[cfg(not(feature = "atomic-storage"))]
impl SyncCheck {
    fn of(msg: &Message<Cmd>, log_len: u64) -> Option<SyncCheck> {
        use omnipaxos::messages::sequence_paxos::{PaxosMessage, PaxosMsg};
        match msg {
            Message::SequencePaxos(PaxosMessage {
                from,
                msg: PaxosMsg::AcceptSync(acc),
                ..
            }) if acc.decided_snapshot.is_none() && acc.sync_idx > log_len => Some(SyncCheck {
                leader: *from,
                n: acc.n,
                sync_idx: acc.sync_idx,
                log_len,
            }),
            _ => None,
        }
    }

    /// Whether `msg` is this server's answer accepting the AcceptSync.
    fn accepted_by(&self, msg: &Message<Cmd>) -> bool {
        use omnipaxos::messages::sequence_paxos::{PaxosMessage, PaxosMsg};
        matches!(msg, Message::SequencePaxos(PaxosMessage {
            to,
            msg: PaxosMsg::Accepted(a),
            ..
        }) if *to == self.leader && a.n == self.n)
    }
}

impl Server {
    /// The session with `pid` broke. omnipaxos is to be told `reconnected(pid)` once the
    /// connection is re-established: when the peer is reachable again (up, not cut off),
    /// at the next tick. Telling it at once would, with the peer down, resend into a link
    /// that breaks again at once, a storm of breaks at one instant.
    fn broken(&mut self, pid: u64) {
        if self.reconnecting.insert(pid) {
            let reconnected = self.reconnected.clone();
            rt::spawn(async move {
                if let Ok(up) = reachable(SERVERS[pid as usize - 1]) {
                    up.await;
                    reconnected.borrow_mut().push(pid);
                }
            });
        }
    }

    fn request(&mut self, from: Addr, cmd: Cmd) {
        match self.sessions.get(&cmd.client) {
            Some(&(seq, out)) if seq == cmd.seq => {
                self.clients
                    .send(from, ClientMsg::Reply { seq: cmd.seq, out });
            }
            Some(&(seq, _)) if seq > cmd.seq => {}
            _ => {
                self.waiting.insert((cmd.client, cmd.seq), from);
                // Refused only while a reconfiguration is pending (never, here); the client
                // retries on silence anyway.
                let _ = self.op.append(cmd);
            }
        }
    }

    fn after_event(&mut self) {
        #[cfg(not(feature = "atomic-storage"))]
        let outgoing = self.op.outgoing_messages();
        #[cfg(feature = "atomic-storage")]
        let outgoing = {
            let mut buffer = Vec::new();
            self.op.take_outgoing_messages(&mut buffer);
            buffer
        };
        #[cfg(not(feature = "atomic-storage"))]
        if let Some(check) = self.sync_check.take() {
            if outgoing.iter().any(|m| check.accepted_by(m)) {
                self.observer.borrow_mut().violate(
                    "accept-sync-within-log",
                    format!(
                        "s{} accepted an AcceptSync of s{} for ballot {:?} with sync index {} while its log held {} entries: the suffix went to index {}",
                        self.pid, check.leader, check.n, check.sync_idx, check.log_len, check.log_len
                    ),
                );
            }
        }
        for msg in outgoing {
            let to = msg.get_receiver();
            if (1..=self.n).contains(&to) {
                self.peers.send(peer_addr(to), Foreign::by_debug(msg));
            } else {
                // Addressed to no server (pid 0: a follower's leader not known yet). A real
                // network has no such peer to deliver it to.
                sim::note(&format!(
                    "s{} drops a message to pid {to}: {msg:?}",
                    self.pid
                ));
            }
        }
        let decided = self.observer.borrow_mut().check_server(self.pid, &self.op);
        while (self.applied as usize) < decided.len() {
            let cmd = decided[self.applied as usize];
            self.applied += 1;
            self.apply(cmd);
        }
    }

    fn apply(&mut self, cmd: Cmd) {
        if self
            .sessions
            .get(&cmd.client)
            .is_some_and(|&(seq, _)| seq >= cmd.seq)
        {
            return;
        }
        let out = match cmd.op {
            KvInput::Get { key } => KvOutput::Value(self.kv.get(&key).copied()),
            KvInput::Put { key, value } => {
                self.kv.insert(key, value);
                KvOutput::Done
            }
            KvInput::Cas { key, from, to } => {
                let swapped = self.kv.get(&key) == Some(&from);
                if swapped {
                    self.kv.insert(key, to);
                }
                KvOutput::Swapped(swapped)
            }
        };
        self.sessions.insert(cmd.client, (cmd.seq, out));
        if let Some(to) = self.waiting.remove(&(cmd.client, cmd.seq)) {
            self.clients
                .send(to, ClientMsg::Reply { seq: cmd.seq, out });
        }
    }
}
