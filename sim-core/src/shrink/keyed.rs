//! Keyed candidates: a source that answers each draw with the intended draw of the same label,
//! node and instant, so an edit does not re-map the rest of the run.

use super::*;

/// The source a keyed candidate runs on ([`Search::attempt_keyed`]): it answers each draw
/// with the value of the intended draw of the same label, made for the same node
/// ([`Stamp::node`]; with [`Keying::ByLabel`], for any node) at the same instant of virtual time (the next unused one: draws of one
/// label at one instant keep their order), and with the default, zero, a draw the intended
/// run did not make then. A draw the edit removed so leaves every other draw of its lane
/// with the decision it made, and a draw the edit added takes nobody's value: the rest of
/// the run does not move. (Under [`crate::choice::Bytes`] a draw is a position in its lane's
/// stream, and every later draw of the lane would read its neighbour's bytes.)
///
/// Two exceptions, each for a kind of draw whose meaning an instant does not carry:
///
/// * **Workload** choices ([`Lane::Workload`]) follow their node: a workload draw takes its
///   node's intended draw of the same label at this instant if there is one, else its node's
///   first unused one (with [`Keying::ByLabel`]: the label's next, in order). A client's next operation is its next operation, even if an edit made
///   it start sooner, and not another client's; a replica's election timeout drawn when it
///   was drawn before keeps its value, and one drawn at a moment the edit moved takes that
///   replica's next timeout (not the minimum, which would give every replica the same one).
/// * A **fault** is not lost with the draw it was made at: a fired event whose instant passed
///   without a draw of its label fires at the next draw of its label for its node, and the
///   parameters it drew (the faults-lane draws right after it, at its instant) go with it.
///
/// The recording of a keyed run is a plain draw log: encoded, it replays under `Bytes`.
pub(super) struct Keyed {
    /// Per label, then per node, its intended draws.
    queues: BTreeMap<String, BTreeMap<Option<u32>, LabelQueue>>,
    /// The parameters of a fault that fired late, for the draws right after it.
    parameters: Vec<(String, DrawValue)>,
    now_ns: u64,
    /// The node the draws are being made for ([`crate::choice::Source::mark_node`]).
    node: Option<u32>,
    keying: Keying,
}

impl Keyed {
    pub(super) fn new(intended: &[Draw], stamps: &[Stamp], keying: Keying) -> Keyed {
        let mut queues: BTreeMap<String, BTreeMap<Option<u32>, LabelQueue>> = BTreeMap::new();
        for (i, (draw, &stamp)) in intended.iter().zip(stamps).enumerate() {
            let parameters = if draw.value == (DrawValue::Event { fired: true }) {
                intended[i + 1..]
                    .iter()
                    .zip(&stamps[i + 1..])
                    .take_while(|&(p, p_at)| p_at.at == stamp.at && is_fault_parameter(p))
                    .map(|(p, _)| (p.label.clone(), p.value.clone()))
                    .collect()
            } else {
                Vec::new()
            };
            let queue = queues
                .entry(draw.label.clone())
                .or_default()
                .entry(keying.node(stamp.node))
                .or_insert_with(|| LabelQueue {
                    draws: Vec::new(),
                    head: 0,
                    used: Vec::new(),
                    workload: Lane::of(&draw.label) == Lane::Workload,
                });
            queue.draws.push(Intended {
                time_ns: stamp.at,
                value: draw.value.clone(),
                parameters,
            });
            queue.used.push(false);
        }
        Keyed {
            queues,
            parameters: Vec::new(),
            now_ns: 0,
            node: None,
            keying,
        }
    }

    /// The intended value for the next draw of `label`, now; `None` for the default.
    fn take(&mut self, label: &str) -> Option<DrawValue> {
        if let Some(k) = self.parameters.iter().position(|(l, _)| l == label) {
            return Some(self.parameters.remove(k).1);
        }
        let now_ns = self.now_ns;
        let keying = self.keying;
        let queue = self
            .queues
            .get_mut(label)?
            .get_mut(&keying.node(self.node))?;
        if queue.workload {
            return match keying {
                Keying::ByNode => queue.take_workload(now_ns),
                Keying::ByLabel => {
                    let next = queue.draws.get(queue.head)?;
                    queue.head += 1;
                    Some(next.value.clone())
                }
            };
        }
        // Draws of instants gone by were not made this time; a fault among them is overdue.
        let mut overdue = None;
        while let Some(past) = queue.draws.get(queue.head) {
            if past.time_ns >= now_ns {
                break;
            }
            if overdue.is_none() && past.value == (DrawValue::Event { fired: true }) {
                overdue = Some(queue.head);
            }
            queue.head += 1;
        }
        if let Some(k) = overdue {
            self.parameters = std::mem::take(&mut queue.draws[k].parameters);
            return Some(DrawValue::Event { fired: true });
        }
        let next = queue.draws.get(queue.head)?;
        if next.time_ns > now_ns {
            return None;
        }
        queue.head += 1;
        Some(next.value.clone())
    }
}

