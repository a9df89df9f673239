#!/usr/bin/env python3
"""Move code written for libmdtools.so.0 to the parameter order of
libmdtools.so.1: outputs first (after the allocation context), then the
subject, then the inputs (README.md, "API conventions").

    tools/api-reorder.py DIR [FILE...]

rewrites, in the git-tracked files of DIR (or the FILEs named), every call,
declaration and definition of the functions whose parameters moved, and
every mention in a comment or a document that spells out the arguments.
Arguments keep their text; the commas and line breaks between them stay
where they were, so run `git clang-format` afterwards. Calls it cannot read
(a function-like macro that renames one of these functions, a mention with
`...`) are listed at the end to be checked by hand; calls through function
pointers, whose types must change too, are not found at all: build with
-Werror=incompatible-pointer-types. It assumes the old order: run it once.
The list below is the whole change between the two versions, with one
callback type: mdt_idmap_miss_fn takes its payload first, (payload, map,
kind, id); its implementations are not rewritten (the compiler names them).
It knows the functions by their names of libmdtools 1:0:0: run it first,
then tools/api-rename.py for the names of 1:1:0."""
import re, subprocess, sys, os

# Each function whose parameters moved: its parameter names in the order of
# libmdtools.so.0, then in that of libmdtools.so.1.
MOVED = {
 # image.h
 'mdt_image_bytes': (['img', 'len'],
                     ['len', 'img']),
 'mdt_image_rva': (['img', 'rva', 'len', 'p'],
                   ['p', 'img', 'rva', 'len']),
 'mdt_image_read_rva': (['img', 'rva', 'buf', 'len'],
                        ['buf', 'len', 'img', 'rva']),
 'mdt_image_rva_to_offset': (['img', 'rva', 'offset'],
                             ['offset', 'img', 'rva']),
 # assembly.h
 'mdt_assembly_identity': (['img', 'out'],
                           ['out', 'img']),
 'mdt_assemblyref_identity': (['img', 'rid', 'out'],
                              ['out', 'img', 'rid']),
 'mdt_image_mvid': (['img', 'mvid'],
                    ['mvid', 'img']),
 'mdt_public_key_token': (['key', 'len', 'token'],
                          ['token', 'key', 'len']),
 # heaps.h
 'mdt_heap_string': (['img', 'index', 's', 'len'],
                     ['s', 'len', 'img', 'index']),
 'mdt_heap_blob': (['img', 'index', 'data', 'len'],
                   ['data', 'len', 'img', 'index']),
 'mdt_heap_guid': (['img', 'index', 'guid'],
                   ['guid', 'img', 'index']),
 'mdt_heap_us': (['img', 'index', 'utf16le', 'nunits', 'flag'],
                 ['utf16le', 'nunits', 'flag', 'img', 'index']),
 'mdt_heap_next': (['img', 'heap', 'index', 'next'],
                   ['next', 'img', 'heap', 'index']),
 'mdt_utf16_to_utf8': (['mem_ctx', 'out', 'outlen', 'utf16le', 'nunits', 'replaced'],
                       ['mem_ctx', 'out', 'outlen', 'replaced', 'utf16le', 'nunits']),
 'mdt_decode_compressed_u32': (['p', 'len', 'value', 'used'],
                               ['value', 'used', 'p', 'len']),
 # tables.h
 'mdt_row_string': (['row', 'col', 's', 'len'],
                    ['s', 'len', 'row', 'col']),
 'mdt_row_string_slow': (['row', 'col', 's', 'len'],
                         ['s', 'len', 'row', 'col']),
 'mdt_row_blob': (['row', 'col', 'data', 'len'],
                  ['data', 'len', 'row', 'col']),
 'mdt_row_blob_slow': (['row', 'col', 'data', 'len'],
                       ['data', 'len', 'row', 'col']),
 'mdt_row_guid': (['row', 'col', 'guid'],
                  ['guid', 'row', 'col']),
 'mdt_row_guid_slow': (['row', 'col', 'guid'],
                       ['guid', 'row', 'col']),
 'mdt_row_cells': (['row', 'cells'],
                   ['cells', 'row']),
 'mdt_row_token': (['row', 'col', 'token'],
                   ['token', 'row', 'col']),
 'mdt_row_range': (['row', 'col', 'first', 'count'],
                   ['first', 'count', 'row', 'col']),
 'mdt_range_item': (['img', 'table', 'pos', 'rid'],
                    ['rid', 'img', 'table', 'pos']),
 'mdt_column_raw': (['img', 'table', 'col', 'first', 'count', 'out'],
                    ['out', 'img', 'table', 'col', 'first', 'count']),
 'mdt_column_strings': (['img', 'table', 'col', 'first', 'count', 's', 'len'],
                        ['s', 'len', 'img', 'table', 'col', 'first', 'count']),
 'mdt_column_blobs': (['img', 'table', 'col', 'first', 'count', 'data', 'len'],
                      ['data', 'len', 'img', 'table', 'col', 'first', 'count']),
 'mdt_column_guids': (['img', 'table', 'col', 'first', 'count', 'guid'],
                      ['guid', 'img', 'table', 'col', 'first', 'count']),
 'mdt_find_next': (['f', 'rid'],
                   ['rid', 'f']),
 'mdt_coded_encode': (['ci', 'token', 'value'],
                      ['value', 'ci', 'token']),
 'mdt_coded_decode': (['ci', 'value', 'token'],
                      ['token', 'ci', 'value']),
 # attr.h
 'mdt_attr_decimal': (['a', 'out'],
                      ['out', 'a']),
 'mdt_enum_underlying': (['img', 'typedef_token', 'elem_type'],
                         ['elem_type', 'img', 'typedef_token']),
 # nesting.h (names.h in libmdtools.so.0)
 'mdt_typedef_enclosing': (['img', 'typedef_token', 'enclosing'],
                           ['enclosing', 'img', 'typedef_token']),
 'mdt_typedef_by_name': (['img', 'name', 'len', 'token'],
                         ['token', 'img', 'name', 'len']),
 'mdt_member_owner': (['img', 'member', 'typedef_token'],
                      ['typedef_token', 'img', 'member']),
 'mdt_token_owner': (['img', 'token', 'owner'],
                     ['owner', 'img', 'token']),
 # pdb.h
 'mdt_pdb_lookup': (['pdb', 'methoddef', 'il_offset', 'sp'],
                    ['sp', 'pdb', 'methoddef', 'il_offset']),
 'mdt_pdb_method_start': (['pdb', 'methoddef', 'sp'],
                          ['sp', 'pdb', 'methoddef']),
 'mdt_seqpoints_next': (['it', 'sp'],
                        ['sp', 'it']),
 # modset.h
 'mdt_modview_module': (['view', 'i', 'out'],
                        ['out', 'view', 'i']),
 'mdt_modview_lookup': (['view', 'id', 'out'],
                        ['out', 'view', 'id']),
 'mdt_modview_next': (['view', 'appdomain', 'include_shared', 'pos', 'out'],
                      ['out', 'view', 'appdomain', 'include_shared', 'pos']),
 # typeref.h
 'mdt_ref_scope': (['img', 'token', 'scope'],
                   ['scope', 'img', 'token']),
 'mdt_assemblyref_bind': (['view', 'module', 'token', 'manifest', 'tier'],
                          ['manifest', 'tier', 'view', 'module', 'token']),
 # idmap.h
 'mdt_idmap_stats_get': (['map', 'out'],
                         ['out', 'map']),
 'mdt_idmap_module_lookup': (['map', 'out', 'module_id', 'gen'],
                             ['out', 'map', 'module_id', 'gen']),
 'mdt_idmap_module_path': (['map', 'buf', 'len', 'module_id', 'gen'],
                           ['buf', 'len', 'map', 'module_id', 'gen']),
 'mdt_idmap_module_each': (['map', 'fn', 'payload', 'changes'],
                           ['changes', 'map', 'fn', 'payload']),
 'mdt_idmap_class_lookup': (['map', 'out', 'args_buf', 'args_cap', 'class_id', 'gen'],
                            ['out', 'args_buf', 'args_cap', 'map', 'class_id', 'gen']),
 'mdt_idmap_function_lookup': (['map', 'out', 'args_buf', 'args_cap', 'function_id', 'gen'],
                               ['out', 'args_buf', 'args_cap', 'map', 'function_id', 'gen']),
 'mdt_idmap_ip_lookup': (['map', 'out', 'ip'],
                         ['out', 'map', 'ip']),
 'mdt_idmap_class_find': (['map', 'class_id', 'gen', 'key'],
                          ['class_id', 'gen', 'map', 'key']),
 'mdt_idmap_function_find': (['map', 'function_id', 'gen', 'key'],
                             ['function_id', 'gen', 'map', 'key']),
 'mdt_idmap_class_describe': (['map', 'nodes', 'cap', 'count', 'class_id', 'gen'],
                              ['nodes', 'cap', 'count', 'map', 'class_id', 'gen']),
 'mdt_idmap_class_descriptor': (['map', 'buf', 'len', 'class_id', 'gen'],
                                ['buf', 'len', 'map', 'class_id', 'gen']),
 'mdt_idmap_module_fetch': (['map', 'out', 'module_id'],
                            ['out', 'map', 'module_id']),
 'mdt_idmap_class_fetch': (['map', 'out', 'args_buf', 'args_cap', 'class_id'],
                           ['out', 'args_buf', 'args_cap', 'map', 'class_id']),
 'mdt_idmap_function_fetch': (['map', 'out', 'args_buf', 'args_cap', 'function_id'],
                              ['out', 'args_buf', 'args_cap', 'map', 'function_id']),
 'mdt_idmap_ip_fetch': (['map', 'out', 'ip'],
                        ['out', 'map', 'ip']),
}

