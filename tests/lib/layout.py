#!/usr/bin/env python3
"""The layout rules of a folder, checked on the built objects.

For every target built from the folder's sources (each meson *.p directory
holding their objects), nm gives the symbols each object defines and uses;
file A calls file B when A uses a function or object that B defines.  The
files must form no cycle (A -> B -> ... -> A), and no .c file of the
folder may be longer than the limit (--max-lines 0: no limit).

usage: layout.py BUILD_ROOT SOURCE_ROOT FOLDER [FOLDER...] [--max-lines N]
"""
import os
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", "--defined-only", "-g", obj], capture_output=True, text=True,
                         check=True).stdout
    defined = {l.split()[-1] for l in out.splitlines() if len(l.split()) == 3}
    out = subprocess.run(["nm", "-u", obj], capture_output=True, text=True, check=True).stdout
    used = {l.split()[-1] for l in out.splitlines() if l.split()}
    return defined, used


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
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
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def main():
    args = sys.argv[1:]
    max_lines = 700
    if "--max-lines" in args:
        i = args.index("--max-lines")
        max_lines = int(args[i + 1])
        del args[i:i + 2]
    build, source, folders = args[0], args[1], args[2:]
    failures, targets, edges = [], 0, 0
    for folder in folders:
        for name in sorted(os.listdir(os.path.join(source, folder))):
            if name.endswith(".c"):
                with open(os.path.join(source, folder, name)) as f:
                    lines = sum(1 for _ in f)
                if max_lines and lines > max_lines:
                    failures.append("%s/%s: %d lines (limit %d)" % (folder, name, lines, max_lines))
        bdir = os.path.join(build, folder)
        for pdir in sorted(d for d in os.listdir(bdir) if d.endswith(".p")):
            objs = [o for o in os.listdir(os.path.join(bdir, pdir)) if o.endswith(".o")]
            # Only the objects of this folder's own sources.
            objs = [o for o in objs if os.path.exists(os.path.join(source, folder, o[:-2]))]
            if len(objs) < 2:
                continue
            targets += 1
            info = {o[:-2]: symbols(os.path.join(bdir, pdir, o)) for o in objs}
            owner = {}
            for src, (defined, _) in info.items():
                for s in defined:
                    owner[s] = src
            graph = {}
            for src, (_, used) in info.items():
                graph[src] = {owner[s] for s in used if s in owner and owner[s] != src}
                edges += len(graph[src])
            for comp in cycles(graph):
                failures.append("%s (%s): files call each other in a cycle: %s" %
                                (folder, pdir, " -> ".join(comp)))
    for f in failures:
        print("FAIL:", f)
    if not targets:
        print("FAIL: no targets found under", folders)
        return 1
    if failures:
        return 1
    print("PASS: %d targets, %d file-to-file call edges, no cycle%s"
          % (targets, edges, "; every .c file <= %d lines" % max_lines if max_lines else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
