#!/usr/bin/env bash
# Fuzz one target with libFuzzer through cargo fuzz, then list its crashes.
#
#   scripts/fuzz.sh TARGET [SECONDS]          e.g. SIM_BUG=first-vote-wins scripts/fuzz.sh sim_target 60
#
# SECONDS defaults to 60. The planted bug is SIM_BUG (names as `sim list`; unset = the correct
# system), the extra signal SIM_SIGNAL (see fuzz/README.md). The run starts from the checked-in
# corpus/TARGET/*.bin and grows the working corpus fuzz/corpus/TARGET (not checked in); crashes
# land in fuzz/artifacts/TARGET/. Builds without a sanitizer, so stable Rust works; set
# SANITIZER=address (with FUZZ_TOOLCHAIN=+nightly) for an AddressSanitizer build. Extra
# libFuzzer flags go in FUZZ_ARGS, e.g. FUZZ_ARGS="-fork=2" or FUZZ_ARGS="-jobs=4 -workers=2".
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/targets.sh
[ $# -ge 1 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
target=$1 seconds=${2:-60}
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "== installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi
seed_dir "$target" "fuzz/corpus/$target"
echo "== fuzzing $target for ${seconds}s (SIM_BUG=${SIM_BUG:-unset}, SIM_SIGNAL=${SIM_SIGNAL:-default})" >&2
status=0
(cd fuzz && cargo ${FUZZ_TOOLCHAIN:-} fuzz run -s "${SANITIZER:-none}" "$target" "corpus/$target" -- \
    -max_total_time="$seconds" -print_final_stats=1 ${FUZZ_ARGS:-}) || status=$?
echo "== crashes of $target (fuzz/artifacts/$target/):"
found=0
for crash in fuzz/artifacts/"$target"/crash-*; do
    [ -e "$crash" ] || continue
    found=1
    bug=${SIM_BUG:+ --bug $SIM_BUG}
    echo "$crash ($(wc -c <"$crash") bytes)"
    echo "   trace:    cargo run --release -p systems --bin sim -- run --system $(system_of "$target")$bug --input $crash"
    echo "   minimise: SIM_BUG=${SIM_BUG:-} scripts/tmin.sh $crash"
done
[ $found = 1 ] || echo "(none)"
exit $status
