#!/usr/bin/env python3
"""Check an mdprofile log (doc/profile-log.md) against what the test program
(data/profiler/Workload) says about itself.

    check.py names   LOG EXPECTED   sample mode, the names workload
    check.py osr     LOG EXPECTED   the same held at tier 0 (OSR code)
    check.py attach  LOG EXPECTED   the names workload, profiled after an attach
    check.py reattach LOG EXPECTED  one of several short sessions attached in turn
    check.py starved LOG EXPECTED   the names workload, its drain thread never draining
    check.py handler LOG EXPECTED   the names workload under the handler's probe
    check.py named   LOG EXPECTED   the names workload, every frame named right,
                                    not every case sampled (a test about
                                    something else, beside busy processes)
    check.py plugins LOG EXPECTED   sample mode, two collectible plug-ins
    check.py calls   LOG EXPECTED   calls mode: exact counts of enters and exits
    check.py callnames LOG EXPECTED the names workload in calls mode: every
                                    method the program entered is one it named
    check.py alloc   LOG EXPECTED   alloc mode: exact counts per type
    check.py format  LOG            the format alone

With "--assemblies DIR..." at the end (the test programs' build outputs),
the log is also resolved offline with `mdinspect batch` and every name
checked against reflection's (offline.py).

EXPECTED holds "FRAME NAME" per method instantiation the program ran (the
log's frame text without an IL offset, and the name normalised as
data/profiler/README.md says, both from reflection) and "# key value"
facts.
Every check prints a line; the last line is "N passed, M failed" and the
exit status is 1 when something failed."""
import os
import re
import sys
from collections import Counter, defaultdict
from urllib.parse import unquote

import offline

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
import mdtcheck  # noqa: E402  tests/common: the PASS/FAIL lines and the closing line

HEX32 = r"[0-9a-f]{32}"
PRIM = r"(?:I1|U1|I2|U2|I4|U4|I8|U8|R4|R8|I|U|CHAR|BOOLEAN|STRING|OBJECT|VOID|TYPEDBYREF|__Canon)"
SPECIAL = re.compile(r"^(native|unmanaged|dynamic|stub|truncated|unknown(:[a-z]+)?|state:[a-z]+(:[A-Za-z.]+)?)$")
# a native frame (format 3): its ELF file's name (%XX-escaped), build-id and
# offset, and what the runtime was doing (doc/profile-log.md, Frames)
NATIVE = offline.NATIVE


def ok(cond, what):
    mdtcheck.check(cond, what)
    return cond


def parse_desc(s, i):
    """Parse one descriptor at s[i:], return the index after it or -1."""
    m = re.compile(PRIM).match(s, i)
    if m and (m.end() == len(s) or s[m.end()] in ",>}[*& @"):
        i = m.end()
    else:
        m = re.compile(HEX32 + r":0x02[0-9a-f]{6}").match(s, i)
        if not m:
            return -1
        i = m.end()
        if i < len(s) and s[i] == "<":
            i = parse_list(s, i + 1, ">")
            if i < 0:
                return -1
    while i < len(s):
        m = re.compile(r"\[\]|\[[0-9]+\]|\*|&").match(s, i)
        if not m:
            break
        i = m.end()
    return i


def parse_list(s, i, close):
    while True:
        i = parse_desc(s, i)
        if i < 0 or i >= len(s):
            return -1
        if s[i] == close:
            return i + 1
        if s[i] != ",":
            return -1
        i += 1


METHOD = re.compile(r"^(" + HEX32 + r"):(0x06[0-9a-f]{6})")


def valid_frame(f):
    if SPECIAL.match(f) or NATIVE.match(f):
        return True
    m = METHOD.match(f)
    if not m:
        return False
    i = m.end()
    if i < len(f) and f[i] == "{":
        i = parse_list(f, i + 1, "}")
        if i < 0:
            return False
    if i < len(f) and f[i] == "<":
        i = parse_list(f, i + 1, ">")
        if i < 0:
            return False
    if i < len(f):
        return re.fullmatch(r"@0x[0-9a-f]+", f[i:]) is not None
    return True


def valid_type(f):
    return parse_desc(f, 0) == len(f)


