#!/usr/bin/env python3
"""Differential test of libmdtools against monodis (Debian's mono-utils).

For every assembly of the installed Mono 4.5 framework, run tests/diff/mddump
(libmdtools' view: every cell of every table, the heaps, the identities) and
monodis (one table per option, plus the full disassembly for what no table
option prints), bring both into the same normalized cells and compare: the
row count of every table monodis exposes, and the decoded cells listed in
tests/diff/README.md. Where monodis prints a cell differently (escaping,
composed names, hex or words), both sides are normalized; where monodis is
wrong, the README lists the exception and this script excludes exactly it.

One line per file (OK, or FAIL and the first differences), then totals, then
the last line "N passed, M failed" counting files. Exit status 1 when any
file failed or the tools are missing.
"""

import argparse
import collections
import concurrent.futures
import glob
import hashlib
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
import mdtcheck  # noqa: E402  tests/common: the PASS/FAIL lines and the closing line

MONO_DIR = '/usr/lib/mono/4.5'
SMALL = 256 * 1024
BATCH = 16

# ECMA-335 II.22: table ids (the high byte of a token).
TID = {
    'Module': 0x00, 'TypeRef': 0x01, 'TypeDef': 0x02, 'FieldPtr': 0x03, 'Field': 0x04,
    'MethodPtr': 0x05, 'MethodDef': 0x06, 'ParamPtr': 0x07, 'Param': 0x08,
    'InterfaceImpl': 0x09, 'MemberRef': 0x0A, 'Constant': 0x0B, 'CustomAttribute': 0x0C,
    'FieldMarshal': 0x0D, 'DeclSecurity': 0x0E, 'ClassLayout': 0x0F, 'FieldLayout': 0x10,
    'StandAloneSig': 0x11, 'EventMap': 0x12, 'EventPtr': 0x13, 'Event': 0x14,
    'PropertyMap': 0x15, 'PropertyPtr': 0x16, 'Property': 0x17, 'MethodSemantics': 0x18,
    'MethodImpl': 0x19, 'ModuleRef': 0x1A, 'TypeSpec': 0x1B, 'ImplMap': 0x1C,
    'FieldRVA': 0x1D, 'Assembly': 0x20, 'AssemblyRef': 0x23, 'File': 0x26,
    'ExportedType': 0x27, 'ManifestResource': 0x28, 'NestedClass': 0x29,
    'GenericParam': 0x2A, 'MethodSpec': 0x2B, 'GenericParamConstraint': 0x2C,
}

# ECMA-335 II.24.2.6: coded indexes monodis prints as raw values
# (tag bits, tables in tag order).
CODED = {
    'TypeDefOrRef': (2, ['TypeDef', 'TypeRef', 'TypeSpec']),
    'HasSemantics': (1, ['Event', 'Property']),
    'TypeOrMethodDef': (1, ['TypeDef', 'MethodDef']),
    'HasFieldMarshal': (1, ['Field', 'Param']),
}


def tok(table, rid):
    return '0x%08x' % (TID[table] << 24 | rid)


def decode_coded(kind, value):
    bits, tables = CODED[kind]
    tag = value & ((1 << bits) - 1)
    if tag >= len(tables):
        return 'bad-tag-%d' % tag
    return tok(tables[tag], value >> bits)


def rid_of(token):
    return int(token, 16) & 0xFFFFFF


def table_of(token):
    return int(token, 16) >> 24


# --- flags: monodis prints words; turn them back into bits ----------------
# Each map: (mask or None, {word: value}); a word maps to bits, a masked
# group maps to the value under its mask (ECMA-335 II.23.1).

def words_to_bits(text, groups, bits):
    """Bits that the words in `text` stand for, or None for an unknown word.

    groups: {word: value} for enumerated sub-fields (access, code type);
    bits: {word: bit}. "unknown-flag-%2x" carries leftover bits in hex."""
    value = 0
    text = re.sub(r'unknown-flag-\s*([0-9a-f]+)',
                  lambda m: ' unknown-flag-%s ' % m.group(1), text)
    for w in text.split():
        if w.startswith('unknown-flag-'):
            value |= int(w[len('unknown-flag-'):], 16)
        elif w in groups:
            value |= groups[w]
        elif w in bits:
            value |= bits[w]
        else:
            return None
    return value


ACCESS = {'privatescope': 0, 'private': 1, 'famandassem': 2, 'assembly': 3, 'family': 4,
          'famorassem': 5, 'public': 6, 'invalid-flags': 7}
FIELD_BITS = {'static': 0x10, 'initonly': 0x20, 'literal': 0x40, 'notserialized': 0x80,
              'specialname': 0x200, 'FIXME:pinvokeimpl': 0x2000, 'rtspecialname': 0x400}
# HasFieldMarshal, HasDefault, HasFieldRVA are consumed without a word.
FIELD_SILENT = 0x1000 | 0x8000 | 0x0100
METHOD_BITS = {'static': 0x10, 'final': 0x20, 'virtual': 0x40, 'hidebysig': 0x80,
               'newslot': 0x100, 'abstract': 0x400, 'specialname': 0x800,
               'rtspecialname': 0x1000, 'export': 0x8, 'requiresecobj': 0x8000,
               'pinvokeimpl': 0x2000, 'strict': 0x200}
METHOD_SILENT = 0x4000  # HasSecurity
IMPL_GROUPS = {'cil': 0, 'native': 1, 'optil': 2, 'runtime': 3, 'managed': 0, 'unmanaged': 4}
IMPL_BITS = {'fwdref': 0x10, 'preservesig': 0x80, 'internalcall': 0x1000,
             'synchronized': 0x20, 'noinlining': 0x8, 'nooptimization': 0x40,
             'agressive-inlining': 0x100}
SEMANTICS_BITS = {'setter': 1, 'getter': 2, 'other': 4, 'add-on': 8, 'remove-on': 0x10,
                  'fire': 0x20}
SECURITY_ACTIONS = {
    'Demand': 2, 'Assert': 3, 'Deny': 4, 'PermitOnly': 5, 'LinkDemand': 6,
    'InheritanceDemand': 7, 'RequestMinimum': 8, 'RequestOptional': 9, 'RequestRefuse': 10,
    'NonCasDemand': 13, 'NonCasLinkDemand': 14, 'NonCasInheritance': 15,
    'LinkDemandChoice': 16, 'InheritanceDemandChoice': 17, 'DemandChoice': 18,
}
# has_cattr_get_table's names for the HasCustomAttribute parent.
CATTR_PARENT = {
    'MethodDef': 'MethodDef', 'FieldDef': 'Field', 'TypeRef': 'TypeRef', 'TypeDef': 'TypeDef',
    'Param': 'Param', 'InterfaceImpl': 'InterfaceImpl', 'MemberRef': 'MemberRef',
    'Module': 'Module', 'DeclSecurity?': 'DeclSecurity', 'Property': 'Property',
    'Event': 'Event', 'StandAloneSignature': 'StandAloneSig', 'ModuleRef': 'ModuleRef',
    'TypeSpec': 'TypeSpec', 'Assembly': 'Assembly', 'AssemblyRef': 'AssemblyRef',
    'File': 'File', 'ExportedType': 'ExportedType', 'Manifest': 'ManifestResource',
    'GenericParam': 'GenericParam', 'GenericParamConstraint': 'GenericParamConstraint',
}


# --- names -------------------------------------------------------------

def unquote(s):
    """Undo monodis' ILAsm escaping: 'name' quotes and backslashes in them."""
    return re.sub(r"'((?:[^'\\]|\\.)*)'", lambda m: re.sub(r'\\(.)', r'\1', m.group(1)), s)


def unescape_mddump(s):
    if '\\' not in s:
        return s
    def one(m):
        c = m.group(1)
        if c[0] == 'x':
            return chr(int(c[1:], 16))
        return {'t': '\t', 'n': '\n', 'r': '\r', '\\': '\\'}[c]
    return re.sub(r'\\(x[0-9a-f]{2}|[tnr\\])', one, s)


