//! AFL++ target `raft_kv` (see `fuzz/README.md`).
fn main() {
    sim_afl::run("raft_kv", &systems::raft_kv::SPEC);
}
