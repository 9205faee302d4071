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
# Steps 1-3 are `sim hunt`'s (a user's crate runs `sim hunt` itself); this script picks the
# build.
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
# The hunt itself is `sim hunt` (sim-core/src/cli/hunt.rs), the same search a user's crate
# gets; this script adds the build choices of scripts/hunt-build.sh and keeps stdout to the
# one result line.
extra=()
for flag in ${HUNT_FUZZ_ARGS:-}; do extra+=(--fuzz-arg="$flag"); done
[ -n "${HUNT_LOG:-}" ] && extra+=(--log "$HUNT_LOG")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
"$sim" hunt --system "$system" --bug "$bug" --budget "$budget" --run "$run" --seeds "$seeds" \
    --target "$target" --bin "$bin" "${extra[@]}" >"$out" || status=$?
[ "$status" -le 1 ] || { cat "$out" >&2; exit 2; }
grep -v '^found=' "$out" >&2 || true
if crash=$(sed -n 's/^failing_input=//p' "$out") && [ -n "$crash" ]; then
    echo "its trace: $sim replay --system $system --bug $bug $crash" >&2
fi
grep '^found=' "$out"
