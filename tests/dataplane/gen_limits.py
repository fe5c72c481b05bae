# SPDX-License-Identifier: MIT
"""Golden table for the balancer loaded at other sizes than its built-in ones
(dataplane/xlb_shared.h, "Sizes"): max_vips 4096, max_reals 8192, ring size
1031 (a prime; small, so the ring map stays ~67 MB in the kernel), set as
xlbd sets them: rodata xlb_max_vips / xlb_max_reals / xlb_ring_size and the
maps' max_entries.  Rows at the edges: the last VIP id (4095) on both ring
halves (the last half is the top of xlb_rings), the last real id (8191), an
id one past the end for VIPs (passes: not a VIP) and for reals (dropped: no
real), and picks that follow the loaded ring size (hash % 1031, not the
built-in 65537).  Usage: gen_limits.py OUT.tab"""
import struct
import sys

from scapy.all import Ether, IP, Raw, TCP

from xlbtab import *

MAX_VIPS, MAX_REALS, RING = 4096, 8192, 1031
LB_MAC, PEER_MAC, GW_MAC = '02:00:00:00:00:01', '02:00:00:00:00:02', '02:00:00:00:00:fe'
CLIENT, SRC4 = '198.51.100.7', '10.255.0.0'
VIP_LAST, VIP_PAST, VIP_NOREAL = '192.0.2.40', '192.0.2.41', '192.0.2.42'
REALS = {2: '10.0.0.2', 8191: '10.0.31.255'}

t = Table()
t.rodata('xlb_max_vips', struct.pack('<I', MAX_VIPS))
t.rodata('xlb_max_reals', struct.pack('<I', MAX_REALS))
t.rodata('xlb_ring_size', struct.pack('<I', RING))
for m in ('xlb_vips', 'xlb_vip_addrs', 'xlb_vip_stats'):
    t.lines.append('size %s %d' % (m, MAX_VIPS))
for m in ('xlb_reals', 'xlb_real_stats'):
    t.lines.append('size %s %d' % (m, MAX_REALS))
t.lines.append('size xlb_rings %d' % (MAX_VIPS * 2 * RING))

t.row('setup')
t.update('xlb_config', u32(0), config(GW_MAC, src4=SRC4, src4_plen=16))
for r, a in REALS.items():
    t.update('xlb_reals', u32(r), real_val(a))
for addr, num in ((VIP_LAST, MAX_VIPS - 1), (VIP_PAST, MAX_VIPS), (VIP_NOREAL, MAX_VIPS - 2)):
    t.update('xlb_vips', vip_key(addr, 80, 6), vip_meta(num, F_NO_LRU))
    t.update('xlb_vip_addrs', addr_key(addr), u32(num))
RING0, RING1 = [2, 8191], [8191, 8191, 2]
t.ring(MAX_VIPS - 1, 0, RING0)
t.ring(MAX_VIPS - 1, 1, RING1)
t.ring(MAX_VIPS - 2, 0, [MAX_REALS])     # a real id past the end: an empty slot


def syn(dst, sport):
    return Ether(src=PEER_MAC, dst=LB_MAC) / IP(src=CLIENT, dst=dst) / \
        TCP(sport=sport, dport=80, flags='S', seq=1)


def encap(pkt, real, h):
    inner = bytes(pkt[IP])
    return Ether(src=LB_MAC, dst=GW_MAC) / IP(src=outer_src4(SRC4, 16, h), dst=REALS[real], id=0,
                                              flags=0, ttl=64, proto=4) / Raw(inner)


def picks(half, ring, sports):
    seen = set()
    for sport in sports:
        pkt = syn(VIP_LAST, sport)
        h = flow_hash(CLIENT, VIP_LAST, sport, 80, 6, F_NO_LRU)
        real = ring[(h % RING) % len(ring)]
        seen.add(real)
        t.row('last vip %d half %d sport %d -> real %d' % (MAX_VIPS - 1, half, sport, real))
        t.stat('xlb_vip_stats', MAX_VIPS - 1, 1)
        t.stat('xlb_real_stats', real, 1)
        t.run(pkt, XDP_TX, 0, encap(pkt, real, h))
    return seen


seen = picks(0, RING0, range(6000, 6012))
t.row('flip the last vip to half 1 (the top of xlb_rings)')
t.update('xlb_vips', vip_key(VIP_LAST, 80, 6), vip_meta(MAX_VIPS - 1, F_NO_LRU, half=1))
seen |= picks(1, RING1, range(6100, 6112))
# Both reals were picked: the ring size is the loaded one (the rows above
# differ from hash % 65537 for most ports; a wrong modulus fails them).
assert seen == {2, 8191}, seen
assert any((flow_hash(CLIENT, VIP_LAST, p, 80, 6, F_NO_LRU) % RING) % 3 !=
           (flow_hash(CLIENT, VIP_LAST, p, 80, 6, F_NO_LRU) % RING_SIZE) % 3
           for p in range(6100, 6112))

t.row('vip id %d (= max_vips): not a vip' % MAX_VIPS)
pkt = syn(VIP_PAST, 7000)
t.run(pkt, XDP_PASS, R['PASS_NOT_VIP'], pkt)
t.row('ring slot holding real %d (= max_reals): no real' % MAX_REALS)
t.run(syn(VIP_NOREAL, 7001), XDP_DROP, R['DROP_NO_REAL'])
t.write(sys.argv[1])
