#!/bin/sh
# Checks that libmdtools' folders use each other bottom up, as the layer
# table of doc/layers.md says:
#   util -> image (container) -> md (tables, heaps, owners, identity)
#        -> open -> pdb;  tokens (the runtime-ID maps) on util alone;
#   generics (signatures, values, names) above md and tokens;
#   typeref (module set, resolution) above generics;
#   il (method bodies, instructions, their text) above generics.
# Two checks, each against the table below:
#  1. includes: every `#include "folder/..."` of a library file, and every
#     `#include <mdtools/...>` (mapped to the folder that implements the
#     header), names a folder its own folder may use; the public headers
#     include only headers of their own layer or below;
#  2. calls: every symbol an object file of the build needs from another
#     folder's object (nm) is in a folder it may use. This is the one that
#     counts: a call needs no include of a private header.
#  3. clients: mdinspect/ and profiler/ include no library file but the
#     public headers <mdtools/...>, and call only what libmdtools.so
#     exports (the profiler links its own copy of the objects, so the
#     linker would not stop it calling an mdt__ internal);
#  4. profiler/core's units (profiler/core/README.md) call nothing above
#     them (nm of the built objects);
#  5. mdinspect's units (mdinspect/README.md) call nothing above them, and
#     no command calls another (nm of the built objects).
# Crossings not fixed yet are listed under "known" below, each with the
# issue that removes it; a known crossing that no longer happens fails the
# check too, so the list only shrinks.
# Usage: tools/check-layers.sh [BUILDDIR]; in `make check` the sources and
# the build come from MDT_TOP_SRCDIR and MDT_BUILDDIR. Exit 0 when clean,
# 1 with each crossing on stderr.
set -eu
top=${MDT_TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${1:-${MDT_BUILDDIR:-$top/build}}
lib=$top/libmdtools
command -v nm >/dev/null 2>&1 || { echo "check-layers: needs nm (binutils)" >&2; exit 77; }
[ -d "$build/libmdtools" ] || { echo "check-layers: no build in $build" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# folder: the folders it may use besides itself, bottom up.
cat >"$tmp/rules" <<'EOF'
util:
image: util
md: util
open: util image md
tokens: util
pdb: util image md open
pe: util image md open
strongname: util image md open pe
resources: util image md open
generics: util image md open tokens
typeref: util image md open tokens generics
il: util image md open tokens generics
EOF

# Public header: the folder that implements it. token.h and errors.h are
# vocabulary every layer shares (macros, codes, the error record); so is
# image.h, which declares the functions of three layers (image, md, open:
# doc/layers.md): md includes it for its own declarations, and the calls
# check keeps md off the container's functions.
cat >"$tmp/headers" <<'EOF'
errors.h util
file.h util
token.h util
image.h util
tables.h md
tables.def md
heaps.h md
assembly.h md
nesting.h md
members.h md
sig.h generics
names.h generics
value.h generics
attr.h generics
descriptor.h generics
idmap.h tokens
idmap_code.h tokens
modset.h typeref
typeref.h typeref
pdb.h pdb
il.h il
opcodes.def il
pe.h pe
strongname.h strongname
resources.h resources
bundle.h open
EOF

# Known crossings: "kind file -> folder", kind include or call, each with
# the issue that removes it; the check fails if one no longer happens.
# None left since issue 18's container/metadata split.
: >"$tmp/known"

: >"$tmp/found"
# 1. Includes.
for f in "$lib"/*/*.c "$lib"/*/*.h; do
    folder=$(basename "$(dirname "$f")")
    [ "$folder" = include ] && continue
    rel=$folder/$(basename "$f")
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\([<"]\)\([^>"]*\)[>"].*/\1 \2/p' "$f" |
        while read -r kind path; do
            case $kind:$path in
            '<:'mdtools/*) echo "include $rel $(basename "$path")@hdr" ;;
            '":'config.h) ;;
            '":'*/*) echo "include $rel ${path%%/*}" ;;
            esac
        done >>"$tmp/found"
done
for h in "$lib"/include/mdtools/*.h; do
    name=$(basename "$h")
    [ "$name" = mdtools.h ] && continue
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<mdtools\/\([^>]*\)>.*/\1/p' "$h" |
        while read -r inc; do echo "include @$name $inc@hdr"; done >>"$tmp/found"
done

# 2. Calls: symbols defined per folder, then what each object needs.
: >"$tmp/defs"
: >"$tmp/objs"
for c in "$lib"/*/*.c; do
    folder=$(basename "$(dirname "$c")")
    name=$(basename "$c" .c)
    o=$build/libmdtools/$folder/libmdtools_core_la-$name.o
    [ -f "$o" ] || { echo "check-layers: $o not built" >&2; exit 2; }
    echo "$folder/$name.c $o" >>"$tmp/objs"
    nm --defined-only -g "$o" | awk -v f="$folder" '{ print $3, f }' >>"$tmp/defs"
done
while read -r rel o; do
    nm -u "$o" | awk -v r="$rel" '{ print r, $2 }'
done <"$tmp/objs" >"$tmp/needs"
awk 'FNR == NR { def[$1] = $2; next }
     ($2 in def) { print "call", $1, def[$2], $2 }' "$tmp/defs" "$tmp/needs" >>"$tmp/found"

# Judge: each use against the table; known crossings must still happen.
awk -v hdrs="$tmp/headers" -v known="$tmp/known" -v rules="$tmp/rules" '
    BEGIN {
        while ((getline l < rules) > 0) {
            n = split(l, w, /[: ]+/)
            folder[w[1]] = 1; ok[w[1], w[1]] = 1; below[w[1]] = ""
            for (i = 2; i <= n; i++) if (w[i] != "") { ok[w[1], w[i]] = 1; below[w[1]] = below[w[1]] " " w[i] }
        }
        while ((getline l < hdrs) > 0) { split(l, w, " "); hdr[w[1]] = w[2] }
        while ((getline l < known) > 0) { split(l, w, " "); exc[w[1] " " w[2] " " w[4]] = l }
        bad = 0
    }
    {
        kind = $1; from = $2; to = $3
        if (from ~ /^@/) { split(from, a, "@"); fromf = hdr[a[2]]; where = "include/mdtools/" a[2] }
        else { split(from, a, "/"); fromf = a[1]; where = from }
        if (to ~ /@hdr$/) {
            sub(/@hdr$/, "", to)
            if (!(to in hdr)) { printf "check-layers: %s includes <mdtools/%s>, which is not in the header table\n", where, to > "/dev/stderr"; bad = 1; next }
            what = "<mdtools/" to ">"; to = hdr[to]
        } else {
            what = (kind == "call") ? $4 "()" : "\"" to "/...\""
        }
        if (!(fromf in folder)) { printf "check-layers: folder %s is not in the layer table\n", fromf > "/dev/stderr"; bad = 1; next }
        if (!(to in folder)) { printf "check-layers: folder %s is not in the layer table\n", to > "/dev/stderr"; bad = 1; next }
        uses[fromf, to] = 1
        if (ok[fromf, to]) next
        key = kind " " where " " to
        if (key in exc) { seen[key] = 1; next }
        printf "check-layers: %s (%s) uses %s from %s; %s may use only:%s\n", where, fromf, what, to, fromf, below[fromf] == "" ? " itself" : below[fromf] > "/dev/stderr"
        bad = 1
    }
    END {
        for (k in exc) if (!(k in seen)) {
            printf "check-layers: known crossing \"%s\" no longer happens: remove it from tools/check-layers.sh\n", exc[k] > "/dev/stderr"
            bad = 1
        }
        exit bad
    }
' "$tmp/found" && status=0 || status=1

# 3. Clients: public headers only, exported symbols only.
cbad=0
for f in $(find "$top/mdinspect" "$top/profiler" -name '*.[ch]' | sort); do
    dir=$(dirname "$f")
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
        while read -r path; do
            # Resolved as the compiler does: beside the file first, then the
            # -I folders; only a name that lands in libmdtools/ is a crossing.
            [ -e "$dir/$path" ] && continue
            [ -e "$top/profiler/$path" ] && continue
            [ -e "$top/mdinspect/$path" ] && continue
            if [ -e "$lib/$path" ]; then
                echo "check-layers: ${f#"$top"/} includes \"$path\", a private file of libmdtools; clients may include only <mdtools/...>" >&2
                echo bad
            fi
        done
done >"$tmp/cinc"
grep -q bad "$tmp/cinc" && cbad=1
so=$build/libmdtools/.libs/libmdtools.so
if [ -f "$so" ]; then
    nm -D --defined-only "$so" | awk '{ print $3 }' | sort -u >"$tmp/exported"
    awk '{ print $1 }' "$tmp/defs" | sort -u >"$tmp/libsyms"
    find "$build/mdinspect" "$build/profiler" -name '*.o' | sort |
        while read -r o; do nm -u "$o" | awk -v o="${o#"$build"/}" '{ print $2, o }'; done |
        sort >"$tmp/cneeds"
    # A client symbol the library defines but does not export.
    comm -23 "$tmp/libsyms" "$tmp/exported" >"$tmp/hidden"
    awk 'FNR == NR { h[$1] = 1; next } ($1 in h) { printf "check-layers: %s calls %s(), which libmdtools.so does not export\n", $2, $1 > "/dev/stderr"; bad = 1 }
         END { exit bad }' "$tmp/hidden" "$tmp/cneeds" || cbad=1
    echo "clients (mdinspect, profiler): $(awk 'FNR == NR { e[$1] = 1; next } ($1 in e) { print $1 }' "$tmp/exported" "$tmp/cneeds" | sort -u | wc -l) of the $(wc -l <"$tmp/exported") exported symbols used"
else
    echo "check-layers: no shared libmdtools in $build (configured --disable-shared?): clients' calls not checked" >&2
fi
[ "$cbad" -eq 0 ] || status=1

# 4. profiler/core as a stack of units (profiler/core/README.md): each
#    unit's objects call only functions of their own unit and of the units
#    below it (nm of the built objects); calls up go through function
#    pointers in the state that owns them. Every .c file of profiler/core
#    must be in a unit, so a new file is placed on purpose. No file of
#    the core includes a header of a unit above its own (the sources).
cat >"$tmp/units" <<'EOF'
base: hash unwind config logname channel notes logfile maps elfmap state
sampler: sampler slots perfclock execmap activity wall threads threadnames
naming: codemap frames
aggregate: aggregate
drain: drain
modes: calls alloc allocstack heap events
log: records header termsig
lifetime: core drainloop modules seqs
EOF
# Each unit's private header (profiler/core/README.md, "Headers"); core.h
# is the core's API, whose types (mdp_config, mdp_runtime_ops) every unit
# uses. A unit of several files whose state no unit above may see inside
# defines it in UNIT_state.h, which only the unit's own files include. core_int.h gathers them all for tests and benches: no file of the
# core includes it.
cat >"$tmp/uheaders" <<'EOF'
base: core.h base.h hash.h ring.h unwind.h channel.h native.h hex.h growbuf.h
sampler: sampler.h
naming: naming.h naming_state.h
aggregate: aggregate.h
drain: drain.h
modes: modes.h
log: log.h log_state.h
lifetime: lifetime.h
EOF
ubad=0
# Includes: a file of the core includes no header of a unit above its own
# (nor core_int.h, nor a header in no unit). Read from the sources: it
# needs no build.
for f in "$top"/profiler/core/*.c "$top"/profiler/core/*.h; do
    name=$(basename "$f")
    [ "$name" = core_int.h ] && continue
    case $name in
    *.c) unit=$(awk -v n="${name%.c}" '{ for (i = 2; i <= NF; i++) if ($i == n) { sub(/:$/, "", $1); print $1 } }' "$tmp/units") ;;
    *.h) unit=$(awk -v n="$name" '{ for (i = 2; i <= NF; i++) if ($i == n) { sub(/:$/, "", $1); print $1 } }' "$tmp/uheaders") ;;
    esac
    if [ -z "$unit" ]; then
        echo "check-layers: profiler/core/$name is in no unit of tools/check-layers.sh's tables" >&2
        echo "$name - -" # keeps the count honest; judged below
        continue
    fi
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
        while read -r inc; do
            case $inc in
            core/*) inc=${inc#core/} ;;
            */*) continue ;;
            *) [ -e "$top/profiler/core/$inc" ] || continue ;;
            esac
            echo "$name $unit $inc"
        done
