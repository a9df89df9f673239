#!/usr/bin/env python3
"""Compare two modules as `mdinspect il -a --ilasm` prints them: the
original and the one an assembler rebuilt from that text. Both sides are
decoded by the library (names, flags, signatures, constants, attribute
blobs, bodies with their operands named), so heap offsets, row order of
references and token numbers do not enter. The text is read as a multiset
of (enclosing declarations, line): custom attributes of one owner, the
assembly references and members may come back in another order; an
instruction line carries its IL offset, so a body must come back
instruction for instruction. Continuation lines (an attribute blob's bytes,
a list of interfaces) are joined to their first line. Field RVA data is
compared by its bytes, not by the label (an RVA) the assembler picks.

Usage: ilcmp.py ORIGINAL.il REBUILT.il   (exit 1 and the differences)
"""
import collections
import re
import sys


def logical(path):
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    for line in lines:
        s = line.strip()
        if not s or s.startswith("//"):  # comments: the path, what is left out
            continue
        if out and (re.fullmatch(r"([0-9A-F]{2} ?)+\)?", s) or
                    out[-1].rstrip().endswith(",") or s.startswith("implements") or
                    s.startswith("extends")):
            out[-1] = out[-1] + " " + s
            continue
        out.append(s)
    # field RVA data: a label names an RVA, which the assembler picks anew;
    # a field says which bytes it starts at instead
    data = {}
    for s in out:
        m = re.match(r"\.data (D_[0-9A-F]{8}) = (.*)", s)
        if m:
            data[m.group(1)] = m.group(2)
    out = [re.sub(r"^\.data D_[0-9A-F]{8} =", ".data =",
                  re.sub(r" at (D_[0-9A-F]{8})", lambda m: " at [%s]" % data.get(m.group(1), "?"), s))
           for s in out]
    return out


def keyed(lines):
    stack, pending = [], None
    items = collections.Counter()
    for s in lines:
        if s == "{":
            stack.append(pending or "?")
            pending = None
            continue
        if s == "}":
            if stack:
                stack.pop()
            continue
        if s.startswith((".class", ".method", ".assembly", ".property", ".event",
                         ".try", "catch", "finally", "fault", "filter")):
            pending = s
            if s.endswith("{"):  # .try {, catch T {
                stack.append(s[:-1].strip())
                pending = None
        items[(" / ".join(x for x in stack if not x.startswith((".try", "catch", "finally",
                                                                  "fault", "filter"))), s)] += 1
    return items


def main():
    a, b = keyed(logical(sys.argv[1])), keyed(logical(sys.argv[2]))
    only_a, only_b = a - b, b - a
    for (ctx, s), n in sorted(only_a.items()):
        print("- [%s] %s" % (ctx, s))
    for (ctx, s), n in sorted(only_b.items()):
        print("+ [%s] %s" % (ctx, s))
    print("%d lines compared, %d only in the original, %d only in the rebuilt" %
          (sum(a.values()), sum(only_a.values()), sum(only_b.values())))
    return 1 if only_a or only_b else 0


if __name__ == "__main__":
    sys.exit(main())
