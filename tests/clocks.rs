//! Per-node wall clocks and timer faults: skew, jumps, late timers, and a paused node's timer.
//!
//! Each test asserts something that a wrong clock model would make false: readings that
//! disagree with true order only when skew is on, a timer that never fires early, a jump that
//! moves one node's clock and nothing else, and a pause that delays a timer's task to the
//! resume.

use std::time::Duration;

use acceptance::{log, Log};
use sim_core::faults::FaultSelection;
use sim_core::net::{Addr, Socket};
use sim_core::node::{pause, resume};
use sim_core::sim::{Config, Report, Sim};
use sim_core::time::{now, sleep, system_now, ClockFaults, ClockProfile, Instant, START_UNIX_NS};
use sim_core::trace::{Event, EventKind, Recording};

fn recorded(clock_faults: ClockFaults) -> Config {
    Config {
        recording: Recording::Full,
        clock_faults,
        ..Config::default()
    }
}

/// `a` stamps an event with its wall clock and sends the stamp to `b`, which stamps the
/// message's arrival — strictly later in true time — with its own wall clock.
fn stamp_and_compare(clock_faults: ClockFaults, seed: u64) -> (Report, (u64, u64)) {
    let mut sim = Sim::new(recorded(clock_faults));
    let seen: Log<(u64, u64)> = log();
    sim.node("a", |_| async {
        let sock = Socket::<u64>::bind(1).unwrap();
        sleep(Duration::from_millis(10)).await;
        sock.send(Addr::named("b", 1), system_now().as_unix_nanos());
    });
    let s = seen.clone();
    sim.client("b", move |_| {
        let s = s.clone();
        async move {
            let sock = Socket::<u64>::bind(1).unwrap();
            let (_, sent_at) = sock.recv().await;
            let received_at = system_now().as_unix_nanos();
            s.borrow_mut().push((sent_at, received_at));
        }
    });
    let report = sim.run_seed(seed);
    let pair = seen.borrow()[0];
    (report, pair)
}

fn reads(events: &[Event]) -> Vec<(u64, String, u64)> {
    events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::ClockRead { local_ns } => {
                Some((e.time_ns, e.node.clone().unwrap_or_default(), local_ns))
            }
            _ => None,
        })
        .collect()
}

/// Two nodes with skewed clocks disagree about which of two events came first: a message
/// stamped by its sender *after* its receiver stamped its arrival. The trace shows both
/// readings, in true order, with the later one smaller. Without skew no seed does it.
#[test]
fn two_nodes_with_skewed_clocks_disagree_about_a_timestamp_comparison() {
    let skew = ClockFaults::Fixed(ClockProfile {
        offset_ms_max: 50,
        drift_ppm_max: 1_000,
        ..ClockProfile::NONE
    });
    let mut disagreed = None;
    for seed in 0..50 {
        let (report, (sent, received)) = stamp_and_compare(skew, seed);
        assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
        if received < sent {
            disagreed = Some((seed, report));
            break;
        }
    }
    let (seed, report) =
        disagreed.expect("with clocks up to 50 ms apart some seed stamps the arrival earlier");
    let events = report.history.events();
    let r = reads(events);
    assert_eq!(r.len(), 2, "both readings are in the history: {r:?}");
    let (t_send, ref a, sent) = r[0];
    let (t_recv, ref b, received) = r[1];
    assert_eq!((a.as_str(), b.as_str()), ("a", "b"));
    assert!(t_send < t_recv, "true order: the send came first");
    assert!(
        received < sent,
        "seed {seed}: b's clock put the arrival before the send"
    );
    // What each node's clock was set to is in the trace too.
    assert!(
        events
            .iter()
            .any(|e| matches!(e.kind, EventKind::ClockSkew { .. })),
        "the skew each node drew is recorded"
    );

    // Without clock faults, every reading is true time: no seed disagrees.
    for seed in 0..50 {
        let (report, (sent, received)) = stamp_and_compare(ClockFaults::Off, seed);
        assert!(received > sent, "seed {seed}: true clocks keep true order");
        for (t, _, local) in reads(report.history.events()) {
            assert_eq!(local, START_UNIX_NS + t, "a true clock reads true time");
        }
    }
}

