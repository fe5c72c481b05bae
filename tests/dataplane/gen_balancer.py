# SPDX-License-Identifier: MIT
"""Golden table for balancer.bpf.o.  Every expected packet is built here with
scapy from the specification (xlb_shared.h, hash.h, encap.h), never captured
from the program.  Usage: gen_balancer.py OUT.tab"""
import struct
import sys

from scapy.all import (ARP, Dot1Q, Ether, ICMP, IP, IPv6, IPv6ExtHdrHopByHop,
                       IPv6ExtHdrFragment, ICMPv6EchoRequest, ICMPv6EchoReply,
                       ICMPv6PacketTooBig, Raw, TCP, UDP, IPOption_NOP)

from xlbtab import *

LB_MAC, PEER_MAC, GW_MAC, SRC_MAC = ('02:00:00:00:00:01', '02:00:00:00:00:02',
                                     '02:00:00:00:00:fe', '02:00:00:00:00:aa')
SRC4, SRC4_PLEN, SRC6, SRC6_PLEN = '10.255.0.0', 16, 'fc00:ffff::', 112
CLIENT, CLIENT2, CLIENT6 = '198.51.100.7', '198.51.100.8', '2001:db8:c::7'
REALS = {1: '10.0.0.1', 2: '10.0.0.2', 3: '10.0.0.3',
         4: 'fc00::1', 5: 'fc00::2', 6: 'fc00::3'}
P4, P4B, P6, P6B = [1, 2, 3], [3, 1, 2], [4, 5, 6], [6, 4, 5]
GUE_PORT = 9886
IF_RX, IF_TX = 2, 3       # veths the wrapper creates in a fresh netns

# vip_num: (addr, port, proto, flags, encap, ring pattern)
VIPS = {
    0: ('192.0.2.10', 80, 6, 0, ENCAP_IP, P4),
    1: ('192.0.2.10', 53, 17, 0, ENCAP_IP, P4),
    2: ('192.0.2.11', 0, 6, 0, ENCAP_GUE, P4),
    3: ('2001:db8::10', 443, 6, 0, ENCAP_IP, P6),
    4: ('192.0.2.12', 80, 6, F_NO_SPORT, ENCAP_IP, P4),
    5: ('192.0.2.13', 80, 6, F_DPORT_ONLY, ENCAP_IP, P4),
    6: ('192.0.2.14', 80, 6, F_NO_LRU, ENCAP_IP, P4),
    7: ('192.0.2.15', 80, 6, F_LOCAL, ENCAP_IP, P4),
    8: ('192.0.2.16', 443, 17, F_QUIC, ENCAP_IP, P4),
    9: ('2001:db8::11', 80, 6, 0, ENCAP_GUE, P6),
    10: ('192.0.2.17', 80, 6, 0, ENCAP_IP, P6),
    11: ('2001:db8::12', 80, 6, 0, ENCAP_IP, P4),
    12: ('192.0.2.18', 80, 6, 0, ENCAP_GUE, P4),
    13: ('192.0.2.19', 80, 6, 0, ENCAP_IP, []),     # no reals: empty ring
}
state = {v: {'half': 0, 'pattern': VIPS[v][5]} for v in VIPS}
lru = {}          # flow -> real: what the shared connection table must remember

t = Table()


def cfg(**kw):
    a = dict(gw_mac=GW_MAC, src4=SRC4, src4_plen=SRC4_PLEN, src6=SRC6,
             src6_plen=SRC6_PLEN, gue_port=GUE_PORT)
    a.update(kw)
    return config(**a)


def eth(vlan=None):
    e = Ether(src=PEER_MAC, dst=LB_MAC)
    return e / Dot1Q(vlan=vlan) if vlan is not None else e


def l3(src, dst, **kw):
    return IP(src=src, dst=dst, **kw) if fam(dst) == 4 else IPv6(src=src, dst=dst)


def tcp_pkt(src, dst, sport, dport, flags='S', vlan=None, payload=b'hello', **kw):
    return eth(vlan) / l3(src, dst, **kw) / TCP(sport=sport, dport=dport, flags=flags,
                                                 seq=1000) / Raw(payload)


def udp_pkt(src, dst, sport, dport, payload=b'dns?', vlan=None):
    return eth(vlan) / l3(src, dst) / UDP(sport=sport, dport=dport) / Raw(payload)


def ring_real(v, h):
    pat = state[v]['pattern']
    return pat[(h % RING_SIZE) % len(pat)]


def encap(pkt, v, real, h, src_mac=LB_MAC, gw_mac=GW_MAC):
    """The expected packet: outer headers in front of pkt's IP header."""
    if Dot1Q in pkt:
        inner = pkt[Dot1Q].payload
    else:
        inner = pkt[Ether].payload
    inner_bytes = bytes(inner)
    ifam = 4 if inner_bytes[0] >> 4 == 4 else 6
    tos = inner_bytes[1] if ifam == 4 else ((inner_bytes[0] & 0xf) << 4) | (inner_bytes[1] >> 4)
    raddr = REALS[real]
    gue = VIPS[v][4] == ENCAP_GUE
    proto = 17 if gue else (4 if ifam == 4 else 41)
    if fam(raddr) == 4:
        outer = IP(src=outer_src4(SRC4, SRC4_PLEN, h), dst=raddr, tos=tos, id=0,
                   flags=0, ttl=OUTER_TTL, proto=proto)
    else:
        outer = IPv6(src=outer_src6(SRC6, SRC6_PLEN, h), dst=raddr, tc=tos,
                     fl=h & 0xfffff, hlim=OUTER_TTL, nh=proto)
    if gue:
        outer = outer / UDP(sport=0xc000 | (h & 0x3fff), dport=GUE_PORT, chksum=0)
    e = Ether(src=src_mac, dst=gw_mac)
    if Dot1Q in pkt:
        e = e / Dot1Q(vlan=pkt[Dot1Q].vlan)
    return e / outer / Raw(inner_bytes)


def flow_of(pkt):
    ip = pkt[IP] if IP in pkt else pkt[IPv6]
    l4 = pkt[TCP] if TCP in pkt else pkt[UDP]
    return (ip.src, ip.dst, l4.sport, l4.dport, 6 if TCP in pkt else 17)


def balanced(name, pkt, v, expect_real=None, syn=None, lru_use=True, note_lru=True,
             stats=True, retval=XDP_TX, src_mac=LB_MAC, quic_real=None, new_flow=None,
             cpu=None, ifindex=None, gw_mac=GW_MAC, real=None, events=None):
    """A row whose packet must leave encapsulated toward its real.

    new_flow, when given, is how much the VIP's and the real's new_flows
    (word 2 of struct xlb_lb_counter) must grow; real forces the real (an
    affinity the generator tracks itself); events, {name: delta}, how much
    event counters must grow."""
    f = flow_of(pkt)
    flags = VIPS[v][3]
    h = flow_hash(*f, flags=flags)
    if syn is None:
        syn = TCP in pkt and (pkt[TCP].flags & 0x12) == 0x02
    use_lru = lru_use and not (flags & F_NO_LRU)
    if quic_real:
        real = quic_real
    elif use_lru and not syn and f in lru:
        real = lru[f]
    elif real is not None:
        if use_lru and note_lru:
            lru[f] = real
    else:
        real = ring_real(v, h)
        if use_lru and note_lru:
            lru[f] = real
    if expect_real is not None:
        assert real == expect_real, (name, real, expect_real)
    t.row(name)
    if cpu is not None:
        t.ctx('cpu', cpu)
    if ifindex is not None:
        t.ctx('ifindex', ifindex)
    if stats:
        t.stat('xlb_vip_stats', v, 1)
        t.stat('xlb_real_stats', real, 1)
        if new_flow is not None:
            t.stat('xlb_vip_stats:2', v, new_flow)
            t.stat('xlb_real_stats:2', real, new_flow)
    for ev, d in (events or {}).items():
        t.stat('xlb_event_stats', EV[ev], d)
    t.run(pkt, retval, 0, encap(pkt, v, real, h, src_mac, gw_mac))
    return real


