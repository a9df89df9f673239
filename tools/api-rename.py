#!/usr/bin/env python3
"""Move code to the names of libmdtools 1:1:0 (README.md, "API
conventions": the second word of a function is its area, one spelling per
concept).

    tools/api-rename.py [--check] DIR [FILE...]

rewrites, in the git-tracked C sources, headers, Markdown documents and
manual pages (.c .h .md .1 .3) of DIR (or the FILEs named), every mention
of a function's old name as its new name: calls, declarations, function
pointers taken, prose; and in C files, each positional initializer of
mdt_name_opts or mdt_resolve_opts written for the layout of 1:0:0
(`{MDT_STYLE_FULL, 0, NULL, NULL}`, `{MDT_RESOLVE_STRICT, 0}`) gets its
`version` member (MDT_NAME_OPTS_VERSION, MDT_RESOLVE_OPTS_VERSION), which
took the upper half of the old `flags`: without it such an initializer
puts the next member there (a compile error for a pointer, a version
refused at run time for a number). The old names still link and compile in
libmdtools.so.1 (each is an exported alias, declared deprecated so the
compiler names its new name); they go with the next soname.

Lines it lengthens may need laying out again: run
`tools/check-format.sh --fix` (clang-format) afterwards.

It is safe to run again, on a tree partly moved or merged from branches
that were not: a new name is never an old one, so a second run changes
nothing. Text between a line that says `api-rename: off` and one that says
`api-rename: on` (or the end of the file) is left alone: the deprecated
declarations and their definitions, the tests of the old names, the
migration table.

At the end it lists what it did not rewrite: mentions of an old name in
tracked files of other kinds (scripts, makefiles: change them by hand),
and names built by the preprocessor from pieces (`mdt_##x`), which it
cannot see; `make` with -Werror=deprecated-declarations finds any call it
missed. --check rewrites nothing and exits 1 when anything would change
(for CI after a merge).

Code written for libmdtools.so.0 is first reordered by
tools/api-reorder.py (which knows the old names), then renamed by this."""
import os
import re
import subprocess
import sys

# Old name -> new name. The whole change between 1:0:0 and 1:1:0.
RENAMED = {
    # errors.h: one family, mdt_error_* (as libgit2's git_error_last).
    'mdt_strerror': 'mdt_error_string',
    'mdt_last_error': 'mdt_error_last',
    'mdt_errmsg': 'mdt_error_message',
    'mdt_clear_error': 'mdt_error_clear',
    # heaps.h
    'mdt_decode_compressed_u32': 'mdt_heap_decode_compressed_u32',
    'mdt_guid_format': 'mdt_heap_guid_format',
    'mdt_utf16_to_utf8': 'mdt_heap_utf16_to_utf8',
    # assembly.h
    'mdt_public_key_token': 'mdt_assembly_public_key_token',
    # value.h
    'mdt_r4_format': 'mdt_value_r4_format',
    'mdt_r8_format': 'mdt_value_r8_format',
    'mdt_int128_format': 'mdt_value_int128_format',
    'mdt_default_value': 'mdt_value_default',
    # attr.h
    'mdt_enum_underlying': 'mdt_typedef_enum_underlying',
    # typeref.h: one verb, resolve, after what is resolved.
    'mdt_resolve_token': 'mdt_token_resolve',
    'mdt_exported_resolve': 'mdt_exportedtype_resolve',
    'mdt_res_reason_name': 'mdt_resolution_reason_name',
    'mdt_ref_scope': 'mdt_token_scope',
    # strongname.h, resources.h: the area spelt as its header.
    'mdt_sn_status_name': 'mdt_strongname_status_name',
    'mdt_restype_name': 'mdt_resources_type_name',
}

EXTS = ('.c', '.h', '.md', '.1', '.3')

# Option structs that gained a `version` member in 1:1:0, in what was the
# upper half of their 32-bit `flags`: a positional initializer of the old
# layout (n members) gets the version constant at its place; designated
# initializers and {0} need nothing (version 0 is the old layout).
VERSIONED = {
    'mdt_name_opts': (4, 2, 'MDT_NAME_OPTS_VERSION'),  # style, flags, [version], gctx, cache
    'mdt_resolve_opts': (2, 1, 'MDT_RESOLVE_OPTS_VERSION'),  # flags, [version], max_hops
}
INIT = re.compile(r'\b(' + '|'.join(VERSIONED) + r')\b(?:\s*\)\s*|[^;={}()]*=\s*)\{')


def top_level_items(text, i):
    """text[i] == '{': (index of the matching '}', [(start, end) of each
    top-level item]) or None."""
    depth, start, items = 0, i + 1, []
    for j in range(i, len(text)):
        c = text[j]
        if c in '({[':
            depth += 1
        elif c in ')}]':
            depth -= 1
            if depth == 0:
                items.append((start, j))
                return j, items
        elif c == ',' and depth == 1:
            items.append((start, j))
            start = j + 1
    return None