class Log:
    def __init__(self, path):
        self.header = {}
        self.format = None
        self.stats = None
        self.records = []  # (kind, count, bytes, frames, names)
        self.exits = []  # per record: (leaves, tailcalls, unwinds) of a format-2 call record, else None
        self.slices = []  # per record: (tid, slice) of a format-4 stack record, else None
        self.threads = {}  # tid -> [(line, {managed, name, os})] of its #thread lines (format 4)
        self.items = []  # every line in order: (kind, line, count, bytes, frames, exits)
        self.errors = []
        self.elf = {}  # NAME:BUILDID -> (line, path) of its #elf line
        self.modules = {}  # MVID -> (name, version, line) from #module lines
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        m = re.match(r"#mdprofile ([1234])( |$)", lines[0]) if lines else None
        if not m:
            self.errors.append("first line is not a format-1, 2, 3 or 4 header")
            return
        self.format = int(m.group(1))
        for kv in lines[0].split(" ")[2:]:
            k, _, v = kv.partition("=")
            self.header[k] = v
        self.items.append(("header", lines[0], 0, 0, [], None))
        for n, line in enumerate(lines[1:], 2):
            if line.startswith("#stats"):
                self.items.append(("stats", line, 0, 0, [], None))
                if self.stats is not None:
                    self.errors.append("line %d: a second #stats line" % n)
                self.stats = {k: int(v) if re.fullmatch(r"[0-9]+", v) else v
                              for k, v in (kv.split("=", 1) for kv in line.split(" ")[1:])}
                if n != len(lines):
                    self.errors.append("line %d: #stats is not the last line" % n)
                continue
            if line.startswith("#elf "):
                # the file of native frames: before the first record that uses it
                parts = line.split(" ")
                if len(parts) != 3 or not re.fullmatch(r"[^:!]+:[0-9a-f]*", parts[1]):
                    self.errors.append("line %d: malformed #elf line" % n)
                elif parts[1] in self.elf:
                    self.errors.append("line %d: a second #elf line for %s" % (n, parts[1]))
                else:
                    self.elf[parts[1]] = (n, parts[2])
            if line.startswith("#module "):
                # "#module MVID NAME VERSION", before the first record naming it
                f = line.split(" ")
                if len(f) != 4 or not re.fullmatch(HEX32, f[1]) or not re.fullmatch(r"[0-9]+(\.[0-9]+){3}", f[3]):
                    self.errors.append("line %d: malformed #module line" % n)
                elif f[1] in self.modules:
                    self.errors.append("line %d: a second #module line for %s" % (n, f[1]))
                else:
                    self.modules[f[1]] = (f[2], f[3], n)
                self.items.append(("comment", line, 0, 0, [], None))
                continue
            if line.startswith("#thread "):
                # "#thread TID managed=0|1 [name=N] [os=N]" (format 4)
                f = line.split(" ")
                kv = dict(x.partition("=")[::2] for x in f[2:])
                if not re.fullmatch(r"[1-9][0-9]*", f[1]) or kv.get("managed") not in ("0", "1") or \
                   any(not re.fullmatch(r"[^ %]*(%[0-9A-F]{2}[^ %]*)*", v) for v in kv.values()):
                    self.errors.append("line %d: malformed #thread line" % n)
                else:
                    self.threads.setdefault(int(f[1]), []).append(
                        (n, {k: unquote(v) for k, v in kv.items()}))
            if line.startswith("#"):
                self.items.append(("comment", line, 0, 0, [], None))
                continue
            rec, _, dbg = line.partition("\t")
            parts = rec.split(" ")
            kind = parts[0]
            if kind not in ("stack", "call", "alloc", "astack", "heap") or len(parts) < 3:
                self.errors.append("line %d: malformed record" % n)
                self.items.append(("malformed", line, 0, 0, [], None))
                continue
            count = int(parts[1])
            nbytes = 0
            frames = parts[2:]
            exits = None
            if kind in ("alloc", "astack", "heap"):
                # astack: a sampled allocation's type, then its stack
                nbytes = int(parts[2])
                frames = parts[3:]
            if kind == "heap":
                # heap: the GC's number and the walk's time, then the type
                if len(parts) < 6 or not re.fullmatch(r"[1-9][0-9]*", parts[3]) or \
                   not re.fullmatch(r"0|[1-9][0-9]*", parts[4]):
                    self.errors.append("line %d: a heap record without its GC and time" % n)
                frames = parts[5:]
            tid_slice = None
            if kind == "stack" and parts[2].isdigit():
                # format 4: the thread and the time slice
                if len(parts) < 5 or not re.fullmatch(r"[1-9][0-9]*", parts[2]) or \
                   not re.fullmatch(r"0|[1-9][0-9]*", parts[3]):
                    self.errors.append("line %d: a format-4 stack record without its thread and slice" % n)
                else:
                    tid_slice = (int(parts[2]), int(parts[3]))
                frames = parts[4:]
            if kind == "astack" and len(parts) > 3 and parts[3].isdigit():
                # an astack record's thread and time slice (since format 4)
                if len(parts) < 6 or not re.fullmatch(r"[1-9][0-9]*", parts[3]) or \
                   not re.fullmatch(r"0|[1-9][0-9]*", parts[4]):
                    self.errors.append("line %d: an astack record without its thread and slice" % n)
                else:
                    tid_slice = (int(parts[3]), int(parts[4]))
                frames = parts[5:]
            if kind in ("stack", "astack") and (tid_slice is not None) != (self.format >= 4):
                self.errors.append("line %d: a%s %s record %s its thread and slice in a format-%d log"
                                   % (n, "n" if kind == "astack" else "", kind,
                                      "with" if tid_slice else "without", self.format))
            if kind == "call" and parts[2].isdigit():
                # format 2: leaves, tail calls, unwinds
                if len(parts) < 6 or not all(re.fullmatch(r"0|[1-9][0-9]*", x) for x in parts[2:5]):
                    self.errors.append("line %d: a format-2 call record without three exit counts" % n)
                    exits = (0, 0, 0)
                else:
                    exits = tuple(int(x) for x in parts[2:5])
                frames = parts[5:]
            if kind == "call" and (exits is not None) != (self.format == 2):
                self.errors.append("line %d: a format-%d call record in a format-%d log"
                                   % (n, 2 if exits is not None else 1, self.format))
            if exits is not None and sum(exits) > count:
                self.errors.append("line %d: %d exits for %d enters" % (n, sum(exits), count))
            names = dbg.split("\t") if dbg else None
            if count < 1:
                self.errors.append("line %d: count %d" % (n, count))
            if kind == "stack" and not 1 <= len(frames) <= 255:
                self.errors.append("line %d: %d frames" % (n, len(frames)))
            if kind == "astack" and not 1 <= len(frames) <= 256:
                self.errors.append("line %d: %d frames" % (n, len(frames)))
            if kind not in ("stack", "astack") and len(frames) != 1:
                self.errors.append("line %d: %s record with %d frames" % (n, kind, len(frames)))
            for i, f in enumerate(frames):
                # an alloc record's type (an astack record's first frame),
                # or a special frame for a type the profiler could not
                # describe
                is_type = kind in ("alloc", "heap") or (kind == "astack" and i == 0)
                if not ((valid_type(f) or SPECIAL.match(f)) if is_type else valid_frame(f)):
                    self.errors.append("line %d: bad frame %r" % (n, f))
                nm = NATIVE.match(f)
                if nm and nm.group(1) and not nm.group(1).startswith("[") and \
                   self.elf.get("%s:%s" % nm.group(1, 2), (n,))[0] >= n:
                    self.errors.append("line %d: no #elf line before it for %s" % (n, f))
                # every module a record names was described before it
                for m in re.findall(r"(?<![0-9a-f:])(" + HEX32 + r"):0x0", f):
                    if m not in self.modules:
                        self.errors.append("line %d: module %s has no #module line before it" % (n, m))
            if "truncated" in frames[:-1]:
                self.errors.append("line %d: truncated is not the root frame" % n)
            if names is not None and len(names) != len(frames):
                self.errors.append("line %d: %d names for %d frames" % (n, len(names), len(frames)))
            self.records.append((kind, count, nbytes, frames, names))
            self.exits.append(exits)
            self.slices.append(tid_slice)
            self.items.append((kind, line, count, nbytes, frames, exits))


