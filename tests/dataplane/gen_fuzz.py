# SPDX-License-Identifier: MIT
"""Differential table for the balancer: valid packets to VIPs and hosts,
then seeded random mutations of them (byte flips, header-field garbage,
cuts, random lengths).  No expected values: golden_run diff-* runs every
packet on the kernel and on xlb's engine and requires identical results.
Usage: gen_fuzz.py OUT.tab [PROG] [SEED] [COUNT]"""
import random
import sys

from scapy.all import Dot1Q, Ether, ICMP, IP, IPv6, ICMPv6EchoRequest, ICMPv6PacketTooBig, Raw, TCP, UDP

from xlbtab import *

seed = int(sys.argv[3]) if len(sys.argv) > 3 else 5
count = int(sys.argv[4]) if len(sys.argv) > 4 else 1500
rng = random.Random(seed)
LB, PEER, GW = '02:00:00:00:00:01', '02:00:00:00:00:02', '02:00:00:00:00:fe'
t = Table()
t.row('setup')
t.update('xlb_config', u32(0), config(GW, src4='10.255.0.0', src4_plen=16, src6='fc00:ffff::',
                                      src6_plen=112, gue_port=9886))
for r, a in {1: '10.0.0.1', 2: '10.0.0.2', 3: 'fc00::3'}.items():
    t.update('xlb_reals', u32(r), real_val(a))
vips = [('192.0.2.10', 80, 6, 0, ENCAP_IP), ('192.0.2.10', 53, 17, F_QUIC, ENCAP_GUE),
        ('192.0.2.11', 0, 6, F_NO_SPORT, ENCAP_GUE), ('2001:db8::10', 443, 6, 0, ENCAP_IP),
        ('2001:db8::10', 443, 17, F_DPORT_ONLY | F_QUIC, ENCAP_IP)]
for n, (a, p, pr, fl, en) in enumerate(vips):
    t.update('xlb_vips', vip_key(a, p, pr), vip_meta(n, fl, 0, en))
    t.update('xlb_vip_addrs', addr_key(a), u32(1))
    t.ring(n, 0, [1, 2, 3])
t.update('xlb_server_ids', u32(7), u32(2))

e = Ether(src=PEER, dst=LB)
bases = [
    e / IP(src='198.51.100.7', dst='192.0.2.10') / TCP(sport=1234, dport=80, flags='S') / Raw(b'x' * 20),
    e / IP(src='198.51.100.7', dst='192.0.2.10') / TCP(sport=1234, dport=80, flags='A') / Raw(b'x' * 20),
    e / IP(src='198.51.100.7', dst='192.0.2.10') / UDP(sport=1234, dport=53) / Raw(b'\x40\x40\x00\x07' + bytes(20)),
    e / IP(src='198.51.100.7', dst='192.0.2.11') / TCP(sport=1234, dport=9999) / Raw(b'y' * 10),
    e / IPv6(src='2001:db8:c::7', dst='2001:db8::10') / TCP(sport=1234, dport=443, flags='S'),
    e / IPv6(src='2001:db8:c::7', dst='2001:db8::10') / UDP(sport=1234, dport=443) / Raw(b'\xc0\0\0\0\1\x08\x40\x00\x07' + bytes(20)),
    e / Dot1Q(vlan=3) / IP(src='198.51.100.7', dst='192.0.2.10') / TCP(sport=1, dport=80),
    e / IP(src='198.51.100.7', dst='192.0.2.10') / ICMP(type=8) / Raw(b'ping'),
    e / IPv6(src='2001:db8:c::7', dst='2001:db8::10') / ICMPv6EchoRequest(data=b'p'),
    e / IP(src='203.0.113.1', dst='192.0.2.10') / ICMP(type=3, code=4) /
    Raw(bytes(IP(src='192.0.2.10', dst='198.51.100.7') / TCP(sport=80, dport=1234))[:28]),
    e / IPv6(src='2001:db8::1', dst='2001:db8::10') / ICMPv6PacketTooBig() /
    Raw(bytes(IPv6(src='2001:db8::10', dst='2001:db8:c::7') / TCP(sport=443, dport=1234))[:48]),
    e / IP(src='198.51.100.7', dst='192.0.2.99') / TCP(),
]
for b in bases:
    t.row('base')
    t.lines.append('in %s' % bytes(b).hex())
    t.lines.append('expect any')
for i in range(count):
    t.row('fuzz %d' % i)
    t.lines.append('in %s' % mutate(rng, bytes(rng.choice(bases))).hex())
    t.lines.append('expect any')
t.write(sys.argv[1])
