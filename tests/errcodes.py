#!/usr/bin/env python3
"""Which MDT_E... codes can each public function return, and does its header
comment list them all?

    tests/errcodes.py [--show] [SRCDIR BUILDDIR]

(SRCDIR and BUILDDIR default to $MDT_TOP_SRCDIR and $MDT_BUILDDIR, which
`make check` sets.)

Reads every library source through clang's AST (clang -Xclang
-ast-dump=json) and works out, for each function, the codes it can return:
the codes in its return statements, and those of every call whose result it
returns, directly (`return f(...)`), through a variable (`e = f(...)`, any
assignment: flow is not followed, so the answer may be too large, never too
small), or through a parameter (`return mdt__fail(code, ...)` returns what
its caller passed as `code`). Callees are followed into every file, to a
fixed point. A call through a function pointer (a caller's callback) and a
code read from memory (`mdt_error_last()->code`, a field) cannot be followed:
they are named in --show.

Then each public function's comment in <mdtools/*.h> (the comment above its
prototype, shared by the prototypes grouped under it) must name every code
the function can return. Exit 1, with the function and the codes its comment
lacks, when one does not; 77 when clang is not there. --show prints the
table: function, codes found, codes listed.
"""
import json
import os
import re
import shutil
import subprocess
import sys

CODES = {'MDT_ENOMEM', 'MDT_EINVAL', 'MDT_EIO', 'MDT_EBADIMAGE', 'MDT_ETRUNC', 'MDT_ENOTFOUND',
         'MDT_EUNSUPPORTED', 'MDT_ENOTDOTNET', 'MDT_ENOHEAP', 'MDT_ITEROVER', 'MDT_EUNRESOLVED'}
BY_VALUE = {-1: 'MDT_ENOMEM', -2: 'MDT_EINVAL', -3: 'MDT_EIO', -4: 'MDT_EBADIMAGE',
            -5: 'MDT_ETRUNC', -6: 'MDT_ENOTFOUND', -7: 'MDT_EUNSUPPORTED', -8: 'MDT_ENOTDOTNET',
            -9: 'MDT_ENOHEAP', -10: 'MDT_ITEROVER', -11: 'MDT_EUNRESOLVED'}


# Codes the analysis finds that cannot be returned, and why. Kept short:
# an entry the analysis no longer finds is reported, so it cannot go stale.
LAZY_ONLY = 'only an image opened from a file with MDT_OPEN_LAZY reads its bytes after ' \
            'the first check of them (image/ondemand.c); bytes in memory are all there'
UNREACHABLE = {
    'mdt_image_open_buffer': {'MDT_EIO': LAZY_ONLY},
    'mdt_image_open_mapped': {'MDT_EIO': LAZY_ONLY},
    'mdt_image_open_mapped_ranges': {'MDT_EIO': LAZY_ONLY},
    'mdt_image_rva_to_offset': {
        'MDT_EBADIMAGE': 'it asks for 1 byte, which cannot straddle the end of the section '
                         'that holds the RVA'},
    'mdt_row_range': {
        'MDT_ENOTFOUND': 'the next row, which it reads for the end of the run, is declared '
                         '(its rid is at most the row count)'},
    'mdt_modset_add': {'MDT_ENOTFOUND': 'it removes nothing (ENOTFOUND is for IDs to remove)'},
    'mdt_modset_add_many': {'MDT_ENOTFOUND': 'it removes nothing'},
    'mdt_modset_mirror': {
        'MDT_ENOTFOUND': 'it removes only modules it found in the set, under the set\'s lock'},
}


def sources(srcdir):
    mk = open(os.path.join(srcdir, 'libmdtools/local.mk')).read()
    m = re.search(r'MDT_LIB_SOURCES\s*=((?:.*\\\n)*.*)', mk)
    return [f for f in m.group(1).replace('\\', ' ').split() if f.endswith('.c')]


