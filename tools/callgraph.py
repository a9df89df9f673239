#!/usr/bin/env python3
"""The call graph's cycles per folder, from the built objects.

A file A depends on a file B of the same folder when A's object needs a
global symbol (a function, or a table of data such as a command's
descriptor) that B's object defines: `nm -u` against `nm --defined-only
-g`. A cycle is a strongly connected component of that graph with more
than one file (Tarjan's algorithm); a file in none is on a layer of its
own. The figure "N files in cycles, the largest of M" per folder is the
one issue 29's notes and bench/README.md quote, so it can be re-made from
any build.

Objects are taken from BUILD/FOLDER/*.o; where a folder's sources are
compiled into several targets (the fuzz harnesses build the shell's files
again), the target with the most objects in that folder is the folder's.

Usage: tools/callgraph.py [-v] [BUILD [FOLDER...]]
  BUILD   a configured and built tree (default: build beside tools/)
  FOLDER  folders under BUILD, relative (default: the library's folders,
          mdinspect, mdinspect/batch, mdinspect/common, profiler/core,
          profiler/coreclr)
  -v      list every cycle's files and, for the largest, which files of it
          call which
Exit 0; 2 when a folder has no objects or nm is missing.
"""

import os
import shutil
import subprocess
import sys
from collections import defaultdict

DEFAULT_FOLDERS = ["libmdtools/" + f for f in (
    "util", "image", "md", "open", "tokens", "pdb", "pe", "strongname",
    "resources", "generics", "typeref", "il")] + [
    "mdinspect", "mdinspect/batch", "mdinspect/common", "profiler/core",
    "profiler/coreclr"]


def objects(folder):
    """The folder's own objects: {file name (no .o, no target prefix): path}."""
    by_target = defaultdict(dict)
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".o") or "-" not in name:
            continue
        target, src = name[:-2].split("-", 1)
        by_target[target][src] = os.path.join(folder, name)
    if not by_target:
        return {}
    # The most objects wins; ties by name, so the choice is stable.
    return max(by_target.items(), key=lambda kv: (len(kv[1]), kv[0]))[1]


def nm(args, path):
    out = subprocess.run(["nm"] + args + [path], check=True, capture_output=True,
                         text=True).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def graph(objs):
    """{file: set of files of the folder whose symbols it needs}."""
    defined = {}
    for f, path in objs.items():
        for w in nm(["--defined-only", "-g"], path):
            # "ADDR TYPE NAME"; common symbols have no address column left out
            defined.setdefault(w[-1], f)
    edges = {f: set() for f in objs}
    for f, path in objs.items():
        for w in nm(["-u"], path):
            to = defined.get(w[-1])
            if to is not None and to != f:
                edges[f].add(to)
    return edges


def sccs(edges):
    """Tarjan's strongly connected components, iteratively (no recursion
    limit to meet on a long chain)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return out


def main(argv):
    verbose = False
    if argv and argv[0] == "-v":
        verbose, argv = True, argv[1:]
    if not shutil.which("nm"):
        print("callgraph.py: needs nm (binutils)", file=sys.stderr)
        return 2
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = argv[0] if argv else os.path.join(top, "build")
    folders = argv[1:] or DEFAULT_FOLDERS
    status = 0
    print("| folder | files | files in cycles | cycles (sizes) |")
    print("| --- | ---: | ---: | --- |")
    detail = []
    for folder in folders:
        objs = objects(os.path.join(build, folder))
        if not objs:
            print(f"callgraph.py: no objects in {os.path.join(build, folder)}",
                  file=sys.stderr)
            status = 2
            continue
        edges = graph(objs)
        cycles = sorted((c for c in sccs(edges) if len(c) > 1), key=lambda c: (-len(c), c))
        inside = sum(len(c) for c in cycles)
        sizes = ", ".join(str(len(c)) for c in cycles) or "none"
        print(f"| {folder} | {len(objs)} | {inside} | {sizes} |")
        if verbose:
            for c in cycles:
                detail.append(f"{folder}: {len(c)} files: {' '.join(c)}")
            if cycles:
                big = set(cycles[0])
                for f in cycles[0]:
                    calls = sorted(edges[f] & big)
                    detail.append(f"  {f} -> {' '.join(calls)}")
    for line in detail:
        print(line)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
