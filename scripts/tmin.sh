#!/usr/bin/env bash
# Minimise a crashing input with cargo fuzz tmin, then print the readable trace of the result.
#
#   SIM_BUG=first-vote-wins scripts/tmin.sh fuzz/artifacts/sim_target/crash-<sha1> [TARGET]
#
# TARGET defaults to the directory the crash is in. SIM_BUG must name the bug the crash was
# found with. The minimised input is written next to the crash as minimized-from-<sha1>.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/targets.sh
[ $# -ge 1 ] || { sed -n '2,8p' "$0" >&2; exit 2; }
crash=$(realpath "$1")
target=${2:-$(basename "$(dirname "$crash")")}
runs=${TMIN_RUNS:-2000}
before=$(wc -c <"$crash")
min="fuzz/artifacts/$target/minimized-from-$(sha1sum "$crash" | cut -d" " -f1)"
rm -f "$min"
# cargo fuzz tmin exits non-zero when it cannot shrink the input at all; that is not an error.
(cd fuzz && cargo ${FUZZ_TOOLCHAIN:-} fuzz tmin -s "${SANITIZER:-none}" -r "$runs" "$target" "$crash") || true
if [ -f "$min" ]; then
    echo "== minimised: $before bytes -> $(wc -c <"$min") bytes: $min"
else
    echo "== cargo fuzz tmin found nothing smaller that still fails: $crash ($before bytes) is its own minimum"
    min=$crash
fi
bug=()
[ -z "${SIM_BUG:-}" ] || bug=(--bug "$SIM_BUG")
cargo run --release -q -p systems --bin sim -- run --system "$(system_of "$target")" "${bug[@]}" --input "$min" || true
echo "== the stable shrinker keeps the same class and invariant, and usually gets further:"
echo "   cargo run --release -p systems --bin sim -- shrink --system $(system_of "$target")${SIM_BUG:+ --bug $SIM_BUG} --input $min"