def cflags(srcdir, builddir):
    flags = ['-I' + os.path.join(srcdir, 'libmdtools/include'), '-I' + os.path.join(srcdir, 'libmdtools'),
             '-I' + builddir]
    for pkg in ('talloc', 'nettle', 'zlib'):
        r = subprocess.run(['pkg-config', '--cflags', pkg], capture_output=True, text=True)
        flags += r.stdout.split()
    return flags


class Ctx:
    """Where a value is read: the offset, the conditions around it, and the
    codes ruled out for variables there, each as (codes, offset): the codes
    a value assigned before that offset cannot hold (None: any value). A
    condition around the read rules codes out (`if (r && r !=
    MDT_ITEROVER) return r;`), and so does an earlier `if (r == CODE)`
    whose branch always returns (for the values r had then)."""
    def __init__(self, at=None, conds=(), excl=None):
        self.at, self.conds, self.excl = at, conds, excl or {}

    def inside(self, cond, ruled, before=None):
        return Ctx(self.at, self.conds + (cond,), merge(self.excl, ruled, before))

    def after(self, ruled, before):
        return Ctx(self.at, self.conds, merge(self.excl, ruled, before))


class Func:
    def __init__(self, name, node, tu):
        self.name, self.tu = name, tu
        self.params = []
        self.assigns = {}   # variable id -> [(expression node, Ctx)]
        self.returns = []   # (expression node, Ctx)
        self.loops = []     # (begin, end) offsets of loop statements
        body = None
        for c in node.get('inner', []):
            if c.get('kind') == 'ParmVarDecl':
                self.params.append(c['id'])
            elif c.get('kind') == 'CompoundStmt':
                body = c
        self.walk(body, Ctx())

    def reaches(self, at, where):
        """Can an assignment at offset `where` give the value read at `at`?
        When it comes before, or both are in one loop (no other flow is
        followed: an earlier assignment on another path still counts)."""
        if at is None or where is None or where < at:
            return True
        return any(b is not None and e is not None and b <= where <= e and b <= at <= e
                   for b, e in self.loops)

    def walk(self, n, ctx):
        k = n.get('kind')
        inner = n.get('inner', [])
        here = Ctx(offset(n), ctx.conds, ctx.excl)
        if k == 'ReturnStmt' and inner:
            self.returns.append((inner[0], here))
        elif k == 'VarDecl' and inner and n.get('init'):
            self.assigns.setdefault(n['id'], []).append((inner[0], here))
        elif k == 'BinaryOperator' and n.get('opcode') == '=':
            lhs = strip(inner[0])
            if lhs.get('kind') == 'DeclRefExpr':
                self.assigns.setdefault(lhs['referencedDecl']['id'], []).append((inner[1], here))
        elif k in ('WhileStmt', 'ForStmt', 'DoStmt'):
            self.loops.append((offset(n), end_offset(n)))
        if k == 'IfStmt' and len(inner) >= 2:
            self.walk(inner[0], ctx)
            self.walk(inner[1], ctx.inside(inner[0], ruled_out(inner[0], '&&', '!=')))
            for c in inner[2:]:
                self.walk(c, ctx.inside(inner[0], ruled_out(inner[0], '||', '==')))
            return
        if k == 'CompoundStmt':
            for c in inner:
                self.walk(c, ctx)
                if c.get('kind') == 'IfStmt' and len(c.get('inner', [])) == 2 and \
                        always_returns(c['inner'][1]):
                    ctx = ctx.after(ruled_out(c['inner'][0], '||', '=='), offset(c))
            return
        if k == 'SwitchStmt' and len(inner) >= 2:
            self.walk(inner[0], ctx)
            for c in inner[1:]:
                self.walk(c, ctx.inside(inner[0], {}))
            return
        for c in inner:
            self.walk(c, ctx)

    def param_refs(self, nodes, seen=frozenset()):
        """The parameters (indexes) an expression depends on, through the
        local variables it reads."""
        out = set()
        for n in nodes:
            if n.get('kind') == 'DeclRefExpr':
                d = n['referencedDecl']
                if d['kind'] == 'ParmVarDecl' and d['id'] in self.params:
                    out.add(self.params.index(d['id']))
                elif d['kind'] == 'VarDecl' and d['id'] not in seen:
                    out |= self.param_refs([e for e, _ in self.assigns.get(d['id'], [])],
                                           seen | {d['id']})
            out |= self.param_refs(n.get('inner', []), seen)
        return out


