#!/usr/bin/env bash
# Memory of a fuzz target over a long run of the correct system: the RSS figures in
# fuzz/README.md ("Memory over long campaigns") come from here.
#
#   scripts/fuzz-rss.sh TARGET [RUNS]
#
# Builds TARGET with the hunt's flags (scripts/hunt-build.sh), runs it RUNS executions
# (default 1,000,000) with SIM_BUG unset, libFuzzer seed 1, its seed corpus and libFuzzer's
# default flags plus FUZZ_ARGS, then prints libFuzzer's RSS at 10k, 100k and 1M executions
# (`rss_mb_at_10000=N`, from the first status line at or past each count; `-` if the run
# stopped before) and its peak (`peak_rss_mb=N`). The log is kept in FUZZ_RSS_LOG if set.
# Exit status: libFuzzer's (0, or nonzero if it crashed or passed -rss_limit_mb).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/targets.sh
[ $# -ge 1 ] && [ $# -le 2 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
target=$1 runs=${2:-1000000}
bin=$(scripts/hunt-build.sh "$target")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=${FUZZ_RSS_LOG:-$work/log}
seed_dir "$target" "$work/seeds"
mkdir -p "$work/corpus"
unset SIM_BUG
status=0
# shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
"$bin" -runs="$runs" -seed=1 -print_final_stats=1 -artifact_prefix="$work/" ${FUZZ_ARGS:-} \
    "$work/corpus" "$work/seeds" >"$log" 2>&1 || status=$?
for at in 10000 100000 1000000; do
    grep -aE '^#[0-9]+' "$log" | awk -v at="$at" '
        # No early exit: grep would die of SIGPIPE, and pipefail would end the script.
        found { next }
        { n = substr($1, 2) + 0
          if (n >= at) { for (i = 1; i < NF; i++) if ($i == "rss:") rss = $(i + 1)
                         sub(/Mb$/, "", rss); print "rss_mb_at_" at "=" rss; found = 1 } }
        END { if (!found) print "rss_mb_at_" at "=-" }'
done
grep -a '^stat::peak_rss_mb' "$log" | awk '{ print "peak_rss_mb=" $2 }'
exit "$status"