def check_format(log, mode):
    ok(not log.errors, "format: %d errors%s" % (len(log.errors), (": " + "; ".join(log.errors[:5])) if log.errors else ""))
    ok(log.header.get("mode") == mode, "header mode=%s (%s)" % (mode, log.header.get("mode")))
    # format 2 added exit counts to call records: only calls logs need it;
    # format 3 native frames with their ELF file: sample logs;
    # format 4, sample records with their thread and time slice; a log
    # of several modes (mode=sample,alloc) holds each one's records
    modes = mode.split(",")
    # an alloc log with sampled stacks (alloc_sample=) is format 4: its
    # astack records carry their thread and slice
    want = 2 if "calls" in modes else 1 if modes == ["alloc"] and "alloc_sample" not in log.header else 4
    ok(log.format == want, "header says format %d (%s)" % (want, log.format))
    ok(all(k in log.header for k in ("runtime", "pid", "ppid", "start", "cmd")),
       "header has runtime, pid, ppid, start, cmd")
    fw, fws = log.header.get("framework"), log.header.get("frameworks", "").split(",")
    ok(not fw or fw in fws, "frameworks= (%s) lists the core library's folder %s" % (fws, fw))
    if not ok(log.stats is not None, "log closed by #stats"):
        return
    s = log.stats
    kinds = ("managed", "native", "dynamic", "stub", "unknown")
    ok(sum(s[k] for k in kinds) == s["frames"], "stats: frame kinds add up to frames=%d" % s["frames"])
    ok(s["unknown"] == s["unknown.unmapped"] + s["unknown.unloaded"] + s["unknown.nomvid"],
       "stats: unknown = unmapped + unloaded + nomvid")
    ok(s["records"] == len(log.records), "stats: records=%d" % len(log.records))
    ok(s.get("end") in ("exit", "detach") or str(s.get("end", "")).startswith("signal:"),
       "stats: end=%s says how the process ended" % s.get("end"))
    if "sample" in modes or "wall" in modes:
        stacks = [r for r in log.records if r[0] == "stack"]
        total = sum(r[1] for r in stacks)
        ok(s["samples"] == total, "stats: samples=%d is the sum of counts (%d)" % (s["samples"], total))
        # the truncated mark is not a frame of code
        # an alloc record's type is its one frame; nor is a wall-mode state
        # (doc/profile-log.md, "Wall time"); astack records (sampled
        # estimates) are not counted in frames=
        nframes = sum(r[1] * len([f for f in r[3] if f != "truncated" and not f.startswith("state:")])
                      for r in log.records if r[0] != "astack")
        ok(s["frames"] == nframes, "stats: frames=%d is the sum of count x frames (%d)" % (s["frames"], nframes))
        cut = sum(r[1] for r in stacks if r[3][-1] == "truncated")
        ok(s.get("truncated") == cut, "stats: truncated=%s counts the samples cut at the depth limit (%d)"
           % (s.get("truncated"), cut))


