#!/usr/bin/env bash
# Sweep seeds of one system (or all): scripts/sweep.sh [SYSTEM [BUG]] [--seeds A..B]
# With no arguments, the whole campaign (`sim sweep --all`).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
    exec cargo run --release -q -p systems --bin sim -- sweep --all
fi
system=$1; shift
args=(sweep --system "$system")
if [ $# -gt 0 ] && [[ $1 != --* ]]; then args+=(--bug "$1"); shift; fi
exec cargo run --release -q -p systems --bin sim -- "${args[@]}" "$@"
