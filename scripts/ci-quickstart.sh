#!/usr/bin/env bash
# CI for examples/quickstart, the crate a user of the framework would write: from a fresh
# clone, its tests pass (seed sweeps in `cargo test`), its fuzz target finds the planted bug
# on stable from an empty corpus (as typed: the target itself seeds an empty corpus with
# seeded runs and adds the hunt's libFuzzer flags, as `cargo fuzz run` gets them), its own `sim`
# binary replays the crash input to the same failure. Budget: about 3 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../examples/quickstart"
budget=${QUICKSTART_FUZZ_SECONDS:-120}

echo "== examples/quickstart: cargo test"
cargo test

echo "== examples/quickstart: fuzz target on stable (-s none)"
if command -v cargo-fuzz >/dev/null 2>&1; then
    (cd fuzz && cargo fuzz build -s none register)
else
    # The flags `cargo fuzz build -s none` passes; libfuzzer-sys links libFuzzer either way.
    RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions" \
        cargo build --manifest-path fuzz/Cargo.toml --release --bins --target x86_64-unknown-linux-gnu
fi
target_bin=fuzz/target/x86_64-unknown-linux-gnu/release/register
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/artifacts"
status=0
SIM_BUG=ack-before-replicate "$target_bin" -max_total_time="$budget" \
    -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1 || status=$?
crash=$(ls "$work"/artifacts/crash-* 2>/dev/null | head -1 || true)
if [ $status -eq 0 ] || [ -z "$crash" ] || ! grep -q '^class=correctness invariant=acked-writes-are-on-the-backup' "$work/log"; then
    echo "FAIL: the fuzz target did not find ack-before-replicate in ${budget}s (exit $status)"
    tail -30 "$work/log"; exit 1
fi
execs=$(grep -Eo '^#[0-9]+' "$work/log" | tail -1 || true)
echo "ok   fuzz target found ack-before-replicate from an empty corpus (last status line ${execs:-#?})"

echo "== examples/quickstart: its sim binary replays the crash"
status=0
cargo run -q --release --bin sim -- run --system register --bug ack-before-replicate \
    --input "$crash" --failures-dir "$work/failures" >"$work/replay" 2>&1 || status=$?
if [ $status -ne 1 ] || ! grep -q '^class=correctness invariant=acked-writes-are-on-the-backup' "$work/replay"; then
    echo "FAIL: replaying $crash did not reproduce the failure (exit $status)"; tail -20 "$work/replay"; exit 1
fi
echo "ok   replayed: $(tail -1 "$work/replay")"
