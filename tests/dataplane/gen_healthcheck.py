# SPDX-License-Identifier: MIT
"""Golden table for healthcheck.bpf.o (tc egress, sched_cls): marked probes
leave encapsulated toward their real with the balancer's outer headers.
Expected packets are built with scapy.  Usage: gen_healthcheck.py OUT.tab"""
import sys

from scapy.all import ARP, Ether, IP, IPv6, Raw, TCP, UDP, ICMP

from xlbtab import *

HMAC, NMAC, GW, SMAC = '02:00:00:00:00:01', '02:00:00:00:00:02', '02:00:00:00:00:fe', '02:00:00:00:00:aa'
SRC4, SRC6, GUE_PORT = '10.0.0.100', 'fc00::100', 9886
REALS = {101: ('10.0.0.1', ENCAP_IP), 102: ('fc00::2', ENCAP_IP),
         103: ('10.0.0.3', ENCAP_GUE), 104: ('fc00::3', ENCAP_GUE)}
t = Table()


def hc_config(gw='00:00:00:00:00:00', src='00:00:00:00:00:00', mark_min=0, mark_max=0, ifindex=0):
    return addr16(SRC6) + socket.inet_aton(SRC4) + struct.pack('<H', GUE_PORT) + mac(gw) + mac(src) + \
        bytes(2) + struct.pack('<IIII', mark_min, mark_max, ifindex, 0)


def hc_real(addr, enc):
    return addr16(addr) + bytes([fam(addr), enc, 0, 0])


def probe4(sport=33333, proto='tcp'):
    l4 = TCP(sport=sport, dport=80, flags='S') if proto == 'tcp' else UDP(sport=sport, dport=53)
    return Ether(src=HMAC, dst=NMAC) / IP(src=SRC4, dst='192.0.2.10', tos=0x20) / l4 / Raw(b'probe')


def probe6(sport=33333):
    return Ether(src=HMAC, dst=NMAC) / IPv6(src=SRC6, dst='2001:db8::10') / TCP(sport=sport, dport=443, flags='S')


def expected(pkt, mark, macs):
    raddr, enc = REALS[mark]
    inner = bytes(pkt[Ether].payload)
    ip = pkt[IP] if IP in pkt else pkt[IPv6]
    l4 = pkt[TCP] if TCP in pkt else pkt[UDP]
    h = flow_hash(ip.src, ip.dst, l4.sport, l4.dport, 6 if TCP in pkt else 17)
    ifam = inner[0] >> 4
    tos = inner[1] if ifam == 4 else ((inner[0] & 0xf) << 4) | (inner[1] >> 4)
    proto = 17 if enc == ENCAP_GUE else (4 if ifam == 4 else 41)
    if fam(raddr) == 4:
        outer = IP(src=SRC4, dst=raddr, tos=tos, id=0, flags=0, ttl=64, proto=proto)
    else:
        outer = IPv6(src=SRC6, dst=raddr, tc=tos, fl=h & 0xfffff, hlim=64, nh=proto)
    if enc == ENCAP_GUE:
        outer = outer / UDP(sport=0xc000 | (h & 0x3fff), dport=GUE_PORT, chksum=0)
    return Ether(dst=macs[0], src=macs[1]) / outer / Raw(inner)


def encapped(name, pkt, mark, macs=(NMAC, HMAC)):
    t.row(name)
    t.ctx('mark', mark)
    t.stat('xlb_hc_events', EV['HC_ENCAP'], 1)
    t.run(pkt, TC_ACT_OK, 0, expected(pkt, mark, macs))


t.row('setup')
t.update('xlb_hc_config', u32(0), hc_config())
for m, (a, e) in REALS.items():
    t.update('xlb_hc_reals', u32(m), hc_real(a, e))

encapped('v4 probe ipip', probe4(), 101)
big = Ether(src=HMAC, dst=NMAC) / IP(src=SRC4, dst='192.0.2.10') / TCP(sport=1, dport=80, flags='PA') / Raw(b'z' * 1200)
encapped('v4 probe 1200-byte payload gue', big, 103)
encapped('v4 probe udp ipip', probe4(proto='udp'), 101)
encapped('v4 probe in ipv6', probe4(), 102)
encapped('v4 probe gue', probe4(), 103)
encapped('v4 probe gue over v6', probe4(), 104)
encapped('v6 probe ip6ip6', probe6(), 102)
encapped('v6 probe gue v6', probe6(), 104)
encapped('v6 probe in ipv4', probe6(), 101)
t.row('macs from config')
t.update('xlb_hc_config', u32(0), hc_config(GW, SMAC))
encapped('v4 probe macs from config', probe4(), 101, macs=(GW, SMAC))
# Not a probe: untouched, TC_ACT_UNSPEC, so the filters after this one see it.
for name, pkt, mark in [('no mark', probe4(), 0), ('unknown mark, no range', probe4(), 999)]:
    t.row(name)
    t.ctx('mark', mark)
    t.run(pkt, TC_ACT_UNSPEC, R['PASS_NO_HC_MARK'], pkt)
t.row('marked arp')
t.ctx('mark', 101)
arp = Ether(src=HMAC, dst='ff:ff:ff:ff:ff:ff') / ARP()
t.run(arp, TC_ACT_UNSPEC, R['PASS_NOT_IP'], arp)
# A mark range: marks outside it are not probes; an unknown mark inside it
# is a probe for a real that is gone: dropped.
t.row('mark range')
t.update('xlb_hc_config', u32(0), hc_config(GW, SMAC, mark_min=100, mark_max=199))
encapped('in range: encapsulated', probe4(), 101, macs=(GW, SMAC))
for name, mark, ret, reason in [('below the range', 99, TC_ACT_UNSPEC, 'PASS_NO_HC_MARK'),
                                ('above the range', 200, TC_ACT_UNSPEC, 'PASS_NO_HC_MARK'),
                                ('unknown mark in the range', 150, TC_ACT_SHOT, 'DROP_HC_UNKNOWN_MARK')]:
    t.row(name)
    t.ctx('mark', mark)
    t.run(probe4(), ret, R[reason], probe4() if ret != TC_ACT_SHOT else None)
# Registered outside the range: the range wins (not a probe).
t.update('xlb_hc_reals', u32(250), hc_real('10.0.0.1', ENCAP_IP))
t.row('registered mark outside the range')
t.ctx('mark', 250)
t.run(probe4(), TC_ACT_UNSPEC, R['PASS_NO_HC_MARK'], probe4())
# An egress interface: the probe is redirected there (ifindex 3 of golden.sh).
t.row('probe redirected to the configured interface')
t.update('xlb_hc_config', u32(0), hc_config(GW, SMAC, mark_min=100, mark_max=199, ifindex=3))
t.ctx('mark', 101)
t.stat('xlb_hc_events', EV['HC_ENCAP'], 1)
t.run(probe4(), TC_ACT_REDIRECT, 0, expected(probe4(), 101, (GW, SMAC)))
t.write(sys.argv[1])
