# SPDX-License-Identifier: MIT
"""Helpers for the dataplane golden tables: map records packed from the
layouts in dataplane/xlb_shared.h, the flow hash recomputed from its
specification in dataplane/hash.h, and a writer for the table format that
tests/dataplane/golden_run.c reads.

Table format, one directive per line:
  row NAME                     start a row
  update MAP KEYHEX VALHEX     (per-CPU maps: the value for every CPU)
  delete MAP KEYHEX
  clear MAP                    delete every key
  ring VIPNUM HALF R1,R2,...   fill a ring half: position i -> list[i % n]
  rodata VAR HEX               feature switch, set before the program loads
  mark N / ifindex N           context for the run (tc mark / XDP ingress)
  stat MAP KEY DELTA           after the run, sum of packets over CPUs grew by DELTA
  in HEX                       input packet
  expect RETVAL REASON OUTHEX|-   or   expect err ERRNO
"""
import ipaddress
import socket
import struct

XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_TX, XDP_REDIRECT = range(5)
TC_ACT_OK, TC_ACT_SHOT = 0, 2

RING_SIZE = 65537
HASH_SEED = 0x5a17c0de
V4, V6 = 4, 6
F_NO_SPORT, F_DPORT_ONLY, F_NO_LRU, F_LOCAL, F_QUIC = 1, 2, 4, 8, 16
ENCAP_IP, ENCAP_GUE = 0, 1
GUE_PORT_DEFAULT = 6080
OUTER_TTL = 64

# enum xlb_reason / xlb_event (xlb_shared.h)
R = dict(PASS_NOT_IP=1, PASS_NOT_VIP=2, PASS_LOCAL_VIP=3, PASS_FRAGMENT=4,
         PASS_IPV6_EXT=5, PASS_L4_OTHER=6, PASS_ICMP_OTHER=7, DROP_TRUNC_L2=8,
         DROP_TRUNC_L3=9, DROP_TRUNC_L4=10, DROP_BAD_IP=11, DROP_NO_REAL=12,
         DROP_NO_CONFIG=13, DROP_ENCAP_FAIL=14, DROP_TOO_BIG=15,
         DROP_ICMP_TRUNC=16, DROP_REDIRECT=17, DROP_DECAP_BAD=18,
         PASS_NOT_ENCAP=19, PASS_NO_HC_MARK=20)
EV = dict(LRU_HIT=0, LRU_MISS=1, NEW_FLOW=2, FLOOD_SKIP=3, UDP_EXPIRED=4,
          QUIC_CID_HIT=5, QUIC_CID_MISS=6, ICMP_ECHO=7, ICMP_TOO_BIG=8,
          IP_OPTIONS=9, TX=10, REDIRECT=11, DECAP=12, HC_ENCAP=13)


def addr16(a):
    ip = ipaddress.ip_address(a)
    return ip.packed if ip.version == 6 else ip.packed + bytes(12)


def fam(a):
    return ipaddress.ip_address(a).version


def vip_key(addr, port, proto):
    return addr16(addr) + struct.pack('!H', port) + bytes([proto, fam(addr)])


def vip_meta(vip_num, flags=0, half=0, encap=ENCAP_IP):
    return struct.pack('<IIBB2x', vip_num, flags, half, encap)


def addr_key(addr):
    return addr16(addr) + bytes([fam(addr), 0, 0, 0])


def real_val(addr):
    return addr16(addr) + bytes([fam(addr), 0, 0, 0])


def u32(v):
    return struct.pack('<I', v)


def mac(m):
    return bytes(int(x, 16) for x in m.split(':'))


def config(gw_mac, src_mac='00:00:00:00:00:00', egress_ifindex=0, max_new=0,
           src4='0.0.0.0', udp_timeout_ns=0, src4_plen=32, src6_plen=128,
           gue_port=0, src6='::'):
    return (mac(gw_mac) + mac(src_mac) +
            struct.pack('<II', egress_ifindex, max_new) +
            socket.inet_aton(src4) + struct.pack('<Q', udp_timeout_ns) +
            struct.pack('<BBH', src4_plen, src6_plen, gue_port) +
            addr16(src6) + bytes(12))


def rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & 0xffffffff


def flow_hash(src, dst, sport, dport, proto, flags=0):
    """dataplane/hash.h, recomputed: words are little-endian loads."""
    s = addr16(src)
    if flags & (F_NO_SPORT | F_DPORT_ONLY):
        sport = 0
    if flags & F_DPORT_ONLY:
        s = bytes(16)
    d = addr16(dst)
    words = [struct.unpack('<I', s[i:i + 4])[0] for i in range(0, 16, 4)]
    words += [struct.unpack('<I', d[i:i + 4])[0] for i in range(0, 16, 4)]
    sp = struct.unpack('<H', struct.pack('!H', sport))[0]
    dp = struct.unpack('<H', struct.pack('!H', dport))[0]
    words += [sp | (dp << 16), proto]
    h = HASH_SEED
    for w in words:
        h = rotl(((h ^ w) * 0x9e3779b1) & 0xffffffff, 13)
    h ^= h >> 16
    h = (h * 0x85ebca6b) & 0xffffffff
    h ^= h >> 13
    h = (h * 0xc2b2ae35) & 0xffffffff
    h ^= h >> 16
    return h


def outer_src4(prefix, plen, h):
    p = struct.unpack('!I', socket.inet_aton(prefix))[0]
    mask = 0 if plen >= 32 else 0xffffffff >> plen
    return socket.inet_ntoa(struct.pack('!I', (p & ~mask & 0xffffffff) | (h & mask)))


def outer_src6(prefix, plen, h):
    b = bytearray(addr16(prefix))
    plen = max(plen, 96)
    mask = 0 if plen >= 128 else 0xffffffff >> (plen - 96)
    low = struct.unpack('!I', b[12:16])[0]
    b[12:16] = struct.pack('!I', (low & ~mask & 0xffffffff) | (h & mask))
    return str(ipaddress.IPv6Address(bytes(b)))


def mutate(rng, raw):
    """One seeded mutation of a valid frame: byte flips anywhere, garbage
    in the headers, a cut, random tail growth, or noise over L4 fields."""
    raw = bytearray(raw)
    kind = rng.randrange(5)
    if kind == 0:
        for _ in range(rng.randrange(1, 4)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
    elif kind == 1:
        for _ in range(rng.randrange(1, 6)):
            raw[rng.randrange(min(60, len(raw)))] = rng.randrange(256)
    elif kind == 2:
        raw = raw[:rng.randrange(14, len(raw) + 1)]
    elif kind == 3:
        raw += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    else:
        off = 14 + (20 if raw[12:14] == b'\x08\x00' else 40)
        for j in range(off, min(off + 14, len(raw))):
            if rng.random() < 0.3:
                raw[j] = rng.randrange(256)
    return bytes(raw)


class Table:
    def __init__(self):
        self.lines = []
        self.rows = 0

    def row(self, name):
        self.rows += 1
        self.lines.append('row %s' % name.replace(' ', '_'))

    def update(self, m, k, v):
        self.lines.append('update %s %s %s' % (m, k.hex(), v.hex()))

    def delete(self, m, k):
        self.lines.append('delete %s %s' % (m, k.hex()))

    def clear(self, m):
        self.lines.append('clear %s' % m)

    def ring(self, vip_num, half, reals):
        self.lines.append('ring %d %d %s' % (vip_num, half, ','.join(map(str, reals))))

    def rodata(self, var, value):
        self.lines.append('rodata %s %s' % (var, value.hex()))

    def ctx(self, what, n):
        self.lines.append('%s %d' % (what, n))

    def stat(self, m, key, delta):
        self.lines.append('stat %s %d %d' % (m, key, delta))

    def run(self, pkt, retval, reason=0, out=None):
        self.lines.append('in %s' % bytes(pkt).hex())
        self.lines.append('expect %d %d %s' % (retval, reason,
                                               '-' if out is None else bytes(out).hex()))

    def run_err(self, pkt, err):
        self.lines.append('in %s' % bytes(pkt).hex())
        self.lines.append('expect err %d' % err)

    def write(self, path):
        with open(path, 'w') as f:
            f.write('\n'.join(self.lines) + '\n')
