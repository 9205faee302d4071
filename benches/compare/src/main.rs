//! The comparison workload on sim-core, on turmoil and as a hand-written discrete-event loop,
//! side by side in one process, and in processes of their own started by this one for the
//! same seeds: madsim (`src/bin/madsim_side.rs`: its own libc overrides cannot be linked beside
//! sim-os's hooks) and sim-tokio's tokio nodes (`tokio-side/`: a package of its own, so that
//! tokio is built without the `process` and `signal` features turmoil turns on; built twice,
//! for clocked and for fenced nodes). Run
//! `cargo run --release` in this folder (`.cargo/config.toml` sets `--cfg madsim`, which
//! madsim needs and the others ignore).
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
//!
//! `--engine sim-core|des|turmoil --seeds N` runs one engine only, for an instruction counter
//! (`madsim_side` and `tokio_side` take `--engine madsim` and `--engine tokio` the same way;
//! `scripts/bench-instructions.sh` at the repository root runs them all under callgrind).

use std::hint::black_box;
use std::time::Duration;

#[path = "../../../sim-core/benches/common/workload.rs"]
#[allow(dead_code)]
mod workload;

mod timing;

use timing::{engine_mode, median, run_engine, time_us};
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

/// Runs a comparison binary of its own process (`cargo run --release -q` with `args`, then
/// the seed count) and returns the `key=value` pairs of its output, or why it could not.
fn run_side(args: &[&str], seeds: u64) -> Result<Vec<(String, f64)>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "--release", "-q"])
        .args(args)
        .arg("--")
        .arg(seeds.to_string())
        .output()
        .map_err(|e| format!("could not start cargo: {e}"))?;
    let pairs: Vec<(String, f64)> = String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            Some((key.to_string(), value.parse().ok()?))
        })
        .collect();
    if pairs.is_empty() {
        return Err(format!(
            "it printed no key=value line: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(pairs)
}

/// The value of `key` in a side's output.
fn value(pairs: &[(String, f64)], key: &str) -> Result<f64, String> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|&(_, v)| v)
        .ok_or_else(|| format!("no {key}= in its output"))
}

fn main() {
    if let Some((engine, seeds)) = engine_mode() {
        match engine.as_str() {
            "sim-core" => run_engine("sim-core", seeds, |seed| sim_workload(seed).1),
            "des" => run_engine("des", seeds, |seed| {
                black_box(bare_workload(seed));
                0
            }),
            "turmoil" => run_engine("turmoil", seeds, |seed| {
                turmoil_workload(seed);
                0
            }),
            other => {
                eprintln!("--engine: sim-core, des or turmoil (madsim_side and tokio_side run the others), not {other}");
                std::process::exit(2);
            }
        }
        return;
    }
    let seeds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let madsim =
        run_side(&["--bin", "madsim_side"], seeds).and_then(|pairs| value(&pairs, "madsim_us"));
    let tokio_side = run_side(&["-p", "tokio-side"], seeds).and_then(|mut clocked| {
        // A target dir of its own: the two builds of one binary would replace each other.
        let fenced = [
            "-p",
            "tokio-side",
            "--features",
            "fenced",
            "--target-dir",
            "target/fenced",
        ];
        clocked.extend(run_side(&fenced, seeds)?);
        Ok(clocked)
    });
    let (mut ours, mut turmoil, mut bare) = (Vec::new(), Vec::new(), Vec::new());
    for seed in 0..seeds {
        ours.push(time_us(|| {
            black_box(sim_workload(seed));
        }));
        turmoil.push(time_us(|| turmoil_workload(seed)));
        bare.push(time_us(|| {
            black_box(bare_workload(seed));
        }));
    }
    let (o, t, b) = (median(ours), median(turmoil), median(bare));
    println!("seeds={seeds} (median wall time per run)");
    match madsim {
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
            println!("madsim_us=unavailable (the madsim side: {why})");
            println!(
                "turmoil_over_sim_core={:.1} sim_core_over_bare={:.1}",
                t / o,
                o / b
            );
        }
    }
    let tokio_mode = tokio_side.and_then(|pairs| {
        Ok((
            value(&pairs, "sim_tokio_us")?,
            value(&pairs, "sim_tokio_steps_per_run")?,
            value(&pairs, "sim_tokio_fenced_us")?,
            value(&pairs, "sim_tokio_fenced_steps_per_run")?,
        ))
    });
    match tokio_mode {
        Ok((k, steps, f, f_steps)) => {
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
        Err(why) => println!("sim_tokio_us=unavailable (the tokio side: {why})"),
    }
}
