//! The comparison workload on sim-core, on turmoil, on sim-tokio's tokio nodes and as a
//! hand-written discrete-event loop, side by side in one process, and on madsim in a second
//! process started by the first (`src/bin/madsim_side.rs`: madsim's own libc overrides cannot
//! be linked beside sim-os's hooks): `cargo run --release` in this folder
//! (`.cargo/config.toml` sets `--cfg madsim`, which madsim needs and the others ignore).
//!
//! The workload (see `sim-core/benches/common/workload.rs`): 3 nodes, a client doing 100
//! request/response round trips alternating between two echo servers, 1-10 ms latency, a 1 s
//! timeout per request, and a never-ending 100 ms heartbeat task on every node. On turmoil
//! the servers are UDP hosts and the latency bounds are `min/max_message_latency` (turmoil
//! draws within them from its own distribution, not uniformly: the closest it offers).
//!
//! The tokio mode (`sim_tokio_us`) is the turmoil version's plain tokio code on sim-tokio's
//! tokio nodes (one tokio runtime per node, its clock read through sim-os's hooks, driven by
//! sim-core), with sim-tokio's `UdpSocket`; its network is sim-core's (uniform 1-10 ms plus
//! jitter, as for sim-core).
//!
//! Prints the median wall time per run over the same seeds for each, and the ratios.
//! `PROFILE_TOKIO_MODE=N` runs only the tokio mode, N runs, for a profiler
//! (`PROFILE_TOKIO_MODE=20000 perf record target/release/compare`).

use sim_os as _;
use std::hint::black_box;
use std::time::Duration;

#[path = "../../../sim-core/benches/common/workload.rs"]
#[allow(dead_code)]
mod workload;

mod timing;

use timing::{median, time_us};
use workload::{bare_workload, sim_workload, ROUND_TRIPS};

async fn turmoil_heartbeat() {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        tick.tick().await;
    }
}

fn turmoil_workload(seed: u64) {
    let mut sim = turmoil::Builder::new()
        .rng_seed(seed)
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(10))
        .simulation_duration(Duration::from_secs(60))
        .build();
    for name in ["echo1", "echo2"] {
        sim.host(name, || async {
            tokio::spawn(turmoil_heartbeat());
            let sock = turmoil::net::UdpSocket::bind((std::net::Ipv4Addr::UNSPECIFIED, 1)).await?;
            let mut buf = [0u8; 8];
            loop {
                let (n, from) = sock.recv_from(&mut buf).await?;
                sock.send_to(&buf[..n], from).await?;
            }
        });
    }
    sim.client("client", async {
        tokio::spawn(turmoil_heartbeat());
        let sock = turmoil::net::UdpSocket::bind((std::net::Ipv4Addr::UNSPECIFIED, 1)).await?;
        let servers = [turmoil::lookup("echo1"), turmoil::lookup("echo2")];
        let mut buf = [0u8; 8];
        for n in 0..ROUND_TRIPS {
            sock.send_to(&n.to_le_bytes(), (servers[(n % 2) as usize], 1))
                .await?;
            let (len, _) =
                tokio::time::timeout(Duration::from_secs(1), sock.recv_from(&mut buf)).await??;
            assert_eq!(&buf[..len], &n.to_le_bytes());
        }
        Ok(())
    });
    sim.run().expect("the turmoil run passes");
}

