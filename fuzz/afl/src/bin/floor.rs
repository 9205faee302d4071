//! AFL++ target `floor` (see `fuzz/README.md`).
fn main() {
    sim_fuzz::afl::run(
        "floor",
        &systems::fixtures::FLOOR,
        "cargo run --release -p systems --bin sim --",
    );
}
