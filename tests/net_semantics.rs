//! The network's semantics, one test per promise: addressing, datagram latency and faults,
//! and TCP's stream semantics.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::rc::Rc;
use std::time::Duration;

use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use sim_core::choice::Input;
use sim_core::net::{
    self, Addr, FaultProfile, Faults, Listener, NetConfig, NetError, Socket, Stream,
};
use sim_core::node;
use sim_core::sim::{Config, Report, Sim};
use sim_core::time::{now, sleep, timeout, Instant};

use acceptance::{log, net_config as config};

fn pass(report: Report) -> Report {
    assert!(
        report.outcome.class.is_pass(),
        "{:?}\n{}",
        report.outcome,
        tail(&report)
    );
    report
}

fn tail(report: &Report) -> String {
    let events = report.history.events();
    sim_core::trace::render_lines(&events[events.len().saturating_sub(30)..])
}

/// A datagram server that answers every message with its node's name.
fn name_server(sim: &mut Sim, name: &'static str) {
    sim.node(name, move |_| async move {
        let sock = Socket::<String>::bind(1).unwrap();
        loop {
            let (from, _) = sock.recv().await;
            sock.send(from, name.to_string());
        }
    });
}

// ---------------------------------------------------------------------------------------
// 1. Addressing by name
// ---------------------------------------------------------------------------------------

/// Which servers answered, before and after the route changed.
fn routed(input: &Input) -> (BTreeSet<String>, BTreeSet<String>) {
    let before = log::<String>();
    let after = log::<String>();
    let mut sim = Sim::new(config(FaultProfile::NONE));
    name_server(&mut sim, "a");
    name_server(&mut sim, "b");
    let (b1, a1) = (before.clone(), after.clone());
    sim.client("client", move |_| {
        let (before, after) = (b1.clone(), a1.clone());
        async move {
            net::route("svc", &["a", "b"]).unwrap();
            let sock = Socket::<String>::bind(1).unwrap();
            for _ in 0..8 {
                sock.send(Addr::named("svc", 1), String::new());
                let got_one = sock.recv().await.1;
                before.borrow_mut().push(got_one);
            }
            net::route("svc", &["b"]).unwrap();
            for _ in 0..8 {
                sock.send(Addr::named("svc", 1), String::new());
                let got_one = sock.recv().await.1;
                after.borrow_mut().push(got_one);
            }
            // Streams resolve routed names per connection too.
            let s = Stream::connect("svc", 2).await.map(drop);
            assert_eq!(
                s.unwrap_err().kind(),
                ErrorKind::ConnectionRefused,
                "b has no listener on port 2"
            );
        }
    });
    pass(sim.run_input(input));
    let b = before.borrow().iter().cloned().collect();
    let a = after.borrow().iter().cloned().collect();
    (b, a)
}

#[test]
fn a_routed_name_picks_one_node_per_connection_and_can_change_during_a_run() {
    let (before, after) = routed(&Input::Bytes(Vec::new()));
    assert_eq!(
        before,
        BTreeSet::from(["a".to_string()]),
        "zero input picks the first node"
    );
    assert_eq!(after, BTreeSet::from(["b".to_string()]));
    let mut seen = BTreeSet::new();
    for seed in 0..10 {
        let (before, after) = routed(&Input::Seed(seed));
        assert_eq!(
            after,
            BTreeSet::from(["b".to_string()]),
            "seed {seed}: after the change only b answers"
        );
        seen.extend(before);
    }
    assert_eq!(
        seen.len(),
        2,
        "the input picks among the route's nodes: {seen:?}"
    );
}