done >"$tmp/uincs"
awk -v units="$tmp/units" -v hdrs="$tmp/uheaders" '
    BEGIN {
        while ((getline l < units) > 0) { split(l, w, ":"); rank[w[1]] = ++n }
        while ((getline l < hdrs) > 0) { n = split(l, w, /[: ]+/); for (i = 2; i <= n; i++) if (w[i] != "") hu[w[i]] = w[1] }
    }
    $2 == "-" { bad = 1; next }
    $3 == "core_int.h" {
        printf "check-layers: profiler/core/%s includes core_int.h (for tests only): include the units\047 headers\n", $1 > "/dev/stderr"
        bad = 1; next
    }
    !($3 in hu) { printf "check-layers: profiler/core/%s includes %s, in no unit of tools/check-layers.sh\047s tables\n", $1, $3 > "/dev/stderr"; bad = 1; next }
    rank[hu[$3]] > rank[$2] {
        printf "check-layers: profiler/core/%s (%s) includes %s, of %s above it\n", $1, $2, $3, hu[$3] > "/dev/stderr"
        bad = 1; next
    }
    $3 ~ /_state\.h$/ && hu[$3] != $2 {
        printf "check-layers: profiler/core/%s (%s) includes %s, the state of %s: only that unit\047s files see inside it\n", $1, $2, $3, hu[$3] > "/dev/stderr"
        bad = 1
    }
    END { exit bad }' "$tmp/uincs" || ubad=1
