#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script (runs inside base-builder-rust, which provides
# cargo-fuzz, a nightly toolchain and $SANITIZER/$OUT). Builds every libFuzzer target except
# the canary (nondeterministic by design: it always crashes) and ships each target's
# checked-in corpus as its seed corpus. Continuous fuzzing runs the correct systems
# (SIM_BUG unset): any crash there is a real bug in a system or in the framework.
cd "$SRC/sim"
cargo fuzz build -O --debug-assertions
release=fuzz/target/x86_64-unknown-linux-gnu/release
for target in $(cd fuzz && cargo fuzz list); do
    [ "$target" = canary ] && continue
    cp "$release/$target" "$OUT/"
    if compgen -G "corpus/$target/*.bin" >/dev/null; then
        zip -j -q "$OUT/${target}_seed_corpus.zip" corpus/"$target"/*.bin
    fi
done