/// A late timer fires after its deadline, never before, and the trace says by how much.
#[test]
fn late_timers_fire_late_never_early_and_are_in_the_trace() {
    let late = ClockFaults::Fixed(ClockProfile {
        late_timer_per_mille: 500,
        late_timer_ms_max: 20,
        ..ClockProfile::NONE
    });
    let mut late_seen = 0;
    for seed in 0..20 {
        let woke: Log<(u64, u64)> = log();
        let w = woke.clone();
        let mut sim = Sim::new(recorded(late));
        sim.client("c", move |_| {
            let w = w.clone();
            async move {
                for _ in 0..10 {
                    let asked = now() + Duration::from_millis(10);
                    sleep(Duration::from_millis(10)).await;
                    w.borrow_mut().push((asked.as_nanos(), now().as_nanos()));
                }
            }
        });
        let report = sim.run_seed(seed);
        assert!(report.outcome.class.is_pass());
        let lates: Vec<u64> = report
            .history
            .events()
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::TimerLate { late_ns, .. } => Some(late_ns),
                _ => None,
            })
            .collect();
        let woke = woke.borrow();
        let mut late_iter = lates.iter();
        for &(asked, at) in woke.iter() {
            assert!(
                at >= asked,
                "seed {seed}: a timer fired early ({at} < {asked})"
            );
            if at > asked {
                late_seen += 1;
                assert_eq!(
                    Some(&(at - asked)),
                    late_iter.next(),
                    "seed {seed}: the lateness is the one the trace announced"
                );
                assert!(at - asked <= 20_000_000, "within the bound");
            }
        }
        assert!(
            late_iter.next().is_none(),
            "every announced late timer was late"
        );
    }
    assert!(
        late_seen > 20,
        "half the timers are late: {late_seen} of 200"
    );
}

/// A jump moves one node's wall clock, at the instant the trace records, and nothing else: a
/// backward jump makes a later reading smaller than an earlier one.
#[test]
fn wall_clock_jumps_are_in_the_trace_and_can_go_backwards() {
    let jumps = ClockFaults::Fixed(ClockProfile {
        jumps_max: 3,
        jump_ms_max: 500,
        jump_within_ms: 1_000,
        ..ClockProfile::NONE
    });
    let mut backwards = false;
    for seed in 0..30 {
        let mut sim = Sim::new(recorded(jumps));
        sim.client("c", |_| async {
            for _ in 0..20 {
                system_now();
                sleep(Duration::from_millis(50)).await;
            }
        });
        let report = sim.run_seed(seed);
        assert!(report.outcome.class.is_pass());
        let mut jumped_ns = 0i64;
        for e in report.history.events() {
            match e.kind {
                EventKind::ClockJump { delta_ns } => {
                    assert_ne!(delta_ns, 0, "a jump moves the clock");
                    jumped_ns += delta_ns;
                }
                EventKind::ClockRead { local_ns } => {
                    let expected = (START_UNIX_NS + e.time_ns) as i64 + jumped_ns;
                    assert_eq!(
                        local_ns as i64, expected,
                        "seed {seed}: true time plus jumps"
                    );
                }
                _ => {}
            }
        }
        let r = reads(report.history.events());
        backwards |= r.windows(2).any(|p| p[1].2 < p[0].2);
    }
    assert!(
        backwards,
        "some seed jumps a clock backwards past an earlier reading"
    );
}

/// A pause makes a node's timer fire late: the timer comes due while the node is frozen (the
/// trace says so), and its task runs only at the resume.
#[test]
fn a_pause_makes_a_nodes_timer_fire_late_in_the_trace() {
    let mut sim = Sim::new(recorded(ClockFaults::Off));
    let woke: Log<Instant> = log();
    let w = woke.clone();
    sim.node("server", move |_| {
        let w = w.clone();
        async move {
            sleep(Duration::from_millis(10)).await;
            w.borrow_mut().push(now());
        }
    });
    sim.client("operator", |_| async {
        sleep(Duration::from_millis(5)).await;
        pause("server").unwrap();
        sleep(Duration::from_millis(45)).await;
        resume("server").unwrap();
        // Give the resumed server its turn before the workload (and the run) ends.
        sleep(Duration::from_millis(1)).await;
    });
    let report = sim.run_seed(0);
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    assert_eq!(
        woke.borrow().as_slice(),
        [Instant::from_nanos(50_000_000)],
        "due at 10 ms, handled at the resume"
    );
    let events = report.history.events();
    let on_server = |kind: fn(&EventKind) -> bool| {
        events
            .iter()
            .filter(|e| e.node.as_deref() == Some("server") && kind(&e.kind))
            .map(|e| (e.time_ns, e.detail.clone()))
            .collect::<Vec<_>>()
    };
    let pauses = on_server(|k| matches!(k, EventKind::Pause));
    let timers = on_server(|k| matches!(k, EventKind::Timer { .. }));
    let resumes = on_server(|k| matches!(k, EventKind::Resume));
    assert_eq!(pauses.len(), 1);
    assert_eq!(pauses[0].0, 5_000_000);
    assert_eq!(timers.len(), 1);
    assert_eq!(timers[0].0, 10_000_000, "the timer came due on time");
    assert!(timers[0].1.contains("paused"), "{:?}", timers[0]);
    assert_eq!(resumes[0].0, 50_000_000);
    assert!(resumes[0].1.contains("1 tasks woken"), "{:?}", resumes[0]);
    // The server's task runs first at the resume: nothing of it ran in between.
    let stepped_between = events.iter().any(|e| {
        e.node.as_deref() == Some("server")
            && matches!(e.kind, EventKind::Step { .. })
            && e.time_ns > 5_000_000
            && e.time_ns < 50_000_000
    });
    assert!(!stepped_between, "a paused node runs nothing");
}

