#!/usr/bin/env bash
# Deep-bug benchmark: executions and wall time to the first failure, seed sweep against the
# fuzz hunt, from a cold start on one core, median over RUNS independent runs each.
#
#   RUNS=10 scripts/deep-bench.sh
#
# For each bug of BUGS (default: raft-kv's three deep bugs), run r = FIRST_RUN..FIRST_RUN+RUNS-1
# (FIRST_RUN default 1; another value repeats the benchmark on new seeds):
#   sweep: `sim sweep --jobs 1 --until-first` over seeds r*10^8 .. r*10^8 + SWEEP_BUDGET
#          (default 3,000,000 seeds); execs = seeds run, wall = its wall time;
#   fuzz:  `scripts/hunt.sh SYSTEM BUG FUZZ_BUDGET_S r` (default 120 s), whose settings are
#          the defaults of the hunt (env HUNT_* and SIM_* pass through).
# PARALLEL=2 runs two r at a time (each still on one core: the sweep with --jobs 1, libFuzzer
# with one worker). A run that does not find the bug counts at its budget. Prints one line
# per bug:
#   bug=SYSTEM/BUG runs=N sweep_execs=M sweep_s=S fuzz_execs=M fuzz_s=S fuzz_found=K/N
# (M and S medians; with an even N the lower middle). Per-run lines go to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-10}
first_run=${FIRST_RUN:-1}
bugs=${BUGS:-raft-kv/ack-before-fsync raft-kv/vote-not-persisted raft-kv/commit-past-request}
parallel=${PARALLEL:-1}
sweep_budget=${SWEEP_BUDGET:-3000000}
fuzz_budget=${FUZZ_BUDGET_S:-120}
. scripts/targets.sh
for bug in $bugs; do
    scripts/hunt-build.sh "$(target_of "${bug%%/*}")" >/dev/null
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
seconds_since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
# One run r of one bug: a sweep, then a hunt; writes their last lines to $out/r.
one_run() {
    local system=$1 bug=$2 r=$3 out=$4 first start line secs
    first=$(( r * 100000000 ))
    start=$(date +%s%N)
    line=$(target/release/sim sweep --system "$system" --bug "$bug" --jobs 1 --until-first \
        --seeds "$first..$(( first + sweep_budget ))" --failures-dir "$(mktemp -d)" 2>/dev/null | tail -1) || true
    secs=$(seconds_since "$start")
    echo "engine=sweep $line wall_s=$secs" >"$out/$r"
    line=$(HUNT_BUILD=0 scripts/hunt.sh "$system" "$bug" "$fuzz_budget" "$r" 2>/dev/null | tail -1)
    echo "engine=fuzz $line" >>"$out/$r"
}
for entry in $bugs; do
    system=${entry%%/*} bug=${entry#*/}
    out=$(mktemp -d)
    for r in $(seq "$first_run" $(( first_run + runs - 1 ))); do
        one_run "$system" "$bug" "$r" "$out" &
        while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n; done
    done
    wait
    sweep_execs=() sweep_s=() fuzz_execs=() fuzz_s=() found=0
    for r in $(seq "$first_run" $(( first_run + runs - 1 ))); do
        sed "s|^|run=$r bug=$entry |" "$out/$r" >&2
        sweep=$(sed -n 's/^engine=sweep //p' "$out/$r") fuzz=$(sed -n 's/^engine=fuzz //p' "$out/$r")
        sweep_execs+=("$(sed -n 's/^seeds=\([0-9]*\).*/\1/p' <<<"$sweep")")
        sweep_s+=("$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$sweep")")
        found=$(( found + $(sed -n 's/^found=\([01]\).*/\1/p' <<<"$fuzz") ))
        fuzz_execs+=("$(sed -n 's/.*execs=\([0-9]*\).*/\1/p' <<<"$fuzz")")
        fuzz_s+=("$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$fuzz")")
    done
    rm -rf "$out"
    echo "bug=$entry runs=$runs sweep_execs=$(median "${sweep_execs[@]}") sweep_s=$(median "${sweep_s[@]}") fuzz_execs=$(median "${fuzz_execs[@]}") fuzz_s=$(median "${fuzz_s[@]}") fuzz_found=$found/$runs"
done