#[test]
fn naming_errors_are_typed() {
    let mut sim = Sim::new(Config::default());
    sim.node("a", |_| async {});
    sim.client("client", |_| async {
        assert_eq!(
            net::route("a", &["a"]),
            Err(NetError::RouteShadowsNode("a".into()))
        );
        assert_eq!(
            net::route("svc", &["nope"]),
            Err(NetError::UnknownName("nope".into()))
        );
        assert_eq!(
            net::route("svc", &[]),
            Err(NetError::EmptyRoute("svc".into()))
        );
        let e = Stream::connect("nope", 1).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
    });
    pass(sim.run_seed(0));
}

// ---------------------------------------------------------------------------------------
// 2. Datagrams: latency, jitter, and loss / duplication / reordering as separate faults
// ---------------------------------------------------------------------------------------

/// One-way latencies (ms) of 10 messages on each of two links, sent 100 ms apart.
fn latencies(input: &Input, net: NetConfig) -> Vec<Vec<u64>> {
    let seen = log::<(String, u64)>();
    let mut sim = Sim::new(Config {
        net,
        ..Config::default()
    });
    for name in ["a", "b"] {
        let s = seen.clone();
        sim.node(name, move |_| {
            let s = s.clone();
            async move {
                let sock = Socket::<u64>::bind(1).unwrap();
                loop {
                    let (_, sent_ns) = sock.recv().await;
                    s.borrow_mut()
                        .push((name.to_string(), (now().as_nanos() - sent_ns) / 1_000_000));
                }
            }
        });
    }
    sim.client("client", |_| async {
        let sock = Socket::<u64>::bind(1).unwrap();
        for _ in 0..10 {
            for name in ["a", "b"] {
                sock.send(Addr::named(name, 1), now().as_nanos());
            }
            sleep(Duration::from_millis(100)).await;
        }
    });
    pass(sim.run_input(input));
    let seen = seen.borrow();
    ["a", "b"]
        .iter()
        .map(|n| {
            seen.iter()
                .filter(|(m, _)| m == n)
                .map(|(_, l)| *l)
                .collect()
        })
        .collect()
}

#[test]
fn latency_is_drawn_per_link_within_bounds_and_jitter_varies_it_per_message() {
    let net = NetConfig {
        latency_ms_min: 5,
        latency_ms_max: 20,
        jitter_ms_max: 3,
        faults: Faults::Off,
    };
    let zero = latencies(&Input::Bytes(Vec::new()), net);
    assert_eq!(
        zero,
        vec![vec![5; 10], vec![5; 10]],
        "zero input is the minimum latency"
    );
    let mut link_differs = false;
    let mut jitter_seen = false;
    let mut bases = BTreeSet::new();
    for seed in 0..20 {
        let l = latencies(&Input::Seed(seed), net);
        for link in &l {
            assert_eq!(link.len(), 10);
            assert!(
                link.iter().all(|&ms| (5..=23).contains(&ms)),
                "seed {seed}: {l:?}"
            );
            let (lo, hi) = (link.iter().min().unwrap(), link.iter().max().unwrap());
            assert!(
                hi - lo <= 3,
                "seed {seed}: jitter beyond the bound: {link:?}"
            );
            jitter_seen |= hi != lo;
            bases.insert(*lo);
        }
        link_differs |= l[0].iter().min() != l[1].iter().min();
    }
    assert!(link_differs, "links of one run get their own latencies");
    assert!(jitter_seen, "jitter varies messages of one link");
    assert!(bases.len() > 3, "link latencies are drawn: {bases:?}");
}

/// Sends 0..200 from client to server; returns what arrived, in order.
fn datagrams(input: &Input, faults: FaultProfile) -> Vec<u32> {
    let got = log::<u32>();
    let mut sim = Sim::new(config(faults));
    let g = got.clone();
    sim.node("server", move |_| {
        let g = g.clone();
        async move {
            let sock = Socket::<u32>::bind(1).unwrap();
            loop {
                let got_one = sock.recv().await.1;
                g.borrow_mut().push(got_one);
            }
        }
    });
    sim.client("client", |_| async {
        let sock = Socket::<u32>::bind(1).unwrap();
        for n in 0..200 {
            sock.send(Addr::named("server", 1), n);
            sleep(Duration::from_micros(300)).await;
        }
        sleep(Duration::from_secs(1)).await;
    });
    pass(sim.run_input(input));
    let v = got.borrow().clone();
    v
}