def passed(name, pkt, reason):
    t.row(name)
    t.run(pkt, XDP_PASS, R[reason], pkt)


def dropped(name, pkt, reason):
    t.row(name)
    t.run(pkt, XDP_DROP, R[reason])


def set_ring(v, half, pattern):
    state[v] = {'half': half, 'pattern': pattern}
    t.ring(v, half, pattern)
    addr, port, proto, flags, enc, _ = VIPS[v]
    t.update('xlb_vips', vip_key(addr, port, proto), vip_meta(v, flags, half, enc))


# ---- setup --------------------------------------------------------------
t.row('setup')
t.update('xlb_config', u32(0), cfg())
for r, a in REALS.items():
    t.update('xlb_reals', u32(r), real_val(a))
addrs = set()
for v, (addr, port, proto, flags, enc, pat) in VIPS.items():
    t.update('xlb_vips', vip_key(addr, port, proto), vip_meta(v, flags, 0, enc))
    if pat:
        t.ring(v, 0, pat)
    addrs.add(addr)
for a in sorted(addrs):
    t.update('xlb_vip_addrs', addr_key(a), u32(1))
t.update('xlb_server_ids', u32(7), u32(3))
t.run(Ether(src=PEER_MAC, dst='ff:ff:ff:ff:ff:ff') / ARP(pdst='192.0.2.1'),
      XDP_PASS, R['PASS_NOT_IP'],
      Ether(src=PEER_MAC, dst='ff:ff:ff:ff:ff:ff') / ARP(pdst='192.0.2.1'))

# ---- not for us ---------------------------------------------------------
passed('ipv4 tcp to non-vip', tcp_pkt(CLIENT, '192.0.2.99', 1234, 80), 'PASS_NOT_VIP')
passed('ipv4 tcp vip addr, other port', tcp_pkt(CLIENT, '192.0.2.10', 1234, 81), 'PASS_NOT_VIP')
passed('ipv6 udp to non-vip', udp_pkt(CLIENT6, '2001:db8::99', 1234, 53), 'PASS_NOT_VIP')
passed('ipv4 gre is l4 other', eth() / IP(src=CLIENT, dst='192.0.2.10', proto=47) / Raw(b'x' * 8),
       'PASS_L4_OTHER')
passed('qinq is not ip', Ether(src=PEER_MAC, dst=LB_MAC) / Dot1Q(vlan=5) / Dot1Q(vlan=6) /
       IP(src=CLIENT, dst='192.0.2.10') / TCP(dport=80), 'PASS_NOT_IP')

# ---- TCP v4: SYN, established, ring change ------------------------------
syn1 = tcp_pkt(CLIENT, '192.0.2.10', 40001, 80, 'S')
ack1 = tcp_pkt(CLIENT, '192.0.2.10', 40001, 80, 'A')
t.row('syn stats')
t.stat('xlb_event_stats', EV['NEW_FLOW'], 1)
t.stat('xlb_event_stats', EV['TX'], 1)
t.stat('xlb_event_stats', EV['LRU_MISS'], 0)
r1 = balanced('ipv4 tcp syn -> ring', syn1, 0, new_flow=1)
t.row('ack stats')
t.stat('xlb_event_stats', EV['LRU_HIT'], 1)
balanced('ipv4 tcp ack established -> lru', ack1, 0, expect_real=r1, new_flow=0)
for sp in range(40002, 40010):
    balanced('ipv4 tcp syn spread %d' % sp, tcp_pkt(CLIENT, '192.0.2.10', sp, 80, 'S'), 0)
# Ring change: the VIP flips to half 1 with a rotated pattern.
t.row('ring change')
set_ring(0, 1, P4B)
r1b = ring_real(0, flow_hash(*flow_of(ack1)))
assert r1b != r1
balanced('established keeps real after ring change', ack1, 0, expect_real=r1)
balanced('new syn uses new ring', tcp_pkt(CLIENT2, '192.0.2.10', 40001, 80, 'S'), 0)
balanced('re-syn of old flow consults ring', syn1, 0, expect_real=r1b)
balanced('after re-syn ack follows new real', ack1, 0, expect_real=r1b)
balanced('ipv4 tcp syn+ack is not a new-flow syn', tcp_pkt(CLIENT, '192.0.2.10', 40001, 80, 'SA'),
         0, expect_real=r1b)

# ---- UDP: LRU and aging -------------------------------------------------
u1 = udp_pkt(CLIENT, '192.0.2.10', 5353, 53)
ru = balanced('ipv4 udp first packet -> ring', u1, 1, new_flow=1)
set_ring(1, 1, P4B)
balanced('ipv4 udp keeps real after ring change', u1, 1, expect_real=ru, new_flow=0)
t.row('udp aging')
t.update('xlb_config', u32(0), cfg(udp_timeout_ns=1))
t.stat('xlb_event_stats', EV['UDP_EXPIRED'], 1)
ru2 = balanced('ipv4 udp entry aged out -> ring', u1, 1, syn=True)
t.update('xlb_config', u32(0), cfg())
balanced('ipv4 udp after aging keeps new real', u1, 1, expect_real=ru2)

# ---- any-port VIP, GUE --------------------------------------------------
balanced('any-port vip gue v4', tcp_pkt(CLIENT, '192.0.2.11', 40001, 8080, 'S'), 2)
balanced('any-port vip gue v4 other port', tcp_pkt(CLIENT, '192.0.2.11', 40001, 22, 'S'), 2)

# ---- IPv6 ---------------------------------------------------------------
s6 = tcp_pkt(CLIENT6, '2001:db8::10', 50000, 443, 'S')
r6 = balanced('ipv6 tcp syn ip6ip6', s6, 3, new_flow=1)
balanced('ipv6 tcp ack established', tcp_pkt(CLIENT6, '2001:db8::10', 50000, 443, 'A'), 3,
         expect_real=r6, new_flow=0)
for sp in range(50001, 50005):
    balanced('ipv6 syn spread %d' % sp, tcp_pkt(CLIENT6, '2001:db8::10', sp, 443, 'S'), 3)
balanced('ipv6 gue to v6 real', tcp_pkt(CLIENT6, '2001:db8::11', 50000, 80, 'S'), 9)
balanced('ipv4 vip ipv6 real (4in6)', tcp_pkt(CLIENT, '192.0.2.17', 40001, 80, 'S'), 10)
balanced('ipv6 vip ipv4 real (6in4)', tcp_pkt(CLIENT6, '2001:db8::12', 50000, 80, 'S'), 11)
balanced('gue v4 in v4', tcp_pkt(CLIENT, '192.0.2.18', 40001, 80, 'S'), 12)
balanced('ipv4 tos carried to outer', tcp_pkt(CLIENT, '192.0.2.10', 40100, 80, 'S', tos=0xb8), 0)

