//! What is bound on which `(node, port)`: a small map on the per-message hot path.
//!
//! A node binds a handful of ports, so each node keeps a short vector sorted by port, and a
//! lookup is an index and a scan of a few entries — where a `BTreeMap` keyed by `(node, port)`
//! costs a tree walk on every send, arrival and receive. Iteration is in ascending
//! `(node, port)` order, like the map it replaces, so nothing that fans out over it changes.

/// Values keyed by `(node, port)`.
pub(crate) struct PortMap<V> {
    by_node: Vec<Vec<(u16, V)>>,
}

impl<V> Default for PortMap<V> {
    fn default() -> Self {
        PortMap {
            by_node: Vec::new(),
        }
    }
}

impl<V> PortMap<V> {
    pub fn get(&self, key: &(u32, u16)) -> Option<&V> {
        let ports = self.by_node.get(key.0 as usize)?;
        let i = ports.binary_search_by_key(&key.1, |(p, _)| *p).ok()?;
        Some(&ports[i].1)
    }

    pub fn get_mut(&mut self, key: &(u32, u16)) -> Option<&mut V> {
        let ports = self.by_node.get_mut(key.0 as usize)?;
        let i = ports.binary_search_by_key(&key.1, |(p, _)| *p).ok()?;
        Some(&mut ports[i].1)
    }

    pub fn contains_key(&self, key: &(u32, u16)) -> bool {
        self.get(key).is_some()
    }

    /// Inserts or replaces.
    pub fn insert(&mut self, (node, port): (u32, u16), value: V) {
        if self.by_node.len() <= node as usize {
            self.by_node.resize_with(node as usize + 1, Vec::new);
        }
        let ports = &mut self.by_node[node as usize];
        match ports.binary_search_by_key(&port, |(p, _)| *p) {
            Ok(i) => ports[i].1 = value,
            Err(i) => ports.insert(i, (port, value)),
        }
    }

    pub fn remove(&mut self, key: &(u32, u16)) -> Option<V> {
        let ports = self.by_node.get_mut(key.0 as usize)?;
        let i = ports.binary_search_by_key(&key.1, |(p, _)| *p).ok()?;
        Some(ports.remove(i).1)
    }

    /// Removes everything bound on `node`, in port order.
    pub fn remove_node(&mut self, node: u32) -> Vec<(u16, V)> {
        self.by_node
            .get_mut(node as usize)
            .map(std::mem::take)
            .unwrap_or_default()
    }
}
