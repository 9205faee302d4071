//! `sim`: list, run and sweep the example systems. See `sim --help`.

fn main() {
    let cli = sim_core::cli::Cli::new(systems::all())
        .replay_prefix("cargo run --release -p systems --bin sim --");
    std::process::exit(cli.main());
}