#[test]
fn loss_duplication_and_reordering_are_separate_switches() {
    let all: Vec<u32> = (0..200).collect();
    let none = FaultProfile::NONE;
    let loss = FaultProfile {
        loss_per_mille: 200,
        ..none
    };
    let dup = FaultProfile {
        duplicate_per_mille: 200,
        ..none
    };
    let reorder = FaultProfile {
        reorder_per_mille: 200,
        reorder_ms_max: 20,
        ..none
    };
    for seed in 0..5 {
        let input = Input::Seed(seed);
        assert_eq!(
            datagrams(&input, none),
            all,
            "seed {seed}: no faults: exactly once, in order"
        );

        let got = datagrams(&input, loss);
        assert!(got.len() < 200, "seed {seed}: loss loses");
        assert!(
            got.windows(2).all(|w| w[0] < w[1]),
            "seed {seed}: loss alone neither duplicates nor reorders"
        );

        let got = datagrams(&input, dup);
        assert!(got.len() > 200, "seed {seed}: duplication duplicates");
        assert!(
            got.windows(2).all(|w| w[0] <= w[1]),
            "seed {seed}: duplication alone does not reorder"
        );
        assert_eq!(
            got.iter().copied().collect::<BTreeSet<_>>().len(),
            200,
            "seed {seed}: duplication alone loses nothing"
        );

        let got = datagrams(&input, reorder);
        let mut sorted = got.clone();
        sorted.sort();
        assert_eq!(
            sorted, all,
            "seed {seed}: reordering alone loses and duplicates nothing"
        );
        assert_ne!(got, all, "seed {seed}: reordering reorders");
    }
    // Zero input: every fault is off even when the profile allows it.
    let everything = FaultProfile::EVERYTHING;
    assert_eq!(datagrams(&Input::Bytes(Vec::new()), everything), all);
}

#[test]
fn same_instant_datagrams_arrive_in_an_order_drawn_from_the_input() {
    let order = |input: &Input| {
        let got = log::<String>();
        let net = NetConfig {
            latency_ms_min: 5,
            latency_ms_max: 5,
            jitter_ms_max: 0,
            faults: Faults::Off,
        };
        // FIFO scheduling draws nothing: the senders always send in the same order, and only
        // the tie-break at the shared arrival instant is left to the input.
        let strategy = sim_core::rt::Strategy::Fifo;
        let mut sim = Sim::new(Config {
            net,
            strategy,
            ..Config::default()
        });
        let g = got.clone();
        sim.node("server", move |_| {
            let g = g.clone();
            async move {
                let sock = Socket::<String>::bind(1).unwrap();
                loop {
                    let got_one = sock.recv().await.1;
                    g.borrow_mut().push(got_one);
                }
            }
        });
        for name in ["x", "y", "z"] {
            sim.node(name, move |_| async move {
                Socket::<String>::bind(1)
                    .unwrap()
                    .send(Addr::named("server", 1), name.to_string());
            });
        }
        sim.client("wait", |_| sleep(Duration::from_secs(1)));
        pass(sim.run_input(input));
        let v = got.borrow().concat();
        v
    };
    assert_eq!(
        order(&Input::Bytes(Vec::new())),
        "xyz",
        "zero = the order they were sent"
    );
    let orders: BTreeSet<String> = (0..30).map(|s| order(&Input::Seed(s))).collect();
    assert!(orders.len() > 2, "{orders:?}");
}

// ---------------------------------------------------------------------------------------
// 3. Streams
// ---------------------------------------------------------------------------------------

