"""The offline half of the profiler's tests: resolve an mdprofile log the way
a user does, with `mdinspect batch --assemblies DIR...` after the process
has gone, and check every answer (check.py calls this with its `ok`).

The assemblies are the test programs' build output and the shared framework
of the `dotnet` that ran the program: the folder the log's header names
(`framework=`, where the core library was loaded from), which must be the
Microsoft.NETCore.App folder `dotnet --list-runtimes` lists for the
header's runtime version.

Checked, for the text, JSON, folded and speedscope outputs of batch (and,
for the text, batch with no --assemblies at all: the log's own folders):
- batch exits 0 in every format, and every line of the log has its line
  in the text and JSON outputs, of the same kind, count and bytes (and, for
  a format-2 call record, leaves, tail calls and unwinds);
- every method or type frame resolved (status "ok", the log's MVID and
  token, the log's IL offset); a special frame comes back as the special
  frame the log wrote, nothing else is unresolved;
- every resolved name equals (1) the name the program printed about the
  running method through reflection (the expected file's "FRAME NAME",
  normalised as data/profiler/README.md says), for every frame of the
  program's own modules, (2) the name reflection gives the frame's MVID,
  token and descriptors after the run (`Workload reflect`, Resolve.cs),
  for every frame, framework code included, and (3) the profiler's
  in-process debug name;
- the text output is the JSON output printed as text; the folded stacks are
  the text's frames root first with the count; the speedscope profile
  holds the same stacks (names and source lines) with the same weights;
- the --pprof file, read back by protobuf-c's decoder (tests/batch/pprof_read,
  which checks it is a well-formed profile), holds the text's stacks
  (names, system names: the log's frames without IL offsets, source lines)
  with their counts, and the log's pid as label.

Outputs stay beside the log (LOG minus .log, plus .batch.txt, .batch.json,
.bare.txt, .folded, .speedscope.json, .pb.gz, .pprof.json, .frames, .reflect) for a
look after a failure."""
import json
import os
import re
import subprocess
from collections import Counter
from urllib.parse import unquote

SPECIAL = re.compile(r"^(native|unmanaged|dynamic|stub|truncated|unknown|state)(?::([a-z]+(?::[A-Za-z.]+)?))?$")
# wall mode's states as batch prints them (doc/profile-log.md, "Wall time")
STATES = {"running": "running", "sleeping": "sleeping", "native": "in native code",
          "syscall": "blocked in syscall"}


def state_text(reason):
    if reason.startswith("waiting:"):
        return "[waiting: %s]" % reason[8:]
    return "[%s]" % STATES.get(reason, reason)
# native[:NAME:BUILDID+0xOFF][!ACTIVITY] (format 3)
NATIVE = re.compile(r"^native(?::([^:!\s]+):([0-9a-f]*)\+0x([0-9a-f]+))?(?:!([a-z-]+))?$")
METHOD = re.compile(r"^([0-9a-f]{32}):(0x06[0-9a-f]{6})")
ILOFS = re.compile(r"@0x([0-9a-f]+)$")


