# SPDX-License-Identifier: MIT
"""Differential table for the decap program: valid encapsulated and plain
frames, then seeded mutations; golden_run diff-* requires the kernel and
xlb's engine to agree on every one.  Usage: gen_fuzz_decap.py OUT.tab"""
import random
import sys

from scapy.all import ARP, Dot1Q, Ether, IP, IPv6, Raw, TCP, UDP

from xlbtab import *

rng = random.Random(11)
t = Table()
t.row('setup')
t.update('xlb_decap_addrs', addr_key('10.0.0.1'), u32(1))
t.update('xlb_decap_addrs', addr_key('fc00::1'), u32(1))
t.update('xlb_decap_config', u32(0), struct.pack('<H6x', 9886))
e = Ether(src='02:00:00:00:00:fe', dst='02:00:00:00:01:01')
in4 = IP(src='198.51.100.7', dst='192.0.2.10') / TCP(dport=80) / Raw(b'x' * 8)
in6 = IPv6(src='2001:db8:c::7', dst='2001:db8::10') / TCP(dport=443)
bases = [e / IP(src='10.255.0.9', dst='10.0.0.1', proto=4) / in4,
         e / IPv6(src='fc00:ffff::9', dst='fc00::1', nh=41) / in6,
         e / IPv6(src='fc00:ffff::9', dst='fc00::1', nh=4) / in4,
         e / IP(src='10.255.0.9', dst='10.0.0.1', proto=41) / in6,
         e / IP(src='10.255.0.9', dst='10.0.0.1') / UDP(sport=50000, dport=9886, chksum=0) / in4,
         e / IPv6(src='fc00:ffff::9', dst='fc00::1') / UDP(sport=50000, dport=9886, chksum=0) / in6,
         e / Dot1Q(vlan=4) / IP(src='10.255.0.9', dst='10.0.0.1', proto=4) / in4,
         e / IP(src='10.255.0.9', dst='10.0.0.2', proto=4) / in4,
         e / IP(src='10.255.0.9', dst='10.0.0.1') / TCP(dport=22),
         e / ARP()]
for b in bases:
    t.row('base')
    t.lines.append('in %s' % bytes(b).hex())
    t.lines.append('expect any')
for i in range(1000):
    t.row('fuzz %d' % i)
    t.lines.append('in %s' % mutate(rng, bytes(rng.choice(bases))).hex())
    t.lines.append('expect any')
t.write(sys.argv[1])