# ---- hash flags ---------------------------------------------------------
a = balanced('no-sport flow a', tcp_pkt(CLIENT, '192.0.2.12', 1111, 80, 'S'), 4)
b = balanced('no-sport flow b same real', tcp_pkt(CLIENT, '192.0.2.12', 2222, 80, 'S'), 4)
assert a == b
a = balanced('dport-only client a', tcp_pkt(CLIENT, '192.0.2.13', 1111, 80, 'S'), 5)
b = balanced('dport-only client b same real', tcp_pkt('203.0.113.50', '192.0.2.13', 3333, 80, 'S'), 5)
assert a == b
n1 = tcp_pkt(CLIENT, '192.0.2.14', 40001, 80, 'S')
rn = balanced('no-lru syn', n1, 6)
t.row('no-lru ring change')
set_ring(6, 1, P4B)
t.stat('xlb_event_stats', EV['LRU_HIT'], 0)
t.stat('xlb_event_stats', EV['LRU_MISS'], 0)
balanced('no-lru ack follows ring', tcp_pkt(CLIENT, '192.0.2.14', 40001, 80, 'A'), 6)
passed('local vip passes', tcp_pkt(CLIENT, '192.0.2.15', 40001, 80, 'S'), 'PASS_LOCAL_VIP')

# ---- QUIC ---------------------------------------------------------------
def quic(dst_cid, long_type=None, sport=44444):
    if long_type is None:
        payload = bytes([0x40]) + dst_cid + b'\x00' * 20
    else:
        payload = bytes([0xc0 | (long_type << 4)]) + b'\x00\x00\x00\x01' + \
            bytes([len(dst_cid)]) + dst_cid + b'\x00' * 20
    return udp_pkt(CLIENT, '192.0.2.16', sport, 443, payload=payload)


# Katran's CID layouts (xlb_shared.h): v1 server id 7 and 0xbeef (16 bits),
# v2 server id 0x12345 (24 bits); xlb_server_ids maps them to reals 3, 2, 1.
assert cid_v1(0xbeef)[0] >> 6 == 1 and cid_v2(0x12345)[0] >> 6 == 2
assert ((cid_v1(0xbeef)[0] & 0x3f) << 10 | cid_v1(0xbeef)[1] << 2 | cid_v1(0xbeef)[2] >> 6) == 0xbeef
t.row('quic server ids')
t.update('xlb_server_ids', u32(0xbeef), u32(2))
t.update('xlb_server_ids', u32(0x12345), u32(1))
t.stat('xlb_event_stats', EV['QUIC_CID_HIT'], 1)
balanced('quic v1 short header server id 7', quic(cid_v1(7)), 8, quic_real=3, note_lru=False)
balanced('quic v1 server id 0xbeef', quic(cid_v1(0xbeef), sport=44445), 8, quic_real=2, note_lru=False)
balanced('quic v2 server id 0x12345', quic(cid_v2(0x12345), sport=44446), 8, quic_real=1,
         note_lru=False)
balanced('quic v2 handshake long header', quic(cid_v2(0x12345), 2, sport=44447), 8, quic_real=1,
         note_lru=False)
t.row('quic miss stats')
t.stat('xlb_event_stats', EV['QUIC_CID_MISS'], 1)
balanced('quic unknown server id -> ring', quic(cid_v1(9)), 8)
balanced('quic v2 unknown server id -> ring', quic(cid_v2(0x777777), sport=44448), 8)
balanced('quic v1 id 7 long header retry', quic(cid_v1(7), 3, sport=44449), 8, quic_real=3,
         note_lru=False)
balanced('quic initial -> lru/ring', quic(cid_v1(7), 0), 8)
balanced('quic 0-rtt -> lru/ring', quic(cid_v1(7), 1, sport=44450), 8)
balanced('quic cid version 0 -> lru/ring', quic(bytes([0x00, 0, 7]) + bytes(5), sport=44451), 8)
balanced('quic cid version 3 -> lru/ring', quic(bytes([0xc0, 0, 7]) + bytes(5), sport=44452), 8)
balanced('quic short dcid in long header -> lru/ring',
         quic(cid_v1(7)[:4], 2, sport=44453), 8)
t.row('quic draining real keeps its ids')
t.update('xlb_reals', u32(3), real_val(REALS[3], REAL_F_DRAIN))
balanced('quic id of a draining real still routes', quic(cid_v1(7), sport=44454), 8, quic_real=3,
         note_lru=False)
t.row('quic real gone')
t.update('xlb_reals', u32(3), real_val('0.0.0.0'))
gone_sp = next(sp for sp in range(44455, 44600)
               if ring_real(8, flow_hash(CLIENT, '192.0.2.16', sp, 443, 17, F_QUIC)) != 3)
t.stat('xlb_event_stats', EV['QUIC_CID_MISS'], 1)
balanced('quic id of a removed real -> ring', quic(cid_v1(7), sport=gone_sp), 8)
t.update('xlb_reals', u32(3), real_val(REALS[3]))

# ---- VLAN, fragments, options, ext headers -------------------------------
balanced('vlan tagged syn keeps tag', tcp_pkt(CLIENT, '192.0.2.10', 40200, 80, 'S', vlan=42), 0)
passed('vlan arp passes', Ether(src=PEER_MAC, dst=LB_MAC) / Dot1Q(vlan=42) / ARP(), 'PASS_NOT_IP')


def frag_key(src, dst, ident, proto):
    return addr16(src) + addr16(dst) + struct.pack('<IBB2x', ident, proto, fam(dst))


def later_frag(name, pkt, v, real, h):
    """A fragment without ports: encapsulated toward the first fragment's real."""
    t.row(name)
    t.stat('xlb_event_stats', EV['FRAG_FOLLOW'], 1)
    t.stat('xlb_vip_stats', v, 1)
    t.stat('xlb_real_stats', real, 1)
    t.run(pkt, XDP_TX, 0, encap(pkt, v, real, h))


# IPv4: the first fragment (MF, offset 0) is balanced on its ports and
# leaves a record; the later ones (offset > 0) follow it, even after the
# ring changed under them.
ff4 = eth() / IP(src=CLIENT, dst='192.0.2.10', flags='MF', id=0x4242) / \
    TCP(sport=40600, dport=80, flags='A') / Raw(b'f' * 24)
h_ff4 = flow_hash(CLIENT, '192.0.2.10', 40600, 80, 6)
t.row('first fragment stats')
t.stat('xlb_event_stats', EV['FRAG_TRACKED'], 1)
r_ff4 = balanced('ipv4 first fragment balanced on its ports', ff4, 0)
t.row('first fragment record')
t.check('xlb_frags', frag_key(CLIENT, '192.0.2.10', 0x4242, 6),
        struct.pack('<IIIB3x', r_ff4, h_ff4, 0, ENCAP_IP))
other_half = 1 - state[0]['half']
t.ring(0, other_half, [x for x in P4 if x != r_ff4])
t.update('xlb_vips', vip_key('192.0.2.10', 80, 6), vip_meta(0, 0, other_half, ENCAP_IP))
lf4 = eth() / IP(src=CLIENT, dst='192.0.2.10', frag=4, proto=6, id=0x4242) / Raw(b'g' * 40)
later_frag('ipv4 later fragment follows the first', lf4, 0, r_ff4, h_ff4)
later_frag('ipv4 last fragment follows the first',
           eth() / IP(src=CLIENT, dst='192.0.2.10', frag=9, proto=6, id=0x4242) / Raw(b'h' * 8),
           0, r_ff4, h_ff4)
t.update('xlb_vips', vip_key('192.0.2.10', 80, 6), vip_meta(0, 0, state[0]['half'], ENCAP_IP))
dropped('ipv4 later fragment of an unseen datagram',
        eth() / IP(src=CLIENT, dst='192.0.2.10', frag=4, proto=6, id=0x4343) / Raw(b'g' * 40),
        'DROP_FRAG_UNMATCHED')
