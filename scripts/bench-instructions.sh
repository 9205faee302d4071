#!/usr/bin/env bash
# The comparison workload's cost per run in instructions (callgrind) for every engine, beside
# the wall-clock medians of the same invocation, and the engine bench's instructions per event.
#
#   scripts/bench-instructions.sh [SEEDS] [WALL_SEEDS] [WALL_RUNS]
#
# SEEDS (default 50): seeds 0..SEEDS-1 counted under callgrind for each engine (one warm-up
# run uncounted). WALL_SEEDS (default 1000) and WALL_RUNS (default 3): `benches/compare`'s
# wall-clock run, repeated. Wall clock on a shared machine moves 20-50% from run to run;
# instruction counts do not move with the machine (they change with the code and compiler).
#
# Engines: sim-core (native), des (the hand-written discrete-event loop), tokio (plain tokio
# on sim-tokio's clocked tokio nodes), turmoil, madsim; each in a binary of benches/compare
# run with `--engine NAME --seeds N`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/instructions-common.sh
require_valgrind
seeds=${1:-50}
wall_seeds=${2:-1000}
wall_runs=${3:-3}
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}

echo "== building benches/compare and sim-core's engine bench (release)"
(cd benches/compare && cargo build -q --release --workspace --bins)
bin=$(engine_bench_bin)
compare=benches/compare/target/release

echo "== instructions per run, callgrind, seeds 0..$((seeds - 1))"
declare -A ir events
for engine in sim-core des turmoil; do
    r=$(counted "$compare/compare" --engine "$engine" --seeds "$seeds")
    ir[$engine]=${r%% *}
    events[$engine]=$(field events "${r#* }")
done
r=$(counted "$compare/tokio_side" --engine tokio --seeds "$seeds")
ir[tokio]=${r%% *}
events[tokio]=$(field events "${r#* }")
r=$(counted "$compare/madsim_side" --engine madsim --seeds "$seeds")
ir[madsim]=${r%% *}
events[madsim]=0

printf "%-9s %14s %12s %12s %12s\n" engine instr_per_run over_des over_sim_core per_event
for engine in sim-core des tokio turmoil madsim; do
    awk -v e="$engine" -v i="${ir[$engine]}" -v n="$seeds" -v d="${ir[des]}" -v s="${ir[sim-core]}" \
        -v ev="${events[$engine]}" 'BEGIN {
        per_event = ev > 0 ? sprintf("%.0f", i / ev) : "-"
        printf "%-9s %14.0f %12.2f %12.2f %12s\n", e, i / n, i / d, i / s, per_event
    }'
done
echo "(per_event: sim-core per scheduler event, tokio per tokio-node step; the others do not count theirs)"
awk -v s="${ir[sim-core]}" -v d="${ir[des]}" -v t="${ir[turmoil]}" -v k="${ir[tokio]}" 'BEGIN {
    printf "instr_sim_core_over_des=%.2f instr_turmoil_over_tokio=%.1f instr_turmoil_over_sim_core=%.1f\n", s / d, t / k, t / s
}'

echo "== sim-core's engine bench, instructions per unit (callgrind)"
printf "%-16s %12s %12s %8s\n" what sim bare ratio
for pair in "steps:5:step" "timers:5:timer event" "workload:$seeds:workload event"; do
    IFS=: read -r what n label <<<"$pair"
    s=$(counted "$bin" --count "$what" "$n")
    s_units=$(field units "${s#* }")
    if [ "$what" = workload ]; then
        b=$(counted "$bin" --count bare "$n")
        # The hand-written loop does not count its events: per sim-core event, for the ratio.
        b_units=$s_units
    else
        b=$(counted "$bin" --count "bare-$what" "$n")
        b_units=$(field units "${b#* }")
    fi
    awk -v l="$label" -v s="${s%% *}" -v su="$s_units" -v b="${b%% *}" -v bu="$b_units" 'BEGIN {
        printf "%-16s %12.0f %12.0f %8.2f\n", l, s / su, b / bu, (s / su) / (b / bu)
    }'
done

echo "== wall clock, benches/compare, $wall_seeds seeds, $wall_runs runs (medians per run)"
for run in $(seq 1 "$wall_runs"); do
    echo "-- run $run"
    (cd benches/compare && cargo run -q --release -- "$wall_seeds")
done
