fn main() {
    // Commit, toolchain and target, printed with every failure this crate's `sim` reports.
    sim_build::capture();
}
