#!/usr/bin/env bash
# Deep-bug benchmark: executions and wall time to the first failure, the plain seed sweep and
# the swarm sweep against the fuzz hunt, from a cold start on one core, median over RUNS
# independent runs each.
#
#   RUNS=10 scripts/deep-bench.sh
#
# For each bug of BUGS (default: raft-kv's three deep bugs), run r = FIRST_RUN..FIRST_RUN+RUNS-1
# (FIRST_RUN default 1; another value repeats the benchmark on new seeds):
#   sweep: `sim sweep --jobs 1 --until-first` over seeds r*10^8 .. r*10^8 + SWEEP_BUDGET
#          (default 3,000,000 seeds); execs = seeds run, wall = its wall time;
#   swarm: the same seeds with `--intensity swarm` (a fault profile drawn per seed);
#   fuzz:  `scripts/hunt.sh SYSTEM BUG FUZZ_BUDGET_S r` (default 120 s), whose settings are
#          the defaults of the hunt (env HUNT_* and SIM_* pass through); FUZZ=0 skips it (its
#          keys then read `-`).
# PARALLEL=2 runs two r at a time (each still on one core: the sweep with --jobs 1, libFuzzer
# with one worker). A run that does not find the bug counts at its budget. Prints one line
# per bug:
#   bug=SYSTEM/BUG runs=N sweep_execs=M sweep_s=S swarm_execs=M swarm_s=S fuzz_execs=M fuzz_s=S fuzz_found=K/N
# (M and S medians; with an even N the lower middle). Per-run lines go to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-10}
first_run=${FIRST_RUN:-1}
bugs=${BUGS:-raft-kv/ack-before-fsync raft-kv/vote-not-persisted raft-kv/commit-past-request}
parallel=${PARALLEL:-1}
sweep_budget=${SWEEP_BUDGET:-3000000}
fuzz_budget=${FUZZ_BUDGET_S:-120}
fuzz=${FUZZ:-1}
. scripts/targets.sh
cargo build --release -q -p systems --bin sim
if [ "$fuzz" != 0 ]; then
    for bug in $bugs; do
        scripts/hunt-build.sh "$(target_of "${bug%%/*}")" >/dev/null
    done
fi
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
seconds_since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
# One sweep of run r to the first failure (extra flags after the range): its summary line
# and wall time.
sweep_line() {
    local system=$1 bug=$2 first=$3 start line failures
    shift 3
    failures=$(mktemp -d)
    start=$(date +%s%N)
    line=$(target/release/sim sweep --system "$system" --bug "$bug" --jobs 1 --until-first \
        --seeds "$first..$(( first + sweep_budget ))" --failures-dir "$failures" "$@" 2>/dev/null | tail -1) || true
    echo "$line wall_s=$(seconds_since "$start")"
    rm -rf "$failures"
}
# One run r of one bug: a plain sweep, a swarm sweep, then a hunt; writes their last lines to
# $out/r.
one_run() {
    local system=$1 bug=$2 r=$3 out=$4 first line
    first=$(( r * 100000000 ))
    echo "engine=sweep $(sweep_line "$system" "$bug" "$first")" >"$out/$r"
    echo "engine=swarm $(sweep_line "$system" "$bug" "$first" --intensity swarm)" >>"$out/$r"
    if [ "$fuzz" != 0 ]; then
        line=$(HUNT_BUILD=0 scripts/hunt.sh "$system" "$bug" "$fuzz_budget" "$r" 2>/dev/null | tail -1)
        echo "engine=fuzz $line" >>"$out/$r"
    fi
}
for entry in $bugs; do
    system=${entry%%/*} bug=${entry#*/}
    out=$(mktemp -d)
    for r in $(seq "$first_run" $(( first_run + runs - 1 ))); do
        one_run "$system" "$bug" "$r" "$out" &
        while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n; done
    done
    wait
    sweep_execs=() sweep_s=() swarm_execs=() swarm_s=() fuzz_execs=() fuzz_s=() found=0
    for r in $(seq "$first_run" $(( first_run + runs - 1 ))); do
        sed "s|^|run=$r bug=$entry |" "$out/$r" >&2
        sweep=$(sed -n 's/^engine=sweep //p' "$out/$r") swarm=$(sed -n 's/^engine=swarm //p' "$out/$r")
        sweep_execs+=("$(sed -n 's/^seeds=\([0-9]*\).*/\1/p' <<<"$sweep")")
        sweep_s+=("$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$sweep")")
        swarm_execs+=("$(sed -n 's/^seeds=\([0-9]*\).*/\1/p' <<<"$swarm")")
        swarm_s+=("$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$swarm")")
        if [ "$fuzz" != 0 ]; then
            fuzz=$(sed -n 's/^engine=fuzz //p' "$out/$r")
            found=$(( found + $(sed -n 's/^found=\([01]\).*/\1/p' <<<"$fuzz") ))
            fuzz_execs+=("$(sed -n 's/.*execs=\([0-9]*\).*/\1/p' <<<"$fuzz")")
            fuzz_s+=("$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$fuzz")")
        fi
    done
    rm -rf "$out"
    fuzz_keys="fuzz_execs=- fuzz_s=- fuzz_found=-"
    if [ "$fuzz" != 0 ]; then
        fuzz_keys="fuzz_execs=$(median "${fuzz_execs[@]}") fuzz_s=$(median "${fuzz_s[@]}") fuzz_found=$found/$runs"
    fi
    echo "bug=$entry runs=$runs sweep_execs=$(median "${sweep_execs[@]}") sweep_s=$(median "${sweep_s[@]}") swarm_execs=$(median "${swarm_execs[@]}") swarm_s=$(median "${swarm_s[@]}") $fuzz_keys"
done