def read_expected(path):
    names = set()
    facts = defaultdict(list)
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("# "):
            parts = line[2:].split(" ", 1)
            facts[parts[0]].append(parts[1] if len(parts) > 1 else "")
        elif line:
            frame, name = line.split(" ", 1)
            names.add((frame, name))
    return names, facts


def frame_key(f):
    """(MVID, MethodDef) of a method frame, else None."""
    m = METHOD.match(f)
    return (m.group(1), m.group(2)) if m else None


def check_names(log, names, mvids, what):
    """Every frame of the given modules is a method the program ran: its
    text (without the IL offset) and its in-process name are the ones the
    program printed through reflection. Returns weight per expected entry."""
    seen = Counter()
    bad = Counter()
    for kind, count, _, frames, dbg in log.records:
        if dbg is None:
            continue
        for f, n in zip(frames, dbg):
            k = frame_key(f)
            if not k or k[0] not in mvids:
                continue
            key = (re.sub(r"@0x[0-9a-f]+$", "", f), n)
            if key in names:
                seen[key] += count
            else:
                bad[key] += count
    ok(not bad, "%s: every frame and its in-process name are what the program printed (%d frames checked, %d bad%s)"
       % (what, sum(seen.values()), sum(bad.values()),
          (": " + "; ".join("%s %r" % k for k in list(bad)[:4])) if bad else ""))
    return seen


