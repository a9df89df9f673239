#!/bin/sh
# IL maps of ReadyToRun code read from the mapped image (issue 24): a
# `dotnet build` (MSBuild and the C# compiler run mostly ReadyToRun code of
# the SDK and the shared framework) profiled with MDPROFILE_ILMAPS=check,
# which asks the runtime too (GetILToNativeMapping3) for every ReadyToRun
# code version a sample names and compares the two lists entry for entry.
# Every process's #stats must count hundreds of maps compared and not one
# disagreement. The same check asks both ways for the method of every
# sampled ReadyToRun address nobody reported (the map's miss: the image's
# entry points against GetFunctionFromIP3 and GetFunctionInfo2): hundreds
# compared, none differing. Then the Workload with the default (image) and
# MDPROFILE_R2RNAMES=image: its ReadyToRun maps and methods come from the
# image, the runtime asked only for the rest.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
src=$work/ilmaps-src
# (not ilmaps*.log: the test driver writes this test's own ilmaps.sh.log there)
rm -rf "$src" "$work"/ilmaps.log "$work"/ilmaps.[0-9]*.log "$work"/ilmaps-default.log
cp -R "$top/data/profiler/PluginA" "$src"
chmod -R u+w "$src"
rm -rf "$src/obj" "$src/bin"
(cd "$src" && export MDPROFILE_ILMAPS=check && profile "$work/ilmaps.log" --rate 1000 -- \
    dotnet build -c Release -nologo -v q -nodeReuse:false -p:UseSharedCompilation=false \
    >"$work/ilmaps.out" 2>&1) || { cat "$work/ilmaps.out" >&2; fail "the profiled build failed"; }
python3 - "$work"/ilmaps.log "$work"/ilmaps.[0-9]*.log <<'PY' || fail "IL maps from the image and the runtime differ"
import re, sys
tot = {"image": 0, "agree": 0, "disagree": 0, "runtime": 0}
names = {"agree": 0, "disagree": 0, "runtime": 0, "image": 0}
for path in sys.argv[1:]:
    text = open(path, encoding="utf-8", errors="replace").read()
    st = [l for l in text.splitlines() if l.startswith("#stats ")]
    if not st:
        sys.exit(f"{path}: no #stats line")
    kv = dict(re.findall(r"(\S+)=(\S+)", st[-1]))
    if "ilmaps.agree" not in kv:
        sys.exit(f"{path}: #stats without ilmaps.agree (ilmaps=check not in effect)")
    for k in tot:
        tot[k] += int(kv["ilmaps." + k])
    if "r2rnames.agree" not in kv:
        sys.exit(f"{path}: #stats without r2rnames.agree")
    for k in names:
        names[k] += int(kv["r2rnames." + k])
    for l in text.splitlines():
        if l.startswith("#") and ("IL map of the code" in l or "ReadyToRun method at" in l):
            print(f"{path}: {l}", file=sys.stderr)
print(f"{len(sys.argv) - 1} processes: IL maps {tot}, methods {names}")
if names["disagree"]:
    sys.exit(f"{names['disagree']} ReadyToRun methods named differently from the image")
if names["image"]:
    sys.exit("methods named from the image under ilmaps=check (the runtime's are kept)")
if names["agree"] < 300:
    sys.exit(f"only {names['agree']} ReadyToRun methods compared (a build names 1,000s)")
if tot["disagree"]:
    sys.exit(f"{tot['disagree']} maps differ")
if tot["agree"] != tot["image"]:
    sys.exit("maps read from the image but not compared")
if tot["agree"] < 300:
    sys.exit(f"only {tot['agree']} ReadyToRun maps compared (a build names 1,000s)")
PY
log=$work/ilmaps-default.log
# --clock auto: the perf clock where the kernel allows it, ~4x the timer's
# samples, so that modules reach the 16 misses that open their entry points
MDPROFILE_R2RNAMES=image profile "$log" --clock auto -- dotnet "$workload" threads "$work/ilmaps-default.expected" \
    >"$work/ilmaps-default.out" 2>&1 || { cat "$work/ilmaps-default.out" >&2; fail "the profiled run failed"; }
grep -h '^#mdprofile \|^#stats ' "$log" | python3 -c '
import re, sys
kv = dict(re.findall(r"(\S+)=(\S+)", sys.stdin.read()))
print("default:", {k: v for k, v in kv.items() if k.startswith("ilmaps")})
if "ilmaps.agree" in kv:
    sys.exit("ilmaps.agree without ilmaps=check")
if int(kv.get("ilmaps.image", 0)) < 5:
    sys.exit("the ReadyToRun maps did not come from the image")
if kv.get("cpu_clock") == "timer":
    # ~250 samples a CPU second: a module of this short run may not reach
    # 16 misses; the build above compared the naming both ways
    print("not checked here: methods named from the image (the timer clock: too few samples)")
elif int(kv.get("r2rnames.image", 0)) < 1:  # a short run: few modules reach 16 misses
    sys.exit("the ReadyToRun methods were not named from the image")
' || fail "the default did not read IL maps from the image"