/// A scenario with a stream server on node "server" (port 80) and one client.
fn stream_sim<S, SF, C, CF>(faults: FaultProfile, server: S, client: C) -> Sim
where
    S: Fn(Listener) -> SF + 'static,
    SF: std::future::Future<Output = ()> + 'static,
    C: Fn() -> CF + 'static,
    CF: std::future::Future<Output = ()> + 'static,
{
    let mut sim = Sim::new(config(faults));
    let server = Rc::new(server);
    sim.node("server", move |_| {
        let server = server.clone();
        async move { server(Listener::bind(80).unwrap()).await }
    });
    sim.client("client", move |_| client());
    sim
}

#[test]
fn connect_completes_in_the_backlog_before_accept() {
    let sim = stream_sim(
        FaultProfile::NONE,
        |listener| async move {
            sleep(Duration::from_secs(10)).await;
            let (mut s, _) = listener.accept().await.unwrap();
            let mut got = [0u8; 5];
            s.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"early");
            s.write_all(b"ok").await.unwrap();
        },
        || async {
            let mut s = timeout(Duration::from_secs(1), Stream::connect("server", 80))
                .await
                .expect("connect must not wait for accept")
                .unwrap();
            assert!(now() < Instant::from_nanos(1_000_000_000));
            s.write_all(b"early").await.unwrap();
            let mut got = [0u8; 2];
            s.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"ok");
            assert!(
                now() >= Instant::from_nanos(10_000_000_000),
                "the reply came after the late accept"
            );
        },
    );
    pass(sim.run_seed(1));
}

#[test]
fn half_close_lets_the_peer_keep_writing() {
    for seed in 0..20 {
        let sim = stream_sim(
            FaultProfile::NONE,
            |listener| async move {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut request = Vec::new();
                s.read_to_end(&mut request).await.unwrap();
                // EOF means the client will send no more — not that it stopped reading.
                s.write_all(&request).await.unwrap();
                s.write_all(b"!").await.unwrap();
            },
            || async {
                let mut s = Stream::connect("server", 80).await.unwrap();
                s.write_all(b"ping").await.unwrap();
                s.close().await.unwrap();
                assert_eq!(
                    s.write_all(b"x").await.unwrap_err().kind(),
                    ErrorKind::BrokenPipe,
                    "write after shutdown"
                );
                let mut reply = Vec::new();
                s.read_to_end(&mut reply).await.unwrap();
                assert_eq!(reply, b"ping!");
            },
        );
        pass(sim.run_seed(seed));
    }
}

#[test]
fn the_first_write_after_a_closed_peers_fin_succeeds_and_the_next_fails() {
    let sim = stream_sim(
        FaultProfile::NONE,
        |listener| async move {
            let (s, _) = listener.accept().await.unwrap();
            drop(s); // full close, nothing unread: a FIN
            sleep(Duration::from_secs(10)).await;
        },
        || async {
            let mut s = Stream::connect("server", 80).await.unwrap();
            let mut buf = [0u8; 8];
            assert_eq!(s.read(&mut buf).await.unwrap(), 0, "the FIN reads as EOF");
            s.write_all(b"first")
                .await
                .expect("the first write after the FIN succeeds");
            let second = s.write_all(b"second").await.unwrap_err();
            assert_eq!(second.kind(), ErrorKind::BrokenPipe);
        },
    );
    pass(sim.run_seed(2));
}

#[test]
fn closing_with_unread_data_resets_the_peer_which_reads_what_arrived_first() {
    let sim = stream_sim(
        FaultProfile::NONE,
        |listener| async move {
            let (mut s, _) = listener.accept().await.unwrap();
            s.write_all(b"partial reply").await.unwrap();
            sleep(Duration::from_secs(1)).await; // the client's bytes have arrived, unread
            drop(s);
        },
        || async {
            let mut s = Stream::connect("server", 80).await.unwrap();
            s.write_all(b"request nobody reads").await.unwrap();
            sleep(Duration::from_secs(2)).await;
            let mut got = Vec::new();
            let err = s.read_to_end(&mut got).await.unwrap_err();
            assert_eq!(
                got, b"partial reply",
                "what arrived before the reset is still read"
            );
            assert_eq!(err.kind(), ErrorKind::ConnectionReset);
        },
    );
    pass(sim.run_seed(3));
}