# --- mddump's view -------------------------------------------------------

class Dump:
    """Parsed output of mddump: tables, heaps, identities."""

    def __init__(self, text):
        self.nrows = {}
        self.tables = collections.defaultdict(lambda: [None])
        self.heaps = {}
        self.strs = {}
        self.us = {}
        self.asm = None
        self.asmref = {}
        self.errors = []
        self.kind = None
        for line in text.split('\n'):
            if not line:
                continue
            f = line.split('\t')
            kind = f[0]
            if kind == 'row':
                d = {}
                for kv in f[3:]:
                    if kv.startswith('!'):      # the row itself did not open
                        self.errors.append('%s %s: %s' % (f[1], f[2], kv[1:]))
                        continue
                    k, _, v = kv.partition('=')
                    if v.startswith('!'):
                        self.errors.append('%s %s %s: %s' % (f[1], f[2], k, v[1:]))
                    d[k] = unescape_mddump(v)
                rows = self.tables[f[1]]
                if int(f[2]) != len(rows):
                    self.errors.append('%s: row %s out of order' % (f[1], f[2]))
                rows.append(d)
            elif kind == 'rows':
                self.nrows[f[1]] = int(f[2])
            elif kind == 'str':
                self.strs[int(f[1], 16)] = unescape_mddump(f[2])
            elif kind == 'us':
                off = int(f[1], 16)
                if f[2].startswith('!'):
                    self.errors.append('#US 0x%x: %s' % (off, f[2][1:]))
                    continue
                self.us[off] = (int(f[2]), bytes.fromhex(f[3]), unescape_mddump(f[4]))
            elif kind == 'heap':
                self.heaps[f[1]] = (int(f[2]), f[3] if len(f) > 3 else None)
            elif kind in ('asm', 'asmref'):
                g = f[1:] if kind == 'asm' else f[2:]
                ident = dict(zip(('name', 'version', 'culture', 'flags', 'hashalg', 'token',
                                  'format'), [unescape_mddump(x) for x in g]))
                if kind == 'asm':
                    self.asm = ident
                else:
                    self.asmref[int(f[1])] = ident
            elif kind == 'error':
                self.errors.append(unescape_mddump('\t'.join(f[1:])).lstrip('!'))
            elif kind == 'image':
                self.kind = f[1]
            if any(x.startswith('!') for x in f[1:]) and kind not in ('row', 'us', 'error'):
                self.errors.append(unescape_mddump(line))
        self._owners = {}
        self._nested = None

    def row(self, table, rid):
        rows = self.tables.get(table)
        if rows is None or rid < 1 or rid >= len(rows):
            return None
        return rows[rid]

    def n(self, table):
        return self.nrows.get(table, 0)

    def owner(self, table, rid):
        """TypeDef rid whose FieldList/MethodList run holds `rid`."""
        col = {'Field': 'FieldList#', 'MethodDef': 'MethodList#'}[table]
        if table not in self._owners:
            own = {}
            for t in range(1, self.n('TypeDef') + 1):
                first, _, count = self.row('TypeDef', t)[col].partition('+')
                for i in range(int(first), int(first) + int(count)):
                    own[i] = t
            self._owners[table] = own
        return self._owners[table].get(rid)

    def enclosing(self, rid):
        if self._nested is None:
            self._nested = {}
            for i in range(1, self.n('NestedClass') + 1):
                r = self.row('NestedClass', i)
                self._nested[rid_of(r['NestedClass'])] = rid_of(r['EnclosingClass'])
        return self._nested.get(rid)

    def typedef_display(self, rid, depth=0):
        """get_typedef's rendering: "(null)" for <Module>, Outer/Inner, ns.name."""
        if rid == 1:
            return '(null)'
        r = self.row('TypeDef', rid)
        if r is None or depth > 64:
            return '<bad typedef %d>' % rid
        enc = self.enclosing(rid)
        if enc:
            return '%s/%s' % (self.typedef_display(enc, depth + 1), r['TypeName'])
        ns = r['TypeNamespace']
        return '%s.%s' % (ns, r['TypeName']) if ns else r['TypeName']

    def typeref_display(self, rid, depth=0):
        """get_typeref's rendering, scope names unescaped: [asm]ns.name, ..."""
        r = self.row('TypeRef', rid)
        if r is None or depth > 64:
            return '<bad typeref %d>' % rid
        ns, name = r['TypeNamespace'], r['TypeName']
        full = '%s.%s' % (ns, name) if ns else name
        scope = r['ResolutionScope']
        t, srid = table_of(scope), rid_of(scope)
        if t == TID['AssemblyRef']:
            return '[%s]%s' % (self.row('AssemblyRef', srid)['Name'], full)
        if t == TID['ModuleRef']:
            return '[.module %s]%s' % (self.row('ModuleRef', srid)['Name'], full)
        if t == TID['Module']:
            return '[%s] %s' % (self.row('Module', 1)['Name'], full)
        if t == TID['TypeRef']:
            return '%s/%s' % (self.typeref_display(srid, depth + 1), name)
        return '<scope %s>' % scope

    def typeref_plain(self, rid, depth=0):
        """The name part of a TypeRef (nesting with '/'), without its scope."""
        r = self.row('TypeRef', rid)
        if r is None or depth > 64:
            return '<bad typeref %d>' % rid
        scope = r['ResolutionScope']
        if table_of(scope) == TID['TypeRef']:
            return '%s/%s' % (self.typeref_plain(rid_of(scope), depth + 1), r['TypeName'])
        ns = r['TypeNamespace']
        return '%s.%s' % (ns, r['TypeName']) if ns else r['TypeName']

    def type_display(self, token):
        """get_typedef_or_ref for a TypeDef or TypeRef token (None otherwise)."""
        t, rid = table_of(token), rid_of(token)
        if t == TID['TypeDef']:
            return self.typedef_display(rid)
        if t == TID['TypeRef']:
            return self.typeref_display(rid)
        return None


def blob(cell):
    """(index, bytes) of a BLOB cell "INDEX:HEX"."""
    idx, _, h = cell.partition(':')
    return int(idx), bytes.fromhex(h)


# --- comparison bookkeeping ---------------------------------------------

class Cmp:
    def __init__(self, name):
        self.name = name
        self.diffs = []
        self.cells = 0
        self.rows = 0
        self.tables = 0
        self.excepted = collections.Counter()

    def eq(self, where, ours, theirs):
        self.cells += 1
        if ours != theirs:
            self.diffs.append('%s: mdtools %r, monodis %r' % (where, ours, theirs))

    def bad(self, where, what):
        self.diffs.append('%s: %s' % (where, what))

    def except_(self, reason, n=1):
        self.excepted[reason] += n

    def count(self, table, M, recs, header=None):
        """Row count: rows monodis printed (and its "(1..N)" header)."""
        self.tables += 1
        self.rows += len(recs)
        self.eq('%s row count' % table, M.n(table), len(recs))
        if header is not None and header != len(recs):
            self.bad(table, 'monodis header says %d rows but prints %d' % (header, len(recs)))
        want = list(range(1, len(recs) + 1))
        if list(recs) != want:
            self.bad(table, 'monodis row numbers are not 1..%d' % len(recs))


def numbered(text):
    """{rid: (rest of the "N: ..." line, [continuation lines])} and the
    "(1..N)" of the header line when there is one."""
    recs = {}
    header = None
    cur = None
    lines = text.split('\n')
    if lines:
        m = re.search(r'\(1\.\.(\d+)\)\s*$', lines[0])
        if m:
            header = int(m.group(1))
    for line in lines[1:]:
        m = re.match(r'(\d+): ?(.*)$', line, re.S)
        if m:
            cur = int(m.group(1))
            recs[cur] = (m.group(2), [])
        elif cur is not None:
            recs[cur][1].append(line)
    return recs, header


