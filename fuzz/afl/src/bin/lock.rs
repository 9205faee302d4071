//! AFL++ target `lock` (see `fuzz/README.md`).
fn main() {
    sim_afl::run("lock", &systems::fixtures::LOCK);
}
