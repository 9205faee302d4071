//! AFL++ target `canary` (see `fuzz/README.md`).
fn main() {
    sim_afl::run("canary", &systems::fixtures::CANARY);
}
