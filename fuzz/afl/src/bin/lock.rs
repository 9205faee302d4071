//! AFL++ target `lock` (see `fuzz/README.md`).
fn main() {
    sim_fuzz::afl::run(
        "lock",
        &systems::fixtures::LOCK,
        "cargo run --release -p systems --bin sim --",
    );
}
