//! AFL++ target `floor` (see `fuzz/README.md`).
fn main() {
    sim_afl::run("floor", &systems::fixtures::FLOOR);
}