def callers(log, leaf, want, what, need=True):
    """Every sample whose leaf's name matches `leaf` shows a caller whose
    name matches `want` (the only callers the program gives it), or none at
    all: the leaf alone, from a thread whose stack bounds the sampler did
    not know yet (attach), which #stats counts as `unwalked`. Nothing else:
    a wrong caller is a wrong profile (stale OSR frame records showed a
    sibling in 1-3% of these samples, more under load, where methods stay
    longer in OSR code; osr.sh holds them there). need: the leaf must have
    been sampled (without it, a leaf never sampled has nothing to check)."""
    n = right = alone = 0
    wrong = Counter()
    for kind, count, _, frames, dbg in log.records:
        if dbg and re.search(leaf, dbg[0]):
            n += count
            if len(dbg) == 1:
                alone += count
            elif re.search(want, dbg[1]):
                right += count
            else:
                wrong[dbg[1]] += count
    unwalked = (log.stats or {}).get("unwalked", 0)
    ok((n > 0 or not need) and not wrong and alone <= unwalked,
       "%s: %d samples, %d show their caller, %d the leaf alone (of %d unwalked), %d another caller%s"
       % (what, n, right, alone, unwalked, sum(wrong.values()),
          (": " + "; ".join("%s (%d)" % kv for kv in wrong.most_common(3))) if wrong else ""))


def thread_root(log, least):
    """The worker thread's stacks go on past Worker to the method that
    called it, CoreLib's ReadyToRun Thread.StartCallback (then the runtime's
    native frames), in at least `least` of them; after an attach the map
    learns ReadyToRun code only from sampled addresses, and StartCallback,
    never a leaf, used to end none of them: every stack stopped at Worker.
    No other method is ever shown as Worker's caller. A native frame right
    after Worker is the frame-pointer chain skipping StartCallback (from a
    native leaf, the chain reaches Worker's tier-0 code with the RBP
    StartCallback saved: 0-4 of 2000 samples, before the change too); a
    stack ending at Worker stopped there."""
    n = whole = ends = skips = 0
    wrong = Counter()
    for kind, count, _, frames, dbg in log.records:
        at = [i for i, x in enumerate(dbg or []) if re.search(r"Program::Worker$", x)]
        if not at or len(dbg) == 1:
            continue  # no Worker, or the leaf alone (unwalked)
        n += count
        i = at[-1]
        if i + 1 == len(dbg):
            ends += count
        elif dbg[i + 1] == "System.Threading.Thread::StartCallback":
            whole += count
        elif SPECIAL.match(frames[i + 1]) or NATIVE.match(frames[i + 1]):
            skips += count
        else:
            wrong[dbg[i + 1]] += count
    ok(n > 0 and not wrong and whole >= least * n,
       "Worker's caller: %d samples, %d (%.1f%%, at least %.0f%% wanted) through Thread.StartCallback, "
       "%d end at Worker, %d go on in native code, %d another caller%s"
       % (n, whole, 100.0 * whole / max(n, 1), 100 * least, ends, skips, sum(wrong.values()),
          (": " + "; ".join("%s (%d)" % kv for kv in wrong.most_common(3))) if wrong else ""))