dropped('ipv4 later fragment, other protocol of the same id',
        eth() / IP(src=CLIENT, dst='192.0.2.10', frag=4, proto=17, id=0x4242) / Raw(b'g' * 40),
        'DROP_FRAG_UNMATCHED')
passed('ipv4 fragment to a non-vip address passes',
       eth() / IP(src=CLIENT, dst='192.0.2.99', frag=4, proto=6, id=0x4242) / Raw(b'g' * 40),
       'PASS_FRAGMENT')
passed('ipv4 icmp fragment passes', eth() / IP(src=CLIENT, dst='192.0.2.10', flags='MF', proto=1) /
       Raw(b'\x08\x00' + bytes(30)), 'PASS_FRAGMENT')
uf = eth() / IP(src=CLIENT, dst='192.0.2.10', flags='MF', id=0x5151) / UDP(sport=5300, dport=53) / \
    Raw(b'u' * 32)
h_uf = flow_hash(CLIENT, '192.0.2.10', 5300, 53, 17)
r_uf = balanced('ipv4 udp first fragment', uf, 1)
later_frag('ipv4 udp later fragment follows',
           eth() / IP(src=CLIENT, dst='192.0.2.10', frag=5, proto=17, id=0x5151) / Raw(b'v' * 16),
           1, r_uf, h_uf)
# IPv6: a fragment header right after the IPv6 header.
ff6 = eth() / IPv6(src=CLIENT6, dst='2001:db8::10') / IPv6ExtHdrFragment(m=1, offset=0, id=0xabcdef01) / \
    TCP(sport=50600, dport=443, flags='A') / Raw(b'6' * 24)
h_ff6 = flow_hash(CLIENT6, '2001:db8::10', 50600, 443, 6)
r_ff6 = balanced('ipv6 first fragment balanced on its ports', ff6, 3)
t.row('ipv6 first fragment record')
t.check('xlb_frags', frag_key(CLIENT6, '2001:db8::10', 0xabcdef01, 6),
        struct.pack('<IIIB3x', r_ff6, h_ff6, 3, ENCAP_IP))
later_frag('ipv6 later fragment follows',
           eth() / IPv6(src=CLIENT6, dst='2001:db8::10') /
           IPv6ExtHdrFragment(m=0, offset=5, id=0xabcdef01, nh=6) / Raw(b'7' * 16), 3, r_ff6, h_ff6)
dropped('ipv6 later fragment unmatched',
        eth() / IPv6(src=CLIENT6, dst='2001:db8::10') /
        IPv6ExtHdrFragment(m=0, offset=5, id=0x99, nh=6) / Raw(b'7' * 16), 'DROP_FRAG_UNMATCHED')
balanced('ipv6 atomic fragment is a whole datagram',
         eth() / IPv6(src=CLIENT6, dst='2001:db8::10') / IPv6ExtHdrFragment(m=0, offset=0, id=5) /
         TCP(sport=50601, dport=443, flags='S'), 3)
passed('ipv6 fragment then hop-by-hop passes',
       eth() / IPv6(src=CLIENT6, dst='2001:db8::10') / IPv6ExtHdrFragment(m=1, offset=0, id=6, nh=0) /
       Raw(bytes(16)), 'PASS_IPV6_EXT')
# The plain-drop policy: every fragment to a VIP address is dropped.
t.row('fragment drop policy')
t.update('xlb_config', u32(0), cfg(flags=CFG_F_FRAG_DROP))
dropped('policy drop: first fragment', ff4, 'DROP_FRAGMENT')
dropped('policy drop: later fragment', lf4, 'DROP_FRAGMENT')
passed('policy drop: fragment to a non-vip address passes',
       eth() / IP(src=CLIENT, dst='192.0.2.99', frag=4, proto=6, id=1) / Raw(b'g' * 40), 'PASS_FRAGMENT')
t.update('xlb_config', u32(0), cfg())
t.row('options stats')
t.stat('xlb_event_stats', EV['IP_OPTIONS'], 1)
balanced('ipv4 options balanced', tcp_pkt(CLIENT, '192.0.2.10', 40300, 80, 'S',
                                         options=[IPOption_NOP()] * 4), 0)
passed('ipv6 hop-by-hop passes', eth() / IPv6(src=CLIENT6, dst='2001:db8::10') /
       IPv6ExtHdrHopByHop() / TCP(sport=1, dport=443), 'PASS_IPV6_EXT')
dropped('bad ip version', eth() / IP(src=CLIENT, dst='192.0.2.10', version=5) / TCP(dport=80),
        'DROP_BAD_IP')
dropped('bad ihl', eth() / IP(src=CLIENT, dst='192.0.2.10', ihl=4) / TCP(dport=80), 'DROP_BAD_IP')
dropped('tcp header cut (ip len consistent)', eth() / IP(src=CLIENT, dst='192.0.2.10', proto=6) /
        Raw(b'\x00\x50' * 5), 'DROP_TRUNC_L4')
dropped('udp header cut', eth() / IP(src=CLIENT, dst='192.0.2.10', proto=17) / Raw(b'\x00' * 4),
        'DROP_TRUNC_L4')
dropped('no real in ring', tcp_pkt(CLIENT, '192.0.2.19', 40001, 80, 'S'), 'DROP_NO_REAL')

# ---- ICMP ---------------------------------------------------------------
echo = eth() / IP(src=CLIENT, dst='192.0.2.10', ttl=50, id=77) / ICMP(type=8, id=5, seq=9) / Raw(b'ping' * 8)
reply = Ether(src=LB_MAC, dst=PEER_MAC) / IP(src='192.0.2.10', dst=CLIENT, ttl=64, id=77) / \
    ICMP(type=0, id=5, seq=9) / Raw(b'ping' * 8)
t.row('icmp echo v4')
t.stat('xlb_event_stats', EV['ICMP_ECHO'], 1)
t.run(echo, XDP_TX, 0, reply)
echo6 = eth() / IPv6(src=CLIENT6, dst='2001:db8::10', hlim=50) / ICMPv6EchoRequest(id=5, seq=9, data=b'ping6')
reply6 = Ether(src=LB_MAC, dst=PEER_MAC) / IPv6(src='2001:db8::10', dst=CLIENT6, hlim=64) / \
    ICMPv6EchoReply(id=5, seq=9, data=b'ping6')
t.row('icmp echo v6')
t.run(echo6, XDP_TX, 0, reply6)


