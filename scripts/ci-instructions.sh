#!/usr/bin/env bash
# CI: the engine's cost in instructions against a hand-written discrete-event loop of the same
# workload (the comparison workload: 3 nodes, 100 round trips, 1-10 ms latency, 1 s timeouts,
# 100 ms heartbeats), counted by callgrind over seeds 0..SEEDS-1 in sim-core's engine bench.
# Fails when sim-core / DES grows more than 10% over the ratio in benches/instructions.baseline.
# That file changes only on purpose, with the reason in the same commit.
#
# Why a ratio: both sides are compiled by the same compiler with the same flags, so a
# toolchain update moves both; a change to the engine moves only sim-core's.
# Budget: the engine bench's release build (83 s of CPU from an empty target directory, 3 min
# of wall clock with -j 1 on a busy 2-core machine) and about 10 s under valgrind. Needs
# valgrind and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/instructions-common.sh
require_valgrind

baseline_file=benches/instructions.baseline
seeds=$(sed -n 's/^seeds=//p' "$baseline_file")
baseline=$(sed -n 's/^ratio=//p' "$baseline_file")
tolerance=${INSTRUCTIONS_TOLERANCE:-1.10}

bin=$(engine_bench_bin)
[ -x "$bin" ] || { echo "FAIL: no engine bench executable built"; exit 1; }

sim=$(counted "$bin" --count workload "$seeds")
des=$(counted "$bin" --count bare "$seeds")
sim_ir=${sim%% *}
des_ir=${des%% *}
events=$(field units "${sim#* }")

awk -v s="$sim_ir" -v d="$des_ir" -v n="$seeds" -v e="$events" -v b="$baseline" -v t="$tolerance" 'BEGIN {
    ratio = s / d
    limit = b * t
    printf "instructions per run over seeds 0..%d: sim_core=%.0f des=%.0f sim_core_per_event=%.0f\n", n - 1, s / n, d / n, s / e
    printf "sim_core_over_des=%.3f baseline=%.3f limit=%.3f (baseline x %s)\n", ratio, b, limit, t
    if (ratio > limit) {
        printf "FAIL: sim-core / DES in instructions is %.1f%% over benches/instructions.baseline\n", (ratio / b - 1) * 100
        exit 1
    }
    if (ratio < b / t)
        printf "note: %.1f%% under the baseline; lower benches/instructions.baseline on purpose to keep the gain\n", (1 - ratio / b) * 100
    print "ok"
}'
