#!/usr/bin/env python3
"""Where the instructions go, from a callgrind output file.

    scripts/callgrind-parts.py CALLGRIND_OUT [--per N] [--top K] [--match TEXT]

Prints (1) the top K functions by inclusive instructions (self plus callees; the instances
of one generic function share a name in callgrind's output and are counted together, calls
between them once), and (2) the self instructions grouped by part of the engine. An
instruction belongs to the part of the source file it was compiled from when that file is
the engine's (inlined code included); code inlined from the standard library belongs to the
part of the engine function it was inlined into; allocator calls are their own part.
--per N divides every figure by N (runs or events); --match keeps functions whose name
contains TEXT in the first table (which otherwise leaves out the frames around the runs, at
98% or more of the total); --files adds the self instructions by engine source file.
"""
import argparse
import collections
import re

# Engine source files and modules, by part (first match wins).
PARTS = [
    ("scheduler (executor, wakes, the run loop's step and dispatch)",
     ["sim-engine/src/rt.rs", "sim-engine/src/sim.rs", "sim-engine/src/world.rs",
      "sim-engine/src/node.rs", "sim-engine/src/select.rs", "sim-engine/src/node_id.rs"],
     ["sim_engine::rt", "sim_engine::sim", "sim_engine::world", "sim_engine::node",
      "sim_engine::select"]),
    ("timer queue (clock, sleeps, timeouts)", ["sim-engine/src/time/"], ["sim_engine::time"]),
    ("network (sockets, latency, delivery)", ["sim-engine/src/net/"], ["sim_engine::net"]),
    ("choice draws (input source, lanes)",
     ["sim-engine/src/choice/", "sim-engine/src/random.rs", "sim-engine/src/buggify.rs"],
     ["sim_engine::choice", "sim_engine::random", "sim_engine::buggify"]),
    ("trace and history hash",
     ["sim-engine/src/trace.rs", "sim-engine/src/hash.rs", "sim-engine/src/report.rs",
      "sim-engine/src/check/"],
     ["sim_engine::trace", "sim_engine::hash", "sim_engine::report", "sim_engine::check"]),
    ("signal (wake-ups between tasks)", ["sim-engine/src/signal.rs"], ["sim_engine::signal"]),
    ("faults, nemesis, disk",
     ["sim-engine/src/fault", "sim-engine/src/nemesis.rs", "sim-engine/src/disk/"],
     ["sim_engine::fault", "sim_engine::nemesis", "sim_engine::disk"]),
    ("sim-engine, other", ["sim-engine/src/"], ["sim_engine::"]),
    ("sim-core (the harness around the engine)", ["sim-core/src/"], ["sim_core::"]),
    ("tokio nodes (sim-tokio, sim-os)", ["sim-tokio/src/", "sim-os/src/"], ["sim_tokio::", "sim_os::"]),
]
ALLOC = re.compile(r"^(__rustc::|malloc|free|realloc|calloc|_int_malloc|_int_free|_int_realloc|"
                   r"malloc_consolidate|__rust_alloc|__rust_dealloc|__rust_realloc|"
                   r"__rdl_|__memcpy|__memmove|__memset|memcpy|memmove|memset|unlink_chunk|"
                   r"alloc::alloc::|<alloc::alloc::Global)")


def part_of_file(path):
    for name, files, _ in PARTS:
        if any(f in path for f in files):
            return name
    return None


SUT = "the system under test and its workload"
SUT_FILES = ["systems/src/", "benches/common/workload.rs", "benches/compare/", "examples/"]
SUT_FNS = ("systems::", "engine::workload", "compare::", "tokio_side::", "madsim_side::")


def part_of_fn(fn):
    if fn.startswith(SUT_FNS):
        return SUT
    if ALLOC.match(fn):
        return "allocator and memcpy (libc, alloc)"
    best = None
    for name, _, mods in PARTS:
        for m in mods:
            i = fn.find(m)
            if i >= 0 and (best is None or i < best[0]):
                best = (i, name)
    if best:
        return best[1]
    return None


def parse(path):
    names = {"fl": {}, "fn": {}, "ob": {}}
    kind = {"fl": "fl", "fi": "fl", "fe": "fl", "cfl": "fl", "cfi": "fl",
            "fn": "fn", "cfn": "fn", "ob": "ob", "cob": "ob"}

    def name(key, value):
        table = names[kind[key]]
        m = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not m:
            return value
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), "?")

    self_cost = collections.Counter()
    self_by_file = collections.Counter()  # (file, fn) -> instructions
    calls = collections.Counter()  # (caller, callee) -> inclusive instructions of the calls
    fl = fi = fn = cfn = None
    in_call = False
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                if "=" in line:
                    continue
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if in_call:
                    if cfn != fn:
                        calls[(fn, cfn)] += cost
                    in_call = False
                else:
                    self_cost[fn] += cost
                    self_by_file[(fi, fn)] += cost
                continue
            key, _, value = line.partition("=")
            if key == "fl":
                fl = fi = name(key, value)
            elif key in ("fi", "fe"):
                fi = name(key, value)
            elif key == "fn":
                fn = name(key, value)
                fi = fl
            elif key == "cfn":
                cfn = name(key, value)
            elif key in ("cfl", "cfi", "cob", "ob"):
                name(key, value)
            elif key == "calls":
                in_call = True
    return self_cost, self_by_file, calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--per", type=float, default=1.0)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--match", default=None)
    ap.add_argument("--files", action="store_true")
    a = ap.parse_args()
    self_cost, self_by_file, calls = parse(a.file)
    total = sum(self_cost.values())
    inclusive = collections.Counter(self_cost)
    for (caller, _), cost in calls.items():
        inclusive[caller] += cost
    per = a.per
    print(f"total {total / per:,.0f} instructions" + (f" (per unit: total / {per:g})" if per != 1 else ""))
    print()
    print(f"{'inclusive':>12} {'self':>10} {'%':>6}  function")
    shown = 0
    for fn, cost in inclusive.most_common():
        if a.match and a.match not in fn:
            continue
        if cost >= 0.98 * total and not a.match:
            continue  # the process's and the harness's frames around the runs
        print(f"{cost / per:12,.0f} {self_cost[fn] / per:10,.0f} {100 * cost / total:5.1f}%  {fn[:150]}")
        shown += 1
        if shown >= a.top:
            break
    by_part = collections.Counter()
    by_file = collections.Counter()
    for (fi, fn), cost in self_by_file.items():
        if any(f in (fi or "") for f in SUT_FILES):
            part = SUT
        else:
            part = part_of_file(fi or "") or part_of_fn(fn or "") or "other (std, not inlined into the engine)"
        by_part[part] += cost
        if fi and ("sim-engine/src/" in fi or "sim-core/src/" in fi):
            by_file[fi[fi.find("sim-"):]] += cost
    print()
    print(f"{'self':>12} {'%':>6}  part")
    for part, cost in by_part.most_common():
        print(f"{cost / per:12,.0f} {100 * cost / total:5.1f}%  {part}")
    if a.files:
        print()
        print(f"{'self':>12} {'%':>6}  engine source file (inlined code included)")
        for path, cost in by_file.most_common():
            if cost / total >= 0.001:
                print(f"{cost / per:12,.0f} {100 * cost / total:5.1f}%  {path}")


if __name__ == "__main__":
    main()
