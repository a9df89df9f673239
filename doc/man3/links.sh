#!/bin/sh
# The per-function names of the library's manual pages: for each page
# given, one line "FUNCTION PAGE" for every function its NAME section
# lists (lower-case mdt_ names; the page's own name excepted), and every
# old name its DEPRECATED section gives (`.TP` then `.BR mdt_old ()`). `make
# install` makes each FUNCTION.3 a ".so" link to PAGE.3 (doc/local.mk), so
# that `man mdt_image_open_file` finds its page with any man(1), indexed
# or not. Only sed and tr: it runs at install time, where python may be
# missing.
# Usage: doc/man3/links.sh PAGE.3...
for page in "$@"; do
    base=$(basename "$page" .3)
    # The NAME section as one line, cut at the " \- " separator.
    sed -n '/^\.SH NAME/,/^\.SH SYNOPSIS/p' "$page" | sed -e '1d' -e '$d' | tr '\n' ' ' |
        sed -e 's/ \\- .*//' | tr ',' '\n' | sed -e 's/^[ 	]*//' -e 's/[ 	]*$//' |
        grep '^mdt_[a-z0-9_]*$' | grep -v -x "$base" | sed "s/\$/ $base/"
    sed -n '/^\.SH DEPRECATED/,/^\.SH /p' "$page" | sed -n '/^\.TP/{n;p;}' |
        sed -n 's/^\.BR \(mdt_[a-z0-9_]*\) ()$/\1/p' | sed "s/\$/ $base/"
done
