#!/usr/bin/env bash
# Build what a hunt runs, with the hunt's settings: the `sim` binary and one fuzz target.
#
#   scripts/hunt-build.sh TARGET           build, then print the target binary's path
#   scripts/hunt-build.sh --path TARGET    only print that path
#
# The one place these flags live; scripts/hunt.sh and scripts/deep-bench.sh call it.
# HUNT_COVERAGE_CRATES are the crates with code coverage (default "all", cargo fuzz's
# whole-program coverage; e.g. "systems TARGET" instruments only the system under test and
# its harness, and sim-core, the mutator and third-party code run uninstrumented, through
# scripts/rustc-sut-coverage.sh: measured in fuzz/README.md, not the default). The system's
# abstract state and labels reach libFuzzer either way, through sim-core's own counters.
# FUZZ_BUILD_ARGS are the extra `cargo fuzz build` flags (default "--no-trace-compares":
# comparison tracing cost a third of the run time and found nothing the lane mutator does
# not; set it empty for cargo fuzz's own default build). HUNT_RUSTFLAGS are added to cargo
# fuzz's RUSTFLAGS; the default drops two things that only libFuzzer options a hunt does not
# use read, so neither changes the search: indirect-call traces (-sanitizer-coverage-level=3;
# read with -use_value_profile, about 7% of a raft-kv run) and the PC table
# (-sanitizer-coverage-pc-table=0; read to print coverage, yet walked against every counter
# for each new corpus entry, a tenth of a raft-kv hunt). fuzz/README.md has the measurements.
# Each coverage choice builds into its own directory under fuzz/target/ (cargo does not see
# the wrapper's crate list, so a shared one could hand back another choice's objects). Build
# output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
only_path=0
[ "${1:-}" = --path ] && { only_path=1; shift; }
[ $# -eq 1 ] || { sed -n '2,23p' "$0" >&2; exit 2; }
target=$1
crates=${HUNT_COVERAGE_CRATES:-all}
target_dir=fuzz/target/hunt-$(tr ' ' '-' <<<"$crates")
bin=$target_dir/x86_64-unknown-linux-gnu/release/$target
if [ "$only_path" = 0 ]; then
    cargo build --release -q -p systems --bin sim >&2
    (
        if [ "$crates" != all ]; then
            export RUSTC_WRAPPER=$PWD/scripts/rustc-sut-coverage.sh SUT_CRATES=$crates
        fi
        cd fuzz
        hunt_flags="-Cllvm-args=-sanitizer-coverage-level=3 -Cllvm-args=-sanitizer-coverage-pc-table=0"
        RUSTFLAGS="${HUNT_RUSTFLAGS-$hunt_flags} ${RUSTFLAGS:-}" \
            cargo fuzz build -s none ${FUZZ_BUILD_ARGS---no-trace-compares} "$target" --target-dir "../$target_dir"
    ) >&2
fi
echo "$bin"
