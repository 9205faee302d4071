//! This crate's own `sim`: `cargo run --release --bin sim -- sweep --system register --bug
//! ack-before-replicate` (and `list`, `run`, `shrink`, `replay`, `render`, `determinism`).

fn main() {
    let cli = sim_core::cli::Cli::new(vec![quickstart::SPEC])
        .replay_prefix("cargo run --release --bin sim --")
        .build_info(sim_core::build_info!());
    std::process::exit(cli.main());
}