def strip(n):
    while n.get('kind') in ('ParenExpr', 'ImplicitCastExpr', 'CStyleCastExpr') and n.get('inner'):
        n = n['inner'][0]
    return n


def offset(n):
    r = n.get('range', {}).get('begin', {})
    return r.get('offset', r.get('expansionLoc', {}).get('offset'))


def end_offset(n):
    r = n.get('range', {}).get('end', {})
    return r.get('offset', r.get('expansionLoc', {}).get('offset'))


def always_returns(n):
    k = n.get('kind')
    if k == 'ReturnStmt':
        return True
    return k == 'CompoundStmt' and bool(n.get('inner')) and always_returns(n['inner'][-1])


def merge(a, b, before=None):
    """Exclusions a, plus the codes b rules out for values assigned before
    offset `before` (None: any value)."""
    out = {v: list(c) for v, c in a.items()}
    for v, c in b.items():
        out.setdefault(v, []).append((set(c), before))
    return out


def ruled_out(cond, join, op):
    """Codes a condition rules out for variables: the `v != CODE` terms of
    a conjunction (its then-branch), or the `v == CODE` terms of a
    disjunction (its else-branch)."""
    out = {}
    cond = strip(cond)
    if cond.get('kind') == 'BinaryOperator' and cond.get('opcode') == join:
        for c in cond['inner']:
            for v, codes in ruled_out(c, join, op).items():
                out.setdefault(v, set()).update(codes)
        return out
    if cond.get('kind') == 'BinaryOperator' and cond.get('opcode') == op:
        a, b = (strip(x) for x in cond['inner'])
        for var, code in ((a, b), (b, a)):
            if (var.get('kind') == 'DeclRefExpr' and code.get('kind') == 'DeclRefExpr' and
                    code['referencedDecl']['kind'] == 'EnumConstantDecl' and
                    code['referencedDecl']['name'] in CODES):
                out.setdefault(var['referencedDecl']['id'], set()).add(code['referencedDecl']['name'])
    return out


def load(srcdir, builddir, files):
    """Function definitions by name; static ones by (file, name)."""
    funcs = {}
    flags = cflags(srcdir, builddir)
    for f in files:
        out = subprocess.run(['clang', '-Xclang', '-ast-dump=json', '-fsyntax-only', '-w', '-std=gnu11']
                             + flags + [os.path.join(srcdir, f)], capture_output=True, text=True)
        if out.returncode:
            sys.exit(f'clang failed on {f}:\n{out.stderr[:2000]}')
        tree = json.loads(out.stdout)
        for n in tree.get('inner', []):
            if n.get('kind') != 'FunctionDecl' or not any(
                    c.get('kind') == 'CompoundStmt' for c in n.get('inner', [])):
                continue
            key = (f, n['name']) if n.get('storageClass') == 'static' else n['name']
            if key not in funcs:
                funcs[key] = Func(n['name'], n, f)
    return funcs


class Val:
    """What an expression, or a function, can give: codes; the parameters
    whose value it gives (by index); what cannot be followed; and, for
    MDT_EINVAL ("the caller passed a bad argument"), the parameters whose
    value decides it, or 'ctx' when nothing here does (the caller's
    conditions around the call then do)."""
    def __init__(self):
        self.codes, self.params, self.unknown, self.einval = set(), set(), set(), set()

    def add(self, o):
        self.codes |= o.codes
        self.params |= o.params
        self.unknown |= o.unknown
        self.einval |= o.einval
        return self

    def key(self):
        return tuple(frozenset(x) for x in (self.codes, self.params, self.unknown, self.einval))

    def all_codes(self):
        return self.codes | ({'MDT_EINVAL'} if self.einval else set())


