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
  rodata VAR HEX               feature switch or size, set before the program loads
  size MAP N                   the map's max_entries, set before the program loads
  mark N / ifindex N / cpu N   context for the run (tc mark / XDP ingress /
                               the CPU it runs on, default 0)
  check MAP KEYHEX VALHEX[/MASKHEX]   a shared map's value now (masked bytes)
  check MAP KEYHEX -           no entry
  stat MAP KEY DELTA           after the run, sum of packets over CPUs grew by DELTA
  in HEX                       input packet
  expect RETVAL REASON OUTHEX|-   or   expect err ERRNO
"""
import ipaddress
import os
import re
import socket
import struct

XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_TX, XDP_REDIRECT = range(5)
TC_ACT_UNSPEC, TC_ACT_OK, TC_ACT_SHOT, TC_ACT_REDIRECT = -1, 0, 2, 7

RING_SIZE = 65537
HASH_SEED = 0x5a17c0de
V4, V6 = 4, 6
F_NO_SPORT, F_DPORT_ONLY, F_NO_LRU, F_LOCAL, F_QUIC, F_ALLOWLIST = 1, 2, 4, 8, 16, 32
REAL_F_DRAIN = 1
CFG_F_FRAG_DROP = 1
ENCAP_IP, ENCAP_GUE = 0, 1
GUE_PORT_DEFAULT = 6080
OUTER_TTL = 64
CONN_NEW, CONN_ESTABLISHED, CONN_CLOSED = 0, 1, 2


def _xmacro(kind):
    """enum xlb_reason / xlb_event from the X-macros of xlb_shared.h (the
    names are the contract; the expected packets never come from there)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'dataplane',
                        'xlb_shared.h')
    pat = (r'X\(XLB_((?:PASS|DROP|TX)_[A-Z0-9_]+), (\d+),' if kind == 'reason' else
           r'X\(XLB_EV_([A-Z0-9_]+), (\d+),')
    out = {}
    for m in re.finditer(pat, open(path).read()):
        out[m.group(1)] = int(m.group(2))
    return out


R = _xmacro('reason')
EV = _xmacro('event')
assert R['PASS_NOT_IP'] == 1 and EV['LRU_HIT'] == 0 and 'TX_ICMP_FRAG_NEEDED' in R

def addr16(a):
    ip = ipaddress.ip_address(a)
    return ip.packed if ip.version == 6 else ip.packed + bytes(12)


def fam(a):
    return ipaddress.ip_address(a).version


def vip_key(addr, port, proto):
    return addr16(addr) + struct.pack('!H', port) + bytes([proto, fam(addr)])


def vip_meta(vip_num, flags=0, half=0, encap=ENCAP_IP, affinity_s=0, epoch=0):
    return struct.pack('<IIBBHI', vip_num, flags, half, encap, affinity_s, epoch)


def vip_fast(epoch, encap=ENCAP_IP):
    """struct xlb_vip_fast (the established-flow fast path's view of a VIP)."""
    return struct.pack('<IB3x', epoch, encap)


def addr_key(addr):
    return addr16(addr) + bytes([fam(addr), 0, 0, 0])


def real_val(addr, flags=0):
    return addr16(addr) + bytes([fam(addr), flags, 0, 0])


def iface(gw_mac='00:00:00:00:00:00', src_mac='00:00:00:00:00:00', max_pkt=0, tx_port=0):
    """struct xlb_iface, xlb_ifaces[ingress ifindex]."""
    return mac(gw_mac) + mac(src_mac) + struct.pack('<HBB4x', max_pkt, tx_port, 0)


def allow_key(vip_num, prefix):
    """struct xlb_allow_key for 'ADDR/PLEN' (LPM: vip_num's 32 bits count)."""
    net = ipaddress.ip_network(prefix, strict=False)
    return struct.pack('<I', 32 + net.prefixlen) + struct.pack('!I', vip_num) + \
        addr16(str(net.network_address))


def flow_key(src, dst, sport, dport, proto):
    """struct xlb_flow_key (the connection table's key)."""
    return addr16(src) + addr16(dst) + struct.pack('!HH', sport, dport) + bytes([proto, fam(dst), 0, 0])


def conn_val(real, h, atime_ns=0, state=CONN_ESTABLISHED, vip_num=0, epoch=0):
    return struct.pack('<IIQBxHI', real, h, atime_ns, state, vip_num, epoch)


def cid_v1(server_id, tail=b'\x11' * 5):
    """Katran CID version 1: 01 + 16-bit server id in bits 2..17 (xlb_shared.h)."""
    b0 = 0x40 | (server_id >> 10)
    b1 = (server_id >> 2) & 0xff
    b2 = ((server_id & 3) << 6) | 0x15
    return bytes([b0, b1, b2]) + tail


def cid_v2(server_id, tail=b'\x22' * 4):
    """Katran CID version 2: 10 + 6 free bits, then a 24-bit server id."""
    return bytes([0x80 | 0x2a]) + struct.pack('!I', server_id)[1:] + tail


def u32(v):
    return struct.pack('<I', v)


def mac(m):
    return bytes(int(x, 16) for x in m.split(':'))


def config(gw_mac, src_mac='00:00:00:00:00:00', max_new=0,
           src4='0.0.0.0', udp_timeout_ns=0, src4_plen=32, src6_plen=128,
           gue_port=0, src6='::', flags=0):
    return (mac(gw_mac) + mac(src_mac) +
            struct.pack('<II', 0, max_new) +
            socket.inet_aton(src4) + struct.pack('<Q', udp_timeout_ns) +
            struct.pack('<BBH', src4_plen, src6_plen, gue_port) +
            addr16(src6) + struct.pack('<I', flags) + bytes(8))


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


def vip_filter_bit(a):
    """dataplane/xlb_shared.h xlb_vip_filter_bit(), recomputed."""
    b = addr16(a)
    x = 0
    for i in range(0, 16, 4):
        x ^= struct.unpack('<I', b[i:i + 4])[0]
    return ((x * 0x9e3779b1) & 0xffffffff) >> 20


def vip_filter(addrs, enabled=1, fast=()):
    """struct xlb_vip_filter with the bits of addrs, and the fast bits of fast."""
    bits, fast_bits = [0] * 64, [0] * 64
    for a in addrs:
        n = vip_filter_bit(a)
        bits[n >> 6] |= 1 << (n & 63)
    for a in fast:
        n = vip_filter_bit(a)
        fast_bits[n >> 6] |= 1 << (n & 63)
    return struct.pack('<II', enabled, 0) + struct.pack('<64Q', *bits) + struct.pack('<64Q', *fast_bits)


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

    def check(self, m, k, v=None, mask=None):
        if v is None:
            self.lines.append('check %s %s -' % (m, k.hex()))
        else:
            self.lines.append('check %s %s %s%s' % (m, k.hex(), v.hex(),
                                                   '' if mask is None else '/' + mask.hex()))

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
