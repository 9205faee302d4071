#!/usr/bin/env bash
# Build what a hunt runs, with the hunt's settings: the `sim` binary and one fuzz target.
#
#   scripts/hunt-build.sh TARGET      e.g. scripts/hunt-build.sh raft_kv
#
# The one place these flags live; scripts/hunt.sh and scripts/deep-bench.sh call it.
# FUZZ_BUILD_ARGS are the extra `cargo fuzz build` flags (default "--no-trace-compares":
# comparison tracing cost a third of the run time and found nothing the lane mutator does
# not; set it empty for cargo fuzz's own default build). HUNT_RUSTFLAGS are added to cargo
# fuzz's RUSTFLAGS (default edge coverage without indirect-call tracing,
# -sanitizer-coverage-level=3: libFuzzer reads those traces only with -use_value_profile,
# and they cost about 7% of a raft-kv run). Build output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
cargo build --release -q -p systems --bin sim >&2
(cd fuzz && RUSTFLAGS="${HUNT_RUSTFLAGS--Cllvm-args=-sanitizer-coverage-level=3} ${RUSTFLAGS:-}" \
    cargo fuzz build -s none ${FUZZ_BUILD_ARGS---no-trace-compares} "$1") >&2
