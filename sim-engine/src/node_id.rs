//! A node's id, shared by every part that names a node (network, disk, clocks, nemesis).
//!
//! Only the type lives here, importing nothing from the crate; [`crate::node`] adds the
//! methods that read the running world (e.g. [`NodeId::name`]) and re-exports it.

/// A node's id: its position in the order nodes were added to the scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);
