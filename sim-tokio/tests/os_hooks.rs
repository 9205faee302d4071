//! OS hooks (`sim-os`) under tokio nodes: std's clocks, std's `HashMap` keys and OS entropy
//! read inside a run come from the simulation, so a node using them unchanged replays.
//!
//! Linking `sim_os` into this test binary is what turns the hooks on.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use sim_core::choice::Choices;
use sim_core::os::{isolated, knobs};
use sim_core::sim::{note, Config, Sim};
use sim_os as _;
use sim_tokio::net::UdpSocket;
use sim_tokio::TokioSim;

unsafe extern "C" {
    fn getrandom(buf: *mut u8, len: usize, flags: u32) -> isize;
}

/// Eight bytes of OS entropy, through the C call `rand` 0.9's `OsRng` uses.
fn os_entropy() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: `b` is valid for 8 bytes of writes.
    let n = unsafe { getrandom(b.as_mut_ptr(), b.len(), 0) };
    assert_eq!(n, 8);
    u64::from_le_bytes(b)
}

/// A tokio client that uses `select!` without `biased;`, a std `HashMap` iterated in order,
/// `std::time::Instant::now()`, `SystemTime::now()` and OS entropy, and notes all of it into
/// the history; and an echo server.
fn std_scenario() -> Sim {
    let mut sim = Sim::new(Config::default());
    sim.tokio_node("server", |_| async {
        let sock = UdpSocket::bind("0.0.0.0:1").await.unwrap();
        let mut buf = [0u8; 16];
        loop {
            let (n, from) = sock.recv_from(&mut buf).await.unwrap();
            sock.send_to(&buf[..n], from).await.unwrap();
        }
    });
    sim.tokio_client("client", |_| async {
        let start = std::time::Instant::now();
        let sock = UdpSocket::bind("0.0.0.0:1").await.unwrap();
        let mut seen: HashMap<String, u32> = HashMap::new();
        let mut buf = [0u8; 16];
        for round in 0..10u32 {
            sock.send_to(&round.to_le_bytes(), "server:1")
                .await
                .unwrap();
            tokio::select! {
                _ = std::future::ready(()) => note("first"),
                _ = std::future::ready(()) => note("second"),
            }
            tokio::select! {
                got = sock.recv_from(&mut buf) => { got.unwrap(); }
                _ = tokio::time::sleep(Duration::from_millis(5)) => note("timeout"),
            }
            seen.insert(format!("peer-{round}"), round);
            let order: Vec<&String> = seen.keys().collect();
            note(&format!("order {order:?}"));
            note(&format!("std elapsed {:?}", start.elapsed()));
            let wall = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            note(&format!("wall {wall:?} entropy {:x}", os_entropy()));
        }
    });
    sim
}

fn hash_of(seed: u64) -> u64 {
    isolated(move || {
        let report = std_scenario().run_seed(seed);
        assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
        report.outcome.history_hash
    })
}

#[test]
fn hooks_are_linked() {
    assert!(sim_core::os::hooks_linked());
}

#[test]
fn same_input_same_hash_a_thousand_times() {
    let first = hash_of(7);
    for _ in 0..1000 {
        assert_eq!(hash_of(7), first);
    }
    let hashes: BTreeSet<u64> = (0..20).map(hash_of).collect();
    assert!(hashes.len() > 1, "every seed gave the same history");
}

#[test]
#[cfg_attr(
    not(feature = "fenced"),
    ignore = "with the hooks off, tokio nodes need the fenced feature"
)]
fn without_the_hooks_std_reads_escape_the_input() {
    let hashes: BTreeSet<u64> = (0..20)
        .map(|_| {
            isolated(|| {
                knobs::HOOKS_ON.with(|k| k.set(false));
                std_scenario().run_seed(7).outcome.history_hash
            })
        })
        .collect();
    assert!(
        hashes.len() > 1,
        "std clocks and entropy replayed without the hooks: the determinism test could not fail"
    );
}

#[test]
fn without_a_thread_per_run_hashmap_order_depends_on_earlier_runs() {
    // On one thread, std counts hash keys up from run to run.
    let hashes: BTreeSet<u64> = (0..20)
        .map(|_| std_scenario().run_seed(7).outcome.history_hash)
        .collect();
    assert!(
        hashes.len() > 1,
        "HashMap order repeated on one thread: `isolated` would be needless"
    );
}

