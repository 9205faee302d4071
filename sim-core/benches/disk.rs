//! Disk benchmark (plain harness: `cargo bench -p sim-core --bench disk`).
//!
//! Operations per wall second of a disk-heavy workload — one node appending 1 KiB records
//! and syncing after each, 1000 per run, default latencies, no faults — next to a bare
//! in-memory map doing the same bookkeeping (a `BTreeMap` of offset to record). Each figure
//! is the median of 9 rounds of 50 runs, measured in this one process.
//!
//! Wall-clock reads here measure the simulator from outside; none reaches a simulation.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use sim_core::disk::Disk;
use sim_core::sim::{Config, Sim};

const RECORDS: u64 = 1000;
const RUNS: u64 = 50;
const ROUNDS: usize = 9;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    v[v.len() / 2]
}

fn sim_run(seed: u64) {
    let mut sim = Sim::new(Config::default());
    sim.client("db", |_| async {
        let disk = Disk::current();
        let log = disk.create("log").await.expect("create");
        let record = [7u8; 1024];
        for _ in 0..RECORDS {
            log.append(&record).await.expect("append");
            log.sync().await.expect("sync");
        }
    });
    let report = sim.run_seed(seed);
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
}

fn bare_run() {
    let mut map: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    let record = [7u8; 1024];
    for i in 0..RECORDS {
        map.insert(i * 1024, black_box(record.to_vec()));
    }
    black_box(&map);
}

fn ops_per_sec(mut f: impl FnMut(u64)) -> f64 {
    let samples = (0..ROUNDS)
        .map(|round| {
            let t = Instant::now();
            for run in 0..RUNS {
                f(round as u64 * RUNS + run);
            }
            (RUNS * RECORDS) as f64 / t.elapsed().as_secs_f64()
        })
        .collect();
    median(samples)
}

fn main() {
    let sim = ops_per_sec(sim_run);
    let bare = ops_per_sec(|_| bare_run());
    println!("== write+sync of 1 KiB records, {RECORDS} per run, median of {ROUNDS} rounds of {RUNS} runs");
    println!(
        "disk_ops_per_sec_sim={sim:.0} map_ops_per_sec_bare={bare:.0} ratio={:.1}",
        bare / sim
    );
}
