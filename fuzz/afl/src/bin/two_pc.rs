//! AFL++ target `two_pc` (see `fuzz/README.md`).
fn main() {
    sim_afl::run("two_pc", &systems::two_pc::SPEC);
}
