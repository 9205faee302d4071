# Shared by the zoo scripts (sourced, not run).

# Builds zoo/<crate>/<dir>'s `sim` binary and prints where a copy of it is kept: every version
# directory of a crate shares one target directory, so the next build would overwrite it.
build_sim() {
    local crate_dir=$1 version_dir=$2
    local kept="$crate_dir/target/zoo-bin/$version_dir/sim"
    CARGO_TARGET_DIR="$crate_dir/target" cargo build -q --release --bin sim \
        --manifest-path "$crate_dir/$version_dir/Cargo.toml" >&2
    mkdir -p "$(dirname "$kept")"
    cp "$crate_dir/target/release/sim" "$kept"
    echo "$kept"
}

# The value of KEY in the sweep's summary line (`seeds=N failures=K first_failure_seed=S ...`).
summary_value() {
    grep -E '^seeds=[0-9]+ failures=' "$1" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}
