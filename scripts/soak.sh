#!/usr/bin/env bash
# Soak: sweep every correct system under every fault selection and scheduling strategy and
# count failures. A correct system must never fail, so any failure here is a false failure
# (a bug in the framework or in a system's model) and the script exits 1.
#
#   SOAK_SEEDS=N scripts/soak.sh     # N seeds per (system, faults, strategy); default 2000
#   SOAK_START=S                     # first seed of every range (default 0)
#
# Selections per system: the system's own choice, off, swarm, all, every kind in its fault
# model fixed at its maximum, and swarm over those kinds. two-pc's model is the network
# (and clocks, disk): a crashed or stopped coordinator blocks two-phase commit by design, so
# lifecycle faults there would fail its liveness check for a reason the protocol owns.
# raft-kv runs a fifth of the seeds (it is ~10x dearer per run than the others).
#
# Prints one line per combination, `system=S faults=F strategy=X seeds=N failures=K`, then
# `soak seeds=N failures=K`.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${SOAK_SEEDS:-2000}
start=${SOAK_START:-0}
cargo build --release -q -p systems --bin sim
sim=target/release/sim
err=$(mktemp)
trap 'rm -f "$err"' EXIT

total_seeds=0
total_failures=0
for system in two-pc echo tokio-echo registry wal raft-kv; do
    case "$system" in
        two-pc) kinds=net,clock,disk ;;
        *) kinds=net,clock,lifecycle,disk ;;
    esac
    n=$seeds
    [ "$system" = raft-kv ] && n=$((seeds / 5))
    [ "$n" -gt 0 ] || n=1
    for faults in own off swarm all "$kinds" "swarm:$kinds"; do
        for strategy in uniform pct fifo; do
            args=(sweep --system "$system" --strategy "$strategy" --seeds "$start..$((start + n))")
            [ "$faults" = own ] || args+=(--faults "$faults")
            line=$("$sim" "${args[@]}" 2>"$err" | tail -n 1) || true
            failures=$(sed -n 's/.*failures=\([0-9]*\).*/\1/p' <<<"$line")
            if [ -z "$failures" ]; then
                cat "$err" >&2
                echo "soak: no summary from: sim ${args[*]}" >&2
                exit 2
            fi
            echo "system=$system faults=$faults strategy=$strategy seeds=$n failures=$failures"
            total_seeds=$((total_seeds + n))
            total_failures=$((total_failures + failures))
        done
    done
done
echo "soak seeds=$total_seeds failures=$total_failures"
[ "$total_failures" = 0 ]
