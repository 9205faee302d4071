//! This crate's own `sim`: `cargo run --release --bin sim -- sweep --system chain --bug
//! tail-reapplies-stale-resend` (and `hunt`, `shrink`, `replay`, `render`, `determinism`).

fn main() {
    let cli = sim_core::cli::Cli::new(vec![chain::SPEC])
        .replay_prefix("cargo run --release --bin sim --")
        .build_info(sim_core::build_info!());
    std::process::exit(cli.main());
}
