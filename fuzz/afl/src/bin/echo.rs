//! AFL++ target `echo` (see `fuzz/README.md`).
fn main() {
    sim_afl::run("echo", &systems::echo::SPEC);
}
