#!/usr/bin/env bash
# Hunt one planted bug with libFuzzer, from a cold start, with the best settings we know.
#
#   scripts/hunt.sh SYSTEM BUG [BUDGET_SECONDS] [RUN]      e.g. scripts/hunt.sh raft-kv vote-not-persisted 120
#
# 1. `sim corpus` records HUNT_SEEDS seeded runs (default 32) and writes them as byte inputs:
#    the starting corpus has the sweep's variety (a run that already fails ends the hunt).
# 2. The target (built with `cargo fuzz build -s none`, stable) runs from that corpus with the
#    lane-aware mutator (SIM_MUTATOR, default `lanes`), SIM_SIGNAL (default: the harness's),
#    inputs up to 4x the longest seed input, no length ramp (-len_control=0), libFuzzer's
#    vanilla corpus schedule (-entropic=0: as many executions to a bug, 1.7-2.9x less time),
#    no mutations from its comparison tables (-use_cmp=0: they are keyed by code address, so
#    with them any rebuild that moves code runs another search), libFuzzer seed RUN (default
#    1), its corpus in memory and no status line per new entry, until the first crash or
#    BUDGET_SECONDS (default 120).
# 3. A failing input is kept in fuzz/artifacts/TARGET/ (where `cargo fuzz run` puts its own),
#    and stderr names it with the `sim replay` line that shows its trace.
#
# Every execution counts: the seed runs and libFuzzer's (its initial pass over the corpus
# included). The last line is `found=0|1 execs=N wall_s=S`; wall_s excludes the build.
# HUNT_SEEDS=0 starts libFuzzer from an empty corpus instead; the build is
# scripts/hunt-build.sh's (HUNT_COVERAGE_CRATES, FUZZ_BUILD_ARGS and HUNT_RUSTFLAGS are its
# settings); HUNT_BUILD=0 skips it; HUNT_BIN runs that target binary instead (a build of
# your own, e.g. without code coverage; implies HUNT_BUILD=0); HUNT_FUZZ_ARGS are extra
# libFuzzer flags (they come last and win, e.g. -entropic=1).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,25p' "$0" >&2; exit 2; }
system=$1 bug=$2 budget=${3:-120} run=${4:-1}
seeds=${HUNT_SEEDS:-32}
. scripts/targets.sh
target=$(target_of "$system")
sim=target/release/sim
if [ -n "${HUNT_BIN:-}" ]; then
    bin=$HUNT_BIN
elif [ "${HUNT_BUILD:-1}" = 1 ]; then
    bin=$(scripts/hunt-build.sh "$target")
else
    bin=$(scripts/hunt-build.sh --path "$target")
fi
[ -x "$bin" ] || { echo "error: $bin not built; run: scripts/hunt-build.sh $target" >&2; exit 2; }
# Seed inputs and crashes are written to memory (/dev/shm) where it exists.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then work=$(mktemp -d -p /dev/shm); else work=$(mktemp -d); fi
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/artifacts"
start=$(date +%s%N)
seed_execs=0 max_len=4096
if [ "$seeds" -gt 0 ]; then
    # Each hunt run takes its own seeds, so runs are independent.
    first=$(( run * 1000000 ))
    status=0
    "$sim" corpus --system "$system" --bug "$bug" --seeds "$first..$(( first + seeds ))" \
        --out "$work/corpus" >"$work/seeds.log" 2>&1 || status=$?
    seed_execs=$(sed -n 's/^runs=\([0-9]*\).*/\1/p' "$work/seeds.log")
    if [ "$status" = 1 ]; then
        end=$(date +%s%N)
        cat "$work/seeds.log" >&2
        echo "found=1 execs=$seed_execs wall_s=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')"
        exit 0
    fi
    [ "$status" = 0 ] || { cat "$work/seeds.log" >&2; exit 2; }
    longest=$(sed -n 's/.*bytes_max=\([0-9]*\).*/\1/p' "$work/seeds.log")
    max_len=$(( longest * 4 > 4096 ? longest * 4 : 4096 ))
fi
# The seed runs go in as -seed_inputs, with no corpus directory: libFuzzer then keeps its
# corpus in memory, where it writes every new entry to a directory otherwise (on raft-kv more
# than half of all executions add one) and rescans that directory every second. -verbosity=0
# drops its status line per new entry, whose corpus totals are sums over the whole corpus.
# Neither changes the search: the same hunt runs the same executions to the same crash,
# about 5% sooner (fuzz/README.md).
corpus_args=()
if [ -n "$(ls -A "$work/corpus")" ]; then
    # libFuzzer reads the list as one string: a trailing newline would end the last path.
    printf '%s' "$(find "$work/corpus" -type f | sort | paste -sd, -)" >"$work/seeds.list"
    corpus_args=(-seed_inputs="@$work/seeds.list")
fi
SIM_BUG=$bug "$bin" "${corpus_args[@]}" -seed="$run" -max_total_time="$budget" -max_len="$max_len" \
    -len_control=0 -entropic=0 -use_cmp=0 -verbosity=0 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    ${HUNT_FUZZ_ARGS:-} >"$work/fuzz.log" 2>&1 || true
end=$(date +%s%N)
fuzz_execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -1)
found=0
if ls "$work/artifacts"/crash-* >/dev/null 2>&1; then
    found=1
    grep -m1 -E '^class=' "$work/fuzz.log" >&2 || true
    mkdir -p "fuzz/artifacts/$target"
    for crash in "$work/artifacts"/crash-*; do
        cp "$crash" "fuzz/artifacts/$target/"
        echo "failing input: fuzz/artifacts/$target/${crash##*/}" >&2
        echo "its trace: target/release/sim replay --system $system --bug $bug fuzz/artifacts/$target/${crash##*/}" >&2
    done
fi
if [ "$found" = 0 ] && grep -q '^SUMMARY: libFuzzer' "$work/fuzz.log"; then
    # Stopped before its budget by something other than the system failing (memory, a
    # timeout): say so, or a short hunt reads as a clean one.
    echo "warning: libFuzzer stopped early: $(grep -m1 '^SUMMARY: libFuzzer' "$work/fuzz.log")" >&2
fi
if [ -n "${HUNT_LOG:-}" ]; then cp "$work/fuzz.log" "$HUNT_LOG"; fi
echo "found=$found execs=$(( seed_execs + ${fuzz_execs:-0} )) wall_s=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')"
