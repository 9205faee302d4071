//! AFL++ target `registry` (see `fuzz/README.md`).
fn main() {
    sim_fuzz::afl::run(
        "registry",
        &systems::registry::SPEC,
        "cargo run --release -p systems --bin sim --",
    );
}
