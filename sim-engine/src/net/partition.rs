//! Partitions and clogs: scripted controls, and the drawn faults' ends.
//!
//! A **partition** cuts directed links: datagrams on a cut link are dropped, streams across it
//! are reset, connects across it are black-holed, and watches between its ends fire with
//! [`super::DownReason::NoConnection`]. A **clog** holds traffic on a directed link — nothing
//! is lost — and releases it, in order, when it ends. A node's links to itself are never cut
//! or clogged.

use super::{cut_events, datagram, resolve_nodes, set_route, stream, NetError};
use crate::time::Instant;
use crate::trace::{stable_hash, EventKind};
use crate::world::DueEvent;
use crate::world::{with_net, NetView};

/// A scripted network control, applied now ([`Control::apply`]) or at a virtual instant
/// ([`at`]). Each is recorded in the trace.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Control {
    /// Cut both directions between every node of `a` and every node of `b`.
    Partition {
        /// One side.
        a: Vec<String>,
        /// The other side.
        b: Vec<String>,
    },
    /// Cut only the direction `from -> to` (an asymmetric partition).
    PartitionOneWay {
        /// Senders whose traffic is dropped.
        from: Vec<String>,
        /// Receivers that no longer hear them.
        to: Vec<String>,
    },
    /// Undo scripted cuts between `a` and `b`, both directions.
    Heal {
        /// One side.
        a: Vec<String>,
        /// The other side.
        b: Vec<String>,
    },
    /// Undo every scripted cut.
    HealAll,
    /// Hold traffic `from -> to` until unclogged.
    Clog {
        /// Senders.
        from: Vec<String>,
        /// Receivers.
        to: Vec<String>,
    },
    /// Release traffic held `from -> to`, in order.
    Unclog {
        /// Senders.
        from: Vec<String>,
        /// Receivers.
        to: Vec<String>,
    },
    /// Make `name` a routed name for `to` (see [`super::route`]).
    Route {
        /// The routed name.
        name: String,
        /// The nodes behind it.
        to: Vec<String>,
    },
}

/// A control with names resolved, ready to fire.
pub(crate) enum Resolved {
    Scripted(Control),
    /// The end of a drawn partition: un-cut these links.
    HealDrawn(Vec<(u32, u32)>),
    /// The end of a drawn clog.
    UnclogDrawn(u32, u32),
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn pairs(w: &NetView<'_>, a: &[String], b: &[String]) -> Result<Vec<(u32, u32)>, NetError> {
    let (a, b) = (resolve_nodes(w, &strs(a))?, resolve_nodes(w, &strs(b))?);
    Ok(a.iter()
        .flat_map(|&x| b.iter().map(move |&y| (x, y)))
        .filter(|(x, y)| x != y)
        .collect())
}

impl Control {
    /// Applies the control now. Must be called from within a simulation.
    pub fn apply(self) -> Result<(), NetError> {
        with_net(|w| apply(w, self))
    }

