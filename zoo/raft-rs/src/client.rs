//! The workload: clients issuing get, put and compare-and-set to the node they believe leads,
//! following redirects, retrying on silence, and giving up after a deadline — after which the
//! outcome is indeterminate (the request may still be applied later, or never).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use sim_core::check::kv::{KvInput, KvOutput};
use sim_core::choice::Choices;
use sim_core::net::{Addr, Socket};
use sim_core::sim;
use sim_core::time::{now, sleep, timeout};

use crate::observer::Observer;
use crate::{CLIENT_PORT, KEYS, NODES};

/// How long a client tries one operation before giving up on it.
const OP_TIMEOUT: Duration = Duration::from_millis(1_000);
/// How long it waits for one node's answer before trying the next.
const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(100);
/// Pause before retrying when no node knows a leader.
const NO_LEADER_BACKOFF: Duration = Duration::from_millis(20);

/// A client's request, as it travels and as it is proposed (encoded) into the log.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub struct Command {
    /// The client's number (its session).
    pub client: u32,
    /// Its sequence number within the session.
    pub seq: u64,
    /// What it asks.
    pub op: KvInput,
}

impl Command {
    /// The bytes proposed to raft.
    pub fn encode(&self) -> Vec<u8> {
        let (kind, key, a, b) = match self.op {
            KvInput::Get { key } => (0u8, key, 0, 0),
            KvInput::Put { key, value } => (1, key, value, 0),
            KvInput::Cas { key, from, to } => (2, key, from, to),
        };
        let mut out = Vec::with_capacity(45);
        out.extend_from_slice(&self.client.to_le_bytes());
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.push(kind);
        for w in [key, a, b] {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// The command in an entry's data (`None` for raft's own empty entries).
    pub fn decode(bytes: &[u8]) -> Option<Command> {
        if bytes.len() != 37 {
            return None;
        }
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
        let client = u32::from_le_bytes(bytes[0..4].try_into().expect("4"));
        let seq = word(4);
        let (key, a, b) = (word(13), word(21), word(29));
        let op = match bytes[12] {
            0 => KvInput::Get { key },
            1 => KvInput::Put { key, value: a },
            2 => KvInput::Cas {
                key,
                from: a,
                to: b,
            },
            _ => return None,
        };
        Some(Command { client, seq, op })
    }
}

/// Client ↔ node messages.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Wire {
    /// Client → node.
    Request(Command),
    /// Node → client.
    Reply {
        /// The request answered.
        seq: u64,
        /// Its answer.
        answer: Answer,
    },
}

/// A node's answer to a client.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Answer {
    /// Applied (or read), with this result.
    Done(KvOutput),
    /// Not the leader; try this node (an index into the cluster), if known.
    NotLeader(Option<u32>),
}

/// Client number `id` (its requests carry it as their session) against `nodes` nodes.
pub async fn client(id: u32, name: &'static str, nodes: u32, observer: Rc<RefCell<Observer>>) {
    let sock = Socket::<Wire>::bind(CLIENT_PORT).expect("the client port is free");
    let ops = 1 + sim::draw(|s| s.below("raftrs.client_ops", 6));
    let mut target = sim::draw(|s| s.below("raftrs.first_node", u64::from(nodes))) as u32;
    // The last value this client knows of per key: what its compare-and-sets expect.
    let mut known: BTreeMap<u64, u64> = BTreeMap::new();
    for seq in 1..=ops {
        let key = sim::draw(|s| s.below("raftrs.key", KEYS));
        let value = u64::from(id) * 1_000 + seq;
        let op = match sim::draw(|s| s.below("raftrs.op", 3)) {
            0 => KvInput::Get { key },
            1 => KvInput::Put { key, value },
            _ => KvInput::Cas {
                key,
                from: known.get(&key).copied().unwrap_or(0),
                to: value,
            },
        };
        let pending = observer.borrow_mut().clients.call(name, op);
        let command = Command {
            client: id,
            seq,
            op,
        };
        let deadline = now() + OP_TIMEOUT;
        let mut output = None;
        while output.is_none() && now() < deadline {
            sock.send(
                Addr::named(NODES[target as usize], CLIENT_PORT),
                Wire::Request(command),
            );
            let wait = ATTEMPT_TIMEOUT.min(deadline.saturating_duration_since(now()));
            let answer = timeout(wait, async {
                loop {
                    if let (_, Wire::Reply { seq: s, answer }) = sock.recv().await {
                        if s == seq {
                            return answer;
                        }
                    }
                }
            })
            .await;
            match answer {
                Ok(Answer::Done(out)) => output = Some(out),
                Ok(Answer::NotLeader(Some(leader))) if leader != target && leader < nodes => {
                    target = leader
                }
                Ok(Answer::NotLeader(_)) => {
                    target = (target + 1) % nodes;
                    sleep(NO_LEADER_BACKOFF).await;
                }
                Err(_) => target = (target + 1) % nodes,
            }
        }
        match output {
            Some(out) => {
                match (op, out) {
                    (KvInput::Get { key }, KvOutput::Value(Some(v))) => {
                        known.insert(key, v);
                    }
                    (KvInput::Put { key, value }, _) => {
                        known.insert(key, value);
                    }
                    (KvInput::Cas { key, to, .. }, KvOutput::Swapped(true)) => {
                        known.insert(key, to);
                    }
                    _ => {}
                }
                observer.borrow_mut().clients.ret(pending, out);
            }
            None => observer.borrow_mut().clients.time_out(pending),
        }
        // Leaving the system quiet is a choice too.
        if sim::draw(|s| s.chance("raftrs.quiet", 1, 4)) {
            let quiet_ms = sim::draw(|s| s.range_inclusive("raftrs.quiet_ms", 1, 1_000));
            sleep(Duration::from_millis(quiet_ms)).await;
        }
    }
    observer.borrow_mut().clients.finished();
}