#[test]
fn connect_without_a_listener_is_refused() {
    let mut sim = Sim::new(config(FaultProfile::NONE));
    sim.node("server", |_| async { sleep(Duration::from_secs(5)).await });
    sim.client("client", |_| async {
        let err = timeout(Duration::from_secs(1), Stream::connect("server", 80))
            .await
            .expect("refused fast")
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ConnectionRefused);
    });
    pass(sim.run_seed(0));
}

#[test]
fn connect_across_a_partition_is_black_holed() {
    let sim = stream_sim(
        FaultProfile::NONE,
        |listener| async move {
            let _ = listener.accept().await;
            panic!("nothing may get through the partition");
        },
        || async {
            net::partition(&["client"], &["server"]).unwrap();
            let r = timeout(Duration::from_secs(30), Stream::connect("server", 80)).await;
            assert!(
                r.is_err(),
                "a black-holed connect never completes, it is not refused: {r:?}"
            );
        },
    );
    pass(sim.run_seed(0));
}

/// Sends `chunks` numbered 4-byte chunks and checks they all arrive, in order.
fn bulk(faults: FaultProfile, seed: u64, chunks: u32) -> Report {
    let sim = stream_sim(
        faults,
        move |listener| async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut got = Vec::new();
            s.read_to_end(&mut got).await.unwrap();
            let expect: Vec<u8> = (0..chunks).flat_map(u32::to_be_bytes).collect();
            assert_eq!(got, expect, "every byte, once, in order");
            s.write_all(b"done").await.unwrap();
        },
        move || async move {
            let mut s = Stream::connect("server", 80).await.unwrap();
            for n in 0..chunks {
                s.write_all(&n.to_be_bytes()).await.unwrap();
                sleep(Duration::from_millis(1)).await;
            }
            s.close().await.unwrap();
            let mut done = Vec::new();
            s.read_to_end(&mut done).await.unwrap();
            assert_eq!(done, b"done");
        },
    );
    sim.run_seed(seed)
}

fn count(report: &Report, kind: &str) -> usize {
    report
        .history
        .events()
        .iter()
        .filter(|e| e.kind.name() == kind)
        .count()
}

#[test]
fn a_stall_holds_bytes_and_loses_none() {
    let stall = FaultProfile {
        stall_per_mille: 100,
        stall_ms_max: 300,
        ..FaultProfile::NONE
    };
    for seed in 0..10 {
        let quiet = pass(bulk(FaultProfile::NONE, seed, 50));
        let stalled = pass(bulk(stall, seed, 50));
        assert!(
            count(&stalled, "hold") > 0 && count(&stalled, "release") > 0,
            "seed {seed}: the stall held bytes"
        );
        assert_eq!(count(&quiet, "hold"), 0);
        assert!(
            stalled.outcome.sim_time_ns > quiet.outcome.sim_time_ns,
            "seed {seed}: held bytes arrive later"
        );
    }
}

#[test]
fn a_reset_fault_resets_both_ends() {
    let reset = FaultProfile {
        reset_per_mille: 1000,
        ..FaultProfile::NONE
    };
    let sim = stream_sim(
        reset,
        |listener| async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4];
            assert_eq!(
                s.read(&mut buf).await.unwrap_err().kind(),
                ErrorKind::ConnectionReset
            );
        },
        || async {
            let mut s = Stream::connect("server", 80).await.unwrap();
            s.write_all(b"doomed").await.unwrap();
            let mut buf = [0u8; 4];
            assert_eq!(
                s.read(&mut buf).await.unwrap_err().kind(),
                ErrorKind::ConnectionReset
            );
            assert_eq!(
                s.write_all(b"more").await.unwrap_err().kind(),
                ErrorKind::ConnectionReset
            );
        },
    );
    let report = pass(sim.run_seed(0));
    assert_eq!(count(&report, "reset"), 2, "one reset event per end");
}

