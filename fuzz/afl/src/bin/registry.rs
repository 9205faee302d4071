//! AFL++ target `registry` (see `fuzz/README.md`).
fn main() {
    sim_afl::run("registry", &systems::registry::SPEC);
}
