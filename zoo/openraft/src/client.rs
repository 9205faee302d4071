//! The workload: clients issuing get, put and compare-and-set to the replica they believe
//! leads, following redirects, retrying on silence, and giving up after a deadline, after
//! which the outcome is indeterminate (the request may still be applied later, or never).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use sim_core::check::kv::{KvInput, KvOutput};
use sim_core::choice::Choices;
use sim_core::net::rpc::RpcClient;
use sim_core::net::Addr;
use sim_core::sim;
use sim_core::time::{now, sleep};

use crate::invariants::Observer;
use crate::types::{ClientReply, ClientRequest, Command};
use crate::{node_name, CLIENT_PORT, KEYS, REPLICAS};

/// How long a client tries one operation before giving up on it.
const OP_TIMEOUT: Duration = Duration::from_millis(2_000);
/// How long it waits for one replica's answer before trying the next.
const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(300);
/// Pause before retrying when a replica knows no leader or cannot serve.
const BACKOFF: Duration = Duration::from_millis(20);

/// Client number `id` (its requests carry it as their session).
pub async fn client(id: u32, name: &'static str, observer: Rc<RefCell<Observer>>) {
    let rpc = RpcClient::<ClientRequest, ClientReply>::bind(CLIENT_PORT)
        .expect("invariant: the client port is free");
    let replicas = REPLICAS.len() as u64;
    let ops = 1 + sim::draw(|s| s.below("openraft.client_ops", 6));
    let mut target = 1 + sim::draw(|s| s.below("openraft.first_replica", replicas));
    // The last value this client knows of per key: what its compare-and-sets expect.
    let mut known: BTreeMap<u64, u64> = BTreeMap::new();
    for seq in 1..=ops {
        let key = sim::draw(|s| s.below("openraft.key", KEYS));
        let value = u64::from(id) * 1_000 + seq;
        let op = match sim::draw(|s| s.below("openraft.op", 3)) {
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
            let wait = ATTEMPT_TIMEOUT.min(deadline.saturating_duration_since(now()));
            let to = Addr::named(&node_name(target), CLIENT_PORT);
            match rpc.call(to, command, wait).await {
                Ok(ClientReply::Done(out)) => output = Some(out),
                Ok(ClientReply::NotLeader(Some(leader))) if leader != target => target = leader,
                Ok(ClientReply::NotLeader(_)) | Ok(ClientReply::Unavailable) => {
                    target = 1 + target % replicas;
                    sleep(BACKOFF).await;
                }
                Err(_) => target = 1 + target % replicas,
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
        if sim::draw(|s| s.chance("openraft.quiet", 1, 4)) {
            let quiet_ms = sim::draw(|s| s.range_inclusive("openraft.quiet_ms", 1, 1_000));
            sleep(Duration::from_millis(quiet_ms)).await;
        }
    }
    observer.borrow_mut().clients.finished();
}