def version_initializers(text):
    """Old-layout positional initializers of VERSIONED structs given their
    version member, also each element of an array of them. Returns (new
    text, count)."""
    edits = []  # (offset, text to insert)

    def one(name, lb):
        r = top_level_items(text, lb)
        if not r:
            return
        items = [(a, b) for a, b in r[1] if text[a:b].strip()]
        want, at, const = VERSIONED[name]
        if len(items) != want or any(text[a:b].lstrip().startswith(('.', '{')) for a, b in items):
            return
        a, b = items[at]
        lead = text[a:b][:len(text[a:b]) - len(text[a:b].lstrip())]
        edits.append((a, f'{lead or " "}{const},'))

    for m in INIT.finditer(text):
        lb = m.end() - 1
        if '[' in m.group(0):  # an array: each element
            r = top_level_items(text, lb)
            for a, b in (r[1] if r else []):
                k = a + len(text[a:b]) - len(text[a:b].lstrip())
                if text[k:k + 1] == '{':
                    one(m.group(1), k)
        else:
            one(m.group(1), lb)
    out, pos = [], 0
    for a, ins in sorted(edits):
        out += [text[pos:a], ins]
        pos = a
    out.append(text[pos:])
    return ''.join(out), len(edits)


def tracked(top, paths):
    if paths:
        return paths
    out = subprocess.run(['git', 'ls-files', '-z'], cwd=top, capture_output=True, check=True)
    return [p for p in out.stdout.decode('utf-8', 'replace').split('\0') if p]


def regions(text):
    """(start, end, rewritable) spans of text, cut at the marker lines."""
    spans, pos, on = [], 0, True
    for m in re.finditer(r'^.*api-rename: (off|on).*$', text, flags=re.M):
        spans.append((pos, m.start(), on))
        on = m.group(1) == 'on'
        pos = m.end()
    spans.append((pos, len(text), on))
    return spans


def main(argv):
    check = '--check' in argv
    args = [a for a in argv if a != '--check']
    if not args:
        raise SystemExit(__doc__)
    for old, new in RENAMED.items():
        if new in RENAMED:
            raise SystemExit(f'{old} -> {new}, itself an old name: the table would not settle')
    top = args[0]
    pat = re.compile(r'\b(' + '|'.join(sorted(RENAMED, key=len, reverse=True)) + r')\b')
    pasted = re.compile(r'\b(mdt_\w*)\s*##')
    total, changed, left = 0, [], []
    for f in tracked(top, args[1:]):
        path = os.path.join(top, f)
        if not os.path.isfile(path) or os.path.islink(path):
            continue
        try:
            with open(path, encoding='utf-8') as fh:
                text = fh.read()
        except (UnicodeDecodeError, OSError):
            continue
        if f.endswith(EXTS):
            parts, n, inits = [], 0, 0
            for a, b, on in regions(text):
                chunk = text[a:b]
                if on:
                    chunk, k = pat.subn(lambda m: RENAMED[m.group(1)], chunk)
                    n += k
                    if f.endswith(('.c', '.h')):
                        chunk, k = version_initializers(chunk)
                        n += k
                        inits += k
                parts.append(chunk)
                if b < len(text):
                    # the marker line itself, kept as it is
                    nxt = text.find('\n', b)
                    parts.append(text[b:nxt if nxt >= 0 else len(text)])
            if n:
                new = ''.join(parts)
                # the reassembly above must give back every byte it did not rename
                assert len(pat.findall(new)) == len(pat.findall(text)) - (n - inits)
                if not check:
                    with open(path, 'w', encoding='utf-8') as fh:
                        fh.write(new)
                total += n
                changed.append(f'{f}: {n}')
            for m in pasted.finditer(text):
                if not any(o.startswith(m.group(1)) for o in RENAMED):
                    continue  # cannot make an old name
                line = text.count('\n', 0, m.start()) + 1
                left.append(f'{f}:{line}: a name pasted by the preprocessor: {m.group(0)!r}')
        elif f != 'tools/api-rename.py' and f != 'tools/api-reorder.py':
            for m in pat.finditer(text):
                if not any(a <= m.start() < b and on for a, b, on in regions(text)):
                    continue
                line = text.count('\n', 0, m.start()) + 1
                left.append(f'{f}:{line}: {m.group(1)} (not a .c/.h/.md/man file: by hand, '
                            f'-> {RENAMED[m.group(1)]})')
    for c in changed:
        print(c)
    print(f'{"would rename" if check else "renamed"} {total} mentions in {len(changed)} files')
    for l in left:
        print('NOT REWRITTEN', l)
    if check and total:
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
