//! This crate's own `sim`: `sim sweep --system omnipaxos-kv --seeds 0..1000` (and `list`,
//! `run`, `shrink`, `replay`, `render`, `determinism`), against the omnipaxos release the
//! building package pins.

fn main() {
    let cli = sim_core::cli::Cli::new(vec![omnipaxos_zoo::SPEC, omnipaxos_zoo::SPEC_ACCEPT_SYNC])
        .replay_prefix("cargo run --release --bin sim --")
        .build_info(sim_core::build_info!());
    std::process::exit(cli.main());
}