/// Same input, same history hash, with every new fault kind on (clocks and the nemesis, on
/// top of the network's): the new faults are functions of the input too.
#[test]
fn every_new_fault_on_is_still_deterministic() {
    let selection: FaultSelection = "swarm:net,clock,lifecycle".parse().unwrap();
    let scenario = || {
        let mut config = Config::default();
        selection.apply(&mut config);
        let mut sim = Sim::new(config);
        for name in ["s1", "s2"] {
            sim.node(name, |ctx| async move {
                let sock = Socket::<u64>::bind(1).unwrap();
                let stop = ctx.shutdown();
                futures::pin_mut!(stop);
                loop {
                    let recv = sock.recv();
                    futures::pin_mut!(recv);
                    match futures::future::select(recv, stop.as_mut()).await {
                        futures::future::Either::Left(((from, n), _)) => {
                            sock.send(from, n.max(system_now().as_unix_millis()))
                        }
                        futures::future::Either::Right(_) => return,
                    }
                }
            });
        }
        sim.client("c", |_| async {
            let sock = Socket::<u64>::bind(1).unwrap();
            for i in 0..30u64 {
                let to = if i % 2 == 0 { "s1" } else { "s2" };
                sock.send(Addr::named(to, 1), i);
                let _ = sim_core::time::timeout(Duration::from_millis(200), sock.recv()).await;
            }
        });
        sim
    };
    let mut hashes = std::collections::BTreeSet::new();
    let mut lifecycle_events = 0;
    for seed in 0..20 {
        let a = scenario().run_seed(seed).outcome;
        let b = scenario().run_seed(seed).outcome;
        assert_eq!(a.history_hash, b.history_hash, "seed {seed}");
        assert_eq!(a.steps, b.steps);
        assert!(a.class.is_pass(), "seed {seed}: {a:?}");
        hashes.insert(a.history_hash);
        let mut config = Config {
            recording: Recording::Full,
            ..Config::default()
        };
        selection.apply(&mut config);
        let mut recorded = scenario();
        *recorded.config_mut() = config;
        let r = recorded.run_seed(seed);
        assert_eq!(
            r.outcome.history_hash, a.history_hash,
            "recording changes nothing"
        );
        lifecycle_events += r
            .history
            .events()
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    EventKind::Crash
                        | EventKind::Pause
                        | EventKind::Stop { .. }
                        | EventKind::ClockJump { .. }
                )
            })
            .count();
    }
    assert!(hashes.len() >= 19, "seeds give different histories");
    assert!(lifecycle_events > 0, "the faults did fire");
}

/// Clock and lifecycle faults cost nothing when off: the example systems under their own
/// defaults, and under `--faults swarm`, draw nothing for clocks or the nemesis (so their
/// histories are the ones they had before these faults existed); with them on, they do.
#[test]
fn new_fault_kinds_draw_nothing_when_off() {
    use sim_core::choice::Input;
    let labels = |spec: &sim_core::system::SystemSpec, faults: Option<&str>, seed: u64| {
        let mut opts = spec.options(None).unwrap();
        if let Some(f) = faults {
            opts.apply_faults(f.parse().unwrap());
        }
        let (_, draws) = (spec.build)(&opts).run_logged(&Input::Seed(seed));
        draws
            .into_iter()
            .filter(|d| {
                ["time.clock.", "time.swarm.", "time.fault.", "nemesis."]
                    .iter()
                    .any(|p| d.label.starts_with(p))
            })
            .map(|d| d.label)
            .collect::<Vec<_>>()
    };
    for spec in [systems::echo::SPEC, systems::two_pc::SPEC] {
        for seed in 0..20 {
            assert_eq!(
                labels(&spec, None, seed),
                Vec::<String>::new(),
                "{}",
                spec.name
            );
            assert_eq!(labels(&spec, Some("swarm"), seed), Vec::<String>::new());
        }
        let on: usize = (0..20)
            .map(|seed| labels(&spec, Some("swarm:clock,lifecycle"), seed).len())
            .sum();
        assert!(
            on > 0,
            "{}: with them on, clocks and the nemesis draw",
            spec.name
        );
    }
}
