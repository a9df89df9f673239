#!/usr/bin/env python3
"""Differential test of mdtools' IL decoder against monodis or ILDasm.

For each image, both tools' disassembly is parsed into the same form: per
MethodDef token, the header (code size, max stack, locals signature token,
init locals) and a list of (offset, opcode, operand) tuples, plus the
exception clauses as (kind, try start, try end, handler start, handler end,
catch type token or filter start). mdinspect's side is `il -a` in JSON (the
decoder's own values, no text to parse); the peer's side is its text.

What is compared, and the normalisation each peer needs (documented in
tests/il/README.md):

* ILDasm (`-tokens -bytes -raweh`): everything. Its /BYTES column gives each
  operand exactly: a token as `(0A)000011`, integers and the bit patterns of
  floats in hex; branch and switch targets are read from the labels; EH
  clauses from the raw form (`.try IL_a to IL_b catch T/*tok*/ handler IL_c
  to IL_d`). ldstr: the quoted text unescaped, or the UTF-16 of `bytearray`.
* monodis (`--show-tokens`): instructions, branch targets, literals, local
  and argument numbers, header. A method is found by its "method line N"
  (MethodDef row N). monodis annotates every token it prints, those inside
  signatures too, and some of its annotations are wrong (a MethodSpec call
  ends in `/*0000006e(Module)*/`), so a token operand matches when our token
  is among the tokens annotated on that instruction; an instruction whose
  operand carries no annotation is counted as `unannotated`, not compared.
  EH clauses are read from its nested blocks (`.try {`, `catch T {`,
  `filter {`, `finally {`, `fault {`): a block starts at its first
  instruction and ends where the next instruction after its brace starts;
  catch types are printed without a token and are not compared (ILDasm's
  pass compares them).

Usage: ildiff.py --tool monodis|ildasm --peer PATH --mdinspect PATH
                 [--show N] FILE...
Prints one line per file and a total; exit status 1 on any mismatch. A file
the peer cannot disassemble (crash, non-zero exit) is skipped and counted.
"""
import argparse
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile

# Opcode spellings that differ from ECMA-335 Partition III's in a peer.
MONO_NAMES = {"endfault": "endfinally"}  # 0xDC in a fault handler
ILDASM_NAMES = {}

# Bodies mdinspect refuses with a located error where a peer prints
# something: damaged on purpose. (file, MethodDef token) -> why.
REFUSED = {
    ("BadBodies.dll", 0x06000006): "br.s to before the code",
    ("BadBodies.dll", 0x0600000B): "an exception clause of kind 3",
    ("BadBodies.dll", 0x0600000C): "opcode 0x24 (none)",
    ("BadBodies.dll", 0x0600000D): "opcode 0x24 (none)",
    ("BadBodies.dll", 0x0600000E): "first byte 0x00 is no header",
    ("HelloWorld_InvalidMethodBody.exe", 0x06000001):
        "first byte 0x01 is no header (ILDasm: code size 0)",
}

# Where a peer reads the image otherwise than the CLR (ILDasm, which uses
# the runtime's metadata reader, agrees with mdinspect on each).
# (tool, file, MethodDef token) -> why.
PEER_DIFFERS = {
    ("monodis", "HelloWorld.DoubleUserStringsStream.EnC.dll", 0x06000001):
        "two #US streams: monodis reads the second, the CLR the first",
}

BRANCH = re.compile(r"^(br|brfalse|brtrue|beq|bge|bgt|ble|blt|bne|leave)")


def hexint(s):
    return int(s, 16)


# ---------------------------------------------------------------- mdinspect

