#!/usr/bin/env bash
# Swarm sweep against the plain seed sweep: seeds and wall time to the first failure of each
# planted bug, on one core, median over RUNS disjoint seed ranges.
#
#   RUNS=20 scripts/swarm-bench.sh
#   BUGS="raft-kv/vote-not-persisted wal/no-checksum" RUNS=20 scripts/swarm-bench.sh
#   CLEAN_SEEDS=100000 BUGS= scripts/swarm-bench.sh     # correct systems only
#
# For each bug of BUGS (default: every planted bug `sim list` names), run r = FIRST_RUN ..
# FIRST_RUN+RUNS-1 (FIRST_RUN default 1) over seeds r*10^6 + 10^8 .. + BUDGET (default
# 1,000,000, so the ranges are disjoint):
#   sweep: `sim sweep --jobs 1 --until-first` (SWEEP_JOBS workers instead of 1: the same
#          seeds to the first failure, about the same CPU time, less wall time);
#   swarm: the same with `--intensity swarm`.
# execs = seeds run up to and including the first failure, wall = its wall time; a run that
# does not find the bug counts at its budget. ENGINES="swarm" (or "sweep") runs one engine
# only; the other's keys then read `-`. Prints one line per bug:
#   bug=SYSTEM/BUG runs=N sweep_execs=M sweep_s=S sweep_cpu_s=C sweep_found=K/N swarm_execs=M swarm_s=S swarm_cpu_s=C swarm_found=K/N
# (medians; with an even N the lower middle; S wall seconds, C CPU seconds). Per-run lines go
# to stderr. CPU times come from GNU time (/usr/bin/time).
# With CLEAN_SEEDS=N, every correct system (or those of CLEAN_SYSTEMS) then runs N swarm
# seeds from 10^8 (JOBS workers, default 1) and prints its sweep line: `failures=0` is the
# expected result.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-20}
first_run=${FIRST_RUN:-1}
budget=${BUDGET:-1000000}
engines=${ENGINES:-sweep swarm}
jobs=${JOBS:-1}
sweep_jobs=${SWEEP_JOBS:-1}
sim=target/release/sim
cargo build --release -q -p systems --bin sim
bugs=${BUGS-$("$sim" list | sed -n 's/^system=\([^ ]*\) bug=\([^ ]*\) .*/\1\/\2/p')}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
seconds_since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
failures=$(mktemp -d)
trap 'rm -rf "$failures"' EXIT
# One engine's run to the first failure: prints `execs=M wall_s=S cpu_s=S found=0|1` (CPU
# time, user and system, is what a shared machine does not inflate).
to_first() {
    local system=$1 bug=$2 first=$3 start line seeds found cpu
    shift 3
    start=$(date +%s%N)
    line=$(/usr/bin/time -f 'cpu_s=%U+%S' -o "$failures/cpu" "$sim" sweep --system "$system" \
        --bug "$bug" --jobs "$sweep_jobs" --until-first "$@" --seeds "$first..$(( first + budget ))" \
        --failures-dir "$failures" 2>/dev/null | tail -1) || true
    cpu=$(sed -n 's/^cpu_s=\([0-9.]*\)+\([0-9.]*\)$/\1 \2/p' "$failures/cpu" | awk '{ printf "%.2f", $1 + $2 }')
    seeds=$(sed -n 's/^seeds=\([0-9]*\).*/\1/p' <<<"$line")
    found=1
    grep -q 'first_failure_seed=none' <<<"$line" && found=0
    echo "execs=${seeds:-$budget} wall_s=$(seconds_since "$start") cpu_s=$cpu found=$found"
}
field() { sed -n "s/.*$1=\([0-9.-]*\).*/\1/p" <<<"$2"; }
for entry in $bugs; do
    system=${entry%%/*} bug=${entry#*/}
    sweep_execs=() sweep_s=() sweep_cpu=() swarm_execs=() swarm_s=() swarm_cpu=()
    sweep_found=0 swarm_found=0
    for r in $(seq "$first_run" $(( first_run + runs - 1 ))); do
        first=$(( r * 1000000 + 100000000 ))
        plain="execs=- wall_s=- cpu_s=- found=0" swarm=$plain
        [[ " $engines " == *" sweep "* ]] && plain=$(to_first "$system" "$bug" "$first")
        [[ " $engines " == *" swarm "* ]] && swarm=$(to_first "$system" "$bug" "$first" --intensity swarm)
        echo "run=$r bug=$entry first_seed=$first engine=sweep $plain" >&2
        echo "run=$r bug=$entry first_seed=$first engine=swarm $swarm" >&2
        sweep_execs+=("$(field execs "$plain")") sweep_s+=("$(field wall_s "$plain")")
        sweep_cpu+=("$(field cpu_s "$plain")")
        swarm_execs+=("$(field execs "$swarm")") swarm_s+=("$(field wall_s "$swarm")")
        swarm_cpu+=("$(field cpu_s "$swarm")")
        sweep_found=$(( sweep_found + $(field found "$plain") ))
        swarm_found=$(( swarm_found + $(field found "$swarm") ))
        rm -rf "${failures:?}"/*
    done
    [[ " $engines " == *" sweep "* ]] || sweep_found=-
    [[ " $engines " == *" swarm "* ]] || swarm_found=-
    echo "bug=$entry runs=$runs sweep_execs=$(median "${sweep_execs[@]}") sweep_s=$(median "${sweep_s[@]}") sweep_cpu_s=$(median "${sweep_cpu[@]}") sweep_found=$sweep_found/$runs swarm_execs=$(median "${swarm_execs[@]}") swarm_s=$(median "${swarm_s[@]}") swarm_cpu_s=$(median "${swarm_cpu[@]}") swarm_found=$swarm_found/$runs"
done
if [ -n "${CLEAN_SEEDS:-}" ]; then
    for system in ${CLEAN_SYSTEMS:-$("$sim" list | sed -n 's/^system=\([^ ]*\) about=.*/\1/p')}; do
        line=$("$sim" sweep --system "$system" --intensity swarm --jobs "$jobs" \
            --seeds "100000000..$(( 100000000 + CLEAN_SEEDS ))" --failures-dir "$failures" 2>/dev/null | tail -1) || true
        echo "system=$system intensity=swarm $line"
    done
fi