def analyse(funcs):
    """Summaries of every function, to a fixed point over the calls.

    MDT_EINVAL counts for a function only when its caller's arguments can
    bring it about: a check of its own parameters, or a callee's EINVAL for
    an argument made from them. A callee rejecting an argument the library
    made up itself (a table id, a column) would be a bug, not an answer."""
    summ = {k: Val() for k in funcs}

    def lookup(fn, name):
        return (fn.tu, name) if (fn.tu, name) in funcs else name if name in funcs else None

    def causes(fn, ctx):
        return fn.param_refs(list(ctx.conds)) or {'ctx'}

    def vals(fn, n, ctx, seen):
        n = strip(n)
        k = n.get('kind')
        v = Val()
        if k == 'DeclRefExpr':
            d = n['referencedDecl']
            if d['kind'] == 'EnumConstantDecl':
                if d['name'] == 'MDT_EINVAL':
                    v.einval |= causes(fn, ctx)
                elif d['name'] in CODES:
                    v.codes.add(d['name'])
            elif d['kind'] == 'ParmVarDecl':
                if d['id'] in fn.params:
                    v.params.add(fn.params.index(d['id']))
            elif d['kind'] == 'VarDecl' and d['id'] not in seen:
                for e, actx in fn.assigns.get(d['id'], []):
                    if fn.reaches(ctx.at, actx.at):
                        a = vals(fn, e, actx, seen | {d['id']})
                        for ruled, before in ctx.excl.get(d['id'], []):
                            if before is None or (actx.at is not None and actx.at < before):
                                a.codes -= ruled
                                if 'MDT_EINVAL' in ruled:
                                    a.einval = set()
                        v.add(a)
        elif k == 'CallExpr':
            callee = strip(n['inner'][0])
            args = n['inner'][1:]
            if callee.get('kind') == 'DeclRefExpr' and callee['referencedDecl']['kind'] == 'FunctionDecl':
                key = lookup(fn, callee['referencedDecl']['name'])
                if key is not None:
                    s = summ[key]
                    v.codes |= s.codes
                    v.unknown |= s.unknown
                    for i in s.params:
                        if i < len(args):
                            v.add(vals(fn, args[i], ctx, seen))
                    for i in s.einval:
                        if i == 'ctx':
                            v.einval |= causes(fn, ctx)
                        elif i < len(args):
                            v.einval |= fn.param_refs([args[i]])
            else:
                v.unknown.add('a callback')
        elif k == 'ConditionalOperator':
            cond, a, b = n['inner']
            v.add(vals(fn, a, ctx.inside(cond, ruled_out(cond, '&&', '!=')), seen))
            v.add(vals(fn, b, ctx.inside(cond, ruled_out(cond, '||', '==')), seen))
        elif k in ('BinaryConditionalOperator', 'OpaqueValueExpr'):  # GNU `a ?: b`
            for c in n.get('inner', []):
                v.add(vals(fn, c, ctx, seen))
        elif k == 'BinaryOperator' and n.get('opcode') in ('=', ','):
            return vals(fn, n['inner'][1], ctx, seen)
        elif k == 'UnaryOperator' and n.get('opcode') == '-':
            lit = strip(n['inner'][0])
            if lit.get('kind') == 'IntegerLiteral' and -int(lit['value']) in BY_VALUE:
                v.unknown.add(f"the literal -{lit['value']} ({BY_VALUE[-int(lit['value'])]})")
        elif k in ('MemberExpr', 'ArraySubscriptExpr') or (k == 'UnaryOperator' and n.get('opcode') == '*'):
            v.unknown.add('a code read from memory')
        return v

    changed = True
    while changed:
        changed = False
        for key, fn in funcs.items():
            s = Val()
            for r, ctx in fn.returns:
                s.add(vals(fn, r, ctx, frozenset()))
            if s.key() != summ[key].key():
                summ[key] = s
                changed = True
    return summ