def parse_args(s, i):
    """s[i] == '('. Returns (end index of ')', list of (start, end) of args) or None."""
    assert s[i] == '('
    depth = 0
    j = i
    args = []
    start = i + 1
    n = len(s)
    while j < n:
        c = s[j]
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
            if depth == 0:
                args.append((start, j))
                return j, args
        elif c == ',' and depth == 1:
            args.append((start, j))
            start = j + 1
        elif c == '"' or c == "'":
            k = j + 1
            while k < n and s[k] != c:
                if s[k] == '\\':
                    k += 1
                if s[k] == '\n':
                    break
                k += 1
            j = k
        elif s.startswith('/*', j):
            k = s.find('*/', j + 2)
            j = k + 1 if k >= 0 else n
        elif s.startswith('//', j):
            k = s.find('\n', j)
            j = k if k >= 0 else n
        j += 1
    return None

def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    os.chdir(sys.argv[1])
    perms = {}
    for name, (old, new) in MOVED.items():
        if sorted(old) != sorted(new):
            raise SystemExit(f'{name}: old {old} new {new}')
        perms[name] = [old.index(p) for p in new]
    files = sys.argv[2:] or subprocess.run(['git', 'ls-files'], capture_output=True,
                                           text=True).stdout.split()
    exts = ('.c', '.h', '.md', '.1', '.3', '.cs', '.txt', '.in', '.def', '.sh', '.py')
    pat = re.compile(r'\b(' + '|'.join(map(re.escape, sorted(MOVED, key=len, reverse=True))) + r')(\s*)\(')
    total = 0
    problems = []
    for f in files:
        if not f.endswith(exts) or f.startswith('data/') and not f.endswith(('.c', '.h', '.md')):
            continue
        try:
            s = open(f).read()
        except UnicodeDecodeError:
            continue
        cnt = [0]
        def rewrite(s, base_line):
            out = []
            pos = 0
            for m in pat.finditer(s):
                if m.start() < pos:
                    continue
                name = m.group(1)
                lp = m.end() - 1
                r = parse_args(s, lp)
                if not r:
                    problems.append(f'{f}: unbalanced at {name}')
                    continue
                end, args = r
                texts = [s[a:b] for a, b in args]
                if len(texts) == 1 and texts[0].strip() == '':
                    continue  # name() in prose
                perm = perms[name]
                line = base_line + s.count('\n', 0, m.start())
                if len(texts) != len(perm):
                    problems.append(f'{f}:{line}: {name} with {len(texts)} args: {s[m.start():end+1][:80]!r}')
                    continue
                texts = [rewrite(t, line) for t in texts]
                stripped = []
                for t in texts:
                    lead = len(t) - len(t.lstrip())
                    trail = len(t.rstrip())
                    stripped.append((t[:lead], t[lead:trail], t[trail:]))
                new_args = []
                for k in range(len(texts)):
                    lead, _, trail = stripped[k]
                    new_args.append(lead + stripped[perm[k]][1] + trail)
                out.append(s[pos:lp + 1])
                out.append(','.join(new_args))
                pos = end
                cnt[0] += 1
            out.append(s[pos:])
            return ''.join(out)
        new = rewrite(s, 1)
        if cnt[0]:
            open(f, 'w').write(new)
            total += cnt[0]
            print(f'{f}: {cnt[0]}')
    print('total', total)
    for p in problems:
        print('PROBLEM', p)

main()
