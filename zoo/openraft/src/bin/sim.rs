//! This crate's own `sim`: `cargo run --release --bin sim -- sweep --system openraft-kv`
//! (and `list`, `run`, `shrink`, `replay`, `render`, `determinism`).

fn main() {
    let cli = sim_core::cli::Cli::new(openraft_zoo::SYSTEMS.to_vec())
        .replay_prefix("cargo run --release --bin sim --")
        .build_info(sim_core::build_info!());
    std::process::exit(cli.main());
}
