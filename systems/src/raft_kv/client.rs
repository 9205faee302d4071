//! The workload: clients issuing get, put and compare-and-set to any replica, following
//! redirects, retrying on silence, and giving up after a deadline — after which the outcome
//! is indeterminate (the request may still be applied later, or never).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use sim_core::check::kv::{KvInput, KvOutput};
use sim_core::choice::Choices;
use sim_core::net::Socket;
use sim_core::sim;
use sim_core::time::{now, sleep, timeout};

use super::invariants::Observer;
use super::log::Command;
use super::node::{addr, Answer, Msg};
use super::{KEYS, PORT};

/// How long a client tries one operation before giving up on it.
const OP_TIMEOUT: Duration = Duration::from_millis(1_000);
/// How long it waits for one replica's answer before trying the next.
const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(100);
/// Pause before retrying when no replica knows a leader.
const NO_LEADER_BACKOFF: Duration = Duration::from_millis(20);

/// Client number `id` (its requests carry it as their session) against `replicas` replicas.
pub async fn client(id: u32, name: &'static str, replicas: u32, observer: Rc<RefCell<Observer>>) {
    let sock = Socket::<Msg>::bind(PORT).expect("the client port is free");
    let ops = 1 + sim::draw(|s| s.below("raft.client_ops", 6));
    let mut target = sim::draw(|s| s.below("raft.first_replica", u64::from(replicas))) as u32;
    // The last value this client knows of per key: what its compare-and-sets expect.
    let mut known: BTreeMap<u64, u64> = BTreeMap::new();
    for seq in 1..=ops {
        let key = sim::draw(|s| s.below("raft.key", KEYS));
        let value = u64::from(id) * 1_000 + seq;
        let op = match sim::draw(|s| s.below("raft.op", 3)) {
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
            sock.send(addr(target), Msg::Request(command));
            let wait = ATTEMPT_TIMEOUT.min(deadline.saturating_duration_since(now()));
            let answer = timeout(wait, async {
                loop {
                    if let (_, Msg::Reply { seq: s, answer }) = sock.recv().await {
                        if s == seq {
                            return answer;
                        }
                    }
                }
            })
            .await;
            match answer {
                Ok(Answer::Done(out)) => output = Some(out),
                Ok(Answer::NotLeader(Some(leader))) if leader != target => target = leader,
                Ok(Answer::NotLeader(_)) => {
                    target = (target + 1) % replicas;
                    sleep(NO_LEADER_BACKOFF).await;
                }
                Err(_) => target = (target + 1) % replicas,
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
        if sim::draw(|s| s.chance("raft.quiet", 1, 4)) {
            let quiet_ms = sim::draw(|s| s.range_inclusive("raft.quiet_ms", 1, 1_000));
            sleep(Duration::from_millis(quiet_ms)).await;
        }
    }
    observer.borrow_mut().clients.finished();
}
