#!/usr/bin/env bash
# The zoo's long runs: one release of a zoo crate, swept over a seed range and then fuzzed
# with `sim hunt` (no planted bug: the release's own safety properties), for the latest
# releases' search for new bugs and the fixed releases' fuzz minutes.
#
#   scripts/zoo-long.sh zoo/<crate>/<version_dir> SYSTEM [--seeds A..B] [--fuzz-s S] [--run R]
#
# Defaults: --seeds 0..1000000, --fuzz-s 3600 (one core each), --run 1. `--seeds none` or
# `--fuzz-s 0` skips that half. The hunt is `sim hunt --run R`: its seed runs and libFuzzer's
# seed follow R, and the hunt keeps no corpus between invocations, so fuzzing a release again
# with the same R repeats the same search; give each invocation its own R. Ends with one line
#   release=DIR system=S run=R sweep_seeds=N sweep_failures=K sweep_s=T fuzz_s=T fuzz_cpu_s=C fuzz_execs=N fuzz_found=0|1
# (fuzz_cpu_s is the fuzzer's user+system CPU time: on a shared machine the wall-clock budget
# is not all fuzzing). A failure's replay line is printed above it, and the sweep's failing
# seeds are in the release's target/sim-failures/. Exits 1 when either half failed, 0 when
# both were clean, 2 on a usage or build error.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/zoo-build.sh

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
if [ $# -lt 2 ]; then usage >&2; exit 2; fi
release=${1%/}; system=$2; shift 2
seeds=0..1000000 fuzz_s=3600 run=1
while [ $# -gt 0 ]; do
    case "$1" in
        --seeds) seeds=$2; shift 2 ;;
        --fuzz-s) fuzz_s=$2; shift 2 ;;
        --run) run=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "zoo-long.sh: unknown argument '$1' (expected --seeds A..B, --fuzz-s S or --run R)" >&2; exit 2 ;;
    esac
done
if [ ! -f "$release/Cargo.toml" ]; then
    echo "zoo-long.sh: no package at $release (expected zoo/<crate>/<version_dir>, e.g. zoo/omnipaxos/v0_2_4)" >&2
    exit 2
fi
crate_dir=$(dirname "$release") version_dir=$(basename "$release")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

sweep_seeds=0 sweep_failures=0 sweep_s=0
if [ "$seeds" != none ]; then
    sim=$(build_sim "$crate_dir" "$version_dir")
    start=$(date +%s)
    # The sweep exits non-zero when a seed fails; its summary line says so.
    (cd "$release" && "$OLDPWD/$sim" sweep --system "$system" --seeds "$seeds" --jobs 1) \
        | tee "$work/sweep" | grep -E '^(seeds=|FAIL|replay)' >&2 || true
    sweep_s=$(( $(date +%s) - start ))
    sweep_seeds=$(summary_value "$work/sweep" seeds)
    sweep_failures=$(summary_value "$work/sweep" failures)
fi

fuzz_execs=0 fuzz_found=0 fuzz_wall=0 fuzz_cpu=0
if [ "$fuzz_s" != 0 ]; then
    sim=$(build_sim "$crate_dir" "$version_dir")
    # A one-second hunt first builds the fuzz target, so the timed run's CPU is fuzzing alone.
    (cd "$release" && "$OLDPWD/$sim" hunt --system "$system" --budget 1 --jobs 1 >/dev/null) || true
    (cd "$release" && /usr/bin/time -f 'cpu_s=%U+%S' -o "$work/time" \
        "$OLDPWD/$sim" hunt --system "$system" --budget "$fuzz_s" --run "$run" --jobs 1) \
        | tee "$work/hunt" >&2 || true
    line=$(grep -E '^found=[01] execs=' "$work/hunt" | tail -1)
    fuzz_found=$(echo "$line" | sed -n 's/.*found=\([01]\).*/\1/p')
    fuzz_execs=$(echo "$line" | sed -n 's/.*execs=\([0-9]*\).*/\1/p')
    fuzz_wall=$(echo "$line" | sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p')
    fuzz_cpu=$(sed -n 's/^cpu_s=//p' "$work/time" | bc)
fi

echo "release=$release system=$system run=$run sweep_seeds=$sweep_seeds sweep_failures=$sweep_failures sweep_s=$sweep_s fuzz_s=$fuzz_wall fuzz_cpu_s=$fuzz_cpu fuzz_execs=${fuzz_execs:-0} fuzz_found=${fuzz_found:-0}"
if [ "${sweep_failures:-0}" != 0 ] || [ "${fuzz_found:-0}" = 1 ]; then exit 1; fi
