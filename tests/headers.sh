#!/bin/sh
# Each public header must compile on its own as strict C11 (cf. libgit2's
# header test): no hidden include-order dependencies, no extensions. The
# headers with inline functions (tables.h) must also work for a compiler in
# GNU89 inline mode and for C++ (when a C++ compiler is installed).
top=${MDT_TOP_SRCDIR:-.}
cc=${CC:-cc}
cxx=${CXX:-c++}
command -v "$cxx" >/dev/null 2>&1 || cxx=
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/tests/common/check.sh"
for h in "$top"/libmdtools/include/mdtools/*.h; do
    name=$(basename "$h")
    printf '#include <mdtools/%s>\n#include <mdtools/%s>\nint main(void) { return 0; }\n' \
        "$name" "$name" > "$tmp/t.c"
    if $cc -std=c11 -pedantic -Wall -Wextra -Werror -I"$top/libmdtools/include" \
        -c "$tmp/t.c" -o "$tmp/t.o" 2> "$tmp/err" &&
        $cc -std=gnu11 -fgnu89-inline -Wall -Wextra -Werror -I"$top/libmdtools/include" \
        -c "$tmp/t.c" -o "$tmp/t.o" 2>> "$tmp/err" &&
        { [ -z "$cxx" ] || { cp "$tmp/t.c" "$tmp/t.cc" &&
        $cxx -std=c++11 -pedantic -Wall -Wextra -Werror -I"$top/libmdtools/include" \
        -c "$tmp/t.cc" -o "$tmp/t.o" 2>> "$tmp/err"; }; }; then
        check_pass "$name"
    else
        check_fail "$name"; cat "$tmp/err"
    fi
done
# Declarations moved to another header stay reachable through the header
# that had them (source compatibility): "old-header function".
for moved in "names.h mdt_member_owner" "names.h mdt_token_owner" \
    "names.h mdt_typedef_enclosing" "names.h mdt_typedef_by_name" \
    "idmap.h mdt_idmap_ip_lookup" "idmap.h mdt_idmap_code_add"; do
    set -- $moved
    printf '#include <mdtools/%s>\nint main(void) { (void)&%s; return 0; }\n' "$1" "$2" \
        > "$tmp/m.c"
    if $cc -std=c11 -pedantic -Wall -Wextra -Werror -I"$top/libmdtools/include" \
        -c "$tmp/m.c" -o "$tmp/m.o" 2> "$tmp/err"; then
        check_pass "$2 through <mdtools/$1>"
    else
        check_fail "$2 through <mdtools/$1>"; cat "$tmp/err"
    fi
done
[ -n "$cxx" ] || echo "no C++ compiler: headers not checked as C++"
check_done