def framework_dir(runtime):
    """The Microsoft.NETCore.App directory of that version under the
    `dotnet` on PATH, or None."""
    out = subprocess.run(["dotnet", "--list-runtimes"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"^Microsoft\.NETCore\.App (\S+) \[(.*)\]$", line)
        if m and m.group(1) == runtime:
            return os.path.join(m.group(2), m.group(1))
    return None


def bare(frame):
    return ILOFS.sub("", frame)


def run_batch(mdinspect, dirs, log, fmt, out):
    args = [mdinspect, "batch", "--no-progress"]
    for d in dirs:
        args += ["--assemblies", d]
    if fmt:
        args.append(fmt)
    with open(log, "rb") as i, open(out, "wb") as o:
        r = subprocess.run(args, stdin=i, stdout=o, stderr=subprocess.PIPE)
    return r.returncode, r.stderr.decode("utf-8", "replace").strip()


def frame_text(o):
    """A JSON frame as the text format prints it."""
    if o.get("status") == "native" and ("name" in o or "module" in o):
        return o["name"] if "name" in o else "%s+%s" % (o["module"], o["offset"])
    if o.get("status") == "ok":
        if "file" in o:
            return "%s (%s:%d)" % (o["name"], o["file"], o["line"])
        return o["name"]
    if o.get("status") == "state" and "reason" in o:
        return state_text(o["reason"])
    if "reason" in o:
        return "[%s:%s]" % (o["status"], o["reason"])
    if SPECIAL.match(o.get("status", "")):
        return "[%s]" % o["status"]
    return "[unresolved: %s]" % o.get("status")


def frame_name(o):
    """A JSON frame's name as folded and speedscope print it."""
    return o["name"] if o.get("status") == "ok" else frame_text(o)


def check_frame(f, o, why):
    """One log frame against its JSON frame; appends problems to why."""
    nm = NATIVE.match(f)
    if nm:
        check_native(nm, o, why)
        return
    sp = SPECIAL.match(f)
    if sp:
        if o.get("status") != sp.group(1) or o.get("reason") != sp.group(2) or "name" in o:
            why.append("%s came back as %s" % (f, json.dumps(o)))
        return
    if o.get("status") != "ok" or "name" not in o:
        why.append("%s did not resolve: %s" % (f, json.dumps(o)))
        return
    m = METHOD.match(f)
    if m:
        il = ILOFS.search(f)
        if o.get("mvid") != m.group(1) or o.get("token") != m.group(2) or \
           o.get("il_offset") != (int(il.group(1), 16) if il else None):
            why.append("%s resolved as mvid %s token %s il_offset %s" %
                       (f, o.get("mvid"), o.get("token"), o.get("il_offset")))


def check_native(nm, o, why):
    """A native frame: status "native"; its file's name, build-id and
    offset as the log says; "activity" as the log says; "name" where a
    symbol or the activity names it (the text form of both)."""
    name, bid, off, act = nm.groups()
    f = nm.group(0)
    bad = o.get("status") != "native" or o.get("activity") != act
    if name:
        bad |= o.get("module") != unquote(name) or o.get("build_id") != bid or \
            o.get("offset") != "0x" + off
    else:
        bad |= any(k in o for k in ("module", "build_id", "offset", "symbol"))
    sym = o.get("symbol")
    if sym or act:
        want = ("[%s]" % act if act else "") + (" " if act and name else "")
        if name:
            want += name + ("!" + sym if sym else "+0x" + off)
        bad |= o.get("name") != want
    else:
        bad |= "name" in o
    if bad:
        why.append("%s came back as %s" % (f, json.dumps(o)))


def check_outputs(ok, log, text, js, folded, sscope):
    """Statuses and the four formats against each other. Returns the JSON
    frames per record: [(log frame, JSON frame, debug name or None)], and those the
    flame-graph formats and pprof hold (not the exact alloc records of a log with
    sampled allocation stacks)."""
    ok(len(js) == len(log.items) and len(text) == len(log.items),
       "batch: one text and one JSON line per log line (%d log, %d text, %d JSON)"
       % (len(log.items), len(text), len(js)))
    framed = []
    flame = []
    why = []
    mismatch = []
    for n, ((kind, line, count, nbytes, frames, exits), t, j) in enumerate(zip(log.items, text, js), 1):
        if kind in ("header", "stats", "comment"):
            # a #module or #frameworks line: a comment to a reader that does
            # not know it, or a kind of its own
            kinds = (kind, "module", "frameworks") if kind == "comment" else (kind,)
            if j.get("kind") not in kinds or t != line:
                why.append("line %d: %s line came back as %s / %r" % (n, kind, j.get("kind"), t[:80]))
            continue
        jexits = tuple(j.get(k) for k in ("leaves", "tailcalls", "unwinds"))
        if j.get("kind") != kind or j.get("count") != count or \
           (kind in ("alloc", "astack") and j.get("bytes") != nbytes) or \
           jexits != (exits or (None, None, None)):
            why.append("line %d: %s %d %d %s came back as %s" % (n, kind, count, nbytes, exits, json.dumps(j)[:200]))
            continue
        # an astack record: its type, then its stack
        objs = j.get("frames", []) if kind == "stack" else \
            [j.get("type", {})] + j.get("frames", []) if kind == "astack" else [j]
        if len(objs) != len(frames):
            why.append("line %d: %d frames for %d" % (n, len(objs), len(frames)))
            continue
        for f, o in zip(frames, objs):
            check_frame(f, o, why)
        ts = (j.get("tid"), j.get("slice")) if "tid" in j else None
        want = "%s %d%s%s%s\t%s" % (kind, count, " %d" % nbytes if kind in ("alloc", "astack") else "",
                                    " %d %d" % ts if ts else "",
                                    " %d %d %d" % exits if exits else "", "\t".join(frame_text(o) for o in objs))
        if kind == "stack" and line.split(" ")[2].isdigit() and \
           ts != tuple(int(x) for x in line.split(" ")[2:4]):
            why.append("line %d: thread and slice %s came back as %s" % (n, line.split(" ")[2:4], ts))
        if t != want:
            mismatch.append("line %d: text %r, JSON says %r" % (n, t[:120], want[:120]))
        dbg = line.split("\t")[1:] or [None] * len(frames)
        framed.append((count, list(zip(frames, objs, dbg))))
        # a log with sampled allocation stacks (alloc_sample=): the flame
        # graphs and pprof take its astack records, not its exact alloc
        # records too
        if not (kind == "alloc" and int(log.header.get("alloc_sample", "0") or 0)):
            flame.append(framed[-1])
    ok(not why, "batch: every record and frame resolved as the log says (%d problems%s)"
       % (len(why), (": " + "; ".join(why[:4])) if why else ""))
    ok(not mismatch, "batch: the text output is the JSON output as text (%d differ%s)"
       % (len(mismatch), (": " + "; ".join(mismatch[:3])) if mismatch else ""))
    # folded: per record, names root first (a ";" in a name becomes ":"), a
    # space, the count
    want = ["%s %d" % (";".join(frame_name(o).replace(";", ":") for _, o, _ in reversed(fr)), c)
            for c, fr in flame]
    diff = [(a, b) for a, b in zip(folded, want) if a != b]
    ok(len(folded) == len(want) and not diff,
       "folded: %d lines, the text's stacks root first with their counts (%d records, %d differ%s)"
       % (len(folded), len(want), len(diff), (": %r is not %r" % diff[0]) if diff else ""))
    # speedscope: the same stacks with source lines, the same weights
    want = Counter()
    for c, fr in flame:
        want[tuple((frame_name(o), o.get("file"), o.get("line")) for _, o, _ in reversed(fr))] += c
    got = Counter()
    try:
        shared = sscope["shared"]["frames"]
        profs = sscope["profiles"]
        # format 4: a profile per thread in milliseconds (count x 1000/rate),
        # empty samples for the idle time between slices; else one profile
        # of counts
        # (of stack records); the records of another kind in a log of
        # several modes (mode=sample,alloc) a profile of counts per process
        mixed = any(k not in ("stack", "header", "stats", "comment") for k, *_ in log.items)
        units = ("milliseconds", "none") if log.format >= 4 and mixed else \
            ("milliseconds",) if log.format >= 4 else ("none",)
        shape = all(p["type"] == "sampled" and len(p["samples"]) == len(p["weights"]) and
                    p["unit"] in units for p in profs) and \
            (len(profs) == 1 or log.format >= 4)
        for prof in profs:
            period = 1000.0 / int(log.header.get("rate", "1000")) if prof["unit"] == "milliseconds" else 1
            for s, w in zip(prof["samples"], prof["weights"]):
                if s:
                    got[tuple((shared[i]["name"], shared[i].get("file"), shared[i].get("line"))
                              for i in s)] += round(w / period)
    except (KeyError, IndexError, TypeError) as e:
        shape = False
        got = Counter({("bad speedscope file: %r" % e,): 1})
    ok(shape and got == want,
       "speedscope: sampled profiles (one, or one per thread) with the text's stacks (names and lines) and counts "
       "(%d distinct stacks, %d in the text, total weight %d of %d)"
       % (len(got), len(want), sum(got.values()), sum(want.values())))
    return framed, flame


def check_pprof(ok, log, framed, pb, reader, out):
    """The --pprof file against the text's stacks: names, system names (the
    log's frames without their IL offsets), files and lines, leaf first,
    with the counts summed; every sample labelled with the log's pid."""
    with open(out, "wb") as o:
        r = subprocess.run([reader, pb], stdout=o, stderr=subprocess.PIPE)
    if not ok(r.returncode == 0, "pprof: protobuf-c decodes a well-formed profile (%d %s)"
              % (r.returncode, r.stderr.decode("utf-8", "replace").strip()[:300])):
        return
    with open(out, encoding="utf-8") as fh:
        prof = json.load(fh)
    counts = [k for k, (t, _) in enumerate(prof["sample_type"]) if t in ("samples", "calls", "alloc_objects")]
    want = Counter()
    for c, fr in framed:
        want[tuple((frame_name(o), f if NATIVE.match(f) else bare(f), o.get("file"), o.get("line"))
                   for f, o, _ in fr)] += c
    got = Counter()
    pids = set()
    for smp in prof["samples"]:
        got[tuple((f["name"], f["system_name"], f["file"] or None, f["line"] or None)
                  for f in smp["frames"])] += sum(smp["values"][k] for k in counts)
        pids.add(smp["labels"].get("pid"))
    diff = sorted(set(got.items()) ^ set(want.items()))
    ok(got == want, "pprof: %d samples, the text's stacks (names, system names, lines) and counts "
       "(%d distinct in the text%s)" % (len(prof["samples"]), len(want), (": %r" % diff[:2]) if diff else ""))
    pid = log.header.get("pid")
    ok(not got or pids == {int(pid) if pid and pid.isdigit() else None},
       "pprof: every sample labelled with the log's pid %s (%r)" % (pid, sorted(map(str, pids))))


def check_names(ok, framed, expected, program, reflected, alloc_facts):
    """Every resolved name against reflection's and the in-process one."""
    own = Counter()
    bad_own = []
    bad_refl = []
    bad_dbg = []
    n = 0
    for c, fr in framed:
        for f, o, dbg in fr:
            if o.get("status") != "ok":
                continue
            n += 1
            key = bare(f)
            name = o["name"]
            m = METHOD.match(f)
            if m and m.group(1) in program:
                if expected.get(key) == name:
                    own[key] += 1
                else:
                    bad_own.append("%s is %s, the program said %s" % (key, name, expected.get(key)))
            if key in alloc_facts:
                if alloc_facts[key] == name:
                    own[key] += 1
                else:
                    bad_own.append("%s is %s, the program said %s" % (key, name, alloc_facts[key]))
            if reflected.get(key) != name:
                bad_refl.append("%s is %s, reflection says %s" % (key, name, reflected.get(key)))
            if dbg is not None and dbg.replace("\\t", "\t").replace("\\n", "\n").replace("\\\\", "\\") != name:
                bad_dbg.append("%s is %s, in-process %s" % (key, name, dbg))
    ok(not bad_own and sum(own.values()) > 0,
       "resolved names: every frame of the program's modules (and every allocated type it "
       "counted) has the name the program printed through reflection (%d frames, %d bad%s)"
       % (sum(own.values()), len(bad_own), (": " + "; ".join(bad_own[:3])) if bad_own else ""))
    ok(n > 0 and not bad_refl,
       "resolved names: every frame has the name reflection gives its MVID, token and descriptors "
       "(%d frames, %d distinct, %d bad%s)"
       % (n, len(reflected), len(bad_refl), (": " + "; ".join(bad_refl[:3])) if bad_refl else ""))
    ok(not bad_dbg, "resolved names: every name equals the profiler's in-process name (%d bad%s)"
       % (len(bad_dbg), (": " + "; ".join(bad_dbg[:3])) if bad_dbg else ""))


def resolve(ok, log_path, log, names, facts, program, dirs, reflector="Workload.dll"):
    """Resolve LOG offline and check it. log: check.py's parsed Log (its
    header and its lines in order, .items); names: the expected (FRAME, NAME)
    pairs; facts: the expected file's facts; program: the MVIDs of the
    modules whose every frame the program named; dirs: the test
    programs' build outputs; reflector: the program among them that names
    frames through reflection (`PROGRAM reflect`: Workload's, or one that
    can load what the frames' assemblies need)."""
    base = re.sub(r"\.log$", "", log_path)
    build = os.environ.get("MDT_BUILDDIR", "")
    mdinspect = os.environ.get("MDT_MDINSPECT", os.path.join(build, "mdinspect", "mdinspect"))
    # the header's folder of the core library, the same as the folder
    # `dotnet --list-runtimes` gives for the header's runtime version
    header = log.header
    fw = unquote(header.get("framework", ""))
    listed = framework_dir(header.get("runtime", ""))
    if not ok(fw and listed and os.path.isdir(fw) and os.path.realpath(fw) == os.path.realpath(listed),
              "the log's framework folder %r is the one dotnet --list-runtimes gives for runtime %s (%r)"
              % (fw, header.get("runtime"), listed)):
        return
    dirs = list(dirs) + [fw]
    outs = {}
    for fmt, suffix in ((None, ".batch.txt"), ("--json", ".batch.json"), ("--folded", ".folded"),
                        ("--speedscope", ".speedscope.json"), ("--pprof", ".pb.gz")):
        status, err = run_batch(mdinspect, dirs, log_path, fmt, base + suffix)
        ok(status == 0, "mdinspect batch %s exits 0 (%d%s)" % (fmt or "(text)", status, ": " + err if err else ""))
        if fmt != "--pprof":
            with open(base + suffix, encoding="utf-8") as fh:
                outs[suffix] = fh.read()
    text = outs[".batch.txt"].split("\n")[:-1]
    ok("[unresolved" not in outs[".batch.txt"] and "[malformed" not in outs[".batch.txt"],
       "text output: no [unresolved: ...] or [malformed ...] line")
    # with no folder given, the log's own (framework=, frameworks=, the
    # application's folders=) name every frame as well
    status, err = run_batch(mdinspect, [], log_path, None, base + ".bare.txt")
    with open(base + ".bare.txt", encoding="utf-8") as fh:
        bare_text = fh.read()
    ok(status == 0 and bare_text == outs[".batch.txt"],
       "mdinspect batch with no -a, from the log's folders alone: the same text (%d%s; %s)"
       % (status, ": " + err if err else "",
          next(("line %d: %r, with -a %r" % (i + 1, a[:100], b[:100])
                for i, (a, b) in enumerate(zip(bare_text.split("\n"), outs[".batch.txt"].split("\n")))
                if a != b), "same")))
    try:
        js = [json.loads(x) for x in outs[".batch.json"].split("\n")[:-1]]
        sscope = json.loads(outs[".speedscope.json"])
    except ValueError as e:
        ok(False, "batch JSON and speedscope outputs parse: %s" % e)
        return
    folded = outs[".folded"].split("\n")[:-1]
    framed, flame = check_outputs(ok, log, text, js, folded, sscope)
    check_pprof(ok, log, flame, base + ".pb.gz",
                os.environ.get("MDT_PPROF_READ", os.path.join(build, "tests", "batch", "pprof_read")),
                base + ".pprof.json")

    # reflection's names of every distinct frame, by the test program
    distinct = sorted({bare(f) for _, fr in framed for f, o, _ in fr
                       if not SPECIAL.match(f) and not NATIVE.match(f)})
    with open(base + ".frames", "w", encoding="utf-8") as fh:
        fh.write("".join(f + "\n" for f in distinct))
    workload = next(os.path.join(d, reflector) for d in dirs
                    if os.path.exists(os.path.join(d, reflector)))
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    r = subprocess.run(["dotnet", workload, "reflect", base + ".reflect", base + ".frames"] + dirs,
                       capture_output=True, text=True, env=env)
    reflected = {}
    if os.path.exists(base + ".reflect"):
        with open(base + ".reflect", encoding="utf-8") as fh:
            reflected = dict(x.split(" ", 1) for x in fh.read().split("\n") if x)
    unnamed = [k for k, v in reflected.items() if v.startswith("?")]
    ok(r.returncode == 0 and len(reflected) == len(distinct) and not unnamed,
       "reflection named all %d distinct frames (status %d, %d named, %d not%s%s)"
       % (len(distinct), r.returncode, len(reflected) - len(unnamed), len(unnamed),
          (": " + "; ".join("%s %s" % (k, reflected[k]) for k in unnamed[:3])) if unnamed else "",
          (": " + r.stderr.strip()[:300]) if r.stderr.strip() else ""))
    expected = dict(names)
    alloc_facts = {}
    for fact in facts.get("alloc", []):
        desc, name, _ = fact.split(" ")
        alloc_facts[desc] = name
    check_names(ok, framed, expected, program, reflected, alloc_facts)
    return framed
