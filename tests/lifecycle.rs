//! The lifecycle: graceful stop, pause and resume, the nemesis drawing them per run, and the
//! heal phase.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use futures::future::{select, Either};
use sim_core::choice::Choices;
use sim_core::faults::FaultKinds;
use sim_core::nemesis::{LifecycleFaults, LifecycleProfile};
use sim_core::net::{Addr, Socket};
use sim_core::node::{crash, is_paused, is_up, pause, resume, stop, LifecycleError, NodeCtx};
use sim_core::report::Class;
use sim_core::sim::{self, for_each_seed, Config, Report, Sim};
use sim_core::time::{sleep, timeout};
use sim_core::trace::{Event, EventKind, Recording};

fn recorded() -> Config {
    Config {
        recording: Recording::Full,
        ..Config::default()
    }
}

fn on(events: &[Event], node: &str, kind: fn(&EventKind) -> bool) -> Vec<(u64, String)> {
    events
        .iter()
        .filter(|e| e.node.as_deref() == Some(node) && kind(&e.kind))
        .map(|e| (e.time_ns, e.detail.clone()))
        .collect()
}

/// A scenario with one server (built by `server`) and an operator that stops it at 1 ms with
/// `grace`, then checks it is down 2 s later.
fn stop_scenario<F, Fut>(server: F, grace: Duration) -> Report
where
    F: Fn(NodeCtx) -> Fut + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    let mut sim = Sim::new(recorded());
    sim.node("server", server);
    sim.client("operator", move |_| async move {
        sleep(Duration::from_millis(1)).await;
        stop("server", grace).unwrap();
        sleep(Duration::from_secs(2)).await;
        assert!(
            !is_up("server"),
            "a stopped node is down, one way or the other"
        );
    });
    sim.run_seed(0)
}

#[test]
fn a_stop_lets_a_node_that_handles_it_exit_within_its_grace() {
    let report = stop_scenario(
        |ctx| async move {
            ctx.shutdown().await;
            sleep(Duration::from_millis(5)).await;
        },
        Duration::from_secs(1),
    );
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    let events = report.history.events();
    let stops = on(events, "server", |k| matches!(k, EventKind::Stop { .. }));
    let exits = on(events, "server", |k| matches!(k, EventKind::Exit));
    assert_eq!(stops.len(), 1);
    assert_eq!(stops[0].0, 1_000_000);
    assert_eq!(exits.len(), 1, "it exits by itself");
    assert_eq!(exits[0].0, 6_000_000, "when its main task returned");
    assert!(on(events, "server", |k| matches!(k, EventKind::Crash)).is_empty());
}

#[test]
fn a_node_that_overstays_its_grace_is_crashed_at_the_deadline() {
    let report = stop_scenario(
        |ctx| async move {
            ctx.shutdown().await;
            sleep(Duration::from_secs(10)).await;
        },
        Duration::from_millis(100),
    );
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    let events = report.history.events();
    let crashes = on(events, "server", |k| matches!(k, EventKind::Crash));
    assert_eq!(crashes.len(), 1);
    assert_eq!(crashes[0].0, 101_000_000, "at the end of the grace period");
    assert!(
        crashes[0].1.contains("grace period over"),
        "{:?}",
        crashes[0]
    );
    assert!(on(events, "server", |k| matches!(k, EventKind::Exit)).is_empty());
}

#[test]
fn a_node_without_a_shutdown_handler_is_crashed_at_once() {
    let report = stop_scenario(
        |_| async move { sleep(Duration::from_secs(10)).await },
        Duration::from_secs(1),
    );
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    let crashes = on(report.history.events(), "server", |k| {
        matches!(k, EventKind::Crash)
    });
    assert_eq!(crashes.len(), 1);
    assert_eq!(
        crashes[0].0, 1_000_000,
        "the default action of an unhandled signal"
    );
    assert!(crashes[0].1.contains("without a shutdown handler"));
}

