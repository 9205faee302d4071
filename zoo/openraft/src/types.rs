//! openraft's type configuration for the key-value store, and what clients send.

use std::io::Cursor;

use serde::{Deserialize, Serialize};
use sim_core::check::kv::{KvInput, KvOutput};

use crate::runtime::SimRuntime;

/// A replica's id: `n1` .. `n5` are 1 .. 5.
pub type NodeId = u64;

/// What goes through the log: a client's operation, tagged with its session (client) and
/// sequence number so that a retried request is applied once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Command {
    /// The client's number.
    pub client: u32,
    /// The operation's number at that client (1, 2, ...).
    pub seq: u64,
    /// The operation.
    pub op: KvInput,
}

/// What applying an entry returns: the operation's output (`None` for a blank or membership
/// entry).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied(pub Option<KvOutput>);

openraft::declare_raft_types!(
    /// The key-value store on sim-core's runtime.
    pub TypeConfig:
        D = Command,
        R = Applied,
        NodeId = NodeId,
        Node = openraft::BasicNode,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = Cursor<Vec<u8>>,
        AsyncRuntime = SimRuntime,
);

/// The Raft handle.
pub type Raft = openraft::Raft<TypeConfig>;
/// A log entry.
pub type Entry = openraft::Entry<TypeConfig>;
/// A log id.
pub type LogId = openraft::LogId<NodeId>;
/// A vote.
pub type Vote = openraft::Vote<NodeId>;

/// A client's request to a replica.
pub type ClientRequest = Command;

/// A replica's answer to a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClientReply {
    /// The operation took effect (or, for a read, was served linearizably) with this output.
    Done(KvOutput),
    /// This replica does not lead; the leader it knows of, if any.
    NotLeader(Option<NodeId>),
    /// The operation failed on this replica for another reason (it is shutting down, a
    /// quorum did not answer in time): the client tries again.
    Unavailable,
}
