//! The comparison workload on sim-core, on turmoil, on madsim, and as a hand-written
//! discrete-event loop, side by side in one process: `cargo run --release` in this folder
//! (`.cargo/config.toml` sets `--cfg madsim`, which madsim needs and the others ignore).
//!
//! The workload (see `sim-core/benches/common/workload.rs`): 3 nodes, a client doing 100
//! request/response round trips alternating between two echo servers, 1-10 ms latency, a 1 s
//! timeout per request, and a never-ending 100 ms heartbeat task on every node. On turmoil
//! the servers are UDP hosts and the latency bounds are `min/max_message_latency` (turmoil
//! draws within them from its own distribution, not uniformly: the closest it offers).
//!
//! The tokio mode (`sim_tokio_us`) is the turmoil version's plain tokio code on sim-tokio's
//! tokio nodes (one paused tokio runtime per node, driven by sim-core), with sim-tokio's
//! `UdpSocket`; its network is sim-core's (uniform 1-10 ms plus jitter, as for sim-core).
//!
//! Prints the median wall time per run over the same seeds for each, and the ratios.

use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "../../../sim-core/benches/common/workload.rs"]
#[allow(dead_code)]
mod workload;

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

async fn madsim_heartbeat() {
    let mut tick = madsim::time::interval(Duration::from_millis(100));
    loop {
        tick.tick().await;
    }
}

fn madsim_workload(seed: u64) {
    use std::net::{IpAddr, Ipv4Addr};
    let mut config = madsim::Config::default();
    config.net.send_latency = Duration::from_millis(1)..Duration::from_millis(10);
    let rt = madsim::runtime::Runtime::with_seed_and_config(seed, config);
    let ip = |i: u8| IpAddr::V4(Ipv4Addr::new(10, 0, 0, i));
    for (i, name) in [(1, "echo1"), (2, "echo2")] {
        let node = rt.create_node().name(name).ip(ip(i)).build();
        node.spawn(async move {
            madsim::task::spawn(madsim_heartbeat());
            let sock = madsim::net::UdpSocket::bind((ip(i), 1)).await.unwrap();
            let mut buf = [0u8; 8];
            loop {
                let (n, from) = sock.recv_from(&mut buf).await.unwrap();
                sock.send_to(from, &buf[..n]).await.unwrap();
            }
        });
    }
    let client = rt.create_node().name("client").ip(ip(3)).build();
    rt.block_on(async move {
        client
            .spawn(async move {
                madsim::task::spawn(madsim_heartbeat());
                let sock = madsim::net::UdpSocket::bind((ip(3), 1)).await.unwrap();
                let servers = [(ip(1), 1), (ip(2), 1)];
                let mut buf = [0u8; 8];
                for n in 0..ROUND_TRIPS {
                    sock.send_to(servers[(n % 2) as usize], &n.to_le_bytes())
                        .await
                        .unwrap();
                    let (len, _) =
                        madsim::time::timeout(Duration::from_secs(1), sock.recv_from(&mut buf))
                            .await
                            .expect("no request times out at 10 ms latency")
                            .unwrap();
                    assert_eq!(&buf[..len], &n.to_le_bytes());
                }
            })
            .await
            .unwrap();
    });
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn time_us(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e6
}

fn main() {
    let seeds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let (mut ours, mut turmoil, mut madsim, mut bare, mut tokio_mode) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut tokio_steps = Vec::new();
    for seed in 0..seeds {
        ours.push(time_us(|| {
            black_box(sim_workload(seed));
        }));
        turmoil.push(time_us(|| turmoil_workload(seed)));
        madsim.push(time_us(|| madsim_workload(seed)));
        bare.push(time_us(|| {
            black_box(bare_workload(seed));
        }));
        let steps_before = sim_tokio::runtime::steps_taken();
        tokio_mode.push(time_us(|| tokio_mode_workload(seed)));
        tokio_steps.push((sim_tokio::runtime::steps_taken() - steps_before) as f64);
    }
    let (o, t, m, b) = (median(ours), median(turmoil), median(madsim), median(bare));
    let k = median(tokio_mode);
    let steps = median(tokio_steps);
    println!("seeds={seeds} (median wall time per run)");
    println!("sim_core_us={o:.1} turmoil_us={t:.1} madsim_us={m:.1} bare_des_us={b:.1}");
    println!(
        "turmoil_over_sim_core={:.1} madsim_over_sim_core={:.1} sim_core_over_bare={:.1}",
        t / o,
        m / o,
        o / b
    );
    println!(
        "sim_tokio_us={k:.1} turmoil_over_sim_tokio={:.1} sim_tokio_over_sim_core={:.1} \
         sim_tokio_steps_per_run={steps:.0} sim_tokio_us_per_step={:.2}",
        t / k,
        k / o,
        k / steps
    );
}