#[test]
fn lifecycle_controls_answer_bad_requests_with_typed_errors() {
    let mut sim = Sim::new(Config::default());
    sim.node("server", |_| async { sleep(Duration::from_secs(60)).await });
    sim.node("handler", |ctx| async move { ctx.shutdown().await });
    sim.client("operator", |_| async {
        assert_eq!(
            resume("server"),
            Err(LifecycleError::NotPaused("server".into()))
        );
        pause("server").unwrap();
        assert!(is_paused("server"));
        assert_eq!(
            pause("server"),
            Err(LifecycleError::AlreadyPaused("server".into()))
        );
        // A paused node can still be crashed; the crash ends the pause.
        crash("server").unwrap();
        assert!(!is_paused("server"));
        assert_eq!(
            pause("server"),
            Err(LifecycleError::AlreadyDown("server".into()))
        );
        assert_eq!(
            stop("server", Duration::from_secs(1)),
            Err(LifecycleError::AlreadyDown("server".into()))
        );
        sim_core::rt::yield_now().await;
        stop("handler", Duration::from_secs(1)).unwrap();
        assert_eq!(
            stop("handler", Duration::from_secs(1)),
            Err(LifecycleError::AlreadyStopping("handler".into()))
        );
        assert_eq!(
            pause("nobody"),
            Err(LifecycleError::UnknownNode("nobody".into()))
        );
    });
    let outcome = sim.run_seed(0).outcome;
    assert!(outcome.class.is_pass(), "{outcome:?}");
}

// ------------------------------------------------------------------ a crash-tolerant register

/// Client → server requests and their replies.
#[derive(Clone, Debug, Hash)]
enum Msg {
    Write { id: u64, value: u64 },
    Read { id: u64 },
    Ack { id: u64 },
    Value { id: u64, value: u64 },
}

/// A register server: the value lives in `durable` (survives restarts, as a disk would) unless
/// `volatile`, when it lives in the incarnation's memory and a crash forgets it. It handles
/// the stop signal by finishing the request in hand and exiting.
async fn register_server(ctx: NodeCtx, durable: Rc<RefCell<u64>>, volatile: bool) {
    let sock = Socket::<Msg>::bind(1).unwrap();
    let memory = RefCell::new(0u64);
    let store = if volatile { &memory } else { &*durable };
    let stop = ctx.shutdown();
    futures::pin_mut!(stop);
    loop {
        let recv = sock.recv();
        futures::pin_mut!(recv);
        let (from, msg) = match select(recv, stop.as_mut()).await {
            Either::Left((got, _)) => got,
            Either::Right(_) => return,
        };
        match msg {
            Msg::Write { id, value } => {
                let current = *store.borrow();
                *store.borrow_mut() = current.max(value);
                sock.send(from, Msg::Ack { id });
            }
            Msg::Read { id } => {
                let value = *store.borrow();
                sock.send(from, Msg::Value { id, value });
            }
            _ => {}
        }
    }
}

/// The client writes 1, 2, 3... and reads back after each acknowledged write; a request is
/// retried until answered. Invariant: a read never returns less than the last acknowledged
/// write.
fn register(volatile: bool, lifecycle: LifecycleFaults, recording: Recording) -> Sim {
    let mut sim = Sim::new(Config {
        recording,
        lifecycle,
        ..Config::default()
    });
    let durable = Rc::new(RefCell::new(0u64));
    sim.node("server", move |ctx| {
        register_server(ctx, durable.clone(), volatile)
    });
    let acked = Rc::new(RefCell::new(0u64));
    let read = Rc::new(RefCell::new(BTreeMap::<u64, u64>::new()));
    let (a, r) = (acked.clone(), read.clone());
    sim.client("client", move |_| {
        let (acked, read) = (a.clone(), r.clone());
        async move {
            let sock = Socket::<Msg>::bind(1).unwrap();
            let server = Addr::named("server", 1);
            let writes = 1 + sim::draw(|s| s.below("writes", 8));
            let mut next_id = 0;
            for value in 1..=writes {
                for request in [Msg::Write { id: 0, value }, Msg::Read { id: 0 }] {
                    let reply = loop {
                        next_id += 1;
                        let id = next_id;
                        let request = match request {
                            Msg::Write { value, .. } => Msg::Write { id, value },
                            _ => Msg::Read { id },
                        };
                        sock.send(server, request);
                        // Replies to older attempts are skipped: only this one counts.
                        let got = timeout(Duration::from_millis(200), async {
                            loop {
                                let (_, m) = sock.recv().await;
                                match m {
                                    Msg::Ack { id: got } if got == id => return m,
                                    Msg::Value { id: got, .. } if got == id => return m,
                                    _ => {}
                                }
                            }
                        })
                        .await;
                        if let Ok(m) = got {
                            break m;
                        }
                    };
                    match reply {
                        Msg::Ack { .. } => *acked.borrow_mut() = value,
                        Msg::Value { value: v, .. } => {
                            read.borrow_mut().insert(value, v);
                        }
                        _ => {}
                    }
                }
                sleep(Duration::from_millis(150)).await;
            }
        }
    });
    let r = read;
    sim.invariant("read-sees-acknowledged-writes", move || {
        match r.borrow().iter().find(|(acked, got)| got < acked) {
            Some((acked, got)) => Err(format!("read {got} after write {acked} was acknowledged")),
            None => Ok(()),
        }
    });
    let _ = acked;
    sim
}