/// The workload in plain tokio on tokio nodes: the turmoil version's code, with sim-tokio's
/// `UdpSocket` and node names for addresses; sim-core's network (uniform latency) underneath.
fn tokio_mode_workload(seed: u64) {
    use sim_core::sim::{Config, Sim};
    use sim_tokio::net::UdpSocket;
    use sim_tokio::TokioSim;
    let mut sim = Sim::new(Config::default());
    for name in ["echo1", "echo2"] {
        sim.tokio_node(name, |_| async {
            tokio::spawn(turmoil_heartbeat());
            let sock = UdpSocket::bind(("0.0.0.0", 1)).await.unwrap();
            let mut buf = [0u8; 8];
            loop {
                let (n, from) = sock.recv_from(&mut buf).await.unwrap();
                sock.send_to(&buf[..n], from).await.unwrap();
            }
        });
    }
    sim.tokio_client("client", |_| async {
        tokio::spawn(turmoil_heartbeat());
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

/// Runs the madsim side (`src/bin/madsim_side.rs`) for the same seeds and returns its median
/// per run, or why it could not.
fn madsim_median_us(seeds: u64) -> Result<f64, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "--release", "-q", "--bin", "madsim_side", "--"])
        .arg(seeds.to_string())
        .output()
        .map_err(|e| format!("could not start cargo for the madsim side: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("madsim_us="))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| {
            format!(
                "the madsim side printed no madsim_us= line: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            )
        })
}

fn main() {
    if let Ok(runs) = std::env::var("PROFILE_TOKIO_MODE") {
        // Only the tokio mode, for a profiler: `PROFILE_TOKIO_MODE=N perf record ...`.
        for seed in 0..runs.parse::<u64>().expect("a run count") {
            tokio_mode_workload(seed);
        }
        return;
    }
    let seeds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let m = madsim_median_us(seeds);
    let (mut ours, mut turmoil, mut bare, mut tokio_mode, mut fenced) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut tokio_steps, mut fenced_steps) = (Vec::new(), Vec::new());
    for seed in 0..seeds {
        ours.push(time_us(|| {
            black_box(sim_workload(seed));
        }));
        turmoil.push(time_us(|| turmoil_workload(seed)));
        bare.push(time_us(|| {
            black_box(bare_workload(seed));
        }));
        let steps_before = sim_tokio::runtime::steps_taken();
        tokio_mode.push(time_us(|| tokio_mode_workload(seed)));
        tokio_steps.push((sim_tokio::runtime::steps_taken() - steps_before) as f64);
        // The same tokio nodes without the hooks' clock: paused runtimes advanced by fences.
        sim_tokio::runtime::knobs::CLOCKED.with(|k| k.set(false));
        let steps_before = sim_tokio::runtime::steps_taken();
        fenced.push(time_us(|| tokio_mode_workload(seed)));
        fenced_steps.push((sim_tokio::runtime::steps_taken() - steps_before) as f64);
        sim_tokio::runtime::knobs::CLOCKED.with(|k| k.set(true));
    }
    let (o, t, b) = (median(ours), median(turmoil), median(bare));
    let (k, f) = (median(tokio_mode), median(fenced));
    let (steps, f_steps) = (median(tokio_steps), median(fenced_steps));
    println!("seeds={seeds} (median wall time per run)");
    match m {
        Ok(m) => {
            println!("sim_core_us={o:.1} turmoil_us={t:.1} madsim_us={m:.1} bare_des_us={b:.1}");
            println!(
                "turmoil_over_sim_core={:.1} madsim_over_sim_core={:.1} sim_core_over_bare={:.1}",
                t / o,
                m / o,
                o / b
            );
        }
        Err(why) => {
            println!("sim_core_us={o:.1} turmoil_us={t:.1} bare_des_us={b:.1}");
            println!("madsim_us=unavailable ({why})");
            println!(
                "turmoil_over_sim_core={:.1} sim_core_over_bare={:.1}",
                t / o,
                o / b
            );
        }
    }
    println!(
        "sim_tokio_us={k:.1} turmoil_over_sim_tokio={:.1} sim_tokio_over_sim_core={:.1} \
         sim_tokio_steps_per_run={steps:.0} sim_tokio_us_per_step={:.2}",
        t / k,
        k / o,
        k / steps
    );
    println!(
        "sim_tokio_fenced_us={f:.1} turmoil_over_sim_tokio_fenced={:.1} \
         sim_tokio_fenced_steps_per_run={f_steps:.0}",
        t / f
    );
}
