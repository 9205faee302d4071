//! `sim`: list, run, sweep, replay, shrink and render the example systems. See `sim --help`.

use sim_core::repro::BuildInfo;

fn main() {
    let cli = sim_core::cli::Cli::new(systems::all())
        .replay_prefix("cargo run --release -p systems --bin sim --")
        .build_info(BuildInfo {
            commit: env!("SIM_BUILD_COMMIT"),
            rustc: env!("SIM_BUILD_RUSTC"),
            target: env!("SIM_BUILD_TARGET"),
        });
    std::process::exit(cli.main());
}
