#!/usr/bin/env bash
# Fuzz one target with AFL++ through cargo afl (the same harness and inputs as libFuzzer).
#
#   scripts/afl.sh TARGET [SECONDS] [ROLE]     e.g. SIM_BUG=first-vote-wins scripts/afl.sh sim_target 60
#
# SECONDS defaults to 60 (0 = until stopped). ROLE is `main` (default) or `secondaryN`: start
# one main and any number of secondaries, on one machine or many, with the same
# AFL_SYNC_DIR (default fuzz/afl/out/TARGET; on several machines, a shared or synced
# directory) and they exchange inputs as AFL++ main/secondary instances do. Installs cargo-afl
# if missing. Crashes land in AFL_SYNC_DIR/ROLE/crashes/; replay one with
#   cargo run --release -p systems --bin sim -- run --system SYSTEM --bug BUG --input FILE
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/targets.sh
[ $# -ge 1 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
target=$1 seconds=${2:-60} role=${3:-main}
if ! command -v cargo-afl >/dev/null 2>&1; then
    echo "== installing cargo-afl" >&2
    cargo install cargo-afl --locked
fi
(cd fuzz/afl && cargo afl build --release --bin "$target")
# Pre-flight outside AFL++: a bad SIM_BUG or SIM_SIGNAL exits 2 with a message, which AFL++
# would only report as a failed fork-server handshake.
preflight=0
"fuzz/afl/target/release/$target" </dev/null >/dev/null 2>fuzz/afl/preflight.log || preflight=$?
if [ "$preflight" = 2 ]; then cat fuzz/afl/preflight.log >&2; exit 2; fi
sync=${AFL_SYNC_DIR:-fuzz/afl/out/$target}
seeds=fuzz/afl/seeds/$target
mkdir -p "$(dirname "$sync")"
seed_dir "$target" "$seeds"
# AFL++ skips empty files; one zero byte is the plainest run.
printf '\0' >"$seeds/zero.bin"
case $role in
    main) flag=(-M main) ;;
    secondary*) flag=(-S "$role") ;;
    *) echo "error: ROLE must be main or secondaryN, not $role" >&2; exit 2 ;;
esac
duration=()
[ "$seconds" = 0 ] || duration=(-V "$seconds")
# The bug is planted in the system, not a memory error: no sanitizer, no CPU-frequency nagging.
# Seeds that already fail under SIM_BUG are skipped rather than refused (with a planted bug
# most seeds may fail).
export AFL_SKIP_CPUFREQ=1 AFL_NO_UI=${AFL_NO_UI:-1} AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
export AFL_IGNORE_SEED_PROBLEMS=1
status=0
cargo afl fuzz "${duration[@]}" "${flag[@]}" -i "$seeds" -o "$sync" "fuzz/afl/target/release/$target" || status=$?
echo "== crashes of $target ($sync/$role/crashes/):"
ls -l "$sync/$role/crashes/" 2>/dev/null | grep -v README || echo "(none)"
exit $status
