//! AFL++ target `canary` (see `fuzz/README.md`).
fn main() {
    sim_fuzz::afl::run(
        "canary",
        &systems::fixtures::CANARY,
        "cargo run --release -p systems --bin sim --",
    );
}
