#!/bin/sh
# Round trip (issue 26): `mdinspect il -a --ilasm` writes a fixture as ILAsm
# source, the .NET ILAsm (NuGet runtime.linux-x64.Microsoft.NETCore.ILAsm,
# fetched into the build tree by fetch-tool.sh; $ILASM to use another)
# assembles it, and the rebuilt module must equal the original as the
# library decodes both:
#  - tests/il/ilcmp.py: the two modules' ILAsm text, line for line as a
#    multiset within each declaration (names, flags, signatures, constants,
#    attribute blobs, bodies with operands named), heap offsets and the
#    numbering of references out of it;
#  - the row counts of the declaration tables (TypeDef, Field, MethodDef,
#    Param, InterfaceImpl, Constant, CustomAttribute, ClassLayout,
#    FieldLayout, Property, Event, MethodSemantics, MethodImpl, NestedClass,
#    GenericParam, GenericParamConstraint, AssemblyRef, ModuleRef, ImplMap,
#    FieldMarshal, DeclSecurity, FieldRVA).
#    TypeRef, MemberRef, TypeSpec and StandAloneSig may differ: an assembler
#    makes its own references.
# Fixtures that cannot round trip are listed below with the reason; each
# must still fail (so a fix is noticed). --mono also runs Mono's ilasm over
# the same fixtures and reports (without failing) where its output differs.
# Exit 77 when neither $ILASM nor dotnet to fetch it is there.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "roundtrip.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "roundtrip.sh: python3 is needed" >&2; exit 77; }
LC_ALL=C
export LC_ALL
ilasm=${ILASM:-}
if [ -z "$ilasm" ]; then
    ilasm=$("$here/fetch-tool.sh" ilasm "$build")
    rc=$?
    [ $rc -eq 0 ] || exit $rc
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdt-rt.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$top" || exit 99

# Fixtures that round trip, and those that do not (file: why).
good="data/sample/Hello.exe data/Shell.dll data/Sigs.dll
data/resources/Res.dll data/fwd/Real.dll data/fwd/Final.dll data/fwd/v1/Lib.dll
data/pdb/Lines.dll data/Everything.dll data/Marshal.dll data/MultiMain.dll data/decl/Decl.dll"
bad="tests/il/data/Opcodes.dll:no.-has-no-ILAsm-syntax"

tables="TypeDef Field MethodDef Param InterfaceImpl Constant CustomAttribute ClassLayout
FieldLayout Property Event MethodSemantics MethodImpl NestedClass GenericParam
GenericParamConstraint AssemblyRef ModuleRef ImplMap FieldMarshal DeclSecurity FieldRVA
File ExportedType ManifestResource"

. "$top/tests/common/check.sh"
# one FILE: 0 when it round trips, else 1 with the reason on stdout
one() {
    f=$1 asm=$2 tag=$3
    b=$tmp/$(basename "$f").$tag
    kind=-dll
    case $f in *.exe) kind=-exe ;; esac
    "$prog" -c 'il -a --ilasm' "$f" >"$b.il" 2>"$b.err" || { echo "il --ilasm failed: $(head -1 "$b.err")"; return 1; }
    # the assembler gets the module's own text: the modules its File table
    # names (opened with it) follow, each from its path comment on
    # embedded resources: the assembler reads each from a file of its name
    # beside the source (the .NET ILAsm) or in its working directory (Mono's)
    rm -rf "$b.res" && mkdir "$b.res" || return 1
    "$prog" -c "resources -x -a $b.res" "$f" >/dev/null 2>&1
    # the module's own text: the lines before the second module's header,
    # less the blank line that separates the two
    awk '/^\/\/ ILAsm source written by mdinspect/ && ++n == 2 { exit }
         { if (NR > 1) print prev; prev = $0 }
         END { if (n < 2 && NR > 0) print prev }' \
        "$b.il" >"$b.res/module.il"
    if [ "$tag" = mono ]; then
        (cd "$b.res" && "$asm" "/${kind#-}" "/output:$b.out" module.il) >"$b.log" 2>&1
    else
        (cd "$b.res" && "$asm" "$kind" "-output=$b.out" module.il) >"$b.log" 2>&1
    fi
    [ -f "$b.out" ] || { echo "the assembler refused it: $(grep -i -m1 error "$b.log")"; return 1; }
    # the other files of the assembly (.file) go beside the rebuilt module,
    # whose text then holds theirs as the original's does
    for n in $(sed -n 's/^\.file \(nometadata \)\{0,1\}\([^ ]*\).*/\2/p' "$b.il"); do
        [ -f "$(dirname "$f")/$n" ] && cp "$(dirname "$f")/$n" "$tmp/"
    done
    "$prog" -c 'il -a --ilasm' "$b.out" >"$b.re.il" 2>/dev/null
    python3 "$here/ilcmp.py" "$b.il" "$b.re.il" >"$b.cmp" || { echo "$(tail -1 "$b.cmp")"; head -5 "$b.cmp"; return 1; }
    for t in $tables; do
        a=$("$prog" -j -c tables "$f" | python3 -c "import sys,json
for l in sys.stdin:
    r=json.loads(l)
    if r.get('table')=='$t': print(r.get('rows'))")
        r=$("$prog" -j -c tables "$b.out" | python3 -c "import sys,json
for l in sys.stdin:
    r=json.loads(l)
    if r.get('table')=='$t': print(r.get('rows'))")
        [ "${a:-0}" = "${r:-0}" ] || { echo "$t: ${a:-0} rows, rebuilt ${r:-0}"; return 1; }
    done
    # manifest resources: names, visibility, where, and an embedded one's bytes
    for m in "$f" "$b.out"; do
        rm -rf "$b.x" && mkdir "$b.x" && "$prog" -c "resources -x -a $b.x" "$m" >/dev/null 2>&1
        "$prog" -j -c resources "$m" | python3 -c "import sys,json,os,hashlib
for l in sys.stdin:
    r=json.loads(l)
    if 'name' not in r: continue
    p=os.path.join(sys.argv[1], r['name'])
    h=hashlib.sha1(open(p,'rb').read()).hexdigest() if r['where']=='embedded' and os.path.isfile(p) else ''
    print(r['name'], r['visibility'], r['where'], r.get('implementation_name'), h)" "$b.x" | sort
    done >"$b.resources"
    n=$(wc -l <"$b.resources")
    [ $((n % 2)) -eq 0 ] && [ "$(head -n $((n / 2)) "$b.resources" | sort)" = "$(tail -n $((n / 2)) "$b.resources" | sort)" ] ||
        { echo "manifest resources differ: $(tr '\n' ';' <"$b.resources")"; return 1; }
    echo "$(tail -1 "$b.cmp")"
    return 0
}

for f in $good; do
    if why=$(one "$f" "$ilasm" net); then
        check_pass "$f: $why"
    else
        check_fail "$f: $why"
    fi
done
for fb in $bad; do
    f=${fb%%:*}
    if why=$(one "$f" "$ilasm" net); then
        check_fail "$f round trips now: move it to the good list ($why)"
    else
        check_pass "$f does not round trip, as documented (${fb#*:}): $(echo "$why" | head -1)"
    fi
done
if [ "${1:-}" = --mono ] && command -v ilasm >/dev/null 2>&1; then
    for f in $good; do
        why=$(one "$f" ilasm mono) && echo "mono ilasm: $f: equal" ||
            echo "mono ilasm: $f: differs: $(echo "$why" | head -3)"
    done
fi
check_done
