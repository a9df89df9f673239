#!/usr/bin/env python3
"""Re-sign a copy of a strong-named assembly with a new RSA key whose
PublicKeyBlob names SHA-256, SHA-384 or SHA-512 (or SHA-1), for the
strong-name tests: nothing else here signs with SHA-2 (Mono's sn and mcs
sign with SHA-1 only).

    resign.py IN OUT ALG SEED      ALG: sha1|sha256|sha384|sha512

The assembly's public key (the Assembly row's blob, found by its bytes)
is overwritten in place by a key of the same size generated from SEED
(deterministic: Miller-Rabin over Python's seeded PRNG), with HashAlgID set
for ALG, and the signature recomputed: the strong-name hash written here
from ECMA-335 II.6.2.1.3 and the CLR's rules (independently of the
library's C), then PKCS#1 v1.5 with the private key, stored little-endian.
"""
import hashlib
import random
import struct
import sys

ALGS = {'sha1': (0x8004, bytes.fromhex('3021300906052b0e03021a05000414')),
        'sha256': (0x800c, bytes.fromhex('3031300d060960864801650304020105000420')),
        'sha384': (0x800d, bytes.fromhex('3041300d060960864801650304020205000430')),
        'sha512': (0x800e, bytes.fromhex('3051300d060960864801650304020305000440'))}


def is_prime(n, rng):
    if n < 2:
        return False
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29):
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for _ in range(40):
        x = pow(rng.randrange(2, n - 1), d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def keypair(bits, rng, e=65537):
    while True:
        ps = []
        while len(ps) < 2:
            c = rng.getrandbits(bits // 2) | (3 << (bits // 2 - 2)) | 1
            if is_prime(c, rng) and (c - 1) % e:
                ps.append(c)
        n = ps[0] * ps[1]
        if n.bit_length() == bits and ps[0] != ps[1]:
            return n, e, pow(e, -1, (ps[0] - 1) * (ps[1] - 1))


def sections(d):
    lfanew = struct.unpack_from('<I', d, 60)[0]
    nsec, = struct.unpack_from('<H', d, lfanew + 6)
    opt, = struct.unpack_from('<H', d, lfanew + 20)
    at = lfanew + 24 + opt
    return lfanew, [struct.unpack_from('<IIII', d, at + 40 * i + 8) for i in range(nsec)], at, nsec


def rva_to_off(secs, rva):
    for vs, va, rs, rp in secs:
        if va <= rva < va + max(vs, rs):
            return rp + rva - va
    raise ValueError('RVA %#x in no section' % rva)


def strong_hash(d, sig_off, sig_len, alg):
    lfanew, secs, at, nsec = sections(d)
    magic, = struct.unpack_from('<H', d, lfanew + 24)
    size = 264 if magic == 0x20b else 248
    nt = bytearray(d[lfanew:lfanew + size])
    nt[88:92] = b'\0' * 4
    cert = 24 + (112 if magic == 0x20b else 96) + 32
    nt[cert:cert + 8] = b'\0' * 8
    h = hashlib.new(alg)
    h.update(d[:lfanew])
    h.update(nt)
    h.update(d[at:at + 40 * nsec])
    for vs, va, rs, rp in secs:
        lo, hi = rp, rp + rs
        s0, s1 = sig_off, sig_off + sig_len
        if s1 <= lo or s0 >= hi:
            h.update(d[lo:hi])
        else:
            h.update(d[lo:max(lo, s0)])
            h.update(d[min(hi, s1):hi])
    return h.digest()


def main():
    src, dst, alg, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    d = bytearray(open(src, 'rb').read())
    lfanew, secs, _, _ = sections(d)
    magic, = struct.unpack_from('<H', d, lfanew + 24)
    dd = lfanew + 24 + (112 if magic == 0x20b else 96)
    cli_rva, = struct.unpack_from('<I', d, dd + 14 * 8)
    cli = rva_to_off(secs, cli_rva)
    sig_rva, sig_len = struct.unpack_from('<II', d, cli + 32)
    sig_off = rva_to_off(secs, sig_rva)
    # The key blob: 12-byte header, PUBLICKEYBLOB with "RSA1".
    k = d.find(b'RSA1')
    while k >= 0 and not (d[k - 8] == 6 and d[k - 7] == 2):
        k = d.find(b'RSA1', k + 1)
    blob = k - 20
    bits, = struct.unpack_from('<I', d, k + 4)
    if bits // 8 != sig_len:
        sys.exit('resign.py: the signature is not the key\'s size')
    n, e, dexp = keypair(bits, random.Random(seed))
    calg, prefix = ALGS[alg]
    struct.pack_into('<I', d, blob + 4, calg)
    struct.pack_into('<I', d, k + 8, e)
    d[k + 12:k + 12 + bits // 8] = n.to_bytes(bits // 8, 'little')
    digest = strong_hash(bytes(d), sig_off, sig_len, alg)
    t = prefix + digest
    em = b'\x00\x01' + b'\xff' * (bits // 8 - len(t) - 3) + b'\x00' + t
    s = pow(int.from_bytes(em, 'big'), dexp, n)
    d[sig_off:sig_off + sig_len] = s.to_bytes(sig_len, 'little')
    open(dst, 'wb').write(d)


main()
