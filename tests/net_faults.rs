//! Partitions, clogs, failure events, located-vs-faultable endpoints, the network's place in
//! the history, a delivery property over many seeds, and the cost of a long partition.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::rc::Rc;
use std::time::Duration;

use futures::io::{AsyncReadExt, AsyncWriteExt};
use sim_core::choice::Input;
use sim_core::net::{
    self, Addr, Control, DownReason, FaultProfile, Faults, Listener, NetConfig, Socket, Stream,
};
use sim_core::node;
use sim_core::rt::spawn;
use sim_core::sim::{Config, Report, Sim};
use sim_core::time::{now, sleep, timeout, Instant};
use sim_core::trace::{EventKind, Recording};

use acceptance::{log, net_config as config, Log};

fn pass(report: Report) -> Report {
    let events = report.history.events();
    let tail = sim_core::trace::render_lines(&events[events.len().saturating_sub(40)..]);
    assert!(
        report.outcome.class.is_pass(),
        "{:?}\n{tail}",
        report.outcome
    );
    report
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn at_ms(n: u64) -> Instant {
    Instant::from_nanos(n * 1_000_000)
}

/// A datagram sink on `name` that logs (arrival ms, message).
fn sink(sim: &mut Sim, name: &'static str, got: Log<(u64, u32)>) {
    sim.node(name, move |_| {
        let got = got.clone();
        async move {
            let sock = Socket::<u32>::bind(1).unwrap();
            loop {
                let (_, n) = sock.recv().await;
                got.borrow_mut().push((now().as_nanos() / 1_000_000, n));
            }
        }
    });
}

// ---------------------------------------------------------------------------------------
// 4. Partitions drop, clogs hold
// ---------------------------------------------------------------------------------------

#[test]
fn a_symmetric_partition_drops_both_ways_until_healed() {
    let (to_b, to_a) = (log::<u32>(), log::<u32>());
    let mut sim = Sim::new(config(FaultProfile::NONE));
    let gb = to_b.clone();
    sim.node("b", move |_| {
        let gb = gb.clone();
        async move {
            let sock = Rc::new(Socket::<u32>::bind(1).unwrap());
            let s = sock.clone();
            spawn(async move {
                sleep(ms(60)).await; // during the partition
                s.send(Addr::named("a", 1), 20);
                sleep(ms(140)).await; // after the heal
                s.send(Addr::named("a", 1), 21);
            });
            loop {
                let n = sock.recv().await.1;
                gb.borrow_mut().push(n);
            }
        }
    });
    let ga = to_a.clone();
    sim.client("a", move |_| {
        let ga = ga.clone();
        async move {
            let sock = Socket::<u32>::bind(1).unwrap();
            let b = Addr::named("b", 1);
            sock.send(b, 1);
            sleep(ms(50)).await; // delivered before the cut (a cut drops what is in flight)
            net::partition(&["a"], &["b"]).unwrap();
            sock.send(b, 2);
            sleep(ms(100)).await;
            net::heal(&["a"], &["b"]).unwrap();
            sock.send(b, 3);
            sleep(ms(100)).await;
            ga.borrow_mut()
                .extend(std::iter::from_fn(|| sock.try_recv().map(|(_, n)| n)));
        }
    });
    pass(sim.run_seed(0));
    assert_eq!(*to_b.borrow(), [1, 3], "a -> b is cut during the partition");
    assert_eq!(*to_a.borrow(), [21], "b -> a is cut too");
}

#[test]
fn an_asymmetric_partition_drops_one_way_only() {
    let (to_a, to_b) = (log(), log());
    let mut sim = Sim::new(config(FaultProfile::NONE));
    let (ga, gb) = (to_a.clone(), to_b.clone());
    sim.node("a", move |_| {
        let ga = ga.clone();
        async move {
            let sock = Socket::<u32>::bind(1).unwrap();
            sleep(ms(10)).await;
            sock.send(Addr::named("b", 1), 1);
            loop {
                let got_one = sock.recv().await.1;
                ga.borrow_mut().push(got_one);
            }
        }
    });
    sim.node("b", move |_| {
        let gb = gb.clone();
        async move {
            let sock = Socket::<u32>::bind(1).unwrap();
            sleep(ms(10)).await;
            sock.send(Addr::named("a", 1), 2);
            loop {
                let got_one = sock.recv().await.1;
                gb.borrow_mut().push(got_one);
            }
        }
    });
    sim.client("driver", |_| async {
        net::partition_oneway(&["a"], &["b"]).unwrap();
        sleep(ms(200)).await;
    });
    pass(sim.run_seed(0));
    assert!(to_b.borrow().is_empty(), "a -> b is cut");
    assert_eq!(*to_a.borrow(), [2], "b -> a still flows");
}

#[test]
fn a_clog_holds_traffic_and_releases_it_in_order() {
    for seed in 0..10 {
        let got = log();
        let mut sim = Sim::new(config(FaultProfile::NONE));
        sink(&mut sim, "b", got.clone());
        sim.client("a", |_| async {
            net::clog(&["a"], &["b"]).unwrap();
            let sock = Socket::<u32>::bind(1).unwrap();
            for n in 0..20 {
                sock.send(Addr::named("b", 1), n);
                sleep(ms(3)).await;
            }
            sleep(ms(1000)).await;
            net::unclog(&["a"], &["b"]).unwrap();
            sleep(ms(100)).await;
        });
        let report = pass(sim.run_seed(seed));
        let got = got.borrow();
        assert_eq!(
            got.iter().map(|x| x.1).collect::<Vec<_>>(),
            (0..20).collect::<Vec<_>>(),
            "seed {seed}: all, in order"
        );
        assert!(
            got.iter().all(|&(t, _)| t >= 1060),
            "seed {seed}: nothing before the release: {got:?}"
        );
        let holds = report
            .history
            .events()
            .iter()
            .filter(|e| e.kind.name() == "hold")
            .count();
        let releases = report
            .history
            .events()
            .iter()
            .filter(|e| e.kind.name() == "release")
            .count();
        assert_eq!((holds, releases), (20, 20), "seed {seed}");
    }
}

#[test]
fn scripted_controls_fire_at_their_virtual_instant() {
    let got = log();
    let mut sim = Sim::new(config(FaultProfile::NONE));
    sink(&mut sim, "b", got.clone());
    sim.client("a", |_| async {
        let cut = Control::Partition {
            a: vec!["a".into()],
            b: vec!["b".into()],
        };
        net::at(at_ms(1000), cut).unwrap();
        net::at(at_ms(2000), Control::HealAll).unwrap();
        let sock = Socket::<u32>::bind(1).unwrap();
        for n in 0..30 {
            sock.send(Addr::named("b", 1), n);
            sleep(ms(100)).await;
        }
    });
    pass(sim.run_seed(0));
    let got: Vec<u32> = got.borrow().iter().map(|x| x.1).collect();
    let expect: Vec<u32> = (0..30).filter(|n| !(10..20).contains(n)).collect();
    assert_eq!(
        got, expect,
        "sent in [1 s, 2 s) is dropped, the rest arrives"
    );
}

/// How many drawn partitions and clogs a run of `profile` saw.
fn drawn(profile: FaultProfile, input: &Input) -> (usize, usize) {
    let mut sim = Sim::new(config(profile));
    sink(&mut sim, "b", log());
    sim.client("a", |_| async {
        let sock = Socket::<u32>::bind(1).unwrap();
        for n in 0..300 {
            sock.send(Addr::named("b", 1), n);
            sleep(ms(10)).await;
        }
    });
    let report = pass(sim.run_input(input));
    let with = |word: &str| {
        report
            .history
            .events()
            .iter()
            .filter(|e| e.kind.name() == "fault" && e.detail.starts_with(word))
            .count()
    };
    (with("partition (drawn)"), with("clog (drawn)"))
}

#[test]
fn partitions_and_clogs_are_also_drawn_from_the_fault_profile() {
    let both = FaultProfile {
        partition_per_mille: 20,
        partition_ms_max: 200,
        clog_per_mille: 20,
        clog_ms_max: 200,
        ..FaultProfile::NONE
    };
    let (mut p, mut c) = (0, 0);
    for seed in 0..5 {
        let (dp, dc) = drawn(both, &Input::Seed(seed));
        p += dp;
        c += dc;
    }
    assert!(p > 0 && c > 0, "drawn partitions {p}, clogs {c}");
    assert_eq!(
        drawn(FaultProfile::NONE, &Input::Seed(0)),
        (0, 0),
        "a zero rate never fires"
    );
    assert_eq!(
        drawn(both, &Input::Bytes(Vec::new())),
        (0, 0),
        "zero input fires no fault"
    );
    let only_clogs = FaultProfile {
        partition_per_mille: 0,
        ..both
    };
    assert_eq!(
        drawn(only_clogs, &Input::Seed(1)).0,
        0,
        "switches are independent"
    );
}

#[test]
fn a_swarm_profile_is_drawn_at_the_start_and_ranges_include_zero() {
    let profile_of = |seed: u64| {
        let seen = Rc::new(RefCell::new(None));
        let mut sim = Sim::new(Config {
            net: NetConfig {
                faults: Faults::Swarm,
                ..NetConfig::default()
            },
            ..Config::default()
        });
        let s = seen.clone();
        sim.client("c", move |_| {
            let s = s.clone();
            async move { *s.borrow_mut() = Some(net::profile()) }
        });
        pass(sim.run_seed(seed));
        let p = seen.borrow().expect("profile read");
        p
    };
    let profiles: Vec<FaultProfile> = (0..40).map(profile_of).collect();
    assert!(
        profiles.iter().any(|p| p.loss_per_mille == 0)
            && profiles.iter().any(|p| p.loss_per_mille > 0)
    );
    assert!(
        profiles.iter().any(|p| p.partition_per_mille == 0)
            && profiles.iter().any(|p| p.partition_per_mille > 0)
    );
    assert!(profiles
        .iter()
        .any(|p| p.reset_per_mille > 0 && p.stall_per_mille > 0 && p.clog_per_mille > 0));
    assert_eq!(
        profile_of(3),
        profile_of(3),
        "the profile is a function of the input"
    );
}

// ---------------------------------------------------------------------------------------
// 5. Failure events
// ---------------------------------------------------------------------------------------

/// Kinds of the network and lifecycle events of a run, as (name, node).
fn lifecycle(report: &Report) -> Vec<(String, String)> {
    report
        .history
        .events()
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::NodeDown { .. } | EventKind::Crash | EventKind::Reset { .. }
            )
        })
        .map(|e| {
            (
                e.kind.name().to_string(),
                e.node.clone().unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn a_crash_notifies_watchers_then_kills_then_resets_survivors() {
    let seen = log::<String>();
    let mut sim = Sim::new(config(FaultProfile::NONE));
    sim.node("server", |_| async {
        let listener = Listener::bind(80).unwrap();
        let mut keep = Vec::new();
        loop {
            keep.push(listener.accept().await.unwrap().0);
        }
    });
    let s = seen.clone();
    sim.client("peer", move |_| {
        let s = s.clone();
        async move {
            let w = net::watch("server").unwrap();
            let mut stream = Stream::connect("server", 80).await.unwrap();
            let s2 = s.clone();
            let reader = spawn(async move {
                let mut buf = [0u8; 4];
                let e = stream.read(&mut buf).await.unwrap_err();
                s2.borrow_mut().push(format!("read {:?}", e.kind()));
            });
            let reason = w.down().await;
            s.borrow_mut().push(format!("down {reason:?}"));
            reader.await.unwrap();
        }
    });
    sim.node("nemesis", |_| async {
        sleep(ms(500)).await;
        node::crash("server").unwrap();
    });
    let report = pass(sim.run_seed(0));
    let got = seen.borrow().clone();
    assert!(got.contains(&"down NodeDown".to_string()), "{got:?}");
    assert!(got.contains(&"read ConnectionReset".to_string()), "{got:?}");
    let order = lifecycle(&report);
    let expect = [("down", "peer"), ("crash", "server"), ("reset", "peer")];
    let expect: Vec<(String, String)> = expect
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(
        order, expect,
        "notify, then kill, then signal the survivors"
    );
}

#[test]
fn a_partition_resets_streams_and_fires_watches_with_no_connection() {
    let seen = log::<String>();
    let mut sim = Sim::new(config(FaultProfile::NONE));
    sim.node("server", |_| async {
        let listener = Listener::bind(80).unwrap();
        let (mut s, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(
            s.read(&mut buf).await.unwrap_err().kind(),
            ErrorKind::ConnectionReset
        );
    });
    let s = seen.clone();
    sim.client("peer", move |_| {
        let s = s.clone();
        async move {
            let w = net::watch("server").unwrap();
            let stream = Stream::connect("server", 80).await.unwrap();
            net::partition(&["peer"], &["server"]).unwrap();
            let reason = w.down().await;
            s.borrow_mut().push(format!("{reason:?}"));
            let mut buf = [0u8; 4];
            let kind = (&stream).read(&mut buf).await.unwrap_err().kind();
            s.borrow_mut().push(format!("{kind:?}"));
            // Watching a node cut off fires at once.
            let again = net::watch("server").unwrap().down().await;
            s.borrow_mut().push(format!("{again:?}"));
            sleep(ms(100)).await;
        }
    });
    pass(sim.run_seed(0));
    assert_eq!(
        *seen.borrow(),
        ["NoConnection", "ConnectionReset", "NoConnection"]
    );
}

#[test]
fn a_crashed_nodes_leftover_work_cannot_send() {
    let got = log();
    let zombie: Rc<RefCell<Option<Socket<u32>>>> = Rc::new(RefCell::new(None));
    let mut sim = Sim::new(config(FaultProfile::NONE));
    sink(&mut sim, "sink", got.clone());
    let z = zombie.clone();
    sim.node("victim", move |ctx| {
        let z = z.clone();
        async move {
            if ctx.incarnation() > 0 {
                return;
            }
            let sock = Socket::<u32>::bind(1).unwrap();
            sock.send(Addr::named("sink", 1), 1); // in flight when the node dies
            *z.borrow_mut() = Some(sock);
        }
    });
    let z = zombie.clone();
    sim.client("nemesis", move |_| {
        let z = z.clone();
        async move {
            sim_core::rt::yield_now().await;
            node::crash("victim").unwrap();
            let sock = z.borrow_mut().take().expect("the victim bound its socket");
            sock.send(Addr::named("sink", 1), 2); // a zombie handle, used from elsewhere
            node::restart("victim").unwrap();
            sock.send(Addr::named("sink", 1), 3); // still a zombie after the restart
            sleep(ms(100)).await;
        }
    });
    let report = pass(sim.run_seed(0));
    assert!(
        got.borrow().is_empty(),
        "nothing of the dead incarnation arrives: {:?}",
        got.borrow()
    );
    let drops: Vec<&str> = report
        .history
        .events()
        .iter()
        .filter(|e| e.kind.name() == "drop")
        .map(|e| e.detail.as_str())
        .collect();
    assert_eq!(drops.len(), 3, "{drops:?}");
    assert_eq!(
        drops
            .iter()
            .filter(|d| d.contains("in-flight traffic is cancelled"))
            .count(),
        1,
        "{drops:?}"
    );
    assert_eq!(
        drops
            .iter()
            .filter(|d| d.contains("sent by a socket whose node crashed"))
            .count(),
        2,
        "{drops:?}"
    );
}

// ---------------------------------------------------------------------------------------
// 6. Located vs faultable
// ---------------------------------------------------------------------------------------

#[test]
fn an_exempt_endpoint_is_located_but_not_faultable() {
    let everything = FaultProfile {
        loss_per_mille: 1000,
        ..FaultProfile::NONE
    };
    let (exempt_got, plain_got) = (log::<u32>(), log::<u32>());
    let fired = log::<DownReason>();
    let mut sim = Sim::new(config(everything));
    let (e, p) = (exempt_got.clone(), plain_got.clone());
    sim.node("store", move |_| {
        let (e, p) = (e.clone(), p.clone());
        async move {
            let exempt = Socket::<u32>::bind_exempt(1).unwrap();
            let plain = Socket::<u32>::bind(2).unwrap();
            spawn(async move {
                loop {
                    let got_one = plain.recv().await.1;
                    p.borrow_mut().push(got_one);
                }
            });
            loop {
                let got_one = exempt.recv().await.1;
                e.borrow_mut().push(got_one);
            }
        }
    });
    let f = fired.clone();
    sim.client("app", move |_| {
        let f = f.clone();
        async move {
            let exempt = Socket::<u32>::bind_exempt(1).unwrap();
            let plain = Socket::<u32>::bind(2).unwrap();
            for n in 0..10 {
                exempt.send(Addr::named("store", 1), n);
                plain.send(Addr::named("store", 2), n);
            }
            sleep(ms(100)).await;
            net::partition(&["app"], &["store"]).unwrap();
            exempt.send(Addr::named("store", 1), 10);
            sleep(ms(100)).await;
            // Located: it receives its node's link events and dies with it.
            net::heal_all();
            let w = net::watch("store").unwrap();
            node::crash("store").unwrap();
            let reason = w.down().await;
            f.borrow_mut().push(reason);
            exempt.send(Addr::named("store", 1), 11);
            sleep(ms(100)).await;
        }
    });
    pass(sim.run_seed(0));
    assert_eq!(
        *exempt_got.borrow(),
        (0..=10).collect::<Vec<_>>(),
        "exempt traffic passes loss and partitions"
    );
    assert!(
        plain_got.borrow().is_empty(),
        "faultable traffic is lost: {:?}",
        plain_got.borrow()
    );
    assert_eq!(*fired.borrow(), [DownReason::NodeDown]);
}

#[test]
fn an_exempt_stream_survives_every_stream_fault() {
    let everything = FaultProfile {
        reset_per_mille: 1000,
        silent_per_mille: 1000,
        ..FaultProfile::EVERYTHING
    };
    for seed in 0..10 {
        let mut sim = Sim::new(config(everything));
        sim.node("store", |_| async {
            let listener = Listener::bind_exempt(5).unwrap();
            let (mut s, _) = listener.accept().await.unwrap();
            let mut got = Vec::new();
            s.read_to_end(&mut got).await.unwrap();
            s.write_all(&got).await.unwrap();
        });
        sim.client("app", |_| async {
            let mut s = Stream::connect_exempt("store", 5).await.unwrap();
            for _ in 0..20 {
                s.write_all(b"durable ").await.unwrap();
            }
            s.close().await.unwrap();
            let mut back = Vec::new();
            s.read_to_end(&mut back).await.unwrap();
            assert_eq!(back, b"durable ".repeat(20));
        });
        pass(sim.run_seed(seed));
    }
}

// ---------------------------------------------------------------------------------------
// 7. The history, and fan-out order
// ---------------------------------------------------------------------------------------

#[test]
fn a_fan_out_follows_creation_order_not_table_order() {
    // Watches and connections are created interleaved: watch, conn, watch, conn. A partition
    // reaches all four; its events must come in that order.
    let mut sim = Sim::new(config(FaultProfile::NONE));
    sim.node("server", |_| async {
        let listener = Listener::bind(80).unwrap();
        let mut keep = Vec::new();
        loop {
            keep.push(listener.accept().await.unwrap().0);
        }
    });
    sim.client("peer", |_| async {
        let w1 = net::watch("server").unwrap();
        let c1 = Stream::connect("server", 80).await.unwrap();
        let w2 = net::watch("server").unwrap();
        let c2 = Stream::connect("server", 80).await.unwrap();
        net::partition(&["peer"], &["server"]).unwrap();
        drop((w1, c1, w2, c2));
    });
    let report = pass(sim.run_seed(0));
    let fan_out: Vec<String> = report
        .history
        .events()
        .iter()
        .skip_while(|e| e.kind.name() != "fault")
        .filter_map(|e| match e.kind {
            EventKind::NodeDown { watch, .. } => Some(format!("watch{watch}")),
            EventKind::Reset { conn } => {
                Some(format!("conn{conn}@{}", e.node.as_deref().unwrap_or("-")))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        fan_out,
        [
            "watch0",
            "conn0@peer",
            "conn0@server",
            "watch1",
            "conn1@peer",
            "conn1@server"
        ],
        "creation order"
    );
}

/// A run that produces every kind of network event.
fn eventful(recording: Recording, seed: u64) -> Report {
    let profile = FaultProfile {
        duplicate_per_mille: 300,
        stall_per_mille: 300,
        stall_ms_max: 50,
        ..FaultProfile::NONE
    };
    let mut sim = Sim::new(Config {
        recording,
        ..config(profile)
    });
    sink(&mut sim, "b", log());
    sim.node("server", |_| async {
        let listener = Listener::bind(80).unwrap();
        loop {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 64];
            while let Ok(n) = s.read(&mut buf).await {
                if n == 0 {
                    break;
                }
            }
        }
    });
    sim.client("a", |_| async {
        let w = net::watch("server").unwrap();
        let sock = Socket::<u32>::bind(1).unwrap();
        let mut s = Stream::connect("server", 80).await.unwrap();
        net::clog(&["a"], &["b"]).unwrap();
        for n in 0..20 {
            sock.send(Addr::named("b", 1), n);
            s.write_all(b"bytes").await.unwrap();
            sleep(ms(5)).await;
        }
        net::unclog(&["a"], &["b"]).unwrap();
        net::partition(&["a"], &["b", "server"]).unwrap();
        sock.send(Addr::named("b", 1), 99);
        let _ = w.down().await;
        sleep(ms(50)).await;
    });
    sim.run_seed(seed)
}

#[test]
fn every_network_event_is_in_the_history_and_its_hash() {
    let report = pass(eventful(Recording::Full, 1));
    for kind in [
        "send", "deliver", "drop", "dup", "hold", "release", "reset", "down", "fault",
    ] {
        assert!(
            report
                .history
                .events()
                .iter()
                .any(|e| e.kind.name() == kind),
            "no {kind} event"
        );
    }
    let hash_only = eventful(Recording::HashOnly, 1);
    assert_eq!(
        hash_only.outcome.history_hash, report.outcome.history_hash,
        "recording does not change the hash"
    );
    assert_eq!(
        eventful(Recording::HashOnly, 1).outcome.history_hash,
        hash_only.outcome.history_hash
    );
    assert_ne!(
        eventful(Recording::HashOnly, 2).outcome.history_hash,
        hash_only.outcome.history_hash
    );
}

// ---------------------------------------------------------------------------------------
// Property: without loss or partitions, exactly once; streams in per-link order
// ---------------------------------------------------------------------------------------

/// Three senders each send 30 datagrams and 30 stream chunks to one receiver, under clogs,
/// stalls and jitter but no loss, duplication, reordering, partition or reset.
fn delivery_run(seed: u64) -> (BTreeMap<String, Vec<u32>>, BTreeMap<String, Vec<u32>>) {
    let profile = FaultProfile {
        clog_per_mille: 30,
        clog_ms_max: 300,
        stall_per_mille: 50,
        stall_ms_max: 100,
        ..FaultProfile::NONE
    };
    let net = NetConfig {
        latency_ms_min: 0,
        latency_ms_max: 20,
        jitter_ms_max: 10,
        faults: Faults::Fixed(profile),
    };
    let datagrams = Rc::new(RefCell::new(BTreeMap::<String, Vec<u32>>::new()));
    let streams = Rc::new(RefCell::new(BTreeMap::<String, Vec<u32>>::new()));
    let mut sim = Sim::new(Config {
        net,
        ..Config::default()
    });
    let (d, s) = (datagrams.clone(), streams.clone());
    sim.node("rx", move |_| {
        let (d, s) = (d.clone(), s.clone());
        async move {
            let sock = Socket::<(String, u32)>::bind(1).unwrap();
            let listener = Listener::bind(2).unwrap();
            spawn(async move {
                loop {
                    let (mut stream, from) = listener.accept().await.unwrap();
                    let s = s.clone();
                    spawn(async move {
                        let mut bytes = Vec::new();
                        stream.read_to_end(&mut bytes).await.unwrap();
                        let name = format!("{from:?}").split(':').next().unwrap().to_string();
                        let nums = bytes
                            .chunks(4)
                            .map(|c| u32::from_be_bytes(c.try_into().unwrap()))
                            .collect();
                        s.borrow_mut().insert(name, nums);
                    });
                }
            });
            loop {
                let (_, (from, n)) = sock.recv().await;
                d.borrow_mut().entry(from).or_default().push(n);
            }
        }
    });
    for name in ["tx1", "tx2", "tx3"] {
        sim.node(name, move |_| async move {
            let sock = Socket::<(String, u32)>::bind(1).unwrap();
            let mut stream = Stream::connect("rx", 2).await.unwrap();
            for n in 0..30u32 {
                sock.send(Addr::named("rx", 1), (name.to_string(), n));
                stream.write_all(&n.to_be_bytes()).await.unwrap();
                let pause = sim_core::sim::draw(|s| {
                    sim_core::choice::Choices::below(s, "test.pause_ms", 4)
                });
                sleep(ms(pause)).await;
            }
            stream.close().await.unwrap();
        });
    }
    sim.client("wait", |_| sleep(Duration::from_secs(20)));
    pass(sim.run_seed(seed));
    let (d, s) = (datagrams.borrow().clone(), streams.borrow().clone());
    (d, s)
}

#[test]
fn property_without_loss_or_partitions_every_message_arrives_exactly_once_in_order() {
    let expect: Vec<u32> = (0..30).collect();
    for seed in 0..150 {
        let (datagrams, streams) = delivery_run(seed);
        for name in ["tx1", "tx2", "tx3"] {
            assert_eq!(
                datagrams.get(name),
                Some(&expect),
                "seed {seed}: datagrams from {name}"
            );
            assert_eq!(
                streams.get(name),
                Some(&expect),
                "seed {seed}: stream bytes from {name}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Cost: an 11-minute partition
// ---------------------------------------------------------------------------------------

#[test]
fn an_eleven_minute_partition_with_traffic_is_cheap_in_wall_time() {
    let got = log();
    let budget_time = Duration::from_secs(3600);
    let mut sim = Sim::new(Config {
        recording: Recording::HashOnly,
        budget_time,
        ..config(FaultProfile::NONE)
    });
    sink(&mut sim, "b", got.clone());
    sim.client("a", |_| async {
        net::at(
            at_ms(60_000),
            Control::Partition {
                a: vec!["a".into()],
                b: vec!["b".into()],
            },
        )
        .unwrap();
        net::at(at_ms(60_000 + 11 * 60_000), Control::HealAll).unwrap();
        let sock = Socket::<u32>::bind(1).unwrap();
        // A heartbeat every 100 ms for 13 minutes.
        for n in 0..(13 * 600) {
            sock.send(Addr::named("b", 1), n);
            sleep(ms(100)).await;
        }
    });
    let started = std::time::Instant::now();
    let report = pass(sim.run_seed(0));
    let wall = started.elapsed();
    let got = got.borrow();
    let dropped = 13 * 600 - got.len();
    assert_eq!(
        dropped,
        11 * 600,
        "every heartbeat of the 11 minutes is dropped, no other"
    );
    eprintln!(
        "11-minute partition: {} simulated minutes, {} events, {} heartbeats dropped, wall time {:.1} ms",
        report.outcome.sim_time_ns / 60_000_000_000,
        report.outcome.steps,
        dropped,
        wall.as_secs_f64() * 1e3
    );
}

#[test]
fn a_connect_times_out_under_a_long_partition_and_succeeds_after_the_heal() {
    let mut sim = Sim::new(Config {
        budget_time: Duration::from_secs(3600),
        ..config(FaultProfile::NONE)
    });
    sim.node("server", |_| async {
        let listener = Listener::bind(80).unwrap();
        loop {
            drop(listener.accept().await.unwrap());
        }
    });
    sim.client("a", |_| async {
        net::partition(&["a"], &["server"]).unwrap();
        assert!(
            timeout(Duration::from_secs(660), Stream::connect("server", 80))
                .await
                .is_err()
        );
        net::heal_all();
        let s = timeout(Duration::from_secs(1), Stream::connect("server", 80)).await;
        assert!(
            matches!(s, Ok(Ok(_))),
            "after the heal the connect goes through"
        );
    });
    pass(sim.run_seed(0));
}

/// Liveness is judged after a heal phase: once the workload is done the network draws no new
/// fault, so an `eventually` property is not failed by faults that never stop.
#[test]
fn no_fault_is_drawn_after_the_workload_is_done() {
    let mut config = Config {
        recording: Recording::Full,
        ..Config::default()
    };
    config.net.faults = Faults::Fixed(FaultProfile {
        partition_per_mille: 500,
        partition_ms_max: 50,
        ..FaultProfile::NONE
    });
    let mut sim = Sim::new(config);
    sim.node("a", |_| async {
        let sock = Socket::<u32>::bind(1).unwrap();
        for n in 0.. {
            sock.send(Addr::named("b", 1), n);
            sim_core::time::sleep(Duration::from_millis(10)).await;
        }
    });
    sim.node("b", |_| async {
        let _sock = Socket::<u32>::bind(1).unwrap();
        std::future::pending::<()>().await;
    });
    sim.client("client", |_| {
        sim_core::time::sleep(Duration::from_millis(200))
    });
    sim.eventually("never", Duration::from_secs(2), || false);
    let report = sim.run_seed(3);
    assert_eq!(report.outcome.class, sim_core::report::Class::Liveness);
    let faults: Vec<u64> = report
        .history
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Fault { .. }) && e.detail.starts_with("partition"))
        .map(|e| e.time_ns)
        .collect();
    assert!(
        faults.iter().any(|&t| t < 200_000_000),
        "faults are drawn during the workload: {faults:?}"
    );
    assert!(
        faults.iter().all(|&t| t <= 200_000_000),
        "a fault was drawn after the workload: {faults:?}"
    );
}
