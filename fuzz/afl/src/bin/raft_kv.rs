//! AFL++ target `raft_kv` (see `fuzz/README.md`).
fn main() {
    sim_fuzz::afl::run(
        "raft_kv",
        &systems::raft_kv::SPEC,
        "cargo run --release -p systems --bin sim --",
    );
}
