//! The comparison workload in plain tokio on sim-tokio's tokio nodes, in a process of its own.
//!
//! Why its own package: cargo unifies a package's dependency features, and turmoil turns on
//! tokio's `process` and `signal` features, whose drivers then run inside every tokio runtime
//! of the binary (the orphan reaper is called at every park). A sim-tokio user's binary has
//! them only if it asks; built from here, `cargo run -p tokio-side` compiles tokio with only
//! the features sim-tokio and this workload need. In a binary that also links turmoil the
//! tokio mode costs a few percent more.
//!
//! The code is the turmoil version's (`../src/main.rs`) with sim-tokio's `UdpSocket` and node
//! names for addresses; its network is sim-core's (uniform 1-10 ms plus jitter, as for
//! sim-core's native run). Each runtime reads the hooks' virtual clock (sim-os is linked),
//! and sim-tokio is built without its `fenced` feature, as a binary that links the hooks can
//! be (see sim-tokio's docs).
//!
//! Prints `sim_tokio_us=` and `sim_tokio_steps_per_run=` (medians). Built with `--features
//! fenced` it runs the same nodes without the hooks' clock, paused runtimes advanced by
//! fences, and prints `sim_tokio_fenced_us=` and `sim_tokio_fenced_steps_per_run=`.
//! `PROFILE_TOKIO_MODE=N` runs only the workload, N runs, for a profiler
//! (`PROFILE_TOKIO_MODE=20000 perf record target/release/tokio_side`); `--engine tokio --seeds
//! N` runs N and prints the steps they took, for an instruction counter.

use sim_os as _;
use std::time::Duration;

#[path = "../../../../sim-core/benches/common/workload.rs"]
#[allow(dead_code)]
mod workload;

#[path = "../../src/timing.rs"]
mod timing;

use timing::{engine_mode, median, run_engine, time_us};
use workload::ROUND_TRIPS;

async fn heartbeat() {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        tick.tick().await;
    }
}

fn tokio_mode_workload(seed: u64) {
    use sim_core::sim::{Config, Sim};
    use sim_tokio::net::UdpSocket;
    use sim_tokio::TokioSim;
    let mut sim = Sim::new(Config::default());
    for name in ["echo1", "echo2"] {
        sim.tokio_node(name, |_| async {
            tokio::spawn(heartbeat());
            let sock = UdpSocket::bind(("0.0.0.0", 1)).await.unwrap();
            let mut buf = [0u8; 8];
            loop {
                let (n, from) = sock.recv_from(&mut buf).await.unwrap();
                sock.send_to(&buf[..n], from).await.unwrap();
            }
        });
    }
    sim.tokio_client("client", |_| async {
        tokio::spawn(heartbeat());
        let sock = UdpSocket::bind(("0.0.0.0", 1)).await.unwrap();
        let servers = [
            sim_tokio::net::lookup("echo1"),
            sim_tokio::net::lookup("echo2"),
        ];
        let mut buf = [0u8; 8];
        for n in 0..ROUND_TRIPS {
            sock.send_to(&n.to_le_bytes(), (servers[(n % 2) as usize], 1))
                .await
                .unwrap();
            let (len, _) = tokio::time::timeout(Duration::from_secs(1), sock.recv_from(&mut buf))
                .await
                .expect("no request times out at 15 ms latency")
                .unwrap();
            assert_eq!(&buf[..len], &n.to_le_bytes());
        }
    });
    let outcome = sim.run_seed(seed).outcome;
    assert!(outcome.class.is_pass(), "{outcome:?}");
}

fn main() {
    // Without it sim-tokio falls back to fenced nodes (and tokio's RNG is not seeded).
    #[cfg(not(tokio_unstable))]
    {
        eprintln!("build with --cfg tokio_unstable (the repository's .cargo/config.toml sets it)");
        std::process::exit(2);
    }
    if let Ok(runs) = std::env::var("PROFILE_TOKIO_MODE") {
        for seed in 0..runs.parse::<u64>().expect("a run count") {
            tokio_mode_workload(seed);
        }
        return;
    }
    if let Some((_, seeds)) = engine_mode() {
        sim_tokio::runtime::knobs::CLOCKED.with(|k| k.set(!cfg!(feature = "fenced")));
        run_engine("tokio", seeds, |seed| {
            let before = sim_tokio::runtime::steps_taken();
            tokio_mode_workload(seed);
            sim_tokio::runtime::steps_taken() - before
        });
        return;
    }
    let seeds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let fenced = cfg!(feature = "fenced");
    // Fenced: the same tokio nodes without the hooks' clock.
    sim_tokio::runtime::knobs::CLOCKED.with(|k| k.set(!fenced));
    let (mut times, mut steps) = (Vec::new(), Vec::new());
    for seed in 0..seeds {
        let steps_before = sim_tokio::runtime::steps_taken();
        times.push(time_us(|| tokio_mode_workload(seed)));
        steps.push((sim_tokio::runtime::steps_taken() - steps_before) as f64);
    }
    let mode = if fenced {
        "sim_tokio_fenced"
    } else {
        "sim_tokio"
    };
    println!(
        "{mode}_us={:.1} {mode}_steps_per_run={:.0}",
        median(times),
        median(steps)
    );
}
