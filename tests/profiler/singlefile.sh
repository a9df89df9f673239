#!/bin/sh
# A single-file app (data/profiler/Workload published with
# -p:PublishSingleFile=true, framework-dependent): the runtime loads its
# assemblies from the bundle, under paths relative to it, so no file on
# disk holds them. The profiled names workload must name every frame as
# the program names itself (check.py names, in-process); the log's header
# must name the bundle (bundles=, the executable); and offline, mdinspect
# batch must name every frame the same from the bundle alone (no -a: the
# header's bundles=; offline.py compares that with the run given the
# published build's output, which also serves reflection); the same with
# the bundle named by hand (-a APP), and mdinspect opening APP (its
# assemblies, APP!PATH each) and one of them by that name.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
src=$work/src/Single
out=$work/bin/Single
(
    flock 9
    if [ ! -f "$out/.stamp" ] || [ -n "$(find "$top/data/profiler/Workload" -newer "$out/.stamp" -type f | head -n 1)" ]; then
        rm -rf "$src" "$out"
        mkdir -p "$work/src"
        cp -R "$top/data/profiler/Workload" "$src"
        chmod -R u+w "$src"
        rm -rf "$src/obj" "$src/bin"
        (cd "$src" && env -u LD_PRELOAD dotnet publish -c Release -r linux-x64 --self-contained false \
            -p:PublishSingleFile=true -nologo -v q -nodeReuse:false -p:UseSharedCompilation=false \
            -o "$out" >"$src.publish.log" 2>&1) || exit 3
        touch "$out/.stamp"
    fi
) 9>"$work/.single.lock" || { cat "$src.publish.log" >&2; skip "dotnet publish of a single-file app failed (is the linux-x64 apphost pack there?)"; }
[ "$(uname -m)" = x86_64 ] || skip "the published app is for linux-x64"
[ -x "$out/Workload" ] && [ ! -e "$out/Workload.dll" ] || fail "the publish left no single-file app in $out"
rid=$src/bin/Release/net10.0/linux-x64
[ -f "$rid/Workload.dll" ] || fail "no $rid/Workload.dll (the published build's output)"
log=$work/single.log
profile "$log" --debug-names -- "$out/Workload" names "$work/single.expected" 2500 \
    >"$work/single.out" 2>&1 || { cat "$work/single.out" >&2; fail "the profiled run failed"; }
head -n 1 "$log" | tr ' ' '\n' | grep -qx "bundles=$out/Workload" ||
    fail "the header names no bundle: $(head -n 1 "$log" | cut -c1-400)"
check names "$log" "$work/single.expected" --assemblies "$rid"
# the bundle named by hand (-a APP, the log's folders off), and opened by
# mdinspect: its assembly as APP!Workload.dll
mdi=$build/mdinspect/mdinspect
fw=$(head -n 1 "$log" | tr ' ' '\n' | sed -n 's/^framework=//p')
n=$("$mdi" batch --no-progress --no-log-folders -a "$out/Workload" -a "$fw" <"$log" | grep -c 'unresolved' || true)
[ "$n" = 0 ] || fail "mdinspect batch -a APP -a FRAMEWORK: $n lines unresolved"
n=$("$mdi" batch --no-progress --no-log-folders -a "$fw" <"$log" 2>/dev/null | grep -c 'unknown MVID (Workload' || true)
[ "$n" -gt 0 ] || fail "without the bundle, the app's frames were named all the same"
"$mdi" -c modules "$out/Workload" | grep -q "$out/Workload!Workload.dll" ||
    fail "mdinspect APP does not list APP!Workload.dll: $("$mdi" -c modules "$out/Workload" 2>&1 | head -5)"
"$mdi" -c 'find Program' "$out/Workload!Workload.dll" | grep -q 'Mdp.Work.Program' ||
    fail "mdinspect APP!Workload.dll does not open the bundled assembly"
echo "PASS mdinspect batch -a APP, mdinspect APP and APP!Workload.dll"
# PATH TOKEN lines naming APP!MEMBER: batch opens the bundled assembly
# without -a (a member that is not there is unresolved, and says so)
line=$(grep -m 1 ' Mdp\.Work\.Program::Spin$' "$work/single.expected") ||
    fail "single.expected names no Program::Spin"
tok=${line%% *}
tok=${tok#*:}
got=$(printf '%s %s\n%s!Nope.dll %s\n' "$out/Workload!Workload.dll" "$tok" "$out/Workload" "$tok" |
    "$mdi" batch --no-progress --no-log-folders 2>/dev/null || true)
want=$(printf 'Mdp.Work.Program::Spin\n[unresolved: unknown file]')
[ "$(printf '%s\n' "$got" | sed 's/ (.*)$//')" = "$want" ] ||
    fail "batch on APP!MEMBER TOKEN lines: got '$got', want '$want'"
echo "PASS mdinspect batch on APP!Workload.dll TOKEN lines (and a member not there)"