def icmp4_ok(msg):
    """Linux's check: the message's words plus its checksum fold to 0xffff."""
    if len(msg) % 2:
        msg += b'\0'
    s = sum(struct.unpack('!%dH' % (len(msg) // 2), msg))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s == 0xffff


# An all-zero reply (id 0, seq 0, no payload) sums to zero: only the
# checksum 0xffff verifies (scapy computes it so, from scratch).
echo0 = eth() / IP(src=CLIENT, dst='192.0.2.10', id=78) / ICMP(type=8, id=0, seq=0)
reply0 = Ether(src=LB_MAC, dst=PEER_MAC) / IP(src='192.0.2.10', dst=CLIENT, ttl=64, id=78) / \
    ICMP(type=0, id=0, seq=0)
assert bytes(reply0[ICMP])[2:4] == b'\xff\xff' and icmp4_ok(bytes(reply0[ICMP]))
t.row('icmp echo v4 all-zero message: checksum 0xffff')
t.stat('xlb_event_stats', EV['ICMP_ECHO'], 1)
t.run(echo0, XDP_TX, 0, reply0)
# A reply whose words sum to 0xffff: 0x0000 and 0xffff both verify; the
# balancer never writes 0x0000 for ICMPv4 (xlb_consts.h), scapy from
# scratch picks 0x0000, so the expected checksum is set and then checked.
echo1 = eth() / IP(src=CLIENT, dst='192.0.2.10', id=79) / ICMP(type=8, id=0xffff, seq=0)
reply1 = Ether(src=LB_MAC, dst=PEER_MAC) / IP(src='192.0.2.10', dst=CLIENT, ttl=64, id=79) / \
    ICMP(type=0, id=0xffff, seq=0, chksum=0xffff)
assert bytes(Ether(bytes(reply1))[ICMP].__class__(id=0xffff, type=0))[2:4] == b'\x00\x00'
assert icmp4_ok(bytes(reply1[ICMP]))
t.row('icmp echo v4 reply summing to 0xffff: checksum 0xffff')
t.run(echo1, XDP_TX, 0, reply1)
passed('icmp echo to non-vip passes', eth() / IP(src=CLIENT, dst='192.0.2.99') / ICMP(type=8),
       'PASS_NOT_VIP')
passed('icmp other type to vip passes', eth() / IP(src=CLIENT, dst='192.0.2.10') / ICMP(type=13),
       'PASS_ICMP_OTHER')


def too_big_v4(flow_pkt, router='203.0.113.1'):
    """A router's frag-needed about the real's reply (VIP -> client)."""
    f = flow_of(flow_pkt)
    emb = IP(src=f[1], dst=f[0], proto=6) / TCP(sport=f[3], dport=f[2], flags='A')
    return eth() / IP(src=router, dst=f[1]) / ICMP(type=3, code=4, nexthopmtu=1400) / \
        Raw(bytes(emb)[:28])


def icmp_err_row(name, icmp_pkt, flow_pkt, v):
    f = flow_of(flow_pkt)
    h = flow_hash(*f, flags=VIPS[v][3])
    real = lru.get(f) or ring_real(v, h)
    t.row(name)
    t.stat('xlb_event_stats', EV['ICMP_TOO_BIG'], 1)
    t.run(icmp_pkt, XDP_TX, 0, encap(icmp_pkt, v, real, h))
    return real


assert icmp_err_row('icmp frag-needed to real of established flow', too_big_v4(ack1), ack1, 0) == r1b
flow_new = tcp_pkt(CLIENT, '192.0.2.10', 47777, 80, 'A')
icmp_err_row('icmp frag-needed unknown flow -> ring', too_big_v4(flow_new), flow_new, 0)
f6 = flow_of(s6)
emb6 = IPv6(src=f6[1], dst=f6[0]) / TCP(sport=f6[3], dport=f6[2], flags='A')
tb6 = eth() / IPv6(src='2001:db8:ffff::1', dst=f6[1]) / ICMPv6PacketTooBig(mtu=1280) / Raw(bytes(emb6)[:48])
assert icmp_err_row('icmpv6 packet-too-big to real of flow', tb6, s6, 3) == r6
dropped('icmp frag-needed embedded cut', eth() / IP(src='203.0.113.1', dst='192.0.2.10') /
        ICMP(type=3, code=4) / Raw(b'\x45' + bytes(9)), 'DROP_ICMP_TRUNC')

# ---- config: source MAC, redirect, flood guard ---------------------------
t.row('src mac from config')
t.update('xlb_config', u32(0), cfg(src_mac=SRC_MAC))
balanced('outer src mac from config', tcp_pkt(CLIENT, '192.0.2.10', 40400, 80, 'S'), 0, src_mac=SRC_MAC)
# Redirect mode: the receiving interface's entry names a devmap port and
# its own outer MACs (per egress).
GW2_MAC, SRC2_MAC = '02:00:00:00:02:fe', '02:00:00:00:02:aa'
t.row('redirect')
t.update('xlb_tx_ports', u32(0), u32(IF_TX))
t.update('xlb_ifaces', u32(IF_RX), iface(GW2_MAC, SRC2_MAC, tx_port=1))
t.stat('xlb_event_stats', EV['REDIRECT'], 1)
t.stat('xlb_event_stats', EV['TX'], 0)
balanced('redirect via devmap with the egress macs', tcp_pkt(CLIENT, '192.0.2.10', 40500, 80, 'S'), 0,
         retval=XDP_REDIRECT, ifindex=IF_RX, src_mac=SRC2_MAC, gw_mac=GW2_MAC)
balanced('redirect of an established flow', tcp_pkt(CLIENT, '192.0.2.10', 40500, 80, 'A'), 0,
         retval=XDP_REDIRECT, ifindex=IF_RX, src_mac=SRC2_MAC, gw_mac=GW2_MAC)
t.row('redirect port empty')
t.update('xlb_ifaces', u32(IF_RX), iface(GW2_MAC, SRC2_MAC, tx_port=2))
t.ctx('ifindex', IF_RX)
t.run(tcp_pkt(CLIENT, '192.0.2.10', 40502, 80, 'S'), XDP_DROP, R['DROP_REDIRECT'])
lru[flow_of(tcp_pkt(CLIENT, '192.0.2.10', 40502, 80, 'S'))] = ring_real(0, flow_hash(CLIENT, '192.0.2.10', 40502, 80, 6))
t.row('tx with interface macs')
t.update('xlb_ifaces', u32(IF_RX), iface(GW2_MAC))
t.stat('xlb_event_stats', EV['TX'], 1)
balanced('xdp_tx: interface gateway, config source mac', tcp_pkt(CLIENT, '192.0.2.10', 40501, 80, 'S'), 0,
         ifindex=IF_RX, src_mac=SRC_MAC, gw_mac=GW2_MAC)
balanced('other interface: config macs', tcp_pkt(CLIENT, '192.0.2.10', 40503, 80, 'S'), 0,
         ifindex=IF_TX, src_mac=SRC_MAC)
t.update('xlb_ifaces', u32(IF_RX), iface())
t.update('xlb_config', u32(0), cfg())

# ---- too big for the egress ------------------------------------------------
MAXPKT = 1400


def big_tcp(dst, sport, size, df=True, vlan=None, dport=None, **kw):
    """An established-flow segment of `size` bytes of IP packet."""
    hl = 20 + sum(len(bytes(o)) for o in kw.get('options', [])) if fam(dst) == 4 else 40
    pay = b'B' * (size - hl - 20)
    if fam(dst) == 4:
        ip = IP(src=CLIENT, dst=dst, flags='DF' if df else 0, id=0x77, tos=0x28, **kw)
    else:
        ip = IPv6(src=CLIENT6, dst=dst, tc=0x28)
    if dport is None:
        dport = 80 if fam(dst) == 4 else 443
    return eth(vlan) / ip / TCP(sport=sport, dport=dport, flags='A') / Raw(pay)


def too_big_reply(pkt, mtu):
    """The ICMP the balancer must send back (icmp_gen.h), built here."""
    pkt = Ether(bytes(pkt))
    e = Ether(src=LB_MAC, dst=PEER_MAC)
    if Dot1Q in pkt:
        e = e / Dot1Q(vlan=pkt[Dot1Q].vlan)
    if IP in pkt:
        ip = pkt[IP]
        quote = bytes(ip)[:ip.ihl * 4 + 8]
        return e / IP(src=ip.dst, dst=ip.src, tos=(ip.tos & 0x1e) | 0xc0, id=0, flags=0, ttl=64) / \
            ICMP(type=3, code=4, nexthopmtu=mtu) / Raw(quote)
    ip6 = pkt[IPv6]
    return e / IPv6(src=ip6.dst, dst=ip6.src, hlim=64) / ICMPv6PacketTooBig(mtu=mtu) / \
        Raw(bytes(ip6)[:48])


def too_big(name, pkt, v, mtu, reason):
    t.row(name)
    t.ctx('ifindex', IF_RX)
    t.stat('xlb_vip_stats', v, 1)
    t.stat('xlb_event_stats', EV['TX'], 0)
    t.run(pkt, XDP_TX, R[reason], too_big_reply(pkt, mtu))


t.row('egress max packet')
t.update('xlb_ifaces', u32(IF_RX), iface(max_pkt=MAXPKT))
fit = big_tcp('192.0.2.10', 40700, MAXPKT - 20)
balanced('ipv4 ipip exactly fits the egress', fit, 0, ifindex=IF_RX)
big4 = big_tcp('192.0.2.10', 40700, MAXPKT - 19)
too_big('ipv4 df one byte too big: frag-needed mtu 1380', big4, 0, MAXPKT - 20, 'TX_ICMP_FRAG_NEEDED')
balanced('ipv4 client resends at the mtu: forwarded', big_tcp('192.0.2.10', 40700, MAXPKT - 20), 0,
         ifindex=IF_RX)
too_big('ipv4 df options quoted whole', big_tcp('192.0.2.10', 40701, 1480, options=[IPOption_NOP()] * 8),
        0, MAXPKT - 20, 'TX_ICMP_FRAG_NEEDED')
too_big('ipv4 df vlan tag kept', big_tcp('192.0.2.10', 40702, 1480, vlan=42), 0, MAXPKT - 20,
        'TX_ICMP_FRAG_NEEDED')
too_big('gue vip: mtu minus 28', big_tcp('192.0.2.18', 40703, 1480), 12, MAXPKT - 28,
        'TX_ICMP_FRAG_NEEDED')
too_big('ipv4 vip ipv6 real (4in6): mtu minus 40', big_tcp('192.0.2.17', 40704, 1400), 10,
        MAXPKT - 40, 'TX_ICMP_FRAG_NEEDED')
too_big('ipv6 packet too big mtu 1360', big_tcp('2001:db8::10', 50700, 1400), 3, MAXPKT - 40,
        'TX_ICMP6_TOO_BIG')
too_big('ipv6 vip ipv4 real (6in4): mtu minus 20', big_tcp('2001:db8::12', 50701, 1400, dport=80), 11,
        MAXPKT - 20, 'TX_ICMP6_TOO_BIG')
for name, pkt in [('ipv4 without df', big_tcp('192.0.2.10', 40705, 1480, df=False)),
                  ('ipv4 first fragment', eth() / IP(src=CLIENT, dst='192.0.2.10', flags='MF', id=9) /
                   TCP(sport=40706, dport=80, flags='A') / Raw(b'F' * 1440))]:
    t.row('too big, no icmp: ' + name)
    t.ctx('ifindex', IF_RX)
    t.run(pkt, XDP_DROP, R['DROP_TOO_BIG_NO_DF'])
    f = flow_of(pkt)
    lru[f] = lru.get(f) or ring_real(0, flow_hash(*f))
t.update('xlb_ifaces', u32(IF_RX), iface())
balanced('no max packet: the big packet is forwarded', big4, 0, ifindex=IF_RX)

# ---- session affinity -------------------------------------------------------
AFF = '192.0.2.20'
t.row('affinity setup')
t.update('xlb_vips', vip_key(AFF, 80, 6), vip_meta(14, 0, 0, ENCAP_IP, affinity_s=300))
t.update('xlb_vip_addrs', addr_key(AFF), u32(1))
t.ring(14, 0, P4)
state[14] = {'half': 0, 'pattern': P4}
VIPS[14] = (AFF, 80, 6, 0, ENCAP_IP, P4)


def aff_key(v, client):
    return struct.pack('<IB3x', v, fam(client)) + addr16(client)


a1 = balanced('affinity: first connection by the ring', tcp_pkt(CLIENT, AFF, 42000, 80, 'S'), 14)
t.row('affinity record')
t.check('xlb_affinity', aff_key(14, CLIENT), struct.pack('<II8x', a1, 0),
        bytes([0xff] * 8) + bytes(8))
# Later connections of the client go to the same real, whatever their hash.
other = [sp for sp in range(42001, 42100)
         if ring_real(14, flow_hash(CLIENT, AFF, sp, 80, 6)) != a1][:3]
assert len(other) == 3
for sp in other:
    t.row('affinity hit stats')
    t.stat('xlb_event_stats', EV['AFFINITY_HIT'], 1)
    balanced('affinity: connection from port %d sticks' % sp, tcp_pkt(CLIENT, AFF, sp, 80, 'S'), 14,
             real=a1)
b2 = balanced('affinity: another client by the ring', tcp_pkt(CLIENT2, AFF, other[0], 80, 'S'), 14)
t.row('affinity: draining real')
t.update('xlb_reals', u32(a1), real_val(REALS[a1], REAL_F_DRAIN))
balanced('affinity: a draining real takes no new connection', tcp_pkt(CLIENT, AFF, other[1] + 200, 80, 'S'),
         14, expect_real=ring_real(14, flow_hash(CLIENT, AFF, other[1] + 200, 80, 6)))
t.update('xlb_reals', u32(a1), real_val(REALS[a1]))
t.row('affinity: expired record')
t.update('xlb_affinity', aff_key(14, CLIENT2), struct.pack('<IIQ', a1 if a1 != b2 else 1 + a1 % 3, 0, 0))
balanced('affinity: an expired record goes by the ring',
         tcp_pkt(CLIENT2, AFF, other[2], 80, 'S'), 14)

# ---- source allow-lists -----------------------------------------------------
ALW4, ALW6 = '192.0.2.21', '2001:db8::21'
t.row('allow-list setup')
t.update('xlb_vips', vip_key(ALW4, 80, 6), vip_meta(15, F_ALLOWLIST, 0, ENCAP_IP))
t.update('xlb_vips', vip_key(ALW6, 443, 6), vip_meta(16, F_ALLOWLIST, 0, ENCAP_IP))
for a in (ALW4, ALW6):
    t.update('xlb_vip_addrs', addr_key(a), u32(1))
t.ring(15, 0, P4)
t.ring(16, 0, P6)
VIPS[15] = (ALW4, 80, 6, F_ALLOWLIST, ENCAP_IP, P4)
VIPS[16] = (ALW6, 443, 6, F_ALLOWLIST, ENCAP_IP, P6)
state[15] = {'half': 0, 'pattern': P4}
state[16] = {'half': 0, 'pattern': P6}
dropped('allow-list empty: dropped', tcp_pkt(CLIENT, ALW4, 43000, 80, 'S'), 'DROP_NOT_ALLOWED')
t.row('allow-list prefixes')
t.update('xlb_allow', allow_key(15, '198.51.100.0/24'), u32(1))
t.update('xlb_allow', allow_key(16, '2001:db8:c::/48'), u32(1))
t.update('xlb_allow', allow_key(0, '203.0.113.0/24'), u32(1))
balanced('allow-list: listed /24 passes', tcp_pkt(CLIENT, ALW4, 43000, 80, 'S'), 15)
balanced('allow-list: established from a listed source', tcp_pkt(CLIENT, ALW4, 43000, 80, 'A'), 15)
dropped('allow-list: other source dropped', tcp_pkt('203.0.113.50', ALW4, 43000, 80, 'S'),
        'DROP_NOT_ALLOWED')
balanced('allow-list: ipv6 /48 passes', tcp_pkt(CLIENT6, ALW6, 53000, 443, 'S'), 16)
dropped('allow-list: ipv6 outside the prefix', tcp_pkt('2001:db8:d::7', ALW6, 53000, 443, 'S'),
        'DROP_NOT_ALLOWED')
balanced('vip without the flag ignores the lists', tcp_pkt('203.0.113.50', '192.0.2.10', 43001, 80, 'S'), 0)

# ---- the shared connection table --------------------------------------------
CONN_MASK = bytes([0xff] * 8) + bytes(8) + bytes([0xff]) + bytes(7)
cs = tcp_pkt(CLIENT, '192.0.2.10', 44000, 80, 'S')
h_cs = flow_hash(CLIENT, '192.0.2.10', 44000, 80, 6)
r_cs = balanced('conn: syn written on cpu 1', cs, 0, cpu=1)
t.row('conn: the entry holds real, hash, state new')
t.check('xlb_conns', flow_key(CLIENT, '192.0.2.10', 44000, 80, 6), conn_val(r_cs, h_cs, 0, CONN_NEW),
        CONN_MASK)
t.row('conn: ring change')
set_ring(0, 1 - state[0]['half'], [x for x in P4 if x != r_cs])
t.row('conn: cpu 0 finds what cpu 1 wrote')
t.stat('xlb_event_stats', EV['LRU_HIT'], 1)
balanced('conn: ack on cpu 0 keeps the real', tcp_pkt(CLIENT, '192.0.2.10', 44000, 80, 'A'), 0,
         expect_real=r_cs, cpu=0)
t.row('conn: established')
t.check('xlb_conns', flow_key(CLIENT, '192.0.2.10', 44000, 80, 6),
        conn_val(r_cs, h_cs, 0, CONN_ESTABLISHED), CONN_MASK)
t.row('conn: fin closes')
t.stat('xlb_event_stats', EV['CONN_CLOSED'], 1)
balanced('conn: fin on cpu 1 keeps the real', tcp_pkt(CLIENT, '192.0.2.10', 44000, 80, 'FA'), 0,
         expect_real=r_cs, cpu=1)
t.row('conn: closed')
t.check('xlb_conns', flow_key(CLIENT, '192.0.2.10', 44000, 80, 6), conn_val(r_cs, h_cs, 0, CONN_CLOSED),
        CONN_MASK)
r_new = ring_real(0, h_cs)
balanced('conn: a reused 5-tuple: its syn takes the new ring on cpu 0',
         tcp_pkt(CLIENT, '192.0.2.10', 44000, 80, 'S'), 0, expect_real=r_new, cpu=0)
balanced('conn: and every cpu follows the new entry', tcp_pkt(CLIENT, '192.0.2.10', 44000, 80, 'A'), 0,
         expect_real=r_new, cpu=1)
t.row('conn: a flushed entry')
t.delete('xlb_conns', flow_key(CLIENT, '192.0.2.10', 44000, 80, 6))
t.check('xlb_conns', flow_key(CLIENT, '192.0.2.10', 44000, 80, 6))
t.row('missing config src')
t.update('xlb_config', u32(0), cfg(src4='0.0.0.0'))
dropped('no outer v4 source configured', tcp_pkt(CLIENT, '192.0.2.10', 40502, 80, 'S'), 'DROP_NO_CONFIG')
t.row('flood guard')
t.update('xlb_config', u32(0), cfg(max_new=1))
balanced('flood guard: first new flow', tcp_pkt(CLIENT, '192.0.2.10', 41000, 80, 'S'), 0, note_lru=False)
t.row('flood guard second')
t.stat('xlb_event_stats', EV['FLOOD_SKIP'], 1)
fl2s = tcp_pkt(CLIENT, '192.0.2.10', 41001, 80, 'S')
balanced('flood guard: second new flow forwarded, not remembered', fl2s, 0, note_lru=False)
t.row('flood ring change')
t.update('xlb_config', u32(0), cfg())
set_ring(0, 0, P4)
fl2a = tcp_pkt(CLIENT, '192.0.2.10', 41001, 80, 'A')
balanced('flood guard: skipped flow follows the ring', fl2a, 0)

# ---- the VIP address filter -------------------------------------------------
vip_addrs = sorted({VIPS[v][0] for v in VIPS})
host_addrs = ['192.0.2.99', '192.0.2.98', '203.0.113.9', '2001:db8::99']
assert all(vip_filter_bit(h) not in {vip_filter_bit(a) for a in vip_addrs} for h in host_addrs)
# An address whose bit a VIP address also sets: the filter lets it through,
# the VIP lookup sends it to the stack.
twin = next('10.77.%d.%d' % (i >> 8, i & 255) for i in range(65536)
            if vip_filter_bit('10.77.%d.%d' % (i >> 8, i & 255)) == vip_filter_bit('192.0.2.10'))
t.row('vip filter on')
t.update('xlb_vip_filter', u32(0), vip_filter(vip_addrs))
for h in host_addrs:
    t.row('filter: host traffic to %s passes unhashed' % h)
    t.stat('xlb_event_stats', EV['LRU_MISS'], 0)
    pkt = tcp_pkt(CLIENT6 if fam(h) == 6 else CLIENT, h, 1234, 80)
    t.run(pkt, XDP_PASS, R['PASS_NOT_VIP'], pkt)
passed('filter: fragment to a host address', eth() / IP(src=CLIENT, dst='192.0.2.99', frag=4, proto=6) /
       Raw(b'q' * 16), 'PASS_FRAGMENT')
passed('filter: icmp echo to a host address', eth() / IP(src=CLIENT, dst='192.0.2.99') / ICMP(type=8),
       'PASS_NOT_VIP')
passed('filter: an address sharing a vip bit is still looked up', tcp_pkt(CLIENT, twin, 1234, 80),
       'PASS_NOT_VIP')
balanced('filter: vip traffic still balanced', tcp_pkt(CLIENT, '192.0.2.10', 45000, 80, 'S'), 0)
balanced('filter: ipv6 vip traffic still balanced', tcp_pkt(CLIENT6, '2001:db8::10', 55000, 443, 'S'), 3)
t.row('filter: a vip address whose bit is clear is not seen (control sets bits first)')
t.update('xlb_vip_filter', u32(0), vip_filter([a for a in vip_addrs if a != '192.0.2.18']))
pkt = tcp_pkt(CLIENT, '192.0.2.18', 45001, 80, 'S')
t.run(pkt, XDP_PASS, R['PASS_NOT_VIP'], pkt)
t.row('filter disabled')
t.update('xlb_vip_filter', u32(0), vip_filter([], enabled=0))
balanced('filter disabled: every address looked up', tcp_pkt(CLIENT, '192.0.2.18', 45001, 80, 'S'), 12)

# ---- the established-flow fast path ----------------------------------------
# VIPs 17 (TCP) and 18 (UDP) on one address, with epochs as control gives
# them (xlb_shared.h): an established flow's entry is stamped with its VIP
# and epoch, and while xlb_vip_fast holds that epoch the packet is
# forwarded without the VIP lookup (LRU_HIT_FAST).
FST = '192.0.2.22'
FAST_MASK = bytes([0xff] * 8) + bytes(8) + bytes([0xff, 0, 0xff, 0xff]) + bytes([0xff] * 4)
VIPS[17] = (FST, 80, 6, 0, ENCAP_IP, P4)
VIPS[18] = (FST, 53, 17, 0, ENCAP_IP, P4)
state[17] = {'half': 0, 'pattern': P4}
state[18] = {'half': 0, 'pattern': P4}


def fast_vip(v, epoch, fast_epoch=None, flags=0, affinity_s=0, encap=ENCAP_IP):
    """VIP v's meta with epoch, and xlb_vip_fast[v] (fast_epoch, default the same)."""
    addr, port, proto, _, _, _ = VIPS[v]
    t.update('xlb_vips', vip_key(addr, port, proto),
             vip_meta(v, flags, state[v]['half'], encap, affinity_s, epoch))
    t.update('xlb_vip_fast', u32(v), vip_fast(epoch if fast_epoch is None else fast_epoch, encap))


FAST = {'LRU_HIT': 1, 'LRU_HIT_FAST': 1}
SLOW_HIT = {'LRU_HIT': 1, 'LRU_HIT_FAST': 0}
t.row('fast: setup')
fast_vip(17, 101)
fast_vip(18, 102)
t.ring(17, 0, P4)
t.ring(18, 0, P4)
t.update('xlb_vip_addrs', addr_key(FST), u32(1))
fs, fa = tcp_pkt(CLIENT, FST, 46000, 80, 'S'), tcp_pkt(CLIENT, FST, 46000, 80, 'A')
fk, fh = flow_key(CLIENT, FST, 46000, 80, 6), flow_hash(CLIENT, FST, 46000, 80, 6)
rf = balanced('fast: a syn takes the ring', fs, 17, new_flow=1, events={'LRU_HIT_FAST': 0})
t.row('fast: the entry is stamped with vip 17, epoch 101')
t.check('xlb_conns', fk, conn_val(rf, fh, 0, CONN_NEW, 17, 101), FAST_MASK)
balanced('fast: the ack is forwarded from the entry', fa, 17, expect_real=rf, events=FAST)
t.row('fast: without the vip meta (proof that it is not read)')
t.delete('xlb_vips', vip_key(FST, 80, 6))
balanced('fast: no vip lookup', fa, 17, expect_real=rf, events=FAST)
t.row('fast: the encapsulation is xlb_vip_fast\'s')
fast_vip(17, 101)
t.update('xlb_vip_fast', u32(17), vip_fast(101, ENCAP_GUE))
VIPS[17] = (FST, 80, 6, 0, ENCAP_GUE, P4)
balanced('fast: gue from xlb_vip_fast', fa, 17, expect_real=rf, events=FAST)
VIPS[17] = (FST, 80, 6, 0, ENCAP_IP, P4)
t.row('fast: epoch 0 in xlb_vip_fast (settings changing): the vip lookup')
fast_vip(17, 101, fast_epoch=0)
balanced('fast: off, the same real', fa, 17, expect_real=rf, events=SLOW_HIT)
t.row('fast: the vip allow-listed (epoch 0): established flows are checked')
fast_vip(17, 0, flags=F_ALLOWLIST)
dropped('fast: an unlisted established flow is dropped', fa, 'DROP_NOT_ALLOWED')
t.row('fast: plain again with a new epoch, xlb_vip_fast still 0')
fast_vip(17, 103, fast_epoch=0)
balanced('fast: the vip lookup restamps the entry', fa, 17, expect_real=rf, events=SLOW_HIT)
t.row('fast: restamped 103')
t.check('xlb_conns', fk, conn_val(rf, fh, 0, CONN_ESTABLISHED, 17, 103), FAST_MASK)
t.row('fast: xlb_vip_fast 103')
fast_vip(17, 103)
balanced('fast: on again', fa, 17, expect_real=rf, events=FAST)
t.row('fast: an entry of an older epoch takes the vip lookup once')
fast_vip(17, 104)
balanced('fast: stale stamp', fa, 17, expect_real=rf, events=SLOW_HIT)
balanced('fast: then the fast path', fa, 17, expect_real=rf, events=FAST)
t.row('fast: ring change: established flows keep their real')
set_ring(17, 1, [x for x in P4 if x != rf])
fast_vip(17, 104)
balanced('fast: kept across the ring change', fa, 17, expect_real=rf, events=FAST)
t.row('fast: the vip deleted')
t.update('xlb_vip_fast', u32(17), vip_fast(0))
t.delete('xlb_vips', vip_key(FST, 80, 6))
passed('fast: packets of a deleted vip pass', fa, 'PASS_NOT_VIP')
t.row('fast: a nonzero epoch in an affinity vip\'s meta stamps 0')
fast_vip(17, 105, affinity_s=30)
fs2, fa2 = tcp_pkt(CLIENT, FST, 46001, 80, 'S'), tcp_pkt(CLIENT, FST, 46001, 80, 'A')
rf2 = balanced('fast: affinity vip syn', fs2, 17)
t.row('fast: stamped 0')
t.check('xlb_conns', flow_key(CLIENT, FST, 46001, 80, 6),
        conn_val(rf2, flow_hash(CLIENT, FST, 46001, 80, 6), 0, CONN_NEW, 17, 0), FAST_MASK)
balanced('fast: affinity vip ack takes the vip lookup', fa2, 17, expect_real=rf2, events=SLOW_HIT)
t.row('fast: plain vip 17 again')
fast_vip(17, 106)
fm = tcp_pkt(CLIENT, FST, 46002, 80, 'A')
t.row('fast: a non-syn miss looks the table up once')
t.stat('xlb_event_stats', EV['LRU_MISS'], 1)
rfm = balanced('fast: miss, then the ring', fm, 17, new_flow=1, events={'LRU_HIT': 0, 'LRU_HIT_FAST': 0})
balanced('fast: and the next packet is fast', fm, 17, expect_real=rfm, events=FAST)
fu = udp_pkt(CLIENT, FST, 5354, 53)
ru = balanced('fast: udp first packet', fu, 18, new_flow=1, events={'LRU_HIT_FAST': 0})
balanced('fast: udp established', fu, 18, expect_real=ru, events=FAST)
t.row('fast: udp entry aged out: counted once, by the vip lookup')
t.update('xlb_config', u32(0), cfg(udp_timeout_ns=1))
t.stat('xlb_event_stats', EV['UDP_EXPIRED'], 1)
t.stat('xlb_event_stats', EV['LRU_MISS'], 1)
balanced('fast: udp aged out -> ring', fu, 18, syn=True, events={'LRU_HIT': 0, 'LRU_HIT_FAST': 0})
t.update('xlb_config', u32(0), cfg())
balanced('fast: udp fast again', fu, 18, expect_real=lru[flow_of(fu)], events=FAST)
t.row('fast: the filter: a vip address without its fast bit')
t.update('xlb_vip_filter', u32(0), vip_filter([FST]))
balanced('fast: no fast bit, the vip lookup', fm, 17, expect_real=rfm, events=SLOW_HIT)
t.row('fast: the filter: the fast bit set')
t.update('xlb_vip_filter', u32(0), vip_filter([FST], fast=[FST]))
balanced('fast: fast bit, the fast path', fm, 17, expect_real=rfm, events=FAST)
t.row('fast: filter disabled again')
t.update('xlb_vip_filter', u32(0), vip_filter([], enabled=0))

# ---- truncation of valid packets ----------------------------------------
def truncations(name, pkt, l2):
    raw = bytes(pkt)
    for n in range(len(raw)):
        t.row('%s truncated to %d' % (name, n))
        if n < 14:
            t.run_err(raw[:n], 22)
        elif n < l2:
            t.run(raw[:n], XDP_DROP, R['DROP_TRUNC_L2'])
        else:
            t.run(raw[:n], XDP_DROP, R['DROP_TRUNC_L3'])


truncations('ipv4 tcp syn', tcp_pkt(CLIENT, '192.0.2.10', 40001, 80, 'S'), 14)
truncations('ipv6 tcp syn', s6, 14)
truncations('vlan ipv4 udp', udp_pkt(CLIENT, '192.0.2.10', 5353, 53, vlan=7), 18)
truncations('ipv4 options syn', tcp_pkt(CLIENT, '192.0.2.10', 40001, 80, 'S',
                                        options=[IPOption_NOP()] * 4), 14)

t.write(sys.argv[1])
print('%d rows' % t.rows)