#[test]
fn std_clock_is_virtual_time_inside_and_real_outside() {
    let outside = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    assert!(
        outside.as_secs() > 1_600_000_000,
        "the real date outside a run"
    );
    let report = isolated(|| {
        let mut sim = Sim::new(Config::default());
        sim.tokio_client("c", |_| async {
            let start = std::time::Instant::now();
            tokio::time::sleep(Duration::from_millis(1234)).await;
            assert_eq!(start.elapsed(), Duration::from_millis(1234));
            let wall = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            assert_eq!(
                wall.as_nanos(),
                u128::from(sim_core::time::START_UNIX_NS) + 1_234_000_000
            );
        });
        sim.run_seed(0)
    });
    assert!(report.outcome.class.is_pass(), "{}", report.outcome.message);
}

#[test]
fn an_os_thread_or_real_socket_fails_the_run_by_name() {
    for (what, call) in [("thread", "pthread_create"), ("socket", "socket")] {
        let report = isolated(move || {
            let mut sim = Sim::new(Config::default());
            sim.tokio_client("c", move |_| async move {
                if what == "thread" {
                    let _ = std::thread::Builder::new().spawn(|| {});
                } else {
                    let _ = std::net::UdpSocket::bind("127.0.0.1:0");
                }
            });
            sim.run_seed(0)
        });
        assert!(
            report.outcome.class.is_failure(),
            "{what}: {:?}",
            report.outcome
        );
        assert!(
            report.outcome.message.contains("escaped the simulation")
                && report.outcome.message.contains(call),
            "{what}: {}",
            report.outcome.message
        );
    }
    // Outside a run both are allowed.
    std::thread::spawn(|| {}).join().unwrap();
    assert!(std::net::UdpSocket::bind("127.0.0.1:0").is_ok());
}

/// A system whose nodes keep std `HashMap`s and act on their iteration order: it declares
/// `thread_per_run`, and its planted bug fails when the first of the drawn names iterated is
/// the smallest — which depends on std's hash keys as much as on the input.
fn build_hashmap_system(opts: &sim_core::system::RunOptions) -> Sim {
    let buggy = opts.bug_is("smallest-first");
    let mut sim = Sim::new(opts.config.clone());
    let first = std::rc::Rc::new(std::cell::RefCell::new(String::new()));
    let seen = first.clone();
    sim.tokio_client("c", move |_| {
        let first = first.clone();
        async move {
            let mut names: HashMap<String, u64> = HashMap::new();
            for i in 0..3 {
                let name = sim_core::sim::draw(|s| s.below("names", 50));
                names.insert(format!("n{name}"), i);
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let order: Vec<&String> = names.keys().collect();
            note(&format!("{order:?}"));
            let smallest = names.keys().min().unwrap();
            *first.borrow_mut() = if order[0] == smallest {
                "smallest".into()
            } else {
                String::new()
            };
        }
    });
    sim.invariant("smallest-is-not-first", move || {
        if buggy && *seen.borrow() == "smallest" {
            Err("the smallest name came first".into())
        } else {
            Ok(())
        }
    });
    sim
}

const HASHMAP_SYSTEM: sim_core::system::SystemSpec = sim_core::system::SystemSpec::new(
    "hashmap-order",
    "acts on std HashMap iteration order",
    build_hashmap_system,
)
.with_bugs(&[sim_core::system::BugSpec {
    name: "smallest-first",
    about: "fails when the smallest name iterates first",
}])
.with_thread_per_run();

#[test]
fn a_thread_per_run_system_sweeps_and_shrinks_deterministically() {
    use sim_core::campaign::{Campaign, Shard};
    use sim_core::choice::Input;
    use sim_core::run_spec::{RunFlags, Variant};
    use std::sync::atomic::AtomicBool;

    let variant =
        Variant::new(&HASHMAP_SYSTEM, Some("smallest-first"), RunFlags::default()).unwrap();
    let stop = AtomicBool::new(false);
    let serial = Campaign::new(&variant, 0..300, Shard::WHOLE, 1).run(&stop, |_| {});
    let parallel = Campaign::new(&variant, 0..300, Shard::WHOLE, 2).run(&stop, |_| {});
    assert!(serial.failures > 0 && serial.failures < 300, "{serial:?}");
    assert_eq!(serial.failures, parallel.failures);
    let first = serial.first_failure.as_ref().unwrap().seed;
    // Each replay, alone, fails the same way with the same history.
    let hashes: BTreeSet<u64> = (0..20)
        .map(|_| variant.run(&Input::Seed(first)).outcome.history_hash)
        .collect();
    assert_eq!(hashes.len(), 1);
    let opts = variant.options();
    let shrunk = sim_core::shrink::Shrinker::thread_per_run(|| (HASHMAP_SYSTEM.build)(&opts))
        .run(&Input::Seed(first))
        .unwrap();
    assert!(shrunk.verified, "the shrunk input replays");
}