impl crate::choice::Source for Keyed {
    fn draw(&mut self, label: &'static str, bound: u64) -> u64 {
        if bound <= 1 {
            return 0;
        }
        match self.take(label) {
            Some(DrawValue::Int { value, .. }) => value.min(bound - 1),
            _ => 0,
        }
    }

    fn fill(&mut self, label: &'static str, buf: &mut [u8]) {
        buf.fill(0);
        if let Some(DrawValue::Raw(bytes)) = self.take(label) {
            for (slot, byte) in buf.iter_mut().zip(bytes) {
                *slot = byte;
            }
        }
    }

    fn draw_event(&mut self, label: &'static str, num: u64, den: u64) -> bool {
        let listed = matches!(self.take(label), Some(DrawValue::Event { fired: true }));
        // A certainty fires without an entry, as it does under `Bytes`, so the recording of
        // this run replays it.
        listed || num >= den
    }

    fn is_exhausted(&self) -> bool {
        false
    }

    fn mark_time(&mut self, now_ns: u64) {
        // A late fault draws its parameters at its own instant, or never.
        self.parameters.clear();
        self.now_ns = now_ns;
    }

    fn mark_node(&mut self, node: Option<u32>) {
        self.node = node;
    }
}

/// How [`Keyed`] matches a draw with an intended one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Keying {
    /// By label and node; a workload draw takes its node's draw of this instant, else its
    /// node's next.
    ByNode,
    /// By label alone; workload draws in order, whichever node makes them.
    ByLabel,
}

impl Keying {
    /// The node a draw of `node` is queued under.
    fn node(self, node: Option<u32>) -> Option<u32> {
        match self {
            Keying::ByNode => node,
            Keying::ByLabel => None,
        }
    }
}

/// The intended draws of one label for one node, in order, and how far they were used.
pub(super) struct LabelQueue {
    draws: Vec<Intended>,
    /// The first draw neither passed nor taken.
    head: usize,
    /// Which draws were taken: a workload draw may take one past others still unused.
    used: Vec<bool>,
    /// A workload label (read as the node's next, see [`Keyed`]).
    workload: bool,
}

impl LabelQueue {
    /// A workload draw at `now_ns`: the unused intended draw of this instant, else the first
    /// unused one.
    fn take_workload(&mut self, now_ns: u64) -> Option<DrawValue> {
        let at_now = (self.head..self.draws.len())
            .take_while(|&j| self.draws[j].time_ns <= now_ns)
            .find(|&j| !self.used[j] && self.draws[j].time_ns == now_ns);
        let j = at_now.unwrap_or(self.head);
        if j >= self.draws.len() {
            return None;
        }
        self.used[j] = true;
        while self.head < self.draws.len() && self.used[self.head] {
            self.head += 1;
        }
        Some(self.draws[j].value.clone())
    }
}

/// One intended draw, as [`Keyed`] reads it.
pub(super) struct Intended {
    time_ns: u64,
    value: DrawValue,
    /// For a fired event: the faults-lane draws right after it, at its instant.
    parameters: Vec<(String, DrawValue)>,
}