def mode_names(log, exp, coverage=True):
    """coverage: every case of the workload was sampled. The workload gives
    each case the same CPU time, 120 ms at least (data/profiler/Workload,
    RunNames), which makes that near certain while the machine has a CPU
    for the program; names.sh and attach.sh check it. The tests that reuse
    the workload for something else (OSR callers, a starved drain thread,
    the handler's probe, a tree of processes, LD_BIND_NOW: mode "named")
    do not: they run beside busy processes, and the kernel checks CPU-time
    timers only at ticks that find the thread running (doc/profile-log.md,
    "Sample counts"), which on a loaded machine can be one signal for
    100 ms of the thread's CPU or more: a case may go unsampled."""
    names, facts = exp
    check_format(log, "sample")
    mvids = set(facts["module"])
    ok(len(mvids) == 1, "the program printed its module's MVID")
    seen = check_names(log, names, mvids, "names")
    s = log.stats or {}
    for n in sorted(names):
        if coverage and re.search(r"::(Work|Deep|Mix)<|::(Spin|Leaf)$|^Mdp\.Work\.Gen\+Plain<.*>::Run$", n[1]):
            ok(seen[n] > 0, "sampled: %s (%d; %s samples in %s signals)"
               % (n[1], seen[n], s.get("samples"), s.get("signals")))
    # The caller of a leaf without a frame of its own is not skipped.
    callers(log, r"Program::Leaf$", r"Program::Mid$", "Leaf is called from Mid", need=coverage)
    # Gen.Work and Gen+Inner.Deep are called only by Round and Worker: a
    # sampled leaf in them shows one of those as its caller (the unwinder
    # through RSP frames, OSR frames and tier transitions).
    callers(log, r"::(Work|Deep)<", r"Program::(Round|Worker)$", "Work and Deep are called from Round or Worker")
    thread_root(log, 0.95)
    if log.header.get("attach") != "1":
        # at startup every thread registers itself, with its stack bounds
        ok(s.get("unwalked", 1) == 0, "no sample of the leaf alone at startup (unwalked=%s)" % s.get("unwalked"))
    # Framework code over a type of the program (CoreLib, reached through
    # System.Runtime's forwarders), named in-process.
    corelib = set(facts["corelib"])
    fw = sum(c for k, c, _, fr, dbg in log.records if dbg
             for f, n in zip(fr, dbg)
             if frame_key(f) and frame_key(f)[0] in corelib and "<Mdp.Work.Point>" in n and "{" in f)
    if coverage:
        ok(fw > 0, "framework frames instantiated over Mdp.Work.Point, in CoreLib with a descriptor (%d)" % fw)
    ok(s.get("threads", 0) >= 2, "threads=%d (two program threads at least)" % s.get("threads", 0))
    ok(s.get("unknown", 1) == 0, "no unknown frames (%d)" % s.get("unknown", -1))
    ok(s.get("samples", 0) >= 300, "enough samples to mean something (%d)" % s.get("samples", 0))
    if log.header.get("attach") != "1":
        # classes are learnt when a frame names them, not at every load:
        # the program's and the framework's frames name a few dozen of the
        # hundreds the runtime loads (an attach counts loads since it came)
        loaded, known = s.get("classes.loaded", 0), s.get("classes.known", 1 << 30)
        ok(loaded >= 200 and known <= loaded // 4,
           "classes learnt when named: %s known of %s loaded" % (known, loaded))


def mode_osr(log, exp):
    """The names workload held at tier 0: its loops run in OSR code."""
    mode_names(log, exp, coverage=False)
    # every sampled leaf in Work, Deep, Mix or Gen+Plain.Run shows the
    # method that really called it (all run in OSR code here)
    callers(log, r"::(Work|Deep|Mix)<|^Mdp\.Work\.Gen\+Plain<.*>::Run$", r"Program::(Round|Worker)$",
            "OSR frames show their real caller (Round or Worker)")


def mode_starved(log, exp):
    """The names workload with a drain thread that does not run until the
    end: mode_names's checks all hold. How many signals a busy machine
    delivers varies, so whether the buffers fill does (test_core drops a
    sample without room exactly); the ReadyToRun code the runtime reports
    before publishing it (List.Sort, Linq) is recorded on a drain tick, so
    every sample in it is learnt late."""
    mode_names(log, exp, coverage=False)
    s = log.stats or {}
    ok(s.get("drains") == 0, "the drain thread did not drain before the end (drains=%s; %s frames learnt "
       "late, %s samples dropped)" % (s.get("drains"), s.get("late"), s.get("drops")))


def mode_attach(log, exp):
    mode_names(log, exp)
    s = log.stats or {}
    ok(log.header.get("attach") == "1", "header says attach=1")
    # The catch-up enumerated the JIT-compiled code: most frames were known
    # to the map when sampled, not learnt later through the miss callback.
    ok(s.get("late", 1 << 30) <= 0.015 * s.get("managed", 0),
       "frames learnt after their sample: %s of %s managed" % (s.get("late"), s.get("managed")))


def mode_reattach(log, exp):
    """One of several sessions attached in turn to one process: every
    frame named as the program names it, each session on its own (whether
    a short session sampled every case is attach.sh's to check)."""
    mode_names(log, exp, coverage=False)
    ok(log.header.get("attach") == "1", "header says attach=1")