[ "$ubad" -eq 0 ] && echo "profiler/core: $(grep -vc ' - -$' "$tmp/uincs") includes of the core's headers, none upward"
if [ -d "$build/profiler/core" ]; then
    : >"$tmp/udefs"
    : >"$tmp/uneeds"
    for c in "$top"/profiler/core/*.c; do
        name=$(basename "$c" .c)
        unit=$(awk -v n="$name" '{ for (i = 2; i <= NF; i++) if ($i == n) { sub(/:$/, "", $1); print $1 } }' "$tmp/units")
        if [ -z "$unit" ]; then
            echo "check-layers: profiler/core/$name.c is in no unit of tools/check-layers.sh's table" >&2
            ubad=1
            continue
        fi
        o=$build/profiler/core/libmdpcore_la-$name.o
        [ -f "$o" ] || { echo "check-layers: $o not built" >&2; ubad=1; continue; }
        nm --defined-only -g "$o" | awk -v u="$unit" -v f="$name" '{ print $3, u, f }' >>"$tmp/udefs"
        nm -u "$o" | awk -v u="$unit" -v f="$name" '{ print $2, u, f }' >>"$tmp/uneeds"
    done
    awk -v units="$tmp/units" '
        BEGIN { while ((getline l < units) > 0) { split(l, w, ":"); rank[w[1]] = ++n } }
        FNR == NR { du[$1] = $2; df[$1] = $3; next }
        ($1 in du) && rank[du[$1]] > rank[$2] {
            printf "check-layers: profiler/core/%s.c (%s) calls %s() of %s.c, in %s above it\n", $3, $2, $1, df[$1], du[$1] > "/dev/stderr"
            bad = 1
        }
        END { exit bad }' "$tmp/udefs" "$tmp/uneeds" || ubad=1
    [ "$ubad" -eq 0 ] && echo "profiler/core: $(grep -c . "$tmp/units") units, bottom up, no call upward"
else
    echo "check-layers: no profiler build in $build: profiler/core's units not checked" >&2
fi
[ "$ubad" -eq 0 ] || status=1

# 5. mdinspect's shell as a stack of units (mdinspect/README.md): each
#    file calls only functions of its own unit and of the units below it
#    (nm of the built objects), and no command calls another command (what
#    two commands share lives in a unit below them). Every .c file of
#    mdinspect/ must be in a unit; cmd_*.c are the commands. Calls up go
#    through what the caller hands down (the `help` command's table comes
#    in the state, a command's completer and handler are pointers in its
#    table entry).
cat >"$tmp/shell" <<'EOF2'
printer: print print_values print_text print_table print_json
state: state snkeys match cands flags
naming: names index decl args opening
views: rows parts help resolve il_text ilasm_put ilasm_members ilasm_module
commands: cmd_*
dispatcher: cmds parse complete repl main
EOF2
sbad=0
if [ -d "$build/mdinspect" ]; then
    : >"$tmp/sdefs"
    : >"$tmp/sneeds"
    for c in "$top"/mdinspect/*.c; do
        name=$(basename "$c" .c)
        case $name in
        cmd_*) unit=commands ;;
        *) unit=$(awk -v n="$name" '{ for (i = 2; i <= NF; i++) if ($i == n) { sub(/:$/, "", $1); print $1 } }' "$tmp/shell") ;;
        esac
        if [ -z "$unit" ]; then
            echo "check-layers: mdinspect/$name.c is in no unit of tools/check-layers.sh's shell table" >&2
            sbad=1
            continue
        fi
        o=$build/mdinspect/mdinspect-$name.o
        [ -f "$o" ] || { echo "check-layers: $o not built" >&2; sbad=1; continue; }
        nm --defined-only -g "$o" | awk -v u="$unit" -v f="$name" '{ print $3, u, f }' >>"$tmp/sdefs"
        nm -u "$o" | awk -v u="$unit" -v f="$name" '{ print $2, u, f }' >>"$tmp/sneeds"
    done
    awk -v units="$tmp/shell" '
        BEGIN { while ((getline l < units) > 0) { split(l, w, ":"); rank[w[1]] = ++n } }
        FNR == NR { du[$1] = $2; df[$1] = $3; next }
        !($1 in du) || df[$1] == $3 { next }
        rank[du[$1]] > rank[$2] {
            printf "check-layers: mdinspect/%s.c (%s) uses %s of %s.c, in %s above it\n", $3, $2, $1, df[$1], du[$1] > "/dev/stderr"
            bad = 1
        }
        $2 == "commands" && du[$1] == "commands" {
            printf "check-layers: mdinspect/%s.c uses %s of %s.c: a command uses no other command (move what they share below the commands)\n", $3, $1, df[$1] > "/dev/stderr"
            bad = 1
        }
        END { exit bad }' "$tmp/sdefs" "$tmp/sneeds" || sbad=1
    [ "$sbad" -eq 0 ] && echo "mdinspect: $(grep -c . "$tmp/shell") units, bottom up, no call upward, no command calling another"
else
    echo "check-layers: no mdinspect build in $build: the shell's units not checked" >&2
fi
[ "$sbad" -eq 0 ] || status=1

# The graph as found, bottom up, for people.
for f in util image md open tokens pdb pe strongname resources generics typeref il; do
    used=$(awk -v f="$f" '
        { if ($2 ~ /^@/) next; split($2, a, "/"); if (a[1] != f) next
          t = $3; sub(/@hdr$/, "", t); print t }' "$tmp/found" |
        while read -r t; do
            case $t in *.h|*.def) awk -v h="$t" '$1 == h { print $2 }' "$tmp/headers" ;; *) echo "$t" ;; esac
        done | sort -u | grep -vx "$f" | tr '\n' ' ')
    [ -d "$lib/$f" ] && echo "$f: ${used:-(nothing)}"
done
[ "$status" -eq 0 ] && echo "check-layers: the folders use each other bottom up (known crossings: $(grep -c . "$tmp/known")); the clients use the public API only"
exit "$status"
