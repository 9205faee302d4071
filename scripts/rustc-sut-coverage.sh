#!/usr/bin/env bash
# A RUSTC_WRAPPER that keeps cargo fuzz's coverage instrumentation only for the crates named
# in SUT_CRATES (space-separated crate names, default "systems"): every other crate (sim-core,
# std's dependencies, ...) is compiled without `-Cpasses=sancov-module` and its
# `-sanitizer-coverage-*` options. Stable rustc cannot pass LLVM's coverage allowlist, so this
# is how a fuzz build instruments only the system under test. scripts/hunt-build.sh builds
# a hunt this way with HUNT_COVERAGE_CRATES="systems TARGET"; by hand:
#
#   (cd fuzz && RUSTC_WRAPPER=$PWD/../scripts/rustc-sut-coverage.sh SUT_CRATES="systems raft_kv" \
#       cargo fuzz build -s none --no-trace-compares raft_kv --target-dir /tmp/sut-cov)
#   HUNT_BIN=/tmp/sut-cov/x86_64-unknown-linux-gnu/release/raft_kv scripts/hunt.sh raft-kv vote-not-persisted 120 1
#
# Measured in fuzz/README.md ("What code coverage buys").
set -euo pipefail
rustc=$1
shift
name="" prev=""
for arg in "$@"; do
    [ "$prev" = "--crate-name" ] && name=$arg
    prev=$arg
done
for crate in ${SUT_CRATES:-systems}; do
    [ "$name" = "$crate" ] && exec "$rustc" "$@"
done
args=() codegen_flag=0
for arg in "$@"; do
    if [ "$codegen_flag" = 1 ]; then
        codegen_flag=0
        case "$arg" in
            passes=sancov-module | llvm-args=-sanitizer-coverage*) ;;
            *) args+=(-C "$arg") ;;
        esac
        continue
    fi
    case "$arg" in
        -C) codegen_flag=1 ;;
        -Cpasses=sancov-module | -Cllvm-args=-sanitizer-coverage*) ;;
        *) args+=("$arg") ;;
    esac
done
exec "$rustc" "${args[@]}"