def run_ours(mdinspect, path):
    """{token: method} from `il -a` in JSON."""
    p = subprocess.run([mdinspect, "--json", "-c", "il -a", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    methods = {}
    for line in p.stdout.decode("utf-8", "replace").split("\n"):  # not splitlines: U+2028 in a string
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if "token" not in r or r.get("file") != path:
            continue  # a module opened beside it (MultiIL.dll's netmodule)
        tok = int(r["token"], 16)
        insns = []
        for i in r.get("instructions", []):
            insns.append((i["offset"], i["opcode"], i.get("operand")))
        eh = []
        for c in r.get("eh", []):
            if "error" in c:
                eh.append(("error",))
                continue
            extra = c.get("catch_type")
            if c["kind"] == "filter":
                extra = c["filter_start"]
            elif extra is not None:
                extra = int(extra, 16)
            eh.append((c["kind"], c["try_start"], c["try_end"],
                       c["handler_start"], c["handler_end"], extra))
        methods[tok] = {
            "code_size": r.get("code_size"),
            "max_stack": r.get("max_stack"),
            "init_locals": r.get("init_locals"),
            "locals": int(r["locals"], 16) if r.get("locals") else None,
            "insns": insns,
            "eh": eh,
            "error": r.get("error"),
        }
    return methods, p.returncode


# ---------------------------------------------------------------- monodis

MONO_TOK = re.compile(r"[/']\*([0-9a-fA-F]{8})\([A-Za-z]+\)\*[/']")
MONO_INSN = re.compile(r"^\s*IL_([0-9a-f]{4,}):\s+(\S+)\s*(.*)$")


def c_unescape(s):
    """monodis' and ILDasm's escapes of a string literal, to text."""
    out = bytearray()
    i = 0
    while i < len(s):
        ch = s[i]
        if ch != "\\":
            out += ch.encode("utf-8")
            i += 1
            continue
        i += 1
        if i >= len(s):
            break
        e = s[i]
        if e in "01234567":
            j = i
            while j < len(s) and j < i + 3 and s[j] in "01234567":
                j += 1
            out.append(int(s[i:j], 8) & 0xFF)
            i = j
            continue
        out += {"n": b"\n", "t": b"\t", "r": b"\r", "a": b"\a", "b": b"\b",
                "f": b"\f", "v": b"\v", "0": b"\0", "?": b"?"}.get(
                    e, e.encode("utf-8"))
        i += 1
    return out.decode("utf-8", "surrogatepass")


def parse_monodis(text):
    methods = {}
    cur = None
    blocks = []  # open blocks: [kind, clause, start or None, extra]
    clauses = {}  # (depth-independent) clause index -> dict, per method
    pending_end = []  # blocks closed, waiting for the next offset
    in_switch = None
    in_bytes = None
    last_try = [None]
    lines = text.split("\n")

    def settle(off):
        for b in pending_end:
            b["end"] = off
        pending_end.clear()
        for b in blocks:
            if b["start"] is None:
                b["start"] = off

    def finish():
        if cur is None:
            return
        settle(cur["code_size"] if cur["code_size"] is not None else -1)
        eh = []
        for idx in sorted(clauses):
            c = clauses[idx]
            t, h = c.get("try"), c.get("handler")
            if not t or not h:
                continue
            extra = None
            if c["kind"] == "filter":
                extra = c["filter"]["start"] if c.get("filter") else None
            eh.append((c["kind"], t["start"], t["end"], h["start"], h["end"], extra))
        cur["eh"] = eh

    for line in lines:
        m = re.match(r"^\s*// method line (\d+)", line)
        if m:
            finish()
            cur = {"token": 0x06000000 | int(m.group(1)), "insns": [],
                   "code_size": None, "max_stack": None, "locals": None,
                   "init_locals": False}
            methods[cur["token"]] = cur
            blocks, clauses, pending_end = [], {}, []
            last_try = [None]
            in_switch = None
            in_bytes = None
            continue
        if cur is None:
            continue
        s = line.strip()
        if in_bytes is not None:
            body = s.split("//")[0]
            in_bytes["bytes"] += bytes(hexint(b) for b in re.findall(r"\b[0-9a-fA-F]{2}\b", body.split(")")[0]))
            if ")" in body:
                in_bytes = None
            continue
        if in_switch is not None:
            for lab in re.findall(r"IL_([0-9a-f]+)", s):
                in_switch.append(hexint(lab))
            if ")" in s:
                in_switch = None
            continue
        m = re.match(r"^// Code size (\d+)", s)
        if m:
            cur["code_size"] = int(m.group(1))
            continue
        m = re.match(r"^\.maxstack (\d+)", s)
        if m:
            cur["max_stack"] = int(m.group(1))
            continue
        m = re.match(r"^\.locals /\*([0-9a-fA-F]{8})\*/ (init )?", s)
        if m:
            cur["locals"] = hexint(m.group(1))
            cur["init_locals"] = bool(m.group(2))
            continue
        m = re.match(r"^\.try \{ // (\d+)$", s)
        if m:
            b = {"start": None}
            clauses.setdefault(int(m.group(1)), {"kind": None})["try"] = b
            blocks.append(b)
            continue
        m = re.match(r"^\} // end \.try (\d+)$", s)
        if m and blocks:
            last_try[0] = blocks.pop()
            pending_end.append(last_try[0])
            continue
        m = re.match(r"^(catch .*|finally|fault) +\{ // (\d+)$", s)
        if m:
            kind = m.group(1).split()[0]
            c = clauses.setdefault(int(m.group(2)), {})
            c["kind"] = kind
            if "try" not in c and last_try[0] is not None:
                c["try"] = last_try[0]  # a second handler of the same try block
            b = {"start": None}
            c["handler"] = b
            blocks.append(b)
            continue
        if s == "filter {":
            b = {"start": None}
            blocks.append(b)
            cur.setdefault("_filter", []).append(b)
            continue
        m = re.match(r"^\} \{ // (\d+)$", s)
        if m and blocks:  # end of a filter block, start of its handler
            fb = blocks.pop()
            pending_end.append(fb)
            c = clauses.setdefault(int(m.group(1)), {})
            c["kind"] = "filter"
            c["filter"] = fb
            if "try" not in c and last_try[0] is not None:
                c["try"] = last_try[0]
            b = {"start": None}
            c["handler"] = b
            blocks.append(b)
            continue
        m = re.match(r"^\} // end handler (\d+)$", s)
        if m and blocks:
            pending_end.append(blocks.pop())
            continue
        m = MONO_INSN.match(line)
        if m:
            off = hexint(m.group(1))
            settle(off)
            op = MONO_NAMES.get(m.group(2), m.group(2))
            rest = m.group(3).strip()
            opnd = {"text": rest, "toks": [hexint(t) for t in MONO_TOK.findall(rest)]}
            if op == "ldstr" and rest.startswith("bytearray ("):
                # UTF-16LE and #US's trailing flag byte, over the next lines
                body = rest.split("(", 1)[1].split("//")[0]
                opnd["bytes"] = bytes(hexint(b) for b in re.findall(r"\b[0-9a-fA-F]{2}\b", body.split(")")[0]))
                if ")" not in body:
                    in_bytes = opnd
            if op == "switch":
                in_switch = []
                opnd["targets"] = in_switch
                for lab in re.findall(r"IL_([0-9a-f]+)", rest):
                    in_switch.append(hexint(lab))
                if ")" in rest:
                    in_switch = None
            cur["insns"].append((off, op, opnd))
    finish()
    return methods


# ---------------------------------------------------------------- ILDasm

ILD_INSN = re.compile(
    r"^\s*IL_([0-9a-f]{4,}):\s+/\*\s*([0-9A-F]*)\s*\|\s*([0-9A-F()]*)\s*\*/\s*(\S+)\s*(.*)$")
QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
ILD_CONT = re.compile(r"^\s*/\*\s*\|\s*([0-9A-F]*)\s*\*/\s*(.*)$")
ILD_TRY = re.compile(
    r"^\s*\.try IL_([0-9a-f]+) to IL_([0-9a-f]+) (catch|filter|finally|fault)(.*?)"
    r"handler IL_([0-9a-f]+) to IL_([0-9a-f]+)")


def parse_ildasm(text):
    methods = {}
    cur = None
    last = None
    in_bytes = None  # ldstr bytearray continued
    for line in text.split("\n"):
        m = re.match(r"^\s*\.method /\*(06[0-9A-F]{6})\*/", line)
        if m:
            cur = {"token": hexint(m.group(1)), "insns": [], "code_size": None,
                   "max_stack": None, "locals": None, "init_locals": False,
                   "eh": []}
            methods[cur["token"]] = cur
            last, in_bytes = None, None
            continue
        if cur is None:
            continue
        if in_bytes is not None:
            body = line.split("//")[0]
            in_bytes["bytes"] += bytes(hexint(b) for b in re.findall(r"\b[0-9A-F]{2}\b", body.split(")")[0]))
            if ")" in body:
                in_bytes = None
            continue
        m = ILD_INSN.match(line)
        if m:
            off = hexint(m.group(1))
            op = ILDASM_NAMES.get(m.group(4), m.group(4))
            raw, rest = m.group(3), m.group(5)
            opnd = {"raw": raw, "text": rest, "bytes_op": m.group(2)}
            if op == "switch":
                opnd["targets"] = []
            if op == "ldstr" and rest.startswith('"'):
                opnd["pieces"] = QUOTED.findall(rest)
            if op == "ldstr" and rest.startswith("bytearray"):
                inner = rest.split("(", 1)[1]
                body = inner.split("//")[0]
                opnd["bytes"] = bytes(hexint(b) for b in re.findall(r"\b[0-9A-F]{2}\b", body.split(")")[0]))
                if ")" not in body:
                    in_bytes = opnd
            last = opnd
            cur["insns"].append((off, op, opnd))
            continue
        m = re.match(r'^\s*\+ (".*)$', line)
        if m and last is not None and "pieces" in last:
            last["pieces"] += QUOTED.findall(m.group(1))
            continue
        m = ILD_CONT.match(line)
        if m and last is not None and "targets" in last:
            lab = re.search(r"IL_([0-9a-f]+)", m.group(2))
            if lab:
                last["targets"].append(hexint(lab.group(1)))
            continue
        s = line.strip()
        m = re.match(r"^// Code size\s+(\d+)", s)
        if m:
            cur["code_size"] = int(m.group(1))
            continue
        m = re.match(r"^\.maxstack\s+(\d+)", s)
        if m:
            cur["max_stack"] = int(m.group(1))
            continue
        m = re.match(r"^\.locals /\*([0-9A-F]{8})\*/ (init )?", s)
        if m:
            cur["locals"] = hexint(m.group(1))
            cur["init_locals"] = bool(m.group(2))
            continue
        m = ILD_TRY.match(line)
        if m:
            kind = m.group(3)
            extra = None
            if kind == "catch":
                toks = re.findall(r"/\*([0-9A-F]{8})\*/", m.group(4))
                extra = hexint(toks[-1]) if toks else "?"
            elif kind == "filter":
                extra = hexint(re.search(r"IL_([0-9a-f]+)", m.group(4)).group(1))
            cur["eh"].append((kind, hexint(m.group(1)), hexint(m.group(2)),
                              hexint(m.group(5)), hexint(m.group(6)), extra))
    for m in methods.values():
        m["insns"] = ildasm_no_prefix(m["insns"])
    return methods


def ildasm_no_prefix(insns):
    """ILDasm does not know `no.` (0xFE19): it prints `unused` and decodes
    the prefix's flags byte as an instruction of its own. Put them back
    together as ECMA-335 III.2.2 has them."""
    out = []
    i = 0
    while i < len(insns):
        off, op, opnd = insns[i]
        if op == "unused" and i + 1 < len(insns):
            noff, _, nopnd = insns[i + 1]
            flag = re.match(r"[0-9A-F]{2}", insns[i + 1][2].get("bytes_op", ""))
            if noff == off + 2 and flag:
                out.append((off, "no.", {"raw": flag.group(0), "text": ""}))
                i += 2
                continue
        out.append(insns[i])
        i += 1
    return out


# ---------------------------------------------------------------- comparing

def as_u(v, bits):
    return v & ((1 << bits) - 1)


def float_bits(v, fmt):
    if isinstance(v, str):
        v = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v]
    return struct.unpack("<" + {"f": "I", "d": "Q"}[fmt], struct.pack("<" + fmt, v))[0]


def same_float(ours, bits, fmt):
    mine = float_bits(ours, fmt)
    if mine == bits:
        return True
    # NaNs: JSON has one "NaN"; any NaN payload of the peer matches it.
    x = struct.unpack("<" + fmt, struct.pack("<" + {"f": "I", "d": "Q"}[fmt], bits))[0]
    return ours == "NaN" and math.isnan(x)


def cmp_operand_ildasm(op, ours, theirs):
    raw = theirs["raw"]
    if op == "switch":
        return ours == theirs["targets"]
    if raw.startswith("("):
        tok = hexint(raw[1:3] + raw[4:])
        if op == "ldstr":
            if "bytes" in theirs:
                # mdinspect's JSON is UTF-8: an unpaired surrogate is U+FFFD
                return ours == theirs["bytes"].decode("utf-16-le", "replace")
            return "pieces" in theirs and c_unescape("".join(theirs["pieces"])) == ours
        return isinstance(ours, str) and int(ours, 16) == tok
    if op == "calli":
        return isinstance(ours, str) and int(ours, 16) == hexint(raw)
    if raw == "":
        return ours is None
    if BRANCH.match(op):
        lab = re.match(r"IL_([0-9a-f]+)", theirs["text"])
        return lab is not None and ours == hexint(lab.group(1))
    if op == "ldc.r4":
        return same_float(ours, hexint(raw), "f")
    if op == "ldc.r8":
        return same_float(ours, hexint(raw), "d")
    bits = 4 * len(raw)
    return isinstance(ours, int) and as_u(ours, bits) == hexint(raw)


def cmp_operand_monodis(op, ours, theirs, counts):
    text = theirs["text"]
    if op == "switch":
        return ours == theirs["targets"]
    if isinstance(ours, str) and re.fullmatch(r"0x[0-9a-f]{8}", ours) and op != "ldstr":
        tok = int(ours, 16)
        # A nested TypeDef is printed `Outer/*00000000(Module)*//Inner/*tok*/`
        # with the enclosing type's token for the inner name: not comparable.
        nested = tok >> 24 == 0x02 and "00000000(Module)*" in text
        if nested or not [t for t in theirs["toks"] if t >> 24 == tok >> 24]:
            # monodis names a field MemberRef by its owner and name only, and
            # annotates some operands with a wrong table (cpobj's
            # /*00000000(Module)*/): nothing to compare with.
            counts["unannotated"] += 1
            return True
        return tok in theirs["toks"]
    if op == "ldstr":
        if "bytes" in theirs:
            b = theirs["bytes"]
            return ours == b[:len(b) & ~1].decode("utf-16-le", "replace")
        m = re.match(r'^"(.*)"$', text)
        return m is not None and c_unescape(m.group(1)) == ours
    if ours is None:
        return text == ""
    if BRANCH.match(op):
        lab = re.match(r"IL_([0-9a-f]+)", text)
        return lab is not None and ours == hexint(lab.group(1))
    if op in ("ldc.r4", "ldc.r8"):
        fmt = "f" if op == "ldc.r4" else "d"
        m = re.fullmatch(r"\(([0-9a-fA-F ]+)\)", text)
        if m:  # NaN and the infinities: the bytes, in file order
            bits = int.from_bytes(bytes(hexint(b) for b in m.group(1).split()), "little")
            return same_float(ours, bits, fmt)
        t = text.rstrip(".") if not text.endswith("e.") else text
        try:
            x = float(t)
        except ValueError:
            x = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(t.lower())
            if x is None:
                return False
        if isinstance(ours, str):
            return (ours == "NaN" and math.isnan(x)) or \
                (ours == "Infinity" and x == math.inf) or (ours == "-Infinity" and x == -math.inf)
        fmt = "f" if op == "ldc.r4" else "d"
        return float_bits(ours, fmt) == float_bits(x, fmt) or ours == x
    if op in ("unaligned.", "no."):
        return isinstance(ours, int) and ours == int(text, 0)
    try:
        v = int(text, 0)
    except ValueError:
        return False
    bits = 32 if op.startswith("ldc.i4") else 64  # monodis: ldc.i4.s 0xfffffffb
    return isinstance(ours, int) and as_u(ours, bits) == as_u(v, bits)


def compare(tool, ours, theirs, counts, problems, path, show):
    for tok, t in sorted(theirs.items()):
        if not t["insns"] and tool == "monodis" and t["code_size"] is None:
            continue  # no body
        if not t["insns"] and t["code_size"] is None:
            continue
        counts["bodies"] += 1
        o = ours.get(tok)
        where = "%s 0x%08x" % (os.path.basename(path), tok)

        def bad(what):
            counts["mismatched"] += 1
            if len(problems) < show:
                problems.append("%s: %s" % (where, what))

        if (tool, os.path.basename(path), tok) in PEER_DIFFERS:
            counts["peer_differs"] += 1
            continue
        known = REFUSED.get((os.path.basename(path), tok))
        if (o is None or o["error"]) and known:
            counts["refused"] += 1
            continue
        if o is None:
            bad("no IL from mdinspect")
            continue
        if o["error"]:
            bad("mdinspect: %s" % o["error"])
            continue
        if known:
            bad("decoded, but listed as refused (%s)" % known)
            continue
        for key in ("code_size", "max_stack", "locals", "init_locals"):
            if t[key] is not None and o[key] != t[key] and not (key == "init_locals" and t["locals"] is None):
                bad("%s: ours %r, %s %r" % (key, o[key], tool, t[key]))
                break
        else:
            ok = True
            if len(o["insns"]) != len(t["insns"]):
                bad("%d instructions, %s %d" % (len(o["insns"]), tool, len(t["insns"])))
                ok = False
            for (ooff, oop, oopnd), (toff, top, topnd) in zip(o["insns"], t["insns"]):
                if not ok:
                    break
                counts["instructions"] += 1
                if ooff != toff or oop != top:
                    bad("IL_%04x %s, %s IL_%04x %s" % (ooff, oop, tool, toff, top))
                    ok = False
                    break
                if tool == "ildasm":
                    same = cmp_operand_ildasm(oop, oopnd, topnd)
                else:
                    same = cmp_operand_monodis(oop, oopnd, topnd, counts)
                if not same:
                    bad("IL_%04x %s: ours %r, %s %r" % (ooff, oop, oopnd, tool,
                                                        topnd.get("raw", topnd["text"])))
                    ok = False
                    break
            if ok:
                oeh = o["eh"]
                teh = t.get("eh", [])
                if tool == "monodis":
                    oeh = [c[:5] + ((c[5] if c[0] == "filter" else None),) for c in oeh]
                if sorted(oeh, key=str) != sorted(teh, key=str):
                    bad("eh: ours %r, %s %r" % (oeh, tool, teh))
                else:
                    counts["clauses"] += len(teh)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", choices=("monodis", "ildasm"), required=True)
    ap.add_argument("--peer", required=True)
    ap.add_argument("--mdinspect", required=True)
    ap.add_argument("--show", type=int, default=20)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    total = {"files": 0, "skipped": 0, "bodies": 0, "instructions": 0,
             "clauses": 0, "mismatched": 0, "unannotated": 0, "refused": 0, "peer_differs": 0}
    problems = []
    for path in a.files:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "peer.il")
            full = os.path.abspath(path)
            if a.tool == "monodis":
                cmd = [a.peer, "--show-tokens", "--output=" + out, full]
            else:
                cmd = [a.peer, "-tokens", "-bytes", "-raweh", "-utf8", "-out=" + out, full]
            try:
                # In the scratch directory: ILDasm writes the module's
                # resources into the current one.
                p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   timeout=120, cwd=tmp)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
            if rc != 0 or not os.path.exists(out):
                total["skipped"] += 1
                print("%s: skipped (%s exit %s)" % (path, a.tool, rc))
                continue
            with open(out, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        theirs = parse_monodis(text) if a.tool == "monodis" else parse_ildasm(text)
        ours, rc = run_ours(a.mdinspect, path)
        counts = dict.fromkeys(total, 0)
        if rc not in (0, 1):  # 1: a body that does not decode; else a crash or a sanitizer
            counts["mismatched"] += 1
            problems.append("%s: mdinspect exited with status %d" % (path, rc))
        compare(a.tool, ours, theirs, counts, problems, path, a.show)
        total["files"] += 1
        for k in counts:
            total[k] += counts[k]
        print("%s: %d bodies, %d instructions, %d clauses, %d mismatched" %
              (path, counts["bodies"], counts["instructions"], counts["clauses"],
               counts["mismatched"]))
    for p in problems:
        print("MISMATCH " + p)
    print("total: %(files)d files (%(skipped)d skipped), %(bodies)d bodies, "
          "%(instructions)d instructions, %(clauses)d EH clauses, "
          "%(mismatched)d mismatched, %(refused)d refused as listed, %(peer_differs)d where monodis differs as listed; %(unannotated)d token operands monodis "
          "does not annotate" % total if a.tool == "monodis" else
          "total: %(files)d files (%(skipped)d skipped), %(bodies)d bodies, "
          "%(instructions)d instructions, %(clauses)d EH clauses, "
          "%(mismatched)d mismatched, %(refused)d refused as listed, "
          "%(peer_differs)d where ILDasm differs as listed" % total)
    return 1 if total["mismatched"] else 0


if __name__ == "__main__":
    sys.exit(main())
