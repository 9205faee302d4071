# Shared by scripts/bench-instructions.sh and scripts/ci-instructions.sh (sourced, not run).
#
# Instruction counts come from valgrind's callgrind with `--toggle-collect='*counted_runs*'`:
# every benchmark binary that offers a counting mode runs its workload inside a function named
# `counted_runs` (after one uncounted warm-up run), so the count is the runs' own instructions,
# without the process's start, the warm-up or the printing. The same binary on the same input
# gives the same count on any machine load; a different compiler gives other counts, which is
# why the CI check compares a ratio (sim-core / the hand-written loop), not a count.

# Builds sim-core's engine bench (release, as `cargo bench` does) and prints its executable.
engine_bench_bin() {
    cargo bench -q -p sim-core --bench engine --no-run --message-format=json 2>/dev/null |
        python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "engine" and m.get("executable"):
        print(m["executable"])'
}

# counted CMD...: runs CMD under callgrind and prints "<instructions> <CMD's key=value line>".
counted() {
    local out ir line
    out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        --toggle-collect='*counted_runs*' "$@" 2>&1) || {
        echo "failed: $*" >&2
        echo "$out" >&2
        return 1
    }
    ir=$(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' <<<"$out")
    line=$(grep -E '^(engine|count)=' <<<"$out" | tail -n 1)
    [ -n "$ir" ] && [ "$ir" -gt 0 ] || {
        echo "no instructions counted: $*" >&2
        echo "$out" >&2
        return 1
    }
    echo "$ir $line"
}

# field KEY "k=v k=v ...": the value of KEY.
field() {
    tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"
}

require_valgrind() {
    command -v valgrind >/dev/null 2>&1 || {
        echo "valgrind is needed (apt-get install valgrind): instruction counts come from callgrind" >&2
        exit 2
    }
}