fn lifecycle_swarm() -> LifecycleFaults {
    LifecycleFaults::Swarm(FaultKinds::LIFECYCLE)
}

/// Crashes, stops and pauses drawn by the input show up in the traces, never on a client, and
/// the correct (durable) register passes every seed.
#[test]
fn the_nemesis_draws_crashes_stops_and_pauses_and_a_correct_system_passes() {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for_each_seed(0..150, |seed| {
        let report = register(false, lifecycle_swarm(), Recording::Full).run_seed(seed);
        assert!(
            report.outcome.class.is_pass(),
            "seed {seed}: {:?}\n{}",
            report.outcome,
            sim_core::render::story(report.history.events())
        );
        for e in report.history.events() {
            let name = match e.kind {
                EventKind::Crash => "crash",
                EventKind::Stop { .. } => "stop",
                EventKind::Exit => "exit",
                EventKind::Pause => "pause",
                EventKind::Resume => "resume",
                EventKind::Start { incarnation } if incarnation > 0 => "restart",
                _ => continue,
            };
            assert_eq!(e.node.as_deref(), Some("server"), "never a client: {e}");
            *seen.entry(name).or_default() += 1;
        }
    });
    for kind in ["crash", "stop", "exit", "pause", "resume", "restart"] {
        assert!(
            seen.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} in 150 seeds: {seen:?}"
        );
    }
}

/// The same register keeping its value in memory loses acknowledged writes when it crashes:
/// a seed sweep with the nemesis finds it (and without the nemesis, no seed does).
#[test]
fn a_seed_sweep_with_the_nemesis_finds_a_register_that_forgets_on_crash() {
    let first = (0..300u64).find(|&seed| {
        let outcome = register(true, lifecycle_swarm(), Recording::HashOnly)
            .run_seed(seed)
            .outcome;
        outcome.class == Class::Correctness
    });
    let seed = first.expect("a crash after an acknowledged write is found within 300 seeds");
    let outcome = register(true, LifecycleFaults::Off, Recording::HashOnly)
        .run_seed(seed)
        .outcome;
    assert!(
        outcome.class.is_pass(),
        "without crashes it is correct: {outcome:?}"
    );
}

/// The heal phase restarts what the nemesis holds down and resumes what it paused, at once,
/// so liveness is judged on a system that got its nodes back.
#[test]
fn the_heal_phase_restarts_and_resumes_what_the_nemesis_holds() {
    let hold_long = |crash: u32, pause: u32| {
        LifecycleFaults::Fixed(LifecycleProfile {
            crash_per_mille: crash,
            stop_per_mille: 0,
            pause_per_mille: pause,
            tick_ms: 10,
            // Far longer than the run: only the heal brings the node back in time.
            down_ms_max: 100_000,
            pause_ms_max: 100_000,
            grace_ms_max: 1,
            max_down: 0,
        })
    };
    for (crash, pause) in [(1000, 0), (0, 1000)] {
        let mut sim = Sim::new(Config {
            recording: Recording::Full,
            lifecycle: hold_long(crash, pause),
            ..Config::default()
        });
        sim.node("server", |_| async {
            sleep(Duration::from_secs(3600)).await
        });
        sim.client("client", |_| async {
            sleep(Duration::from_millis(50)).await
        });
        sim.eventually("the server is back", Duration::from_millis(1), || {
            is_up("server") && !is_paused("server")
        });
        let report = sim.run_seed(0);
        assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
        let events = report.history.events();
        let heal = events
            .iter()
            .find(|e| e.kind.name() == "fault" && e.detail.starts_with("heal"))
            .expect("the heal is in the trace");
        assert!(heal.time_ns >= 50_000_000, "after the workload: {heal}");
        let back = if crash > 0 {
            on(
                events,
                "server",
                |k| matches!(k, EventKind::Start { incarnation } if *incarnation > 0),
            )
        } else {
            on(events, "server", |k| matches!(k, EventKind::Resume))
        };
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].0, heal.time_ns, "brought back by the heal itself");
    }
}