    fn validate(&self, w: &NetView<'_>) -> Result<(), NetError> {
        match self {
            Control::Partition { a, b } | Control::Heal { a, b } => pairs(w, a, b).map(drop),
            Control::PartitionOneWay { from, to }
            | Control::Clog { from, to }
            | Control::Unclog { from, to } => pairs(w, from, to).map(drop),
            Control::HealAll => Ok(()),
            Control::Route { name, to } => {
                if w.nodes.find(name).is_some() {
                    return Err(NetError::RouteShadowsNode(name.clone()));
                }
                if to.is_empty() {
                    return Err(NetError::EmptyRoute(name.clone()));
                }
                resolve_nodes(w, &strs(to)).map(drop)
            }
        }
    }
}

fn record_control(w: &mut NetView<'_>, c: &Control) {
    let digest = stable_hash(c);
    let text = if w.history.is_recording() {
        format!("{c:?}")
    } else {
        String::new()
    };
    w.record(None, EventKind::Fault { digest }, || text);
}

fn apply(w: &mut NetView<'_>, c: Control) -> Result<(), NetError> {
    c.validate(w)?;
    match &c {
        Control::Partition { a, b } => {
            let mut links = pairs(w, a, b)?;
            links.extend(pairs(w, b, a)?);
            record_control(w, &c);
            cut(w, &links, true);
        }
        Control::PartitionOneWay { from, to } => {
            let links = pairs(w, from, to)?;
            record_control(w, &c);
            cut(w, &links, true);
        }
        Control::Heal { a, b } => {
            let mut links = pairs(w, a, b)?;
            links.extend(pairs(w, b, a)?);
            record_control(w, &c);
            for (x, y) in links {
                w.net.link(x, y).cut_scripted = false;
            }
            super::reach_may_have_changed(w);
        }
        Control::HealAll => {
            record_control(w, &c);
            w.net.heal_all_scripted();
            super::reach_may_have_changed(w);
        }
        Control::Clog { from, to } => {
            let links = pairs(w, from, to)?;
            record_control(w, &c);
            for (x, y) in links {
                w.net.link(x, y).clog_scripted = true;
            }
        }
        Control::Unclog { from, to } => {
            let links = pairs(w, from, to)?;
            record_control(w, &c);
            for (x, y) in links {
                let l = w.net.link(x, y);
                l.clog_scripted = false;
                if !l.is_clogged() {
                    release(w, x, y);
                }
            }
        }
        Control::Route { name, to } => set_route(w, name, &strs(to))?,
    }
    Ok(())
}

/// Cuts `links`; the pairs that were fully connected before get their link events.
fn cut(w: &mut NetView<'_>, links: &[(u32, u32)], scripted: bool) {
    let mut newly: Vec<(u32, u32)> = Vec::new();
    for &(x, y) in links {
        let was = w.net.pair_cut(x, y);
        let l = w.net.link(x, y);
        if scripted {
            l.cut_scripted = true;
        } else {
            l.cut_drawn += 1;
        }
        debug_assert!(l.is_cut(), "link {x}->{y} cut but not reading as cut");
        if !was && !newly.contains(&(x, y)) && !newly.contains(&(y, x)) {
            newly.push((x, y));
        }
    }
    cut_events(w, &newly);
}

/// Releases everything a clog held on `from -> to`: datagrams, and stalled stream segments.
fn release(w: &mut NetView<'_>, from: u32, to: u32) {
    datagram::release_held(w, from, to);
    stream::release_link(w, from, to);
}

/// A drawn partition of `links` for `ms`, healed by a scheduled control.
pub(crate) fn drawn_cut(w: &mut NetView<'_>, links: &[(u32, u32)], ms: u64) {
    let digest = stable_hash(&(1u8, links, ms));
    let text = if w.history.is_recording() {
        describe(w, "partition (drawn)", links, ms)
    } else {
        String::new()
    };
    w.record(None, EventKind::Fault { digest }, || text);
    cut(w, links, false);
    let at = w.clock.now_ns() + ms * 1_000_000;
    w.clock.schedule(
        at,
        DueEvent::Control(Box::new(Resolved::HealDrawn(links.to_vec()))),
    );
}

/// A drawn clog of `from -> to` for `ms`.
pub(crate) fn drawn_clog(w: &mut NetView<'_>, from: u32, to: u32, ms: u64) {
    let digest = stable_hash(&(2u8, from, to, ms));
    let text = if w.history.is_recording() {
        describe(w, "clog (drawn)", &[(from, to)], ms)
    } else {
        String::new()
    };
    w.record(None, EventKind::Fault { digest }, || text);
    w.net.link(from, to).clog_drawn += 1;
    let at = w.clock.now_ns() + ms * 1_000_000;
    w.clock.schedule(
        at,
        DueEvent::Control(Box::new(Resolved::UnclogDrawn(from, to))),
    );
}

fn describe(w: &NetView<'_>, what: &str, links: &[(u32, u32)], ms: u64) -> String {
    let names: Vec<String> = links
        .iter()
        .map(|&(x, y)| format!("{}->{}", w.nodes.name(x), w.nodes.name(y)))
        .collect();
    format!("{what} {} for {ms}ms", names.join(" "))
}

/// Fires a scheduled control.
pub(crate) fn fire(w: &mut NetView<'_>, c: Resolved) {
    match c {
        Resolved::Scripted(c) => {
            // Names were checked when it was scheduled and nodes never leave a run.
            apply(w, c).expect("a scheduled control was validated when it was scheduled");
        }
        Resolved::HealDrawn(links) => {
            let digest = stable_hash(&(3u8, &links));
            let text = if w.history.is_recording() {
                describe(w, "heal (drawn)", &links, 0)
            } else {
                String::new()
            };
            w.record(None, EventKind::Fault { digest }, || text);
            for (x, y) in links {
                let l = w.net.link(x, y);
                debug_assert!(
                    l.cut_drawn > 0,
                    "healing a drawn cut {x}->{y} that is not in force"
                );
                l.cut_drawn = l.cut_drawn.saturating_sub(1);
            }
            super::reach_may_have_changed(w);
        }
        Resolved::UnclogDrawn(x, y) => {
            let digest = stable_hash(&(4u8, x, y));
            let text = if w.history.is_recording() {
                describe(w, "unclog (drawn)", &[(x, y)], 0)
            } else {
                String::new()
            };
            w.record(None, EventKind::Fault { digest }, || text);
            let l = w.net.link(x, y);
            debug_assert!(
                l.clog_drawn > 0,
                "ending a drawn clog {x}->{y} that is not in force"
            );
            l.clog_drawn = l.clog_drawn.saturating_sub(1);
            if !l.is_clogged() {
                release(w, x, y);
            }
        }
    }
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Schedules `control` at virtual instant `when` (at once if it has passed). Names are
/// checked now. Must be called from within a simulation.
///
/// ```
/// use std::time::Duration;
/// use sim_core::net::{at, Addr, Control, Socket};
/// use sim_core::sim::{Config, Sim};
/// use sim_core::time::{now, sleep, timeout};
///
/// let mut sim = Sim::new(Config::default());
/// sim.node("b", |_| async {
///     let sock = Socket::<u8>::bind(1).unwrap();
///     loop {
///         let (from, n) = sock.recv().await;
///         sock.send(from, n);
///     }
/// });
/// sim.client("a", |_| async {
///     let cut = Control::Partition { a: vec!["a".into()], b: vec!["b".into()] };
///     at(now() + Duration::from_secs(1), cut).unwrap();
///     let sock = Socket::<u8>::bind(1).unwrap();
///     sock.send(Addr::named("b", 1), 1);
///     assert_eq!(sock.recv().await.1, 1, "before the partition");
///     sleep(Duration::from_secs(2)).await;
///     sock.send(Addr::named("b", 1), 2);
///     assert!(timeout(Duration::from_secs(1), sock.recv()).await.is_err(), "dropped");
/// });
/// assert!(sim.run_seed(0).outcome.class.is_pass());
/// ```
pub fn at(when: Instant, control: Control) -> Result<(), NetError> {
    with_net(|w| {
        control.validate(w)?;
        let at = when.as_nanos().max(w.clock.now_ns());
        w.clock
            .schedule(at, DueEvent::Control(Box::new(Resolved::Scripted(control))));
        Ok(())
    })
}

/// Partitions `a` from `b`, both directions. Must be called from within a simulation.
pub fn partition(a: &[&str], b: &[&str]) -> Result<(), NetError> {
    Control::Partition {
        a: names(a),
        b: names(b),
    }
    .apply()
}

/// Cuts only `from -> to`: `to` stops hearing `from`, `from` still hears `to`.
pub fn partition_oneway(from: &[&str], to: &[&str]) -> Result<(), NetError> {
    Control::PartitionOneWay {
        from: names(from),
        to: names(to),
    }
    .apply()
}

/// Heals scripted cuts between `a` and `b`, both directions.
pub fn heal(a: &[&str], b: &[&str]) -> Result<(), NetError> {
    Control::Heal {
        a: names(a),
        b: names(b),
    }
    .apply()
}

/// Heals every scripted cut.
pub fn heal_all() {
    Control::HealAll
        .apply()
        .expect("healing everything names no node");
}

/// Clogs `from -> to`: traffic is held, not lost, until [`unclog`].
pub fn clog(from: &[&str], to: &[&str]) -> Result<(), NetError> {
    Control::Clog {
        from: names(from),
        to: names(to),
    }
    .apply()
}

/// Ends a scripted clog of `from -> to`; held traffic is released in order.
pub fn unclog(from: &[&str], to: &[&str]) -> Result<(), NetError> {
    Control::Unclog {
        from: names(from),
        to: names(to),
    }
    .apply()
}