def mode_plugins(log, exp):
    names, facts = exp
    check_format(log, "sample")
    plug = dict(x.split(" ") for x in facts["plugin"])
    cpu = {k: int(v) for k, v in (x.split(" ") for x in facts["cpu"])}
    unloaded = dict(x.split(" ") for x in facts["unloaded"])
    ok(set(plug) == {"A", "B"} and plug["A"] != plug["B"], "two plug-ins named Plugin with different MVIDs")
    ok(unloaded.get("A") == "yes" and unloaded.get("B") == "yes", "both AssemblyLoadContexts unloaded: %s" % unloaded)
    check_names(log, names, set(plug.values()), "plug-ins")
    # samples (not frames) with some frame of each plug-in
    w = {k: sum(c for _, c, _, fr, _ in log.records if any(f.startswith(plug[k] + ":") for f in fr))
         for k in plug}
    for k in sorted(plug):
        ok(w[k] > 0, "plug-in %s sampled under its own MVID (%d samples, %d ms CPU)" % (k, w[k], cpu.get(k, 0)))
    # Each plug-in's samples match its CPU time: samples of B's code named
    # after A (A's map entries surviving A's unload) would inflate A.
    rate = int(log.header.get("rate", "1000"))
    for k in sorted(plug):
        want = cpu.get(k, 0) * rate / 1000.0
        ok(want > 0 and 0.33 * want <= w[k] <= 1.5 * want + 20,
           "plug-in %s: %d samples for %d ms of CPU at %d Hz" % (k, w[k], cpu.get(k, 0), rate))
    s = log.stats or {}
    ok(s.get("unknown", 1) == 0,
       "no unnamed frames, none from code unloaded before its samples were drained (%s)" % s.get("unknown"))


def plugins_offline(framed, facts):
    """Both plug-ins are named Plugin: batch found each by its MVID among
    the plug-ins' build outputs, as its source lines show (each plug-in's
    PDB names the source file in its own project folder)."""
    plug = dict(x.split(" ") for x in facts["plugin"])
    for k in sorted(plug):
        frames = [o for _, fr in framed for f, o, _ in fr if f.startswith(plug[k] + ":")]
        where = Counter("%s %s" % (o.get("assembly"), os.path.basename(os.path.dirname(o.get("file", ""))))
                        for o in frames)
        ok(frames and set(where) == {"Plugin Plugin" + k},
           "plug-in %s resolved from its own file: %d frames, assembly and source folder %s"
           % (k, len(frames), dict(where)))


def program_mvids(mode, facts):
    """The modules whose every frame the program named (none in alloc
    mode: there it named the types it counted)."""
    if "alloc" in mode.split(","):
        return set()
    mvids = set(facts["module"])
    if mode == "plugins":
        mvids |= {x.split(" ")[1] for x in facts["plugin"]}
    return mvids


def main():
    argv = sys.argv[1:]
    dirs = []
    if "--assemblies" in argv:
        k = argv.index("--assemblies")
        argv, dirs = argv[:k], argv[k + 1:]
    if len(argv) < 2 or (argv[0] != "format" and len(argv) < 3):
        print(__doc__)
        return 2
    mode, path = argv[0], argv[1]
    log = Log(path)
    if mode == "format":
        check_format(log, log.header.get("mode", "sample"))
    else:
        exp = read_expected(argv[2])
        {"names": mode_names, "osr": mode_osr, "attach": mode_attach, "reattach": mode_reattach,
         "plugins": mode_plugins, "calls": mode_calls,
         "callnames": mode_callnames, "alloc": mode_alloc, "sample,alloc": mode_sample_alloc, "starved": mode_starved,
         "handler": lambda log, exp: mode_names(log, exp, coverage=False),
         "named": lambda log, exp: mode_names(log, exp, coverage=False)}[mode](log, exp)
        if dirs:
            names, facts = exp
            got = offline.resolve(ok, path, log, names, facts, program_mvids(mode, facts), dirs)
            if got and mode == "plugins":
                plugins_offline(got, facts)
    return mdtcheck.closing()


def call_counts(log):
    """(frame, in-process name) -> [enters, leaves, tailcalls, unwinds]."""
    got = defaultdict(lambda: [0, 0, 0, 0])
    for (kind, count, _, frames, dbg), exits in zip(log.records, log.exits):
        if dbg:
            c = got[(frames[0], dbg[0])]
            for i, v in enumerate((count,) + (exits or (0, 0, 0))):
                c[i] += v
    return got


