//! AFL++ target `echo` (see `fuzz/README.md`).
fn main() {
    sim_fuzz::afl::run(
        "echo",
        &systems::echo::SPEC,
        "cargo run --release -p systems --bin sim --",
    );
}
