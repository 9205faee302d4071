//! Chain replication (van Renesse and Schneider, 2004), written against sim-core's public API
//! as a crate of yours would be: three servers in a chain, head -> middle -> tail, and two
//! clients.
//!
//! * A **write** goes to the head, which gives it the next sequence number, applies it and
//!   sends it down the chain. Each server applies updates in sequence order (an update that
//!   arrives early waits for the ones before it) and passes them on; the tail acknowledges
//!   *through* the last update it applied, and each server passes that acknowledgement up.
//!   The head answers the client when the acknowledgement covers its write: the write is then
//!   on every server.
//! * A **read** goes to the tail, which holds exactly the writes the head has acknowledged or
//!   is about to: reads are linearizable without any coordination.
//! * Datagrams can be lost, duplicated, delayed and reordered (the input draws the faults), so
//!   a server sends an update again when its acknowledgement is overdue, and clients retry
//!   with the same request id (the head answers a retried write without sequencing it twice).
//!
//! **Invariant** `linearizable`: the clients' history of reads and writes, checked by
//! `sim_core::check` once both clients are done.
//!
//! **Planted bug** `tail-reapplies-stale-resend`: the tail recognises a re-sent update as a
//! duplicate only when it is the *last* one it applied; an older one that arrives again (its
//! acknowledgement was lost, so the middle sent it again, and the next update has landed in
//! the meantime) is applied a second time, putting an old value back. A read then returns a
//! value that was already overwritten by an acknowledged write. It needs a lost or late
//! acknowledgement, two writes to one key in a row, and a read of that key before the next
//! write to it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use sim_core::check::kv::{Kv, KvInput, KvOutput};
use sim_core::check::{self, OpLog};
use sim_core::choice::Choices;
use sim_core::net::{Addr, Faults, Socket};
use sim_core::sim::{self, Sim};
use sim_core::system::{BugSpec, RunOptions, SystemSpec};
use sim_core::time::timeout;

/// The registration the `sim` binary, the tests and the fuzz target share.
pub const SPEC: SystemSpec = SystemSpec::new(
    "chain",
    "chain replication, head -> middle -> tail, two clients; invariant: linearizable",
    build,
)
.with_bugs(&[BugSpec {
    name: "tail-reapplies-stale-resend",
    about: "the tail applies again a re-sent update older than its last one",
}]);

const PORT: u16 = 1;
const SERVERS: [&str; 3] = ["head", "middle", "tail"];
const CLIENTS: [&str; 2] = ["c1", "c2"];
/// How long a server waits for an update's acknowledgement before sending it again.
const RESEND_AFTER: Duration = Duration::from_millis(150);
/// How often a server looks for overdue updates.
const RESEND_TICK: Duration = Duration::from_millis(50);
/// How long a client waits for an answer before asking again.
const CLIENT_RETRY: Duration = Duration::from_millis(400);
/// Attempts per client operation; after the last the outcome stays unknown.
const CLIENT_ATTEMPTS: u32 = 6;
/// Keys the workload touches: few, so writes meet.
const KEYS: u64 = 8;

/// What the servers and clients say to each other.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Msg {
    /// Client -> head.
    Write {
        /// The client's id for this write; a retry repeats it.
        request: u64,
        /// The key.
        key: u64,
        /// The value.
        value: u64,
    },
    /// Head -> client: the write is on every server.
    Written {
        /// The write's request id.
        request: u64,
    },
    /// Client -> tail.
    Read {
        /// The client's id for this read.
        request: u64,
        /// The key.
        key: u64,
    },
    /// Tail -> client.
    Value {
        /// The read's request id.
        request: u64,
        /// The key's value at the tail.
        value: Option<u64>,
    },
    /// A server -> the next one down the chain.
    Update {
        /// The update's place in the order the head gave.
        seq: u64,
        /// The key.
        key: u64,
        /// The value.
        value: u64,
    },
    /// A server -> the one before it: every update through `seq` is on the tail.
    Ack {
        /// The last update the tail applied.
        seq: u64,
    },
}

fn addr(name: &str) -> Addr {
    Addr::named(name, PORT)
}

fn build(opts: &RunOptions) -> Sim {
    // Loss, duplication, reordering, partitions and clogs, as the input draws them.
    let mut sim = Sim::new(opts.config_with_faults(Faults::Swarm));
    let stale_resend_bug = opts.bug_is("tail-reapplies-stale-resend");
    for (position, name) in SERVERS.iter().enumerate() {
        sim.node(name, move |_| server(position, stale_resend_bug));
    }
    let history = Rc::new(RefCell::new(History::default()));
    for (index, name) in CLIENTS.iter().enumerate() {
        let h = history.clone();
        history.borrow_mut().clients_running += 1;
        sim.client(name, move |_| client(name, index as u64, h.clone()));
    }
    sim.invariant("linearizable", move || history.borrow_mut().check());
    sim
}

/// The clients' operations, checked once when the last client is done.
#[derive(Default)]
struct History {
    ops: OpLog<KvInput, KvOutput>,
    clients_running: usize,
    verdict: Option<Result<(), String>>,
}

impl History {
    fn check(&mut self) -> Result<(), String> {
        if self.clients_running > 0 {
            return Ok(());
        }
        let ops = &self.ops;
        self.verdict
            .get_or_insert_with(|| check::linearizable(&Kv, ops).map_err(|e| e.to_string()))
            .clone()
    }
}

