//! Datagram sessions: in order and exactly once within a session, anomalies only across a
//! break both ends are told of; and `reachable`, the event to await after a loss.

use std::time::Duration;

use acceptance::{log, net_config, Log};
use sim_core::net::{reachable, Addr, FaultProfile, SessionEvent, SessionSocket, Socket};
use sim_core::node::{crash, restart};
use sim_core::sim::Sim;
use sim_core::time::{now, sleep, Instant};
use sim_core::trace::EventKind;

/// Every datagram fault, and drawn partitions and clogs (at rates where a session lives long
/// enough to carry something: every fault drawn breaks it and loses what is in flight).
fn hostile() -> FaultProfile {
    FaultProfile {
        loss_per_mille: 30,
        duplicate_per_mille: 30,
        reorder_per_mille: 30,
        reorder_ms_max: 50,
        partition_per_mille: 10,
        partition_ms_max: 100,
        clog_per_mille: 10,
        clog_ms_max: 100,
        ..FaultProfile::NONE
    }
}

/// What an end saw: `Some(n)` a message, `None` a break.
type Seen = Log<Option<u32>>;

/// `a` sends 0..150 to `b` every millisecond (with session sockets, or plain ones); both
/// record what they receive.
fn stream_of_numbers(sessions: bool, seed: u64) -> (Seen, Seen, u64) {
    let mut sim = Sim::new(net_config(hostile()));
    let (seen_a, seen_b): (Seen, Seen) = (log(), log());
    let sb = seen_b.clone();
    sim.node("b", move |_| {
        let seen = sb.clone();
        async move {
            if sessions {
                let sock = SessionSocket::<u32>::bind(1).unwrap();
                loop {
                    match sock.recv().await {
                        SessionEvent::Message { msg, .. } => seen.borrow_mut().push(Some(msg)),
                        SessionEvent::Broken { .. } => seen.borrow_mut().push(None),
                    }
                }
            } else {
                let sock = Socket::<u32>::bind(1).unwrap();
                loop {
                    let (_, n) = sock.recv().await;
                    seen.borrow_mut().push(Some(n));
                }
            }
        }
    });
    let sa = seen_a.clone();
    sim.client("a", move |_| {
        let seen = sa.clone();
        async move {
            let b = Addr::named("b", 1);
            if sessions {
                let sock = std::rc::Rc::new(SessionSocket::<u32>::bind(1).unwrap());
                // `a`'s own end only ever hears of breaks.
                let listener = sock.clone();
                let seen = seen.clone();
                sim_core::rt::spawn(async move {
                    loop {
                        if let SessionEvent::Broken { .. } = listener.recv().await {
                            seen.borrow_mut().push(None);
                        }
                    }
                });
                // Give `b` its first turn to bind: a break before that reaches one end only.
                sleep(Duration::from_millis(1)).await;
                for n in 0..150 {
                    sock.send(b, n);
                    sleep(Duration::from_millis(1)).await;
                }
            } else {
                let sock = Socket::<u32>::bind(1).unwrap();
                for n in 0..150 {
                    sock.send(b, n);
                    sleep(Duration::from_millis(1)).await;
                }
            }
            // Let the last messages land.
            sleep(Duration::from_millis(200)).await;
        }
    });
    let report = sim.run_seed(seed);
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    let broken_events = report
        .history
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::SessionBroken { .. }))
        .count() as u64;
    (seen_a, seen_b, broken_events)
}

/// Within a session, messages arrive in order and exactly once (consecutive numbers); every
/// gap, repeat or reordering shows only across a break, and both ends hear of every break.
#[test]
fn a_session_delivers_in_order_exactly_once_and_breaks_are_told_to_both_ends() {
    let (mut breaks, mut delivered) = (0, 0);
    for seed in 0..30 {
        let (seen_a, seen_b, broken_events) = stream_of_numbers(true, seed);
        let seen_b = seen_b.borrow();
        let mut last: Option<u32> = None;
        for item in seen_b.iter() {
            match (*item, last) {
                (None, _) => last = None,
                (Some(n), Some(prev)) => {
                    assert_eq!(
                        n,
                        prev + 1,
                        "seed {seed}: within a session, {n} followed {prev}: {seen_b:?}"
                    );
                    last = Some(n);
                }
                (Some(n), None) => last = Some(n),
            }
        }
        let told_b = seen_b.iter().filter(|i| i.is_none()).count();
        let told_a = seen_a.borrow().iter().filter(|i| i.is_none()).count();
        assert_eq!(told_a, told_b, "seed {seed}: both ends hear of every break");
        assert_eq!(
            broken_events,
            (told_a + told_b) as u64,
            "every break is in the trace"
        );
        breaks += told_b;
        delivered += seen_b.iter().filter(|i| i.is_some()).count();
    }
    assert!(breaks > 30, "the faults did break sessions: {breaks}");
    assert!(
        delivered > 900,
        "sessions still carry messages: {delivered} of 4500"
    );
}

/// The same stream over plain sockets shows what sessions rule out: out-of-order and
/// duplicated messages, with no break to explain them.
#[test]
fn without_sessions_the_same_faults_reorder_and_duplicate_silently() {
    let anomalies = (0..30)
        .filter(|&seed| {
            let (_, seen_b, broken) = stream_of_numbers(false, seed);
            assert_eq!(broken, 0);
            let seen = seen_b.borrow();
            seen.windows(2).any(|w| w[1] <= w[0])
        })
        .count();
    assert!(
        anomalies > 10,
        "plain datagrams reorder or duplicate: {anomalies} of 30 seeds"
    );
}

/// After a peer's crash a session end is told the session broke, and `reachable` completes at
/// the instant the peer is back — no polling.
#[test]
fn a_crash_breaks_the_session_and_reachable_completes_at_the_restart() {
    let mut sim = Sim::new(net_config(FaultProfile::NONE));
    let seen: Log<(u64, String)> = log();
    sim.node("server", |_| async {
        let sock = SessionSocket::<u8>::bind(1).unwrap();
        loop {
            if let SessionEvent::Message { from, msg } = sock.recv().await {
                sock.send(from, msg);
            }
        }
    });
    let s = seen.clone();
    sim.client("client", move |_| {
        let seen = s.clone();
        async move {
            let sock = SessionSocket::<u8>::bind(1).unwrap();
            let server = Addr::named("server", 1);
            sock.send(server, 1);
            assert!(matches!(
                sock.recv().await,
                SessionEvent::Message { msg: 1, .. }
            ));
            assert_eq!(sock.session(server), 1);
            let start = now();
            sim_core::rt::spawn(async {
                sleep(Duration::from_millis(100)).await;
                crash("server").unwrap();
                sleep(Duration::from_millis(400)).await;
                restart("server").unwrap();
            });
            let broken = sock.recv().await;
            assert_eq!(broken, SessionEvent::Broken { peer: server });
            let since = |t: Instant| (t.as_nanos() - start.as_nanos()) / 1_000_000;
            seen.borrow_mut().push((since(now()), "broken".into()));
            reachable("server").unwrap().await;
            seen.borrow_mut().push((since(now()), "reachable".into()));
            assert_eq!(
                sock.session(server),
                2,
                "the next message starts a new session"
            );
            sock.send(server, 2);
            assert!(matches!(
                sock.recv().await,
                SessionEvent::Message { msg: 2, .. }
            ));
        }
    });
    let report = sim.run_seed(0);
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    assert_eq!(
        seen.borrow().as_slice(),
        [(100, "broken".to_string()), (500, "reachable".to_string()),],
        "milliseconds after the first round trip: told at the crash, woken at the restart"
    );
}
