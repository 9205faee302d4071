//! `sim`: list, run, sweep, replay, shrink and render the example systems. See `sim --help`.

fn main() {
    let cli = sim_core::cli::Cli::new(systems::all())
        .replay_prefix("cargo run --release -p systems --bin sim --")
        .build_info(sim_core::build_info!());
    std::process::exit(cli.main());
}
