//! This crate's `sim`: `cargo run --release --bin sim -- sweep --system raftrs-kv --seeds 0..1000`
//! (and `list`, `run`, `shrink`, `replay`, `render`, `determinism`).

fn main() {
    let cli = sim_core::cli::Cli::new(vec![raft_rs_zoo::SPEC])
        .replay_prefix("cargo run --release --bin sim --")
        .build_info(sim_core::build_info!());
    std::process::exit(cli.main());
}