def hexbytes(text):
    return bytes(int(x, 16) for x in re.findall(r'\b[0-9A-Fa-f]{2}\b', text))


def bytearray_bytes(lines):
    """Bytes of monodis' `bytearray (` dump: hex pairs before each "//"."""
    out = bytearray()
    for line in lines:
        part = line.split('//', 1)[0]
        part = part.replace('bytearray (', '')
        out += hexbytes(part)
    return bytes(out)


def strescape_undo(s):
    """Undo g_strescape for the characters monodis lets through."""
    def one(m):
        c = m.group(1)
        if c[0] in '01234567':
            return chr(int(c, 8))
        return {'n': '\n', 'r': '\r', 't': '\t', 'b': '\b', 'f': '\f', 'v': '\v',
                '\\': '\\', '"': '"'}.get(c, c)
    return re.sub(r'\\([0-7]{1,3}|.)', one, s)


def monodis_ustring(first, more):
    """A user string or string constant as monodis prints it, normalized to
    ('text', str) or ('bytes', bytes)."""
    if first.startswith('"'):
        return ('text', strescape_undo(first[1:first.rindex('"')]))
    return ('bytes', bytearray_bytes([first] + more))


def mdtools_ustring(data):
    """The same normalization of UTF-16LE bytes (plus a trailing flag byte
    for #US entries) by the rule monodis uses: text when every code unit is
    a printable ASCII character, \\r, \\n or \\t, else the raw bytes."""
    n = len(data) // 2 * 2
    chars = []
    for i in range(0, n, 2):
        lo, hi = data[i], data[i + 1]
        if hi or not (0x20 <= lo <= 0x7E or lo in (0x0D, 0x0A, 0x09)):
            return ('bytes', bytes(data))
        chars.append(chr(lo))
    return ('text', ''.join(chars))


def stringify_double(r):
    s = '%.17g.' % r
    if re.search(r'[.eE]', s).start() != len(s) - 1:
        s = s[:-1]
    return s


def render_constant(ctype, data):
    """A Constant's type and value as monodis' get_constant prints them."""
    def u(fmt):
        return struct.unpack_from(fmt, data)[0] if len(data) >= struct.calcsize(fmt) else 0
    if ctype == 0x02:
        return 'bool(true)' if data and data[0] else 'bool(false)'
    if ctype == 0x03:
        return 'char(0x%04x)' % u('<H')
    if ctype in (0x04, 0x05):
        return 'int8(0x%02x)' % (data[0] if data else 0)
    if ctype in (0x06, 0x07):
        return 'int16(0x%08x)' % u('<H')
    if ctype in (0x08, 0x09):
        return 'int32(0x%08x)' % u('<I')
    if ctype in (0x0A, 0x0B):
        return 'int64(0x%016x)' % u('<Q')
    if ctype == 0x0C:
        r = u('<f')
        if math.isfinite(r):
            return 'float32(%s)' % stringify_double(r)
        return 'float32(0x%08x)' % u('<I')
    if ctype == 0x0D:
        r = u('<d')
        if math.isfinite(r):
            return 'float64(%s)' % stringify_double(r)
        return 'float64(0x%016x)' % u('<Q')
    if ctype == 0x12:
        return 'nullref'
    return 'type 0x%02x' % ctype


# --- the table checks: (monodis option, function) -----------------------

