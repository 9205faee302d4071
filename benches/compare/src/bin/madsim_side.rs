//! The comparison workload on madsim, in a process of its own: madsim (under `--cfg madsim`)
//! interposes `clock_gettime` and the entropy calls itself, and so cannot be linked into one
//! binary with sim-os, whose hooks the tokio mode of the main comparison needs. The main
//! binary runs this one for the same seeds and prints its median beside the others.
//!
//! Prints `madsim_us=<median wall time per run>`; `--engine madsim --seeds N` runs the
//! workload only, for an instruction counter.

use std::time::Duration;

#[path = "../../../../sim-core/benches/common/workload.rs"]
#[allow(dead_code)]
mod workload;

#[path = "../timing.rs"]
mod timing;

use timing::{engine_mode, median, run_engine, time_us};
use workload::ROUND_TRIPS;

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

fn main() {
    if let Some((_, seeds)) = engine_mode() {
        run_engine("madsim", seeds, |seed| {
            madsim_workload(seed);
            0
        });
        return;
    }
    let seeds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let times = (0..seeds)
        .map(|seed| time_us(|| madsim_workload(seed)))
        .collect();
    println!("madsim_us={:.1}", median(times));
}
