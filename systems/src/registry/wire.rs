//! What the registry says on the wire: operations, client calls and replication messages.

use super::*;

/// A registry operation. Names are small numbers; the owner is the calling client.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Op {
    /// Bind `name` to `owner`: yes if it was free or already `owner`'s.
    Register {
        /// The name.
        name: u8,
        /// The client binding it.
        owner: u8,
    },
    /// Remove any binding of `name`: yes if there was one.
    Unregister {
        /// The name.
        name: u8,
    },
}

/// A replica's table: name → owner.
pub type Table = BTreeMap<u8, u8>;

/// Applies one operation; returns its answer.
pub fn apply(table: &mut Table, op: &Op) -> bool {
    match *op {
        Op::Register { name, owner } => match table.get(&name) {
            None => {
                table.insert(name, owner);
                true
            }
            Some(&held) => held == owner,
        },
        Op::Unregister { name } => table.remove(&name).is_some(),
    }
}

/// One client call, named by the client and its own sequence number.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Req {
    /// The client's index.
    pub client: u8,
    /// Its sequence number (every attempt gets a new one).
    pub seq: u32,
}

/// Calls, forwards and replies (exempt sockets: a reliable request channel).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Rpc {
    /// Client → member.
    Call {
        /// The call.
        req: Req,
        /// Its operation.
        op: Op,
    },
    /// Follower → leader: a call it holds for its client.
    Forward {
        /// The call.
        req: Req,
        /// Its operation.
        op: Op,
        /// The member that holds the client's call.
        origin: u8,
    },
    /// Leader → origin member, and member → client: the committed answer.
    Reply {
        /// The call.
        req: Req,
        /// The version of the batch that committed it.
        version: u64,
        /// Its position in the batch.
        index: u32,
        /// The answer.
        yes: bool,
    },
}

/// The replication stream (a faultable socket).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Repl {
    /// Leader → followers: a committed batch.
    Batch {
        /// The leader's epoch.
        epoch: u64,
        /// The batch's version.
        version: u64,
        /// Its operations, in commit order.
        ops: Vec<Op>,
    },
    /// Leader → followers: the current version.
    Heartbeat {
        /// The leader's epoch.
        epoch: u64,
        /// The leader's version.
        version: u64,
    },
    /// Follower → leader: send me a snapshot.
    ResyncReq {
        /// The asking member.
        from: u8,
    },
    /// Leader → follower: the whole table.
    Snapshot {
        /// The leader's epoch.
        epoch: u64,
        /// The table's version.
        version: u64,
        /// The table.
        table: Table,
    },
}