def chk_module(c, M, text):
    recs, hdr = numbered(text)
    c.count('Module', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('Module', rid)
        m = re.fullmatch(r'(.*) (\d+) \{([0-9A-F-]+)\}', rest)
        if not r or not m:
            c.bad('Module %d' % rid, 'unparsed %r' % rest)
            continue
        c.eq('Module %d Name' % rid, r['Name'], m.group(1))
        c.eq('Module %d Mvid' % rid, r['Mvid'], '%s:%s' % (m.group(2), m.group(3).lower()))


def chk_typeref(c, M, text):
    recs, hdr = numbered(text)
    c.count('TypeRef', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        if M.row('TypeRef', rid) is None:
            continue
        # Only the scope in brackets is escaped (get_escaped_name).
        theirs = re.sub(r"^\[(\.module )?('(?:[^'\\]|\\.)*')\]",
                        lambda m: '[%s%s]' % (m.group(1) or '', unquote(m.group(2))), rest)
        c.eq('TypeRef %d scope+name' % rid, M.typeref_display(rid), theirs)


def chk_typedef(c, M, text):
    recs, hdr = numbered(text)
    c.count('TypeDef', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('TypeDef', rid)
        m = re.fullmatch(r'(.*) \(flist=(\d+), mlist=(\d+), flags=0x([0-9a-f]+), '
                         r'extends=0x([0-9a-f]+)\)', rest)
        if not r or not m:
            c.bad('TypeDef %d' % rid, 'unparsed %r' % rest)
            continue
        w = 'TypeDef %d ' % rid
        c.eq(w + 'namespace.name', M.typedef_display(rid), m.group(1))
        c.eq(w + 'FieldList', rid_of(r['FieldList']), int(m.group(2)))
        c.eq(w + 'MethodList', rid_of(r['MethodList']), int(m.group(3)))
        c.eq(w + 'Flags', int(r['Flags'], 16), int(m.group(4), 16))
        c.eq(w + 'Extends', r['Extends'], decode_coded('TypeDefOrRef', int(m.group(5), 16)))


def owner_header(M, table, rid):
    t = M.owner(table, rid)
    if t is None:
        return None
    r = M.row('TypeDef', t)
    return '%s.%s' % (r['TypeNamespace'], r['TypeName'])


def chk_fields(c, M, text):
    """--fields: Field name, flags, owner; FieldLayout offsets; FieldRVA."""
    recs, hdr = numbered(text)
    c.count('Field', M, recs, hdr)
    header = None
    layout = {}
    rvas = {}
    cur = None
    for line in text.split('\n')[1:]:
        if line.startswith('########## '):
            header = line[len('########## '):]
            continue
        m = re.match(r'(\d+): (.*)$', line)
        if m:
            cur = int(m.group(1))
            left, _, flags = m.group(2).rpartition(': ')
            name = left.rsplit(' ', 1)[-1]
            r = M.row('Field', cur)
            if r is None:
                continue
            w = 'Field %d ' % cur
            c.eq(w + 'Name', r['Name'], name)
            bits = words_to_bits(flags, ACCESS, FIELD_BITS)
            c.eq(w + 'Flags (as monodis words)', int(r['Flags'], 16) & ~FIELD_SILENT, bits)
            c.eq(w + 'owner TypeDef', owner_header(M, 'Field', cur), header)
            continue
        m = re.match(r'\texplicit offset: (-?\d+)$', line)
        if m and cur:
            layout[cur] = int(m.group(1)) & 0xFFFFFFFF
        m = re.match(r'\trva: (\d+)$', line)
        if m and cur:
            rvas[cur] = int(m.group(1))
    # FieldLayout and FieldRVA rows as --fields shows them under each field
    # (it walks both tables in field order, as they must be sorted).
    c.tables += 1
    c.eq('FieldLayout row count', M.n('FieldLayout'), len(layout))
    for i in range(1, M.n('FieldLayout') + 1):
        r = M.row('FieldLayout', i)
        f = rid_of(r['Field'])
        c.eq('FieldLayout %d Offset (field %d)' % (i, f), int(r['Offset'], 16), layout.get(f))
    for i in range(1, M.n('FieldRVA') + 1):
        r = M.row('FieldRVA', i)
        f = rid_of(r['Field'])
        c.eq('FieldRVA %d RVA (field %d, --fields)' % (i, f), int(r['RVA'], 16), rvas.get(f))


def chk_method(c, M, text):
    """--method: ParamList, ImplFlags, owner (names, flags, RVA: from the IL)."""
    recs, hdr = numbered(text)
    c.count('MethodDef', M, recs, hdr)
    header = None
    for line in text.split('\n')[1:]:
        if line.startswith('########## '):
            header = line[len('########## '):]
            continue
        m = re.match(r'(\d+): (.*)$', line)
        if not m:
            continue
        rid, rest = int(m.group(1)), m.group(2)
        r = M.row('MethodDef', rid)
        if r is None:
            continue
        w = 'MethodDef %d ' % rid
        c.eq(w + 'owner TypeDef', owner_header(M, 'MethodDef', rid), header)
        if rest.startswith('failed to parse due to ') and unresolved(c, rest):
            continue
        m = re.search(r'\(param: (\d+) impl_flags: (.*)\)$', rest)
        if not m:
            c.bad(w, 'unparsed %r' % rest)
            continue
        c.eq(w + 'ParamList', rid_of(r['ParamList']), int(m.group(1)))
        c.eq(w + 'ImplFlags (as monodis words)', int(r['ImplFlags'], 16),
             words_to_bits(m.group(2).replace('agressive-inlining', ' agressive-inlining '),
                           IMPL_GROUPS, IMPL_BITS))


def chk_param(c, M, text):
    recs, hdr = numbered(text)
    c.count('Param', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('Param', rid)
        m = re.fullmatch(r'0x([0-9a-f]+) (\d+) (.*)', rest, re.S)
        if not r or not m:
            c.bad('Param %d' % rid, 'unparsed %r' % rest)
            continue
        c.eq('Param %d Flags' % rid, int(r['Flags'], 16), int(m.group(1), 16))
        c.eq('Param %d Sequence' % rid, int(r['Sequence'], 16), int(m.group(2)))
        c.eq('Param %d Name' % rid, r['Name'], m.group(3))


def chk_interface(c, M, text):
    recs, hdr = numbered(text)
    c.count('InterfaceImpl', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('InterfaceImpl', rid)
        cls, sep, iface = rest.partition(' implements ')
        if not r or not sep:
            c.bad('InterfaceImpl %d' % rid, 'unparsed %r' % rest)
            continue
        c.eq('InterfaceImpl %d Class' % rid, M.typedef_display(rid_of(r['Class'])), cls)
        ours = M.type_display(r['Interface'])
        if ours is None:
            c.except_('TypeSpec names need a signature decoder')
        else:
            c.eq('InterfaceImpl %d Interface' % rid, ours, unquote(iface))


MEMBERREF_PARENT = {'TypeDef': 'TypeDef', 'TypeRef': 'TypeRef', 'ModuleRef': 'ModuleRef',
                    'MethodDef': 'MethodDef', 'TypeSpec': 'TypeSpec'}


def chk_memberref(c, M, text):
    recs, hdr = numbered(text)
    c.count('MemberRef', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('MemberRef', rid)
        m = re.fullmatch(r'(\w+)\[(\d+)\] (.*)', rest, re.S)
        if not r or not m or m.group(1) not in MEMBERREF_PARENT:
            c.bad('MemberRef %d' % rid, 'unparsed %r' % rest)
            continue
        c.eq('MemberRef %d Class' % rid, r['Class'],
             tok(MEMBERREF_PARENT[m.group(1)], int(m.group(2))))
        c.eq('MemberRef %d Name' % rid, r['Name'], m.group(3))


def chk_constant(c, M, text):
    recs, hdr = numbered(text)
    c.count('Constant', M, recs, hdr)
    parents = {'Field': 'Field', 'Param': 'Param', 'Property': 'Property'}
    for rid, (rest, more) in recs.items():
        r = M.row('Constant', rid)
        m = re.fullmatch(r'Parent= (\w*): (\d+) (.*)', rest, re.S)
        if not r or not m or m.group(1) not in parents:
            c.bad('Constant %d' % rid, 'unparsed %r' % rest)
            continue
        w = 'Constant %d ' % rid
        c.eq(w + 'Parent', r['Parent'], tok(parents[m.group(1)], int(m.group(2))))
        ctype = int(r['Type'], 16)
        _, data = blob(r['Value'])
        value = m.group(3)
        if ctype == 0x0E:
            c.eq(w + 'Type+Value', ('string',) + mdtools_ustring(data),
                 ('string',) + monodis_ustring(value, more))
        else:
            c.eq(w + 'Type+Value', render_constant(ctype, data), value)


def ctor_type(M, token):
    """Plain name of the type declaring a custom attribute's constructor."""
    t, rid = table_of(token), rid_of(token)
    if t == TID['MethodDef']:
        owner = M.owner('MethodDef', rid)
        return M.typedef_display(owner) if owner else None
    if t == TID['MemberRef']:
        cls = M.row('MemberRef', rid)['Class']
        ct, crid = table_of(cls), rid_of(cls)
        if ct == TID['TypeRef']:
            return M.typeref_plain(crid)
        if ct == TID['TypeDef']:
            return M.typedef_display(crid)
    return None


def chk_customattr(c, M, text):
    recs, hdr = numbered(text)
    c.count('CustomAttribute', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('CustomAttribute', rid)
        m = re.match(r'(\S+): (\d+): (.*)', rest, re.S)
        if not r or not m or m.group(1) not in CATTR_PARENT:
            c.bad('CustomAttribute %d' % rid, 'unparsed %r' % rest)
            continue
        w = 'CustomAttribute %d ' % rid
        c.eq(w + 'Parent', r['Parent'], tok(CATTR_PARENT[m.group(1)], int(m.group(2))))
        if unresolved(c, m.group(3)):
            continue
        ours = ctor_type(M, r['Type'])
        mm = re.search(r"(?:class|valuetype) (.*?)::'\.ctor'\(", m.group(3))
        if ours is None:
            c.except_('TypeSpec names need a signature decoder')
            continue
        theirs = re.sub(r'^\[[^\]]*\]', '', mm.group(1)) if mm else m.group(3)
        # The scope is the assembly the class resolved to (a type forwarder
        # moves it), so only the type's own name is compared.
        c.eq(w + 'Type (constructor\'s class)', ours, unquote(theirs))


def chk_marshal(c, M, text):
    recs, hdr = numbered(text)
    c.count('FieldMarshal', M, recs, hdr)
    for rid, (rest, more) in recs.items():
        r = M.row('FieldMarshal', rid)
        m = re.match(r'\(0x([0-9a-f]+)\) (Field|Param) (\d+): ', rest)
        enc = [x for x in more if x.startswith('\tblob encoding: ')]
        if not r or not m or not enc:
            c.bad('FieldMarshal %d' % rid, 'unparsed %r' % rest)
            continue
        c.eq('FieldMarshal %d Parent' % rid, r['Parent'],
             decode_coded('HasFieldMarshal', int(m.group(1), 16)))
        c.eq('FieldMarshal %d NativeType' % rid, blob(r['NativeType'])[1],
             hexbytes(enc[0][len('\tblob encoding: '):]))


def chk_declsec(c, M, text):
    recs, hdr = numbered(text)
    c.count('DeclSecurity', M, recs, hdr)
    parents = {'TypeDef': 'TypeDef', 'MethodDef': 'MethodDef', 'Assembly': 'Assembly'}
    for rid, (rest, _) in recs.items():
        r = M.row('DeclSecurity', rid)
        m = re.match(r'(\S+) on (\w*) (\d+)', rest)
        if not r or not m or m.group(2) not in parents:
            c.bad('DeclSecurity %d' % rid, 'unparsed %r' % rest[:80])
            continue
        a = m.group(1)
        action = int(a, 16) if a.startswith('0x') else SECURITY_ACTIONS.get(a, a)
        c.eq('DeclSecurity %d Action' % rid, int(r['Action'], 16), action)
        c.eq('DeclSecurity %d Parent' % rid, r['Parent'], tok(parents[m.group(2)],
                                                             int(m.group(3))))


def chk_classlayout(c, M, text):
    recs, hdr = numbered(text)
    c.count('ClassLayout', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('ClassLayout', rid)
        m = re.fullmatch(r'PackingSize=(\d+)  ClassSize=(\d+)  Parent=(.*)', rest)
        if not r or not m:
            c.bad('ClassLayout %d' % rid, 'unparsed %r' % rest)
            continue
        c.eq('ClassLayout %d PackingSize' % rid, int(r['PackingSize'], 16), int(m.group(1)))
        c.eq('ClassLayout %d ClassSize' % rid, int(r['ClassSize'], 16),
             int(m.group(2)) & 0xFFFFFFFF)
        c.eq('ClassLayout %d Parent' % rid, M.typedef_display(rid_of(r['Parent'])), m.group(3))


def chk_standalonesig(c, M, text):
    recs, hdr = numbered(text)
    c.count('StandAloneSig', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('StandAloneSig', rid)
        m = re.fullmatch(r'blob\[0x([0-9a-f]+)\] = (.*)', rest)
        if not r or not m:
            c.bad('StandAloneSig %d' % rid, 'unparsed %r' % rest)
            continue
        c.eq('StandAloneSig %d Signature' % rid, blob(r['Signature']),
             (int(m.group(1), 16), hexbytes(m.group(2))))


def chk_event(c, M, text):
    recs, hdr = numbered(text)
    c.count('Event', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('Event', rid)
        if not r:
            continue
        special = rest.endswith(' specialname ')
        body = rest[:-len(' specialname ')] if special else rest[:-1]
        typ, _, name = body.rpartition(' ')
        w = 'Event %d ' % rid
        c.eq(w + 'Name', r['Name'], name)
        c.eq(w + 'EventFlags & specialname', int(r['EventFlags'], 16) & 0x200,
             0x200 if special else 0)
        ours = M.type_display(r['EventType'])
        if ours is None:
            c.except_('TypeSpec names need a signature decoder')
        else:
            c.eq(w + 'EventType', ours, unquote(typ))


def chk_propertymap(c, M, text):
    recs, hdr = numbered(text)
    c.count('PropertyMap', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('PropertyMap', rid)
        m = re.fullmatch(r'(.*) \((\d+)\) (\d+)', rest)
        if not r or not m:
            c.bad('PropertyMap %d' % rid, 'unparsed %r' % rest)
            continue
        w = 'PropertyMap %d ' % rid
        c.eq(w + 'Parent', rid_of(r['Parent']), int(m.group(2)))
        c.eq(w + 'Parent name', M.typedef_display(rid_of(r['Parent'])), m.group(1))
        c.eq(w + 'PropertyList', rid_of(r['PropertyList']), int(m.group(3)))


def chk_property(c, M, text):
    recs, hdr = numbered(text)
    c.count('Property', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('Property', rid)
        if not r:
            continue
        # "TYPE NAME (PARAMS) FLAGS": type and parameters come from the
        # signature and may hold spaces and parentheses themselves, so the
        # name is looked for where it must be rather than split out.
        m = re.search(r'\) ((?:special |runtime |hasdefault )*)$', rest)
        c.eq('Property %d Name' % rid, True, bool(m) and (' %s (' % r['Name']) in rest)
        if m:
            flags = words_to_bits(m.group(1), {}, {'special': 0x200, 'runtime': 0x400,
                                                   'hasdefault': 0x1000})
            c.eq('Property %d Flags' % rid, int(r['Flags'], 16) & 0x1600, flags)


def chk_methodsem(c, M, text):
    recs, hdr = numbered(text)
    c.count('MethodSemantics', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('MethodSemantics', rid)
        m = re.fullmatch(r'\[(\d+)\] (.*) method: (-?\d+) (property|event) (\d+)', rest)
        if not r or not m:
            c.bad('MethodSemantics %d' % rid, 'unparsed %r' % rest)
            continue
        w = 'MethodSemantics %d ' % rid
        c.eq(w + 'Semantics', int(r['Semantics'], 16),
             words_to_bits(m.group(2), {}, SEMANTICS_BITS))
        # monodis prints the MethodDef rid minus one (README, exception 1).
        c.eq(w + 'Method', rid_of(r['Method']), int(m.group(3)) + 1)
        c.eq(w + 'Association', r['Association'],
             decode_coded('HasSemantics', int(m.group(1))))
        c.eq(w + 'Association (words)', r['Association'],
             tok('Property' if m.group(4) == 'property' else 'Event', int(m.group(5))))


def unresolved(c, text):
    """monodis could not load an assembly the text depends on (README,
    exception 4): count it and tell the caller to skip the cell."""
    if 'Could not load file or assembly' in text or '<BROKEN CLASS' in text:
        c.except_('monodis cannot resolve a referenced assembly')
        return True
    return False


def method_name_in(M, token, text):
    """Does monodis' rendering of a method mention its name as "::NAME("?"""
    t, rid = table_of(token), rid_of(token)
    table = {TID['MethodDef']: 'MethodDef', TID['MemberRef']: 'MemberRef'}.get(t)
    if table is None or M.row(table, rid) is None:
        return None
    name = M.row(table, rid)['Name']
    plain = unquote(text)
    return ('::%s(' % name) in plain or ('::%s <[' % name) in plain or \
        ('::%s (' % name) in plain


def chk_methodimpl(c, M, text):
    recs, hdr = numbered(text)
    c.count('MethodImpl', M, recs, hdr)
    for rid, (rest, more) in recs.items():
        r = M.row('MethodImpl', rid)
        decl = [x[len('\tdecl: '):] for x in more if x.startswith('\tdecl: ')]
        impl = [x[len('\timpl: '):] for x in more if x.startswith('\timpl: ')]
        if not r or not decl or not impl:
            c.bad('MethodImpl %d' % rid, 'unparsed %r' % rest)
            continue
        w = 'MethodImpl %d ' % rid
        c.eq(w + 'Class', M.typedef_display(rid_of(r['Class'])), rest)
        if not unresolved(c, impl[0]):
            c.eq(w + 'MethodBody name', True, method_name_in(M, r['MethodBody'], impl[0]))
        if not unresolved(c, decl[0]):
            c.eq(w + 'MethodDeclaration name', True,
                 method_name_in(M, r['MethodDeclaration'], decl[0]))


def chk_moduleref(c, M, text):
    recs, hdr = numbered(text)
    c.count('ModuleRef', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('ModuleRef', rid)
        if r:
            c.eq('ModuleRef %d Name' % rid, r['Name'], rest)


def chk_count_only(table):
    def chk(c, M, text):
        recs, hdr = numbered(text)
        c.count(table, M, recs, hdr)
    return chk


def chk_implmap(c, M, text):
    recs, hdr = numbered(text)
    c.count('ImplMap', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('ImplMap', rid)
        m = re.fullmatch(r'(.*) (\d+) \((\S*) (.*)\)', rest)
        if not r or not m:
            c.bad('ImplMap %d' % rid, 'unparsed %r' % rest)
            continue
        w = 'ImplMap %d ' % rid
        c.eq(w + 'MappingFlags', int(r['MappingFlags'], 16), int(m.group(2)))
        c.eq(w + 'ImportName', r['ImportName'], m.group(3))
        scope = M.row('ModuleRef', rid_of(r['ImportScope']))
        c.eq(w + 'ImportScope name', scope['Name'] if scope else None, m.group(4))
        if not unresolved(c, m.group(1)):
            c.eq(w + 'MemberForwarded name', True,
                 method_name_in(M, r['MemberForwarded'], m.group(1)))


def chk_methodspec(c, M, text):
    recs, hdr = numbered(text)
    c.count('MethodSpec', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('MethodSpec', rid)
        if not r:
            continue
        # "RET class T::NAME<INST> (PARAMS), <INST>": the instantiation and
        # the types come from blobs; the method's name is checked.
        if unresolved(c, rest):
            continue
        t, mrid = table_of(r['Method']), rid_of(r['Method'])
        table = {TID['MethodDef']: 'MethodDef', TID['MemberRef']: 'MemberRef'}.get(t)
        target = M.row(table, mrid) if table else None
        c.eq('MethodSpec %d Method name' % rid, True,
             bool(target) and ('::%s<' % target['Name']) in unquote(rest))


def chk_fieldrva(c, M, text):
    recs, hdr = numbered(text)
    c.count('FieldRVA', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('FieldRVA', rid)
        m = re.fullmatch(r'Field (\d+): ([0-9a-f]+)', rest)
        if not r or not m:
            c.bad('FieldRVA %d' % rid, 'unparsed %r' % rest)
            continue
        c.eq('FieldRVA %d Field' % rid, rid_of(r['Field']), int(m.group(1)))
        c.eq('FieldRVA %d RVA' % rid, int(r['RVA'], 16), int(m.group(2), 16))


def public_key_token(key):
    return hashlib.sha1(key).digest()[-8:][::-1].hex()


def chk_assembly(c, M, text):
    lines = text.split('\n')
    fields = {}
    key = bytearray()
    for i, line in enumerate(lines):
        m = re.match(r'(Name|Hash Algoritm|Version|Flags|PublicKey|Culture): *(.*)$', line)
        if m:
            fields[m.group(1)] = m.group(2)
        elif re.match(r'0x[0-9A-F]{8}: ', line):
            key += hexbytes(line[12:])
    recs = {1: None} if 'Name' in fields else {}
    c.count('Assembly', M, recs)
    r = M.row('Assembly', 1)
    if not recs or not r:
        return
    c.eq('Assembly 1 Name', r['Name'], fields['Name'])
    c.eq('Assembly 1 HashAlgId', int(r['HashAlgId'], 16), int(fields['Hash Algoritm'], 16))
    c.eq('Assembly 1 Version', '%d.%d.%d.%d' % tuple(
        int(r[k], 16) for k in ('MajorVersion', 'MinorVersion', 'BuildNumber',
                                'RevisionNumber')), fields['Version'])
    c.eq('Assembly 1 Flags', int(r['Flags'], 16), int(fields['Flags'], 16))
    idx, data = blob(r['PublicKey'])
    c.eq('Assembly 1 PublicKey', (idx, data),
         (int(re.search(r'0x([0-9a-f]+)', fields['PublicKey']).group(1), 16), bytes(key)))
    c.eq('Assembly 1 Culture', r['Culture'], fields['Culture'])
    if M.asm:
        c.eq('Assembly identity token', M.asm['token'],
             public_key_token(bytes(key)) if key else '-')
        c.eq('Assembly identity', M.asm['format'],
             '%s, Version=%s, Culture=%s, PublicKeyToken=%s' % (
                 fields['Name'], fields['Version'], fields['Culture'] or 'neutral',
                 public_key_token(bytes(key)) if key else 'null'))


def chk_assemblyref(c, M, text):
    recs, hdr = numbered(text)
    c.count('AssemblyRef', M, recs, hdr)
    for rid, (rest, more) in recs.items():
        r = M.row('AssemblyRef', rid)
        if not r:
            continue
        w = 'AssemblyRef %d ' % rid
        rec = {'Version': rest.partition('=')[2]}
        key, hashv, into = bytearray(), bytearray(), None
        for line in more:
            m = re.match(r'\t(Name|Flags)=(.*)$', line)
            if m:
                rec[m.group(1)] = m.group(2)
            elif line == '\tPublic Key:':
                into = key
            elif line == '\tHash:':
                into = hashv
            elif line.startswith('\t'):
                into = None
            elif re.match(r'0x[0-9A-F]{8}: ', line) and into is not None:
                into += hexbytes(line[12:])
        c.eq(w + 'Version', '%d.%d.%d.%d' % tuple(
            int(r[k], 16) for k in ('MajorVersion', 'MinorVersion', 'BuildNumber',
                                    'RevisionNumber')), rec['Version'])
        c.eq(w + 'Name', r['Name'], rec.get('Name'))
        flags = int(rec.get('Flags', '-1'), 16)
        c.eq(w + 'Flags', int(r['Flags'], 16), flags)
        c.eq(w + 'PublicKeyOrToken', blob(r['PublicKeyOrToken'])[1], bytes(key))
        c.eq(w + 'HashValue', blob(r['HashValue'])[1], bytes(hashv))
        ident = M.asmref.get(rid)
        if ident:
            want = '-'
            if key:
                want = public_key_token(bytes(key)) if flags & 1 else bytes(key).hex()
            c.eq(w + 'public key token', ident['token'], want)
            c.eq(w + 'identity name+version', (ident['name'], ident['version']),
                 (rec.get('Name'), rec['Version']))


def chk_file(c, M, text):
    recs, hdr = numbered(text)
    c.count('File', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('File', rid)
        m = re.fullmatch(r'(.*) (nometadata|containsmetadata) \[(.*)\]', rest)
        if not r or not m:
            c.bad('File %d' % rid, 'unparsed %r' % rest)
            continue
        c.eq('File %d Name' % rid, r['Name'], m.group(1))
        c.eq('File %d Flags & ContainsNoMetaData' % rid, int(r['Flags'], 16) & 1,
             1 if m.group(2) == 'nometadata' else 0)
        c.eq('File %d HashValue' % rid, blob(r['HashValue'])[1], hexbytes(m.group(3)))


def implementation(text):
    """get_manifest_implementation's words back to (table, rid)."""
    if text == 'current module':
        return None
    kind, _, n = text.partition(' ')
    return (kind, int(n))


def implementation_ours(token):
    if rid_of(token) == 0:
        return None
    name = {TID['File']: 'file', TID['AssemblyRef']: 'assemblyref',
            TID['ExportedType']: 'exportedtype'}.get(table_of(token), '?')
    return (name, rid_of(token))


def chk_exported(c, M, text):
    recs, hdr = numbered(text)
    c.count('ExportedType', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('ExportedType', rid)
        m = re.fullmatch(r'(.*) is in (.*), index=([0-9a-f]+), flags=0x([0-9a-f]+)', rest)
        if not r or not m:
            c.bad('ExportedType %d' % rid, 'unparsed %r' % rest)
            continue
        w = 'ExportedType %d ' % rid
        ns = r['TypeNamespace']
        c.eq(w + 'namespace.name', '%s.%s' % (ns, r['TypeName']) if ns else r['TypeName'],
             m.group(1))
        c.eq(w + 'Implementation', implementation_ours(r['Implementation']),
             implementation(m.group(2)))
        c.eq(w + 'TypeDefId', int(r['TypeDefId'], 16), int(m.group(3), 16))
        c.eq(w + 'Flags', int(r['Flags'], 16), int(m.group(4), 16))


def chk_manifest(c, M, text):
    recs, hdr = numbered(text)
    c.count('ManifestResource', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('ManifestResource', rid)
        m = re.fullmatch(r"(public|private|) '(.*)' at offset (\d+) in (.*)", rest)
        if not r or not m:
            c.bad('ManifestResource %d' % rid, 'unparsed %r' % rest)
            continue
        w = 'ManifestResource %d ' % rid
        vis = {1: 'public', 2: 'private'}.get(int(r['Flags'], 16) & 3, '')
        c.eq(w + 'Flags (visibility)', vis, m.group(1))
        c.eq(w + 'Name', r['Name'], m.group(2))
        c.eq(w + 'Offset', int(r['Offset'], 16), int(m.group(3)))
        c.eq(w + 'Implementation', implementation_ours(r['Implementation']),
             implementation(m.group(4)))


def chk_nested(c, M, text):
    recs, hdr = numbered(text)
    c.count('NestedClass', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('NestedClass', rid)
        m = re.fullmatch(r'(\d+) (\d+): (.*) in (.*)', rest)
        if not r or not m:
            c.bad('NestedClass %d' % rid, 'unparsed %r' % rest)
            continue
        w = 'NestedClass %d ' % rid
        n, e = rid_of(r['NestedClass']), rid_of(r['EnclosingClass'])
        c.eq(w + 'NestedClass', n, int(m.group(1)))
        c.eq(w + 'EnclosingClass', e, int(m.group(2)))
        c.eq(w + 'names', (M.typedef_display(n), M.typedef_display(e)),
             (m.group(3), m.group(4)))


def chk_genericpar(c, M, text):
    recs, hdr = numbered(text)
    c.count('GenericParam', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('GenericParam', rid)
        m = re.fullmatch(r'(\d+), flags=(\d+), owner=([0-9a-f]+) (.*)', rest)
        if not r or not m:
            c.bad('GenericParam %d' % rid, 'unparsed %r' % rest)
            continue
        w = 'GenericParam %d ' % rid
        c.eq(w + 'Number', int(r['Number'], 16), int(m.group(1)))
        c.eq(w + 'Flags', int(r['Flags'], 16), int(m.group(2)))
        c.eq(w + 'Owner', r['Owner'], decode_coded('TypeOrMethodDef', int(m.group(3), 16)))
        c.eq(w + 'Name', r['Name'], m.group(4))


def chk_parconst(c, M, text):
    recs, hdr = numbered(text)
    c.count('GenericParamConstraint', M, recs, hdr)
    for rid, (rest, _) in recs.items():
        r = M.row('GenericParamConstraint', rid)
        m = re.fullmatch(r'gen-par=(\d+), Constraint=([0-9a-f]+)', rest)
        if not r or not m:
            c.bad('GenericParamConstraint %d' % rid, 'unparsed %r' % rest)
            continue
        w = 'GenericParamConstraint %d ' % rid
        c.eq(w + 'Owner', rid_of(r['Owner']), int(m.group(1)))
        c.eq(w + 'Constraint', r['Constraint'],
             decode_coded('TypeDefOrRef', int(m.group(2), 16)))


def chk_ptr(table, col):
    def chk(c, M, text):
        recs, hdr = numbered(text)
        c.count(table, M, recs, hdr)
        for rid, (rest, _) in recs.items():
            r = M.row(table, rid)
            if r:
                c.eq('%s %d %s' % (table, rid, col), rid_of(r[col]), int(rest))
    return chk


def chk_strings(c, M, text):
    """#Strings, entry by entry (offset and bytes)."""
    theirs = {}
    last = None
    for line in text.split('\n')[1:]:
        m = re.fullmatch(r'([0-9a-f]+): "(.*)', line, re.S)
        if m:
            last = int(m.group(1), 16)
            theirs[last] = m.group(2)
        elif last is not None and line:
            theirs[last] += '\n' + line     # a string with a line break
    theirs = {k: v[:-1] if v.endswith('"') else v for k, v in theirs.items()}
    c.eq('#Strings entry offsets', sorted(M.strs), sorted(theirs))
    for off in sorted(set(M.strs) & set(theirs)):
        c.eq('#Strings 0x%x' % off, M.strs[off], theirs[off])


def chk_userstrings(c, M, text):
    """#US: every entry monodis reaches. monodis steps len + 1 bytes from an
    entry whatever the size of its length prefix (README, exception 2): after
    an entry of 128 bytes or more it lands inside that entry and prints what
    it decodes there until it meets a real entry again; those prints are not
    entries and are skipped, and only them."""
    entries = []
    for line in text.split('\n')[1:]:
        m = re.fullmatch(r'([0-9a-f]+): (.*)', line, re.S)
        if m:
            entries.append([int(m.group(1), 16), m.group(2), []])
        elif entries and line.startswith('\t'):
            entries[-1][2].append(line)
    desync = False
    seen = set()
    for off, first, more in entries:
        if off not in M.us:
            if desync:
                c.except_('#US walk after a 2-byte length prefix')
                continue
            c.bad('#US 0x%x' % off, 'monodis prints an entry mdtools does not have')
            continue
        desync = False
        seen.add(off)
        flag, units, utf8 = M.us[off]
        raw = units + (bytes([flag]) if flag >= 0 else b'')
        c.eq('#US 0x%x' % off, mdtools_ustring(raw), monodis_ustring(first, more))
        # What monodis does next: it skips 1 + length bytes.
        if len(raw) >= 0x80:
            desync = True
        # mdt_heap_utf16_to_utf8 against Python's UTF-16 decoder.
        c.eq('#US 0x%x UTF-8' % off, utf8,
             units.decode('utf-16-le', 'replace'))
    missed = len(set(M.us) - seen)
    if missed:
        c.except_('#US entries monodis never reaches', missed)


def chk_blob(c, M, text):
    theirs = bytes.fromhex(''.join(re.findall(r'\b[0-9a-f]{2}\b', text.partition('\n')[2])))
    size, ours = M.heaps.get('#Blob', (0, ''))
    c.eq('#Blob heap size', size, len(theirs))
    c.eq('#Blob heap bytes (sha1)', hashlib.sha1(bytes.fromhex(ours or '')).hexdigest(),
         hashlib.sha1(theirs).hexdigest())


CHECKS = [
    ('--module', chk_module), ('--typeref', chk_typeref), ('--typedef', chk_typedef),
    ('--fieldptr', chk_ptr('FieldPtr', 'Field')), ('--fields', chk_fields),
    ('--methodptr', chk_ptr('MethodPtr', 'Method')), ('--method', chk_method),
    ('--paramptr', chk_ptr('ParamPtr', 'Param')), ('--param', chk_param),
    ('--interface', chk_interface), ('--memberref', chk_memberref),
    ('--constant', chk_constant), ('--customattr', chk_customattr),
    ('--marshal', chk_marshal), ('--declsec', chk_declsec),
    ('--classlayout', chk_classlayout), ('--standalonesig', chk_standalonesig),
    ('--eventptr', chk_ptr('EventPtr', 'Event')), ('--event', chk_event),
    ('--propertymap', chk_propertymap), ('--propertyptr', chk_ptr('PropertyPtr', 'Property')),
    ('--property', chk_property), ('--methodsem', chk_methodsem),
    ('--methodimpl', chk_methodimpl), ('--moduleref', chk_moduleref),
    ('--typespec', chk_count_only('TypeSpec')), ('--implmap', chk_implmap),
    ('--fieldrva', chk_fieldrva), ('--assembly', chk_assembly),
    ('--assemblyref', chk_assemblyref), ('--file', chk_file),
    ('--exported', chk_exported), ('--manifest', chk_manifest), ('--nested', chk_nested),
    ('--genericpar', chk_genericpar), ('--methodspec', chk_methodspec),
    ('--parconst', chk_parconst), ('--strings', chk_strings),
    ('--userstrings', chk_userstrings), ('--blob', chk_blob),
]


IL_LINE = re.compile(r'^[ \t]*(?:// method line (?P<rid>\d+)|\.method (?P<flags>[^\n]*)'
                     r'|// Method begins at RVA 0x(?P<rva>[0-9a-f]+)'
                     r'|\} // end of (?P<glob>global )?method (?P<name>[^\n]*))$', re.M)
IL_EXTERN = re.compile(r'^\.assembly extern .*?^\}$', re.M | re.S)


def chk_il(c, M, text):
    """The full disassembly: MethodDef names, flags and RVAs ("// method line
    N" names the row), AssemblyRef cultures (.assembly extern, in row order)."""
    methods = {}
    cur = None
    for m in IL_LINE.finditer(text):
        if m.group('rid'):
            cur = {}
            methods[int(m.group('rid'))] = cur
        elif cur is None:
            continue
        elif m.group('flags') is not None:
            # Words, then the pinvoke details in parentheses when there are any.
            cur.setdefault('flags', m.group('flags').split('(', 1)[0])
        elif m.group('rva'):
            cur['rva'] = int(m.group('rva'), 16)
        else:
            name = m.group('name')
            cur['name'] = name if m.group('glob') else name.split('::', 1)[1]
            cur = None
    externs = []
    for block in IL_EXTERN.findall(text):
        m = re.search(r'^  \.locale (.*)$', block, re.M)
        externs.append(m.group(1) if m else '')
    c.tables += 1
    c.eq('MethodDef row count (disassembly)', M.n('MethodDef'), len(methods))
    for rid, mth in sorted(methods.items()):
        r = M.row('MethodDef', rid)
        if r is None:
            c.bad('MethodDef %d' % rid, 'no such row in mdtools')
            continue
        w = 'MethodDef %d ' % rid
        if mth.get('name') == '<NULL METHOD SIGNATURE>':
            c.except_('monodis cannot resolve a referenced assembly')
        else:
            c.eq(w + 'Name', r['Name'], mth.get('name'))
        c.eq(w + 'RVA', int(r['RVA'], 16), mth.get('rva'))
        c.eq(w + 'Flags (as monodis words)', int(r['Flags'], 16) & ~METHOD_SILENT,
             words_to_bits(mth.get('flags', '?'), ACCESS, METHOD_BITS))
    c.eq('AssemblyRef row count (disassembly)', M.n('AssemblyRef'), len(externs))
    for i, culture in enumerate(externs, 1):
        r = M.row('AssemblyRef', i)
        if r:
            c.eq('AssemblyRef %d Culture' % i, r['Culture'], culture)
            if i in M.asmref:
                c.eq('AssemblyRef %d identity culture' % i, M.asmref[i]['culture'], culture)


# --- driver -------------------------------------------------------------

def run(argv):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, '', str(e)
    return p.returncode, p.stdout.decode('utf-8', 'surrogateescape'), \
        p.stderr.decode('utf-8', 'replace')


def split_outputs(text, n):
    """Cut the output of one monodis option run over n files into n outputs.
    Each starts with the option's header line ("Typedef Table", "Field Table
    (1..N)", ...), which no row line resembles; None when the cut does not
    give n parts."""
    head = re.sub(r' \(1\.\.\d+\)$', '', text.partition('\n')[0])
    starts = [m.start() for m in
              re.finditer('^' + re.escape(head) + r'(?: \(1\.\.\d+\))?$', text, re.M)]
    if len(starts) != n or starts[0] != 0:
        return None
    starts.append(len(text))
    return [text[x:y] for x, y in zip(starts, starts[1:])]


def monodis_tables(files, monodis):
    """{file: {option: (status, stdout, stderr)}}. Small files share one
    monodis run per option (its start-up costs more than their tables); if
    the shared output does not split cleanly, each file runs alone."""
    out = {f: {} for f in files}
    for opt, _ in CHECKS:
        parts = None
        if len(files) > 1:
            rc, text, err = run([monodis, opt] + files)
            if rc == 0:
                parts = split_outputs(text, len(files))
        if parts:
            for f, part in zip(files, parts):
                out[f][opt] = (0, part, '')
        else:
            for f in files:
                out[f][opt] = run([monodis, opt, f])
    return out


def check_file(path, outputs, mddump, monodis):
    c = Cmp(path)
    rc, out, err = run([mddump, path])
    M = Dump(out)
    if rc != 0 or M.errors:
        for e in M.errors[:5] or [err.strip() or 'exit status %d' % rc]:
            c.bad('mddump', e)
        if M.kind is None:
            return c
    for opt, fn in CHECKS:
        rc, text, err = outputs[opt]
        if rc != 0:
            c.bad('monodis %s' % opt, 'exit status %d: %s' % (rc, err.strip()[:200]))
            continue
        try:
            fn(c, M, text)
        except Exception as e:  # a parser bug must fail the file, loudly
            c.bad('monodis %s' % opt, 'comparison raised %s: %s' % (type(e).__name__, e))
    rc, text, err = run([monodis, path])
    if rc != 0:
        c.bad('monodis (disassembly)', 'exit status %d: %s' % (rc, err.strip()[:200]))
    else:
        try:
            chk_il(c, M, text)
        except Exception as e:
            c.bad('monodis (disassembly)', 'comparison raised %s: %s' % (type(e).__name__, e))
    return c


def check_batch(files, mddump, monodis):
    outputs = monodis_tables(files, monodis)
    return [(f, check_file(f, outputs[f], mddump, monodis)) for f in files]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--mddump', required=True, help='path of the built tests/diff/mddump')
    ap.add_argument('--monodis', default='monodis')
    ap.add_argument('--dir', default=MONO_DIR, help='framework directory (default %(default)s)')
    ap.add_argument('--jobs', '-j', type=int, default=0,
                    help='parallel files (default: number of CPUs)')
    ap.add_argument('--show', type=int, default=3, help='differences shown per failed file')
    ap.add_argument('files', nargs='*', help='images to compare (default: the framework)')
    a = ap.parse_args()

    monodis = shutil.which(a.monodis)
    problems = []
    if not monodis:
        problems.append('monodis not found (Debian package mono-utils)')
    if not a.files and not os.path.isdir(a.dir):
        problems.append('%s not found (Debian packages mono-devel, libmono-corlib4.5-dll)'
                        % a.dir)
    if not os.access(a.mddump, os.X_OK):
        problems.append('%s is not an executable (build it with make check)' % a.mddump)
    files = a.files or sorted(glob.glob(os.path.join(a.dir, '*.dll')) +
                              glob.glob(os.path.join(a.dir, 'Facades', '*.dll')) +
                              glob.glob(os.path.join(a.dir, '*.exe')))
    if not problems and not files:
        problems.append('no assemblies in %s' % a.dir)
    if problems:
        # Without Mono's tools the test is skipped (exit 77: make check
        # says SKIP; tests/summary.sh still counts it as failed for CI); a
        # missing mddump is an error of the build.
        missing_peer = os.access(a.mddump, os.X_OK)
        for msg in problems:
            print('%s: %s' % ('skipped' if missing_peer else 'FAIL', msg),
                  file=sys.stderr if missing_peer else sys.stdout)
        if missing_peer:
            return 77
        mdtcheck.add(0, 1)
        return mdtcheck.closing()

    start = time.monotonic()
    jobs = a.jobs or os.cpu_count() or 1
    # Files under SMALL bytes go BATCH to a task; the biggest tasks start
    # first so that no long one is left running alone at the end.
    small = [f for f in files if os.path.getsize(f) < SMALL]
    tasks = [[f] for f in files if os.path.getsize(f) >= SMALL]
    tasks += [small[i:i + BATCH] for i in range(0, len(small), BATCH)]
    tasks.sort(key=lambda t: -sum(os.path.getsize(f) for f in t))
    results = {}
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
        futs = {pool.submit(check_batch, t, a.mddump, monodis): t for t in tasks}
        for fut in concurrent.futures.as_completed(futs):
            try:
                results.update(fut.result())
            except Exception as e:  # a crashed worker fails its files
                for f in futs[fut]:
                    results[f] = Cmp(f)
                    results[f].bad('driver', '%s: %s' % (type(e).__name__, e))

    totals = collections.Counter()
    excepted = collections.Counter()
    base = os.path.dirname(a.dir.rstrip('/'))
    for f in files:
        c = results[f]
        name = os.path.relpath(f, base) if f.startswith(base + '/') else f
        totals['tables'] += c.tables
        totals['rows'] += c.rows
        totals['cells'] += c.cells
        excepted.update(c.excepted)
        more = len(c.diffs) - a.show
        mdtcheck.check(not c.diffs,
                       '%s: %s%s' % (name, '; '.join(c.diffs[:a.show]),
                                     ' (+%d more)' % more if more > 0 else '') if c.diffs
                       else '%s (%d tables, %d rows, %d cells)' % (name, c.tables, c.rows, c.cells))
    print('compared %d files: %d table row counts, %d rows, %d cells; %.0fs'
          % (len(files), totals['tables'], totals['rows'], totals['cells'],
             time.monotonic() - start))
    for reason, n in sorted(excepted.items()):
        print('  documented exception (tests/diff/README.md): %s: %d' % (reason, n))
    return mdtcheck.closing()


if __name__ == '__main__':
    sys.exit(main())