#[test]
fn a_silent_peer_sends_nothing_back_not_even_a_reset() {
    let silent = FaultProfile {
        silent_per_mille: 1000,
        ..FaultProfile::NONE
    };
    let sim = stream_sim(
        silent,
        |listener| async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4];
            let r = timeout(Duration::from_secs(30), s.read(&mut buf)).await;
            assert!(
                r.is_err(),
                "nothing arrives from a silenced connection: {r:?}"
            );
        },
        || async {
            let mut s = Stream::connect("server", 80).await.unwrap();
            s.write_all(b"hello?").await.expect("writes still succeed");
            s.close().await.unwrap();
            let mut buf = Vec::new();
            let r = timeout(Duration::from_secs(30), s.read_to_end(&mut buf)).await;
            assert!(r.is_err(), "no data, no FIN, no reset: {r:?}");
        },
    );
    // Zero input: the connection falls silent before its first byte.
    pass(sim.run_input(&Input::Bytes(Vec::new())));
}

/// Framing code written against the `futures::io` traits, as it would be for real sockets.
async fn write_frame<W: AsyncWrite + Unpin>(w: &mut W, body: &[u8]) -> std::io::Result<()> {
    w.write_all(&(body.len() as u32).to_be_bytes()).await?;
    w.write_all(body).await
}

async fn read_frame<R: AsyncRead + Unpin>(r: &mut R) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    r.read_exact(&mut body).await?;
    Ok(body)
}

#[test]
fn framing_code_for_real_sockets_runs_on_streams() {
    let sim = stream_sim(
        FaultProfile::NONE,
        |listener| async move {
            let (s, _) = listener.accept().await.unwrap();
            // `&Stream` is AsyncRead + AsyncWrite too: read and write through shared references.
            let (mut r, mut w) = (&s, &s);
            while let Ok(frame) = read_frame(&mut r).await {
                write_frame(&mut w, &frame.iter().rev().copied().collect::<Vec<_>>())
                    .await
                    .unwrap();
            }
        },
        || async {
            let mut s = Stream::connect("server", 80).await.unwrap();
            for text in ["abc", "", "hello world"] {
                write_frame(&mut s, text.as_bytes()).await.unwrap();
                let back = read_frame(&mut s).await.unwrap();
                assert_eq!(back, text.bytes().rev().collect::<Vec<_>>());
            }
        },
    );
    pass(sim.run_seed(4));
}

#[test]
fn a_stream_of_a_crashed_node_is_dead_to_its_zombie_holder() {
    let held: Rc<RefCell<Option<Stream>>> = Rc::new(RefCell::new(None));
    let mut sim = Sim::new(config(FaultProfile::NONE));
    sim.node("server", |_| async {
        let listener = Listener::bind(80).unwrap();
        loop {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut got = Vec::new();
            let _ = s.read_to_end(&mut got).await;
            assert!(got.is_empty(), "a zombie's bytes arrived: {got:?}");
        }
    });
    let h = held.clone();
    sim.node("victim", move |ctx| {
        let h = h.clone();
        async move {
            if ctx.incarnation() == 0 {
                *h.borrow_mut() = Some(Stream::connect("server", 80).await.unwrap());
            }
        }
    });
    let h = held.clone();
    sim.client("nemesis", move |_| {
        let h = h.clone();
        async move {
            sleep(Duration::from_secs(1)).await;
            node::crash("victim").unwrap();
            let mut s = h.borrow_mut().take().expect("the victim connected");
            let err = s.write_all(b"from beyond").await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::NotConnected);
        }
    });
    pass(sim.run_seed(0));
}
