#!/usr/bin/env python3
"""Module import graph of a crate's src/ tree, from its `use crate::...` and `crate::...` paths.

Prints the crate's strongly connected components of more than one file (import circles),
largest first, then `files=N circles=K largest_circle=M`. A file's module is its path
(`net/faults.rs` is `net::faults`, `net/mod.rs` is `net`); a path `crate::a::b::c` names
the deepest module that exists. A parent module's file counts as importing what its children
re-export only if it says so itself, so the graph is of files as written.

    scripts/import-graph.py sim-core/src            # circles, largest first
    scripts/import-graph.py sim-core/src --edges A  # what file A imports, and who imports it
    scripts/import-graph.py sim-engine/src --without world  # circles left once the hub is out
"""
import os
import re
import sys


def modules(src):
    mods = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.relpath(os.path.join(root, f), src)
            parts = path[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            mods["::".join(parts)] = path
    return mods


PATH = re.compile(r"\b(?:crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\buse\s+crate::\{([^;]*)\};", re.S)


def strip(text):
    # Unit tests sit at the end of a file (`#[cfg(test)] mod tests`); they are not the
    # module's dependencies.
    test = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod \w+ \{", text, re.M)
    if test:
        text = text[: test.start()]
    text = re.sub(r"//[^\n]*", "", text)  # comments and doc comments (doc tests are not imports)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def resolve(mods, segments):
    for n in range(len(segments), 0, -1):
        name = "::".join(segments[:n])
        if name in mods:
            return name
    return None


def edges(src):
    mods = modules(src)
    graph = {m: set() for m in mods}
    for mod, path in mods.items():
        text = strip(open(os.path.join(src, path)).read())
        here = mod.split("::") if mod else []
        # in a mod.rs file `super` is the parent of the folder; elsewhere the parent module
        parent = here[:-1]
        paths = []
        for m in PATH.finditer(text):
            start = m.group(0)
            segs = m.group(1).strip(":").split("::")
            paths.append(segs if start.startswith("crate") else parent + segs)
        for g in GROUP.finditer(text):
            for item in re.split(r",(?![^{]*\})", g.group(1)):
                item = item.strip()
                if item:
                    paths.append(re.split(r"::", item.split("{")[0].strip(": "))[:-0 or None])
        # Children named by relative paths (`pub use bytes::Bytes;`, `lanes::Lane::of(..)`): a
        # parent that re-exports or calls into a child depends on it.
        children = re.findall(r"\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;", text)
        for child in children:
            if re.search(r"(?<![:\w])" + child + r"::", text):
                paths.append(here + [child])
        for segs in paths:
            segs = [s for s in segs if s and s != "self"]
            target = resolve(mods, segs)
            if target is not None and target != mod and target != "" and not mod.startswith(target + "::"):
                graph[mod].add(target)
    return mods, graph


def sccs(graph):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    src = sys.argv[1]
    mods, graph = edges(src)
    if len(sys.argv) == 4 and sys.argv[2] == "--edges":
        a = sys.argv[3]
        print("imports:", " ".join(sorted(graph.get(a, ()))))
        print("imported by:", " ".join(sorted(m for m, t in graph.items() if a in t)))
        return
    if len(sys.argv) == 4 and sys.argv[2] == "--without":
        hub = sys.argv[3]
        graph = {m: {t for t in ts if t != hub} for m, ts in graph.items() if m != hub}
    circles = sorted((c for c in sccs(graph) if len(c) > 1), key=len, reverse=True)
    for c in circles:
        print(f"circle files={len(c)}: {' '.join(mods[m] for m in c)}")
    largest = len(circles[0]) if circles else 0
    print(f"files={len(mods)} circles={len(circles)} largest_circle={largest}")


main()
