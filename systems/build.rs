//! Captures what built the `sim` binary (commit, toolchain, target): see `sim-build`.

fn main() {
    sim_build::capture();
    // The dirty flag also covers sim-core and the engine, which the binary links.
    println!("cargo:rerun-if-changed=../sim-core/src");
    println!("cargo:rerun-if-changed=../sim-engine/src");
}
