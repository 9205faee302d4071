#!/usr/bin/env bash
# CI smoke run of every fuzz target: build on stable without a sanitizer, then run each for a
# few seconds over its checked-in corpus. Fails if a target no longer builds, crashes on its
# own corpus with the correct system, or if the nondeterministic canary is not reported as
# diverged. Budget: about 2 minutes with a fresh target directory on 2 cores.
#
# Uses cargo-fuzz when installed; otherwise installs it (`cargo install cargo-fuzz --locked`,
# about a minute); if that fails too (no registry), or with SMOKE_PLAIN_CARGO=1, builds with
# plain `cargo build` and the flags `cargo fuzz build -s none` passes (libfuzzer-sys links
# libFuzzer either way). Set SMOKE_SECONDS to change the per-target run time (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/targets.sh
seconds=${SMOKE_SECONDS:-5}
plain=${SMOKE_PLAIN_CARGO:-0}
if [ "$plain" != 1 ] && ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked || plain=1
fi
if [ "$plain" = 1 ]; then
    echo "== cargo build with cargo-fuzz's -s none flags ($(rustc --version))"
    RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing \
-Cllvm-args=-simplifycfg-branch-fold-threshold=0 -Cdebug-assertions -Ccodegen-units=1" \
        cargo build --manifest-path fuzz/Cargo.toml --release --bins --target x86_64-unknown-linux-gnu
else
    echo "== cargo fuzz build -s none ($(rustc --version))"
    (cd fuzz && cargo fuzz build -s none)
fi
bin_dir=fuzz/target/x86_64-unknown-linux-gnu/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset SIM_BUG
for source in fuzz/fuzz_targets/*.rs; do
    target=$(basename "$source" .rs)
    mkdir -p "$work/$target/corpus" "$work/$target/artifacts"
    seed_dir "$target" "$work/$target/seeds"
    log=$work/$target/log
    status=0
    # New inputs go to the scratch corpus (the first directory); corpus/ is only read.
    "$bin_dir/$target" -max_total_time="$seconds" -artifact_prefix="$work/$target/artifacts/" \
        "$work/$target/corpus" "$work/$target/seeds" >"$log" 2>&1 || status=$?
    runs=$(grep -Eo '^#[0-9]+' "$log" | tail -1 || true)
    if [ "$target" = canary ]; then
        if [ $status -ne 0 ] && grep -q '^class=diverged' "$log"; then
            echo "ok   canary: reported as diverged, as it must be"
        else
            echo "FAIL canary: expected a crash with class=diverged (exit $status)"; tail -30 "$log"; exit 1
        fi
    elif [ $status -eq 0 ]; then
        echo "ok   $target: ${seconds}s, ${runs:-#?} runs, no crash (correct system, $(ls "$work/$target/seeds" | wc -l) corpus inputs)"
    else
        echo "FAIL $target: crashed on the correct system (exit $status)"; tail -40 "$log"; exit 1
    fi
done
# A bad SIM_BUG is a start-up error (exit 2, a message naming the known bugs), not a crash.
status=0
SIM_BUG=no-such-bug "$bin_dir/sim_target" -runs=1 -artifact_prefix="$work/" >"$work/badbug.log" 2>&1 || status=$?
if [ $status -eq 2 ] && grep -q 'no planted bug "no-such-bug"' "$work/badbug.log" && ! compgen -G "$work/crash-*" >/dev/null; then
    echo "ok   SIM_BUG=no-such-bug: start-up error, exit 2, no crash saved"
else
    echo "FAIL SIM_BUG=no-such-bug: expected exit 2 and a message (exit $status)"; cat "$work/badbug.log"; exit 1
fi