def balanced(log, got, mvids, what):
    """Every method of the program's modules was left as often as it was
    entered (returned, tail-called or unwound): the program's methods have
    all ended when the runtime shuts down. None in any module has more
    exits than enters (check_format)."""
    own = {k: c for k, c in got.items() if frame_key(k[0]) and frame_key(k[0])[0] in mvids}
    bad = ["%s %s" % (k[1], c) for k, c in own.items() if c[0] != c[1] + c[2] + c[3]]
    ok(own and not bad, "%s: every method of the program entered as often as it was left "
       "(%d methods, %d not%s)" % (what, len(own), len(bad), (": " + "; ".join(bad[:4])) if bad else ""))


def mode_calls(log, exp):
    """Exact enters and exits: returns, a tail call (Counted.Forward), an
    exception passing through (Pass, Throw), caught in the method that threw
    it (Rescue), caught by the caller (Calls: not unwound)."""
    names, facts = exp
    check_format(log, "calls")
    mvids = set(facts["module"])
    check_names(log, names, mvids, "calls")
    got = call_counts(log)
    for fact in facts["calls"]:
        frame, name, *want = fact.split(" ")
        want = [int(x) for x in want]
        have = got.get((frame, name))
        ok(have == want, "calls of %s (%s): enters, leaves, tail calls, unwinds %s (expected %s)"
           % (name, frame, have, want))
    balanced(log, got, mvids, "calls")


def mode_callnames(log, exp):
    """The names workload in calls mode. A sample may miss a method that
    runs rarely (a constructor); the enter hook does not: every method of
    the program that was entered is one the program named (the expected
    names are complete), and every instantiation it named as it ran (a
    frame with type arguments) was entered."""
    names, facts = exp
    check_format(log, "calls")
    mvids = set(facts["module"])
    check_names(log, names, mvids, "callnames")
    got = call_counts(log)
    entered = {(re.sub(r"@0x[0-9a-f]+$", "", f), n) for f, n in got}
    ran = sorted(n for n in names if re.search(r"[{<]", n[0]))
    missing = [n[1] for n in ran if n not in entered]
    ok(ran and not missing, "callnames: every instantiation the program named as it ran was entered "
       "(%d, %d not%s)" % (len(ran), len(missing), (": " + "; ".join(missing[:4])) if missing else ""))
    ctors = [n for n in ran if n[1].endswith("::.ctor")]
    ok(len(ctors) >= 3, "callnames: the generic classes' constructors among them (%d)" % len(ctors))
    balanced(log, got, mvids, "callnames")


def mode_alloc(log, exp, mode="alloc"):
    names, facts = exp
    check_format(log, mode)
    got = {}
    for kind, count, nbytes, frames, dbg in log.records:
        if kind == "alloc" and dbg:
            c, b = got.get((frames[0], dbg[0]), (0, 0))
            got[(frames[0], dbg[0])] = (c + count, b + nbytes)
    # arrays of pointers: counted, honestly unnamed
    ptrs = sum(int(x) for x in facts["undescribed"])
    unnamed = sum(count for kind, count, _, frames, _ in log.records
                  if kind == "alloc" and frames == ["unknown:nomvid"])
    ok(ptrs > 0 and unnamed == ptrs,
       "arrays of pointers and function pointers: %d objects as unknown:nomvid (expected %d)" % (unnamed, ptrs))
    for fact in facts["alloc"]:
        desc, name, want = fact.split(" ")
        c, b = got.get((desc, name), (0, 0))
        ok(c == int(want) and b > 0 and b % c == 0,
           "allocations of %s (%s): %d objects, %d bytes (expected %s objects of one size)"
           % (name, desc, c, b, want))


def mode_sample_alloc(log, exp):
    """--mode sample,alloc: one log with both modes' records; the
    allocations as exact as in alloc mode alone, and stacks sampled."""
    mode_alloc(log, exp, "sample,alloc")
    stacks = [r for r in log.records if r[0] == "stack"]
    ok(len(stacks) > 0 and all(all(valid_frame(f) for f in r[3]) for r in stacks),
       "sample,alloc: %d stack records, every frame valid" % len(stacks))


if __name__ == "__main__":
    sys.exit(main())
