//! AFL++ target `sim_target` (see `fuzz/README.md`).
fn main() {
    sim_afl::run("sim_target", &systems::two_pc::SPEC);
}
