//! AFL++ target `sim_target` (see `fuzz/README.md`).
fn main() {
    sim_fuzz::afl::run(
        "sim_target",
        &systems::two_pc::SPEC,
        "cargo run --release -p systems --bin sim --",
    );
}