/// The nemesis never holds more targets down than the profile allows.
#[test]
fn the_nemesis_keeps_at_most_max_down_targets_down() {
    for seed in 0..40 {
        let mut sim = Sim::new(Config {
            lifecycle: LifecycleFaults::Fixed(LifecycleProfile {
                max_down: 2,
                ..LifecycleProfile::EVERYTHING
            }),
            ..Config::default()
        });
        let names = ["n1", "n2", "n3", "n4", "n5"];
        for name in names {
            sim.node(name, |_| async { sleep(Duration::from_secs(3600)).await });
        }
        let max_seen = Rc::new(RefCell::new(0usize));
        let m = max_seen.clone();
        sim.invariant("at most two down", move || {
            let down = names.iter().filter(|n| !is_up(n) || is_paused(n)).count();
            let mut max = m.borrow_mut();
            *max = (*max).max(down);
            if down <= 2 {
                Ok(())
            } else {
                Err(format!("{down} down"))
            }
        });
        sim.client("client", |_| async { sleep(Duration::from_secs(20)).await });
        let outcome = sim.run_seed(seed).outcome;
        assert!(outcome.class.is_pass(), "seed {seed}: {outcome:?}");
        assert!(*max_seen.borrow() <= 2);
    }
}

/// The echo example with the nemesis on top of its network faults: the correct servers pass
/// every seed (faults may fail an exchange, never make one succeed wrongly), and the planted
/// bug is still found.
#[test]
fn echo_passes_with_the_nemesis_on_and_its_planted_bug_is_still_found() {
    let spec = systems::echo::SPEC;
    let run = |bug: Option<&str>, seed: u64| {
        let opts = spec.options(bug).unwrap();
        let mut sim = (spec.build)(&opts);
        "swarm:net,lifecycle"
            .parse::<sim_core::faults::FaultSelection>()
            .unwrap()
            .apply(sim.config_mut());
        sim.config_mut().recording = Recording::Full;
        sim.run_seed(seed)
    };
    let mut acted = 0;
    for seed in 0..150 {
        let report = run(None, seed);
        assert!(
            report.outcome.class.is_pass(),
            "seed {seed}: {:?}",
            report.outcome
        );
        acted += report
            .history
            .events()
            .iter()
            .filter(|e| e.detail.starts_with("nemesis: "))
            .count();
    }
    assert!(
        acted > 10,
        "the nemesis acted in the sweep: {acted} actions"
    );
    assert!(
        (0..300).any(
            |seed| run(Some("half-close-drops-reply"), seed).outcome.class == Class::Correctness
        ),
        "the planted bug is found with the nemesis on too"
    );
}

/// Every lifecycle event is in the story and has its mark in the space-time diagram.
#[test]
fn lifecycle_events_are_in_the_story_and_the_diagram() {
    let mut sim = Sim::new(recorded());
    sim.node("server", |ctx| async move {
        ctx.shutdown().await;
    });
    sim.client("operator", |_| async {
        sleep(Duration::from_millis(1)).await;
        pause("server").unwrap();
        sleep(Duration::from_millis(1)).await;
        resume("server").unwrap();
        stop("server", Duration::from_secs(1)).unwrap();
        sleep(Duration::from_millis(1)).await;
        sim_core::node::restart("server").unwrap();
        sleep(Duration::from_millis(1)).await;
        crash("server").unwrap();
    });
    let report = sim.run_seed(0);
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    let events = report.history.events();
    let story = sim_core::render::story(events);
    for word in ["pause", "resume", "stop", "exit", "start", "crash"] {
        assert!(
            story.lines().any(|l| l.contains(&format!(" {word} "))),
            "{word} in the story:\n{story}"
        );
    }
    let svg = sim_core::render::svg(events, "lifecycle");
    for mark in ["PAUSE:", "RESUME:", "STOP:", "EXIT:", "RESTART", "CRASH:"] {
        assert!(svg.contains(mark), "{mark} in the diagram");
    }
}
