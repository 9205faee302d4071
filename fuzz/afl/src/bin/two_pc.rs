//! AFL++ target `two_pc` (see `fuzz/README.md`).
fn main() {
    sim_fuzz::afl::run(
        "two_pc",
        &systems::two_pc::SPEC,
        "cargo run --release -p systems --bin sim --",
    );
}
