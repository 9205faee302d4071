#!/usr/bin/env bash
# Shrinks failures of systems written outside systems/ (examples/chain and the zoo's crates,
# each its own workspace with its own `sim`) and prints one row per failure: system, seed,
# events before and after, their ratio, bytes before and after, operations before and after,
# candidate runs and seconds. Ends with the median ratio over the long failures (at least
# 1,000 events) and exits 1 if any shrunk input is longer than its original.
#
#   scripts/shrink-study.sh                      # every case below
#   scripts/shrink-study.sh zoo/openraft/v0_9_14:openraft-kv::0   # one case
#
# A case is DIR:SYSTEM:BUG:FROM (BUG empty for a real bug): the failure is the first one of
# `sim sweep --seeds FROM..` (deterministic), shrunk with `sim shrink --seed N --json` and the
# shrinker's default budget. SHRINK_ARGS adds flags to every shrink (e.g. --max-runs 2000).
set -euo pipefail
cd "$(dirname "$0")/.."

CASES=(
  "examples/chain:chain:tail-reapplies-stale-resend:0"
  "examples/chain:chain:tail-reapplies-stale-resend:2000000"
  "examples/chain:chain:tail-reapplies-stale-resend:3000000"
  "zoo/raft-rs/v0_6_0_alpha:raftrs-kv::0"
  "zoo/raft-rs/v0_6_0_alpha:raftrs-kv::1000000"
  "zoo/raft-rs/v0_6_0_alpha:raftrs-kv::2000000"
  "zoo/raft-rs/v0_6_0_alpha:raftrs-kv::3000000"
  "zoo/omnipaxos/v0_2_2:omnipaxos-kv::0"
  "zoo/omnipaxos/v0_2_2:omnipaxos-kv::1000000"
  "zoo/omnipaxos/v0_2_2:omnipaxos-kv::2000000"
  "zoo/omnipaxos/v0_2_0:omnipaxos-accsync::0"
  "zoo/omnipaxos/v0_2_0:omnipaxos-accsync::2000000"
  "zoo/openraft/v0_9_14:openraft-kv::0"
  "zoo/openraft/v0_9_14:openraft-kv::1000000"
  "zoo/openraft/v0_9_24:openraft-kv-live-reader::0"
)
[ $# -gt 0 ] && CASES=("$@")

SWEEP_SEEDS=${SWEEP_SEEDS:-200000}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The sim binary of DIR, built once and copied aside: a zoo package builds into its crate's
# target, shared by every release, where the next release's build replaces it.
sim_of() {
  local dir=$1 target bin=$scratch/sim-${1//\//_}
  case $dir in
    zoo/*) target=$(dirname "$dir")/target ;;
    *) target=$dir/target ;;
  esac
  if [ ! -x "$bin" ]; then
    CARGO_TARGET_DIR=$target cargo build --quiet --release --manifest-path "$dir/Cargo.toml" --bin sim >&2
    cp "$target/release/sim" "$bin"
  fi
  echo "$bin"
}

field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" <<<"$2"; }

printf '%-24s %9s %7s %6s %6s %6s %6s %4s %4s %6s %7s\n' \
  system seed before after ratio bytes0 bytes1 ops0 ops1 runs seconds
ratios=()
grew=0
for case in "${CASES[@]}"; do
  IFS=: read -r dir system bug from <<<"$case"
  sim=$(sim_of "$dir")
  bug_args=()
  [ -n "$bug" ] && bug_args=(--bug "$bug")
  sweep=$("$sim" sweep --system "$system" "${bug_args[@]}" --seeds "$from..$((from + SWEEP_SEEDS))" \
    --until-first --failures-dir "$scratch" 2>/dev/null || true)
  seed=$(sed -n 's/.*first_failure_seed=\([0-9]*\).*/\1/p' <<<"$sweep")
  if [ -z "$seed" ]; then
    echo "$system: no failure in seeds $from..$((from + SWEEP_SEEDS))" >&2
    continue
  fi
  # shellcheck disable=SC2086
  json=$("$sim" shrink --system "$system" "${bug_args[@]}" --seed "$seed" --json \
    --failures-dir "$scratch" ${SHRINK_ARGS:-} 2>/dev/null || true)
  before=$(field events_before "$json")
  after=$(field events_after "$json")
  if [ -z "$before" ] || [ -z "$after" ]; then
    echo "$system seed $seed: the shrink printed no result" >&2
    continue
  fi
  b0=$(field bytes_before "$json")
  b1=$(field bytes_after "$json")
  ms=$(field shrink_ms "$json")
  ratio=$(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.3f", a / b }')
  printf '%-24s %9s %7s %6s %6s %6s %6s %4s %4s %6s %7s\n' "$system" "$seed" "$before" "$after" \
    "$ratio" "$b0" "$b1" "$(field ops_before "$json")" "$(field ops_after "$json")" \
    "$(field shrink_runs "$json")" "$(awk -v ms="$ms" 'BEGIN { printf "%.1f", ms / 1000 }')"
  [ "$before" -ge 1000 ] && ratios+=("$ratio")
  [ "$b1" -gt "$b0" ] && grew=$((grew + 1))
done

median=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ v[NR] = $1 } END {
  if (NR == 0) { print "none"; exit }
  if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
echo "long_failures=${#ratios[@]} median_ratio=$median bytes_grew=$grew"
[ "$grew" -eq 0 ]