def header_docs(srcdir):
    """Public function -> (header, codes its comment names). A prototype's
    comment is the one just above it, or that of the prototype just above
    it (no blank line between: a group); comment lines that follow one
    another are one comment. An old name (MDT_DEPRECATED_FOR(new) before
    its prototype) is the new function under another name: its comment is
    the new one's."""
    docs = {}
    incdir = os.path.join(srcdir, 'libmdtools/include/mdtools')
    token = re.compile(r'/\*.*?\*/|^[ \t]*\n|^(?:MDT_INLINE )?[a-z_0-9 ]+[ *]+(mdt_[a-z0-9_]+)\('
                       r'|^MDT_DEPRECATED_FOR\((mdt_[a-z0-9_]+)\)', re.S | re.M)
    for h in sorted(os.listdir(incdir)):
        if not h.endswith('.h'):
            continue
        text = open(os.path.join(incdir, h)).read()
        comment, last, new = '', None, None
        for m in token.finditer(text):
            t = m.group(0)
            if t.startswith('/*'):
                comment = comment + t if last == 'comment' else t
                last = 'comment'
            elif m.group(2):
                new = m.group(2)
            elif m.group(1) and new:
                docs.setdefault(m.group(1), (h, docs.get(new, (h, set()))[1]))
                new = None
            elif m.group(1):
                docs.setdefault(m.group(1), (h, set(re.findall(r'\bMDT_[A-Z]+\b', comment)) & CODES))
                last = 'proto'
            else:
                comment, last = '', None
    return docs


def main():
    args = sys.argv[1:]
    show = '--show' in args
    args = [a for a in args if a != '--show']
    if not args and os.environ.get('MDT_TOP_SRCDIR') and os.environ.get('MDT_BUILDDIR'):
        args = [os.environ['MDT_TOP_SRCDIR'], os.environ['MDT_BUILDDIR']]
    if len(args) != 2:
        sys.exit(__doc__)
    srcdir, builddir = args
    if not shutil.which('clang'):
        print('skipped: clang is not there (Debian package clang)', file=sys.stderr)
        sys.exit(77)
    funcs = load(srcdir, builddir, sources(srcdir))
    summ = analyse(funcs)
    docs = header_docs(srcdir)
    bad = 0
    for name in sorted(docs):
        h, listed = docs[name]
        if name not in summ:
            continue  # not defined in the library (a macro) or returns no code
        s = summ[name]
        found = s.all_codes()
        skip = UNREACHABLE.get(name, {})
        for code in sorted(set(skip) - found):
            bad += 1
            print(f'{h}: {name}: UNREACHABLE says {code} cannot happen, but the analysis no longer '
                  f'finds it: drop the entry', file=sys.stderr)
        missing = found - listed - set(skip)
        if show:
            print(f'{h:13} {name:32} found: {" ".join(sorted(c[4:] for c in s.all_codes())) or "-"}'
                  f'  listed: {" ".join(sorted(c[4:] for c in listed)) or "-"}'
                  + (f'  cannot follow: {", ".join(sorted(s.unknown))}' if s.unknown else ''))
        if missing:
            bad += 1
            print(f'{h}: {name} can return {", ".join(sorted(missing))}, which its comment does not list',
                  file=sys.stderr)
    if bad:
        print(f'{bad} problems with the lists of codes', file=sys.stderr)
        sys.exit(1)
    print(f'{len(docs)} public functions: every code each can return is in its comment')


if __name__ == "__main__":
    main()
