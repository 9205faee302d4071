#!/usr/bin/env bash
# Deep-bug benchmark: executions and wall time to the first failure, the plain seed sweep and
# the swarm sweep against the fuzz hunt and `cargo fuzz run` as typed, from a cold start on
# one core, median over RUNS independent runs each.
#
#   RUNS=10 scripts/deep-bench.sh
#   BUGS="examples/chain:chain/tail-reapplies-stale-resend" RUNS=20 scripts/deep-bench.sh
#
# BUGS (default: raft-kv's three deep bugs) are SYSTEM/BUG of this repository's systems, or
# CRATE:SYSTEM/BUG for a system in a crate of its own (wired like examples/quickstart: its own
# `sim` binary, a fuzz/ crate with the target named after the system, `-` written `_`);
# CRATE:SYSTEM alone hunts the system as it is (a real bug, as in zoo/). For
# each, run r = FIRST_RUN..FIRST_RUN+RUNS-1 (FIRST_RUN default 1; another value repeats the
# benchmark on new seeds):
#   sweep: `sim sweep --jobs 1 --until-first` over seeds r*10^8 .. r*10^8 + SWEEP_BUDGET
#          (default 3,000,000 seeds); execs = seeds run, wall = its wall time;
#   swarm: the same seeds with `--intensity swarm` (a fault profile drawn per seed);
#          SWEEPS=0 skips both (their keys then read `-`: the fuzzers alone, an ablation);
#   fuzz:  the hunt, run r (`scripts/hunt.sh SYSTEM BUG FUZZ_BUDGET_S r` here, the crate's own
#          `sim hunt --run r` for a crate; default budget 120 s; env HUNT_* and SIM_* pass
#          through); FUZZ=0 skips it and the next (their keys then read `-`);
#   typed: the fuzz target as `cargo fuzz run -s none TARGET` runs it (plus
#          -print_final_stats=1, to count executions), cargo fuzz's default
#          build, from an empty corpus directory, with the same budget (executions include
#          the seeded runs the target writes into the empty corpus). TYPED=0 skips it;
#          TYPED_BUILD_ARGS are extra `cargo fuzz build` flags for it (e.g.
#          --no-trace-compares) and TYPED_RUSTFLAGS its RUSTFLAGS (e.g. the README's
#          `-Cllvm-args=-sanitizer-coverage-level=3 -Cllvm-args=-sanitizer-coverage-pc-table=0`).
# PARALLEL=2 runs two r at a time (each still on one core: the sweep with --jobs 1, libFuzzer
# with one worker). A run that does not find the bug counts at its budget. Prints one line
# per bug:
#   bug=SYSTEM/BUG runs=N sweep_execs=M sweep_s=S swarm_execs=M swarm_s=S fuzz_execs=M fuzz_s=S fuzz_found=K/N typed_execs=M typed_s=S typed_found=K/N
# (M and S medians; with an even N the lower middle). Per-run lines go to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=${RUNS:-10}
first_run=${FIRST_RUN:-1}
bugs=${BUGS:-raft-kv/ack-before-fsync raft-kv/vote-not-persisted raft-kv/commit-past-request}
parallel=${PARALLEL:-1}
sweep_budget=${SWEEP_BUDGET:-3000000}
fuzz_budget=${FUZZ_BUDGET_S:-120}
run_fuzz=${FUZZ:-1}
run_typed=${TYPED:-1}
run_sweeps=${SWEEPS:-1}
[ "$run_fuzz" != 0 ] || run_typed=0
. scripts/targets.sh
host=$(rustc -vV | sed -n 's/^host: //p')

crate_of() { case $1 in *:*) echo "${1%%:*}" ;; *) echo . ;; esac; }
sim_of() { echo "$root/$1/target/release/sim"; }
# The fuzz target of SYSTEM in CRATE: ours map two-pc to sim_target, a crate's is the name.
target_in() { if [ "$1" = . ]; then target_of "$2"; else echo "${2//-/_}"; fi; }
typed_bin() { echo "$root/$1/fuzz/target/$host/release/$2"; }

