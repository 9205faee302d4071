#!/usr/bin/env bash
# Time to first crash under libFuzzer, repeated: the figures in fuzz/README.md come from here.
#
#   scripts/fuzz-measure.sh TARGET BUG SIGNALS [RUNS] [BUDGET_SECONDS]
#
# Runs the already built target (`cargo fuzz build -s none`) RUNS times (default 5), each
# from an empty corpus with libFuzzer seed 1..RUNS, with SIM_BUG=BUG (`-` = the correct
# system) and SIM_SIGNAL=SIGNALS, bounded by BUDGET_SECONDS (default 60). Prints one line
# per run (executions and wall seconds to the first crash, or `none`) and the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
target=$1 bug=$2 signals=$3 runs=${4:-5} budget=${5:-60}
bin=fuzz/target/x86_64-unknown-linux-gnu/release/$target
[ -x "$bin" ] || { echo "error: $bin not built; run: (cd fuzz && cargo fuzz build -s none)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
execs_list=() secs_list=()
for run in $(seq 1 "$runs"); do
    mkdir -p "$work/corpus$run" "$work/art$run"
    start=$(date +%s%N)
    if [ "$bug" = - ]; then unset SIM_BUG; else export SIM_BUG=$bug; fi
    SIM_SIGNAL=$signals "$bin" -seed="$run" -max_total_time="$budget" -print_final_stats=1 \
        -artifact_prefix="$work/art$run/" "$work/corpus$run" >"$work/log$run" 2>&1 || true
    end=$(date +%s%N)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log$run" | tail -1)
    if ls "$work/art$run"/crash-* >/dev/null 2>&1; then
        secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
        class=$(sed -n 's/^class=\([a-z]*\).*/\1/p' "$work/log$run" | head -1)
        echo "run=$run target=$target bug=$bug signals=$signals crash=yes class=$class execs=$execs seconds=$secs"
        execs_list+=("$execs") secs_list+=("$secs")
    else
        echo "run=$run target=$target bug=$bug signals=$signals crash=none execs=$execs seconds>=$budget"
        execs_list+=("inf") secs_list+=("inf")
    fi
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : v[NR / 2] " (of " NR ", even: lower middle)" }'; }
found=$(printf '%s\n' "${execs_list[@]}" | grep -vc inf || true)
echo "summary target=$target bug=$bug signals=$signals found=$found/$runs median_execs=$(median "${execs_list[@]}") median_seconds=$(median "${secs_list[@]}")"
