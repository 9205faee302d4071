#!/usr/bin/env bash
# The zoo: third-party crates under simulation, each known bug checked both ways.
#
#   scripts/zoo.sh [--quick]
#
# Builds every crate under zoo/ (each version directory is its own workspace with a pinned
# Cargo.lock) and, for every line of every zoo/<crate>/bugs.tsv:
#   - sweeps the release with the bug from seed 0 until its first failure, and
#   - sweeps the release that fixed it over a fixed seed range, which must stay clean.
# Prints one line per bug,
#   crate=C bug=ID bug_version=V fixed_version=W sweep_first_seed=N fixed_seeds=M fixed_failures=K
# then `zoo bugs=N found=N fixed_clean=N`, and exits 0 exactly when every bug release failed
# and every fixed release was clean. `--quick` (what CI runs) bounds the bug sweep and runs
# fewer fixed seeds; the full run is the figure the zoo's README quotes.
#
# bugs.tsv: one line per known bug, TAB separated, no header, `#` starts a comment line:
#   crate bug_id bug_version fixed_version bug_dir fixed_dir system extra_sweep_args upstream_url
# bug_dir and fixed_dir are version directories relative to zoo/<crate>/; extra_sweep_args is
# `-` or what `sim sweep` gets besides --system and --seeds (e.g. `--faults swarm`).
#
# Environment: ZOO_BUG_SEEDS (how far the bug sweep may go), ZOO_FIXED_SEEDS, ZOO_JOBS,
# ZOO_ONLY (a crate directory name: run only that one).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
for arg in "$@"; do
    case "$arg" in
        --quick) quick=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "zoo.sh: unknown argument '$arg' (expected --quick or nothing)" >&2; exit 2 ;;
    esac
done

if [ $quick -eq 1 ]; then
    bug_seeds=${ZOO_BUG_SEEDS:-200000}
    fixed_seeds=${ZOO_FIXED_SEEDS:-1000}
else
    bug_seeds=${ZOO_BUG_SEEDS:-1000000}
    fixed_seeds=${ZOO_FIXED_SEEDS:-20000}
fi
jobs=${ZOO_JOBS:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# build_sim, summary_value
. scripts/lib/zoo-build.sh

bugs=0 found=0 clean=0
shopt -s nullglob
for manifest in zoo/*/bugs.tsv; do
    crate_dir=$(dirname "$manifest")
    if [ -n "${ZOO_ONLY:-}" ] && [ "$(basename "$crate_dir")" != "$ZOO_ONLY" ]; then
        continue
    fi
    while IFS=$'\t' read -r crate bug bug_version fixed_version bug_dir fixed_dir system extra url; do
        case "$crate" in ''|'#'*) continue ;; esac
        if [ -z "$url" ]; then
            echo "zoo.sh: $manifest: a line for '$crate' has fewer than 9 TAB-separated fields" >&2
            exit 2
        fi
        [ "$extra" = "-" ] && extra=""
        bugs=$((bugs + 1))
        echo "== $crate $bug: $bug_version (bug) against $fixed_version (fixed), $url" >&2
        bug_sim=$(build_sim "$crate_dir" "$bug_dir")
        fixed_sim=$(build_sim "$crate_dir" "$fixed_dir")

        # shellcheck disable=SC2086 # extra holds several arguments on purpose
        "$bug_sim" sweep --system "$system" $extra --seeds "0..$bug_seeds" --until-first \
            --jobs "$jobs" --keep 1 --failures-dir "$work/failures" >"$work/bug.out" 2>&1 || true
        first=$(summary_value "$work/bug.out" first_failure_seed)
        if [ -n "$first" ]; then
            found=$((found + 1))
        else
            first=none
            tail -5 "$work/bug.out" >&2
        fi

        # shellcheck disable=SC2086
        "$fixed_sim" sweep --system "$system" $extra --seeds "0..$fixed_seeds" \
            --jobs "$jobs" --keep 1 --failures-dir "$work/failures" >"$work/fixed.out" 2>&1 || true
        failures=$(summary_value "$work/fixed.out" failures)
        if [ "$failures" = "0" ]; then
            clean=$((clean + 1))
        else
            [ -n "$failures" ] || failures=error
            tail -5 "$work/fixed.out" >&2
        fi
        echo "crate=$crate bug=$bug bug_version=$bug_version fixed_version=$fixed_version" \
            "sweep_first_seed=$first fixed_seeds=$fixed_seeds fixed_failures=$failures"
    done <"$manifest"
done

echo "zoo bugs=$bugs found=$found fixed_clean=$clean"
[ $bugs -gt 0 ] && [ $found -eq $bugs ] && [ $clean -eq $bugs ]