for entry in $bugs; do
    crate=$(crate_of "$entry") spec=${entry#*:} system=${spec%%/*}
    target=$(target_in "$crate" "$system")
    if [ "$crate" = . ]; then
        cargo build --release -q -p systems --bin sim
        [ "$run_fuzz" = 0 ] || scripts/hunt-build.sh "$target" >/dev/null
    else
        cargo build --release -q --manifest-path "$crate/Cargo.toml" --bin sim
    fi
    # cargo fuzz's default build (what `cargo fuzz run -s none` builds).
    # shellcheck disable=SC2086 # TYPED_BUILD_ARGS is a list of flags
    [ "$run_typed" = 0 ] || (cd "$crate/fuzz" && RUSTFLAGS="${TYPED_RUSTFLAGS:-${RUSTFLAGS:-}}" \
        cargo fuzz build -s none ${TYPED_BUILD_ARGS:-} "$target" >&2)
done

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
seconds_since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
# One sweep of run r to the first failure (extra flags after the range): its summary line
# and wall time.
sweep_line() {
    local sim=$1 system=$2 bug=$3 first=$4 start line failures
    shift 4
    failures=$(mktemp -d)
    start=$(date +%s%N)
    line=$("$sim" sweep --system "$system" ${bug:+--bug "$bug"} --jobs 1 --until-first \
        --seeds "$first..$(( first + sweep_budget ))" --failures-dir "$failures" "$@" 2>/dev/null | tail -1) || true
    echo "$line wall_s=$(seconds_since "$start")"
    rm -rf "$failures"
}
# `cargo fuzz run -s none TARGET` as typed, from an empty corpus: found=0|1 execs=N wall_s=S.
typed_line() {
    local crate=$1 target=$2 bug=$3 work start status=0 execs seeded=0 found=0
    work=$(mktemp -d)
    mkdir -p "$work/corpus" "$work/artifacts"
    start=$(date +%s%N)
    env -u SIM_BUG ${bug:+SIM_BUG="$bug"} "$(typed_bin "$crate" "$target")" -artifact_prefix="$work/artifacts/" \
        -max_total_time="$fuzz_budget" -print_final_stats=1 "$work/corpus" >"$work/log" 2>&1 || status=$?
    local wall
    wall=$(seconds_since "$start")
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
    if grep -q 'wrote [0-9]* seeded runs' "$work/log"; then
        seeded=$(sed -n 's/.*wrote \([0-9]*\) seeded runs.*/\1/p' "$work/log" | head -1)
    fi
    ls "$work/artifacts"/crash-* >/dev/null 2>&1 && found=1
    echo "found=$found execs=$(( ${execs:-0} + seeded )) wall_s=$wall"
    rm -rf "$work"
}
# One run r of one bug: a plain sweep, a swarm sweep, a hunt, a typed run; writes their last
# lines to $out/r.
one_run() {
    local crate=$1 system=$2 bug=$3 target=$4 r=$5 out=$6 first line sim
    sim=$(sim_of "$crate")
    first=$(( r * 100000000 ))
    : >"$out/$r"
    if [ "$run_sweeps" != 0 ]; then
        echo "engine=sweep $(sweep_line "$sim" "$system" "$bug" "$first")" >>"$out/$r"
        echo "engine=swarm $(sweep_line "$sim" "$system" "$bug" "$first" --intensity swarm)" >>"$out/$r"
    fi
    if [ "$run_fuzz" != 0 ]; then
        if [ "$crate" = . ]; then
            line=$(HUNT_BUILD=0 scripts/hunt.sh "$system" "$bug" "$fuzz_budget" "$r" 2>/dev/null | tail -1)
        else
            line=$(cd "$crate" && "$sim" hunt --system "$system" ${bug:+--bug "$bug"} --budget "$fuzz_budget" \
                --run "$r" --bin "fuzz/target/hunt/$host/release/$target" 2>/dev/null | tail -1) || true
        fi
        echo "engine=fuzz $line" >>"$out/$r"
    fi
    if [ "$run_typed" != 0 ]; then
        echo "engine=typed $(typed_line "$crate" "$target" "$bug")" >>"$out/$r"
    fi
}
for entry in $bugs; do
    crate=$(crate_of "$entry") spec=${entry#*:} system=${spec%%/*} bug=${spec#*/}
    [ "$bug" != "$spec" ] || bug=""
    target=$(target_in "$crate" "$system")
    if [ "$crate" != . ] && [ "$run_fuzz" != 0 ]; then
        # The hunt's build, once (each run then names the binary).
        (cd "$crate" && "$(sim_of "$crate")" hunt --system "$system" ${bug:+--bug "$bug"} --budget 1 \
            --seeds 0 --fuzz-arg=-runs=0 >/dev/null) || true
    fi
    out=$(mktemp -d)
    for r in $(seq "$first_run" $(( first_run + runs - 1 ))); do
        one_run "$crate" "$system" "$bug" "$target" "$r" "$out" &
        while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n; done
    done
    wait
    sweep_execs=() sweep_s=() swarm_execs=() swarm_s=()
    fuzz_execs=() fuzz_s=() fuzz_found=0 typed_execs=() typed_s=() typed_found=0
    for r in $(seq "$first_run" $(( first_run + runs - 1 ))); do
        sed "s|^|run=$r bug=$spec |" "$out/$r" >&2
        if [ "$run_sweeps" != 0 ]; then
            sweep=$(sed -n 's/^engine=sweep //p' "$out/$r") swarm=$(sed -n 's/^engine=swarm //p' "$out/$r")
            sweep_execs+=("$(sed -n 's/^seeds=\([0-9]*\).*/\1/p' <<<"$sweep")")
            sweep_s+=("$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$sweep")")
            swarm_execs+=("$(sed -n 's/^seeds=\([0-9]*\).*/\1/p' <<<"$swarm")")
            swarm_s+=("$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$swarm")")
        fi
        if [ "$run_fuzz" != 0 ]; then
            line=$(sed -n 's/^engine=fuzz //p' "$out/$r")
            fuzz_found=$(( fuzz_found + $(sed -n 's/^found=\([01]\).*/\1/p' <<<"$line") ))
            fuzz_execs+=("$(sed -n 's/.*execs=\([0-9]*\).*/\1/p' <<<"$line")")
            fuzz_s+=("$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$line")")
        fi
        if [ "$run_typed" != 0 ]; then
            line=$(sed -n 's/^engine=typed //p' "$out/$r")
            typed_found=$(( typed_found + $(sed -n 's/^found=\([01]\).*/\1/p' <<<"$line") ))
            typed_execs+=("$(sed -n 's/.*execs=\([0-9]*\).*/\1/p' <<<"$line")")
            typed_s+=("$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$line")")
        fi
    done
    rm -rf "$out"
    fuzz_keys="fuzz_execs=- fuzz_s=- fuzz_found=-"
    if [ "$run_fuzz" != 0 ]; then
        fuzz_keys="fuzz_execs=$(median "${fuzz_execs[@]}") fuzz_s=$(median "${fuzz_s[@]}") fuzz_found=$fuzz_found/$runs"
    fi
    typed_keys="typed_execs=- typed_s=- typed_found=-"
    if [ "$run_typed" != 0 ]; then
        typed_keys="typed_execs=$(median "${typed_execs[@]}") typed_s=$(median "${typed_s[@]}") typed_found=$typed_found/$runs"
    fi
    sweep_keys="sweep_execs=- sweep_s=- swarm_execs=- swarm_s=-"
    if [ "$run_sweeps" != 0 ]; then
        sweep_keys="sweep_execs=$(median "${sweep_execs[@]}") sweep_s=$(median "${sweep_s[@]}") swarm_execs=$(median "${swarm_execs[@]}") swarm_s=$(median "${swarm_s[@]}")"
    fi
    echo "bug=$spec runs=$runs $sweep_keys $fuzz_keys $typed_keys"
done
