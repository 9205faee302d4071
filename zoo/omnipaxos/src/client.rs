//! The workload: clients issuing get, put and compare-and-set, each appended to the log by
//! whichever server they ask, retrying on silence at the next server, and giving up after a
//! deadline — after which the outcome is indeterminate (the command may still be decided
//! and applied later, or never).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use sim_core::check::kv::{KvInput, KvOutput};
use sim_core::choice::Choices;
use sim_core::net::Socket;
use sim_core::sim;
use sim_core::time::{now, sleep, timeout};

use crate::invariants::Observer;
use crate::server::{client_addr, ClientMsg, CLIENT_PORT};
use crate::{Cmd, KEYS};

/// How long a client tries one operation before giving up on it.
const OP_TIMEOUT: Duration = Duration::from_millis(1_000);
/// How long it waits for one server's answer before asking the next.
const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(100);
/// Most operations per client.
const OPS_MAX: u64 = 8;

/// Client number `id` against `servers` servers.
pub async fn client(id: u32, name: &'static str, servers: u64, observer: Rc<RefCell<Observer>>) {
    let sock = Socket::<ClientMsg>::bind(CLIENT_PORT).expect("the client port is free");
    let ops = 1 + sim::draw(|s| s.below("omnipaxos.client_ops", OPS_MAX));
    let mut target = 1 + sim::draw(|s| s.below("omnipaxos.first_server", servers));
    // The last value this client knows of per key: what its compare-and-sets expect.
    let mut known: BTreeMap<u64, u64> = BTreeMap::new();
    for seq in 1..=ops {
        let key = sim::draw(|s| s.below("omnipaxos.key", KEYS));
        let value = u64::from(id) * 1_000 + seq;
        let op = match sim::draw(|s| s.below("omnipaxos.op", 3)) {
            0 => KvInput::Get { key },
            1 => KvInput::Put { key, value },
            _ => KvInput::Cas {
                key,
                from: known.get(&key).copied().unwrap_or(0),
                to: value,
            },
        };
        let pending = observer.borrow_mut().clients.call(name, op);
        let cmd = Cmd {
            client: id,
            seq,
            op,
        };
        let deadline = now() + OP_TIMEOUT;
        let mut output = None;
        while output.is_none() && now() < deadline {
            sock.send(client_addr(target), ClientMsg::Request(cmd));
            let wait = ATTEMPT_TIMEOUT.min(deadline.saturating_duration_since(now()));
            let answer = timeout(wait, async {
                loop {
                    if let (_, ClientMsg::Reply { seq: s, out }) = sock.recv().await {
                        if s == seq {
                            return out;
                        }
                    }
                }
            })
            .await;
            match answer {
                Ok(out) => output = Some(out),
                Err(_) => target = target % servers + 1,
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
        if sim::draw(|s| s.chance("omnipaxos.quiet", 1, 4)) {
            let quiet_ms = sim::draw(|s| s.range_inclusive("omnipaxos.quiet_ms", 1, 1_000));
            sleep(Duration::from_millis(quiet_ms)).await;
        }
    }
    observer.borrow_mut().clients.finished();
}