/// One server's state. The head sequences writes, every server applies updates in order.
#[derive(Default)]
struct Server {
    store: BTreeMap<u64, u64>,
    /// The last update applied here.
    applied: u64,
    /// Updates that arrived ahead of their turn.
    early: BTreeMap<u64, (u64, u64)>,
    /// Updates passed down and not yet acknowledged: (key, value, when last sent).
    unacked: BTreeMap<u64, (u64, u64, sim_core::time::Instant)>,
    /// The last update known to be on the tail.
    acked: u64,
    /// Head only: request id -> sequence number, and who asked.
    sequenced: BTreeMap<u64, (u64, Addr)>,
}

async fn server(position: usize, stale_resend_bug: bool) {
    let sock = Socket::<Msg>::bind(PORT).expect("port free");
    let next = SERVERS.get(position + 1).map(|n| addr(n));
    let prev = position.checked_sub(1).map(|p| addr(SERVERS[p]));
    let is_tail = next.is_none();
    let mut s = Server::default();
    loop {
        let Ok((from, msg)) = timeout(RESEND_TICK, sock.recv()).await else {
            // Overdue acknowledgements: send those updates again.
            let now = sim_core::time::now();
            if let Some(next) = next {
                for (&seq, (key, value, sent)) in s.unacked.iter_mut() {
                    if now.duration_since(*sent) >= RESEND_AFTER {
                        sock.send(
                            next,
                            Msg::Update {
                                seq,
                                key: *key,
                                value: *value,
                            },
                        );
                        *sent = now;
                    }
                }
            }
            continue;
        };
        match msg {
            Msg::Write {
                request,
                key,
                value,
            } if position == 0 => {
                if let Some(&(seq, _)) = s.sequenced.get(&request) {
                    // A retry: answer if it is already on every server, else wait for the ack.
                    if seq <= s.acked {
                        sock.send(from, Msg::Written { request });
                    }
                    continue;
                }
                let seq = s.applied + 1;
                s.applied = seq;
                s.store.insert(key, value);
                s.sequenced.insert(request, (seq, from));
                s.unacked.insert(seq, (key, value, sim_core::time::now()));
                if let Some(next) = next {
                    sock.send(next, Msg::Update { seq, key, value });
                }
            }
            Msg::Update { seq, key, value } => {
                let duplicate = if is_tail && stale_resend_bug {
                    seq == s.applied
                } else {
                    seq <= s.applied
                };
                if !duplicate {
                    s.early.insert(seq, (key, value));
                    // Apply what is now in order (the bug applies a stale one right away).
                    while let Some((&first, &(k, v))) = s.early.first_key_value() {
                        if first > s.applied + 1 {
                            break;
                        }
                        s.early.remove(&first);
                        s.store.insert(k, v);
                        s.applied = s.applied.max(first);
                        if let Some(next) = next {
                            s.unacked.insert(first, (k, v, sim_core::time::now()));
                            sock.send(
                                next,
                                Msg::Update {
                                    seq: first,
                                    key: k,
                                    value: v,
                                },
                            );
                        }
                    }
                }
                // Also for a duplicate: the acknowledgement it re-sends may be the lost one.
                let known_on_tail = if is_tail { s.applied } else { s.acked };
                if let Some(prev) = prev.filter(|_| is_tail || duplicate) {
                    sock.send(prev, Msg::Ack { seq: known_on_tail });
                }
            }
            Msg::Ack { seq } => {
                if seq <= s.acked {
                    continue;
                }
                let newly_acked = s.acked + 1..=seq;
                s.acked = seq;
                s.unacked.retain(|&pending, _| pending > seq);
                if let Some(prev) = prev {
                    sock.send(prev, Msg::Ack { seq });
                } else {
                    // The head: answer every write the acknowledgement newly covers.
                    for (&request, &(write_seq, client)) in &s.sequenced {
                        if newly_acked.contains(&write_seq) {
                            sock.send(client, Msg::Written { request });
                        }
                    }
                }
            }
            Msg::Read { request, key } if is_tail => {
                let value = s.store.get(&key).copied();
                sock.send(from, Msg::Value { request, value });
            }
            // Misrouted or a client's message at a server that does not serve it: dropped.
            _ => {}
        }
    }
}

async fn client(name: &'static str, index: u64, history: Rc<RefCell<History>>) {
    let sock = Socket::<Msg>::bind(PORT).expect("port free");
    let ops = 2 + sim::draw(|s| s.below("chain.client_ops", 7));
    for op in 0..ops {
        let request = index * 1_000 + op;
        let key = sim::draw(|s| s.below("chain.key", KEYS));
        let is_read = sim::draw(|s| s.below("chain.read", 2)) == 0;
        let (to, msg, input) = if is_read {
            ("tail", Msg::Read { request, key }, KvInput::Get { key })
        } else {
            // Values are unique, so a stale read is visible.
            let value = request + 1;
            let msg = Msg::Write {
                request,
                key,
                value,
            };
            ("head", msg, KvInput::Put { key, value })
        };
        let pending = history.borrow_mut().ops.call(name, input);
        let mut output = None;
        'attempts: for _ in 0..CLIENT_ATTEMPTS {
            sock.send(addr(to), msg.clone());
            // Answers to earlier requests may still arrive: skip them.
            while let Ok((_, answer)) = timeout(CLIENT_RETRY, sock.recv()).await {
                match answer {
                    Msg::Written { request: r } if r == request => {
                        output = Some(KvOutput::Done);
                        break 'attempts;
                    }
                    Msg::Value { request: r, value } if r == request => {
                        output = Some(KvOutput::Value(value));
                        break 'attempts;
                    }
                    _ => {}
                }
            }
        }
        // No answer after every attempt: the write may or may not have happened.
        if let Some(output) = output {
            history.borrow_mut().ops.ret(pending, output);
        }
    }
    history.borrow_mut().clients_running -= 1;
}
