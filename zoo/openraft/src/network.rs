//! openraft's network (`RaftNetworkFactory`, `RaftNetwork`) on sim-core's datagrams.
//!
//! Every RPC is one request datagram and one reply datagram through
//! [`sim_core::net::rpc`], so every network fault applies to both (loss, duplication,
//! reordering, partitions, clogs). openraft's messages are neither `Hash` nor `Clone` (their
//! errors), so they travel as [`Wire`] values: shared behind an `Rc`, shown in traces and
//! hashed into the history by openraft's own one-line summary of them. A call with
//! no reply within openraft's hard TTL for it is a `Timeout`. The network never reports
//! `Unreachable`: that error puts openraft 0.9's replication into a backoff that waits in an
//! unbiased `tokio::select!`, whose branch order comes from tokio's own thread-local
//! generator rather than from the simulation's input.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use openraft::error::{InstallSnapshotError, RPCError, RaftError, RemoteError, Timeout};
use openraft::network::{RPCOption, RPCTypes, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::{BasicNode, MessageSummary};
use serde::de::DeserializeOwned;
use serde::Serialize;
use sim_core::net::rpc::{RpcClient, RpcServer};
use sim_core::net::Addr;
use sim_core::rt::spawn;

use crate::types::{NodeId, Raft, TypeConfig};
use crate::{node_name, RAFT_PORT};

/// A Raft RPC.
#[derive(Debug)]
pub enum RaftRequest {
    /// AppendEntries (also the heartbeat).
    Append(AppendEntriesRequest<TypeConfig>),
    /// RequestVote.
    Vote(VoteRequest<NodeId>),
    /// One chunk of a snapshot (never sent while snapshots are off; served anyway).
    Snapshot(InstallSnapshotRequest<TypeConfig>),
}

/// A Raft RPC's answer, as the receiving `Raft` returned it.
#[derive(Debug)]
pub enum RaftReply {
    /// To [`RaftRequest::Append`].
    Append(Result<AppendEntriesResponse<NodeId>, RaftError<NodeId>>),
    /// To [`RaftRequest::Vote`].
    Vote(Result<VoteResponse<NodeId>, RaftError<NodeId>>),
    /// To [`RaftRequest::Snapshot`].
    Snapshot(Result<InstallSnapshotResponse<NodeId>, RaftError<NodeId, InstallSnapshotError>>),
}

/// A message on the simulated network: the value, shared by the copies a duplication makes,
/// and the text a trace shows and the history hashes. (sim-core's `Foreign` shows only a
/// digest; a story of an election needs the votes.)
pub struct Wire<T> {
    value: Rc<T>,
    text: Rc<str>,
}

impl<T> Wire<T> {
    fn new(value: T, text: String) -> Self {
        Wire {
            value: Rc::new(value),
            text: text.into(),
        }
    }
}

impl<T> Clone for Wire<T> {
    fn clone(&self) -> Self {
        Wire {
            value: self.value.clone(),
            text: self.text.clone(),
        }
    }
}

impl<T> fmt::Debug for Wire<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<T> Hash for Wire<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

impl RaftRequest {
    fn wire(self) -> Wire<RaftRequest> {
        let text = match &self {
            RaftRequest::Append(r) => format!("append {}", r.summary()),
            RaftRequest::Vote(r) => format!("vote-request {}", r.summary()),
            RaftRequest::Snapshot(r) => format!("snapshot {}", r.summary()),
        };
        Wire::new(self, text)
    }
}

impl RaftReply {
    fn wire(self) -> Wire<RaftReply> {
        let text = match &self {
            RaftReply::Append(Ok(r)) => format!("append-reply {r}"),
            RaftReply::Vote(Ok(r)) => format!("vote-reply {}", r.summary()),
            RaftReply::Snapshot(Ok(r)) => format!("snapshot-reply {r:?}"),
            RaftReply::Append(Err(e)) | RaftReply::Vote(Err(e)) => format!("error {e}"),
            RaftReply::Snapshot(Err(e)) => format!("error {e}"),
        };
        Wire::new(self, text)
    }
}

type Client = RpcClient<Wire<RaftRequest>, Wire<RaftReply>>;
type Server = RpcServer<Wire<RaftRequest>, Wire<RaftReply>>;

/// The factory openraft is given: one RPC client (one port) shared by every connection.
pub struct Network {
    rpc: Rc<Client>,
}

impl Network {
    /// A network whose calls leave from `port` of the current node.
    pub fn bind(port: u16) -> Network {
        Network {
            rpc: Rc::new(Client::bind(port).expect("invariant: the raft client port is free")),
        }
    }
}

/// A connection to one peer.
pub struct Connection {
    rpc: Rc<Client>,
    target: NodeId,
    to: Addr,
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Connection;

    async fn new_client(&mut self, target: NodeId, _node: &BasicNode) -> Connection {
        Connection {
            rpc: self.rpc.clone(),
            target,
            to: Addr::named(&node_name(target), RAFT_PORT),
        }
    }
}

impl Connection {
    async fn call<E: std::error::Error>(
        &self,
        request: RaftRequest,
        action: RPCTypes,
        option: &RPCOption,
    ) -> Result<RaftReply, RPCError<NodeId, BasicNode, E>> {
        let ttl = option.hard_ttl();
        match self.rpc.call(self.to, request.wire(), ttl).await {
            Ok(reply) => Ok(match Rc::try_unwrap(reply.value) {
                Ok(owned) => owned,
                // Duplicated on the way: another copy shares it.
                Err(shared) => clone_reply(&shared),
            }),
            Err(_) => Err(RPCError::Timeout(Timeout {
                action,
                id: 0,
                target: self.target,
                timeout: ttl,
            })),
        }
    }
}

/// A copy of a reply a duplicated datagram shares (openraft's errors are not `Clone`, but
/// they are serde values).
fn clone_reply(reply: &RaftReply) -> RaftReply {
    match reply {
        RaftReply::Append(r) => RaftReply::Append(json_clone(r)),
        RaftReply::Vote(r) => RaftReply::Vote(json_clone(r)),
        RaftReply::Snapshot(r) => RaftReply::Snapshot(json_clone(r)),
    }
}

fn json_clone<T: Serialize + DeserializeOwned>(value: &T) -> T {
    let json = serde_json::to_vec(value).expect("invariant: openraft's messages encode");
    serde_json::from_slice(&json).expect("invariant: openraft's messages decode")
}

fn clone_request(request: &RaftRequest) -> RaftRequest {
    match request {
        RaftRequest::Append(r) => RaftRequest::Append(r.clone()),
        RaftRequest::Vote(r) => RaftRequest::Vote(r.clone()),
        RaftRequest::Snapshot(r) => RaftRequest::Snapshot(r.clone()),
    }
}

impl RaftNetwork<TypeConfig> for Connection {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        match self
            .call(RaftRequest::Append(rpc), RPCTypes::AppendEntries, &option)
            .await?
        {
            RaftReply::Append(Ok(resp)) => Ok(resp),
            RaftReply::Append(Err(e)) => {
                Err(RPCError::RemoteError(RemoteError::new(self.target, e)))
            }
            other => panic!("invariant: an append-entries call is answered in kind, not {other:?}"),
        }
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<NodeId>,
        RPCError<NodeId, BasicNode, RaftError<NodeId, InstallSnapshotError>>,
    > {
        match self
            .call(
                RaftRequest::Snapshot(rpc),
                RPCTypes::InstallSnapshot,
                &option,
            )
            .await?
        {
            RaftReply::Snapshot(Ok(resp)) => Ok(resp),
            RaftReply::Snapshot(Err(e)) => {
                Err(RPCError::RemoteError(RemoteError::new(self.target, e)))
            }
            other => panic!("invariant: a snapshot call is answered in kind, not {other:?}"),
        }
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        match self
            .call(RaftRequest::Vote(rpc), RPCTypes::Vote, &option)
            .await?
        {
            RaftReply::Vote(Ok(resp)) => Ok(resp),
            RaftReply::Vote(Err(e)) => Err(RPCError::RemoteError(RemoteError::new(self.target, e))),
            other => panic!("invariant: a vote call is answered in kind, not {other:?}"),
        }
    }
}

/// Answers Raft RPCs on [`RAFT_PORT`] of the current node, each in a task of its own (a slow
/// append never holds up a vote).
pub async fn serve(raft: Raft) {
    let server = Rc::new(Server::bind(RAFT_PORT).expect("invariant: the raft port is free"));
    loop {
        let request = server.recv().await;
        let (raft, server) = (raft.clone(), server.clone());
        spawn(async move {
            let body = clone_request(&request.body.value);
            let reply = match body {
                RaftRequest::Append(r) => RaftReply::Append(raft.append_entries(r).await),
                RaftRequest::Vote(r) => RaftReply::Vote(raft.vote(r).await),
                RaftRequest::Snapshot(r) => RaftReply::Snapshot(raft.install_snapshot(r).await),
            };
            server.reply(&request, reply.wire());
        });
    }
}
