//! A replica: openraft's `Raft` on the simulated disk and network, answering clients.
//!
//! At every start (the first and after each crash) the node recovers its log store from its
//! disk, starts `Raft`, and serves Raft RPCs and client requests. `n1` initializes the
//! cluster (all five replicas as voters) when it finds itself uninitialized; the others learn
//! the membership from the leader.
//!
//! Clients are served through the leader only: a write is `Raft::client_write` (answered once
//! applied), a read is `Raft::get_read_log_id` (the leader confirms with a quorum that it
//! still leads) followed by a wait until the local state machine applied up to the read log
//! id, then a read of it: what `Raft::ensure_linearizable` does, without its metrics
//! `Wait` (which waits in an unbiased `tokio::select!`).

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use openraft::error::{CheckIsLeaderError, ClientWriteError, RaftError};
use openraft::{BasicNode, SnapshotPolicy};
use sim_core::check::kv::{KvInput, KvOutput};
use sim_core::net::rpc::RpcServer;
use sim_core::rt::spawn;
use sim_core::time::{now, sleep};

use crate::network::{self, Network};
use crate::store::{self, Obs, Readers, StateMachine};
use crate::types::{ClientReply, ClientRequest, NodeId, Raft};
use crate::{CLIENT_PORT, REPLICAS};

/// How long a read waits for the state machine to catch up with its read log id.
const READ_APPLY_WAIT: Duration = Duration::from_millis(1_000);

/// openraft's configuration: its default timings (heartbeat 50 ms, election timeout
/// 150-300 ms), no snapshots.
fn config() -> Arc<openraft::Config> {
    let config = openraft::Config {
        cluster_name: "zoo".to_string(),
        heartbeat_interval: 50,
        election_timeout_min: 150,
        election_timeout_max: 300,
        snapshot_policy: SnapshotPolicy::Never,
        ..Default::default()
    };
    Arc::new(
        config
            .validate()
            .expect("invariant: a valid openraft config"),
    )
}

/// Replica `id` (1-based), its Raft calls leaving from `out_port`, until it crashes.
pub async fn replica(id: NodeId, out_port: u16, readers: Readers, observer: Obs) {
    let (log_store, sm) = store::open(id, readers, observer).await;
    let network = Network::bind(out_port);
    let raft = Raft::new(id, config(), network, log_store, sm.clone())
        .await
        .expect("invariant: openraft starts on a recovered store");
    if id == 1 && !raft.is_initialized().await.unwrap_or(true) {
        let members: BTreeMap<NodeId, BasicNode> = (1..=REPLICAS.len() as NodeId)
            .map(|n| (n, BasicNode::default()))
            .collect();
        // Refused if a vote or log arrived in between: then the cluster exists already.
        let _ = raft.initialize(members).await;
    }
    spawn(network::serve(raft.clone()));
    let server = Rc::new(
        RpcServer::<ClientRequest, ClientReply>::bind(CLIENT_PORT)
            .expect("invariant: the client port is free"),
    );
    loop {
        let request = server.recv().await;
        let (raft, sm, server) = (raft.clone(), sm.clone(), server.clone());
        spawn(async move {
            let reply = answer(&raft, &sm, request.body).await;
            server.reply(&request, reply);
        });
    }
}

async fn answer(raft: &Raft, sm: &StateMachine, request: ClientRequest) -> ClientReply {
    if let KvInput::Get { key } = request.op {
        return match raft.get_read_log_id().await {
            Ok((read_log_id, _applied)) => {
                let deadline = now() + READ_APPLY_WAIT;
                let want = read_log_id.map(|l| l.index);
                while sm.applied_index() < want {
                    if now() >= deadline {
                        return ClientReply::Unavailable;
                    }
                    sleep(Duration::from_millis(1)).await;
                }
                ClientReply::Done(KvOutput::Value(sm.read(key)))
            }
            Err(RaftError::APIError(CheckIsLeaderError::ForwardToLeader(f))) => {
                ClientReply::NotLeader(f.leader_id)
            }
            Err(_) => ClientReply::Unavailable,
        };
    }
    match raft.client_write(request).await {
        Ok(resp) => match resp.data.0 {
            Some(out) => ClientReply::Done(out),
            None => ClientReply::Unavailable,
        },
        Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f))) => {
            ClientReply::NotLeader(f.leader_id)
        }
        Err(_) => ClientReply::Unavailable,
    }
}