/// A draw a fired fault makes right after it: its duration, target, shape.
pub(super) fn is_fault_parameter(draw: &Draw) -> bool {
    Lane::of(&draw.label) == Lane::Faults && !matches!(draw.value, DrawValue::Event { .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::{Choices, Source};

    fn int(label: &str, bound: u64, value: u64) -> Draw {
        Draw {
            label: label.to_string(),
            value: DrawValue::Int { bound, value },
        }
    }

    /// Stamps at these times, for no node.
    fn stamps(times: &[u64]) -> Vec<Stamp> {
        times.iter().map(|&at| Stamp { at, node: None }).collect()
    }

    fn event(label: &str, fired: bool) -> Draw {
        Draw {
            label: label.to_string(),
            value: DrawValue::Event { fired },
        }
    }

    /// Deleting a draw leaves every other draw of its lane with the value it had at its
    /// instant; a draw the intended run did not make reads the default.
    #[test]
    fn keyed_draws_keep_their_instants() {
        let intended = [
            int("net.jitter_ms", 10, 3),
            int("net.jitter_ms", 10, 4),
            int("net.jitter_ms", 10, 5),
            int("net.jitter_ms", 10, 6),
        ];
        let times = [0, 10, 10, 20];
        // The run no longer makes the first draw at 10 (its message is gone).
        let mut keyed = Keyed::new(
            &[&intended[..1], &intended[2..]].concat(),
            &stamps(&[0, 10, 20]),
            Keying::ByNode,
        );
        assert_eq!(keyed.below("net.jitter_ms", 10), 3);
        keyed.mark_time(10);
        assert_eq!(keyed.below("net.jitter_ms", 10), 5);
        // A draw the intended run did not make at 10: the default, and nobody's value.
        assert_eq!(keyed.below("net.jitter_ms", 10), 0);
        keyed.mark_time(20);
        assert_eq!(
            keyed.below("net.jitter_ms", 10),
            6,
            "the draw at 20 kept its value"
        );
        // Unlike a lane read by position, where every later draw takes its predecessor's.
        let mut full = Keyed::new(&intended, &stamps(&times), Keying::ByNode);
        full.mark_time(10);
        assert_eq!(
            full.below("net.jitter_ms", 10),
            4,
            "the first of two at one instant"
        );
        assert_eq!(full.below("net.jitter_ms", 10), 5, "then the second");
        // Values are clamped to a draw's bound; labels never drawn read zero.
        full.mark_time(20);
        assert_eq!(full.below("net.jitter_ms", 4), 3);
        assert_eq!(full.below("net.link.latency_ms", 10), 0);
    }

    fn stamped(times: &[(u64, Option<u32>)]) -> Vec<Stamp> {
        times.iter().map(|&(at, node)| Stamp { at, node }).collect()
    }

    /// Keyed by node, one client's deleted operation leaves the other's choices with it, and
    /// a workload draw made at its instant keeps its value while one made at a moment the
    /// edit moved takes its node's next (not the default).
    #[test]
    fn workload_draws_follow_their_node() {
        // Clients 5 and 6 each draw two keys; client 5's first operation is deleted.
        let intended = [
            int("raft.key", 3, 2),
            int("raft.key", 3, 1),
            int("raft.key", 3, 2),
        ];
        let at = stamped(&[(0, Some(6)), (100, Some(5)), (100, Some(6))]);
        let mut by_node = Keyed::new(&intended, &at, Keying::ByNode);
        let mut by_label = Keyed::new(&intended, &at, Keying::ByLabel);
        // Client 5's second operation now starts at 0, before client 6's first.
        for keyed in [&mut by_node, &mut by_label] {
            keyed.mark_node(Some(5));
        }
        assert_eq!(by_node.below("raft.key", 3), 1, "client 5's own next key");
        assert_eq!(by_label.below("raft.key", 3), 2, "by label: client 6's key");
        by_node.mark_node(Some(6));
        assert_eq!(by_node.below("raft.key", 3), 2);
        by_node.mark_time(100);
        assert_eq!(by_node.below("raft.key", 3), 2, "client 6 keeps its keys");
        // A replica's timeouts: the one drawn at its instant keeps its value, one drawn at a
        // moment no intended draw was made takes the replica's next unused one.
        let timeouts = [
            int("raft.election_ms", 151, 40),
            int("raft.election_ms", 151, 90),
            int("raft.election_ms", 151, 7),
        ];
        let at = stamped(&[(0, Some(1)), (50, Some(1)), (80, Some(1))]);
        let mut keyed = Keyed::new(&timeouts, &at, Keying::ByNode);
        keyed.mark_node(Some(1));
        keyed.mark_time(50);
        assert_eq!(
            keyed.below("raft.election_ms", 151),
            90,
            "its instant's value"
        );
        keyed.mark_time(60);
        assert_eq!(
            keyed.below("raft.election_ms", 151),
            40,
            "its first unused one"
        );
        keyed.mark_time(70);
        assert_eq!(keyed.below("raft.election_ms", 151), 7);
        assert_eq!(
            keyed.below("raft.election_ms", 151),
            0,
            "none left: the default"
        );
        // Another node's draws are not this one's.
        keyed.mark_node(Some(2));
        assert_eq!(keyed.below("raft.election_ms", 151), 0);
    }

    /// A fired fault whose draw is not made at its instant fires at the next draw of its
    /// label, with the parameters it drew; workload choices are read in order.
    #[test]
    fn a_late_fault_fires_at_the_next_chance_with_its_parameters() {
        let intended = [
            event("nemesis.crash", false),
            event("nemesis.crash", true),
            int("nemesis.node", 3, 2),
            int("nemesis.down_ms", 1000, 700),
            int("raft.key", 3, 1),
            int("raft.key", 3, 2),
        ];
        let times = [0, 100, 100, 100, 100, 150];
        let mut keyed = Keyed::new(&intended, &stamps(&times), Keying::ByNode);
        keyed.mark_time(0);
        assert!(!keyed.chance("nemesis.crash", 1, 1000));
        // No tick at 100 this time; the next one is at 130.
        keyed.mark_time(130);
        assert_eq!(keyed.below("raft.key", 3), 1, "workload choices in order");
        assert!(
            keyed.chance("nemesis.crash", 1, 1000),
            "the crash fires late"
        );
        assert_eq!(keyed.below("nemesis.node", 3), 2, "on its node");
        assert_eq!(keyed.range_inclusive("nemesis.down_ms", 1, 1000), 701);
        keyed.mark_time(150);
        assert!(!keyed.chance("nemesis.crash", 1, 1000), "and only once");
        assert_eq!(keyed.below("raft.key", 3), 2);
        // A certainty fires as it does under `Bytes`, listed or not.
        assert!(keyed.draw_event("nemesis.crash", 1, 1));
    }
}
