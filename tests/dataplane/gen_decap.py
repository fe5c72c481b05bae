# SPDX-License-Identifier: MIT
"""Golden table for decap.bpf.o (XDP and tc ingress entries: same packets,
same reasons, the verdict spelled per hook).  Expected packets are built
with scapy.  Usage: gen_decap.py OUT.tab PROG"""
import sys

from scapy.all import ARP, Dot1Q, Ether, IP, IPv6, Raw, TCP, UDP

from xlbtab import *

tc = len(sys.argv) > 2 and sys.argv[2].endswith('_tc')
# tc: a stripped packet is TC_ACT_OK, one that is not ours TC_ACT_UNSPEC
# (the filters after us still see it: xlb_shared.h, "tc return codes").
PASS, DROP = (TC_ACT_OK, TC_ACT_SHOT) if tc else (XDP_PASS, XDP_DROP)
NOT_OURS = TC_ACT_UNSPEC if tc else XDP_PASS
RMAC, GMAC = '02:00:00:00:01:01', '02:00:00:00:00:fe'
HOST4, HOST6, LB4, LB6 = '10.0.0.1', 'fc00::1', '10.255.3.4', 'fc00:ffff::3:4'
GUE_PORT = 9886
t = Table()

inner4 = IP(src='198.51.100.7', dst='192.0.2.10', tos=0x10) / TCP(sport=40001, dport=80, flags='S') / Raw(b'hello')
inner6 = IPv6(src='2001:db8:c::7', dst='2001:db8::10') / TCP(sport=50000, dport=443, flags='S') / Raw(b'hello6')


def eth(vlan=None):
    e = Ether(src=GMAC, dst=RMAC)
    return e / Dot1Q(vlan=vlan) if vlan is not None else e


def stripped(name, pkt, inner, vlan=None):
    t.row(name)
    t.stat('xlb_decap_events', EV['DECAP'], 1)
    t.run(pkt, PASS, 0, eth(vlan) / inner)


def passed(name, pkt, reason):
    t.row(name)
    t.run(pkt, NOT_OURS, R[reason], pkt)


def dropped(name, pkt, reason):
    t.row(name)
    t.run(pkt, DROP, R[reason])


t.row('setup')
t.update('xlb_decap_addrs', addr_key(HOST4), u32(1))
t.update('xlb_decap_addrs', addr_key(HOST6), u32(1))
t.update('xlb_decap_config', u32(0), struct.pack('<H6x', GUE_PORT))

stripped('ipip', eth() / IP(src=LB4, dst=HOST4, proto=4) / inner4, inner4)
stripped('ip6ip6', eth() / IPv6(src=LB6, dst=HOST6, nh=41) / inner6, inner6)
stripped('ipv4 in ipv6', eth() / IPv6(src=LB6, dst=HOST6, nh=4) / inner4, inner4)
stripped('ipv6 in ipv4', eth() / IP(src=LB4, dst=HOST4, proto=41) / inner6, inner6)
stripped('gue v4 in v4', eth() / IP(src=LB4, dst=HOST4) / UDP(sport=0xc123, dport=GUE_PORT, chksum=0) / inner4, inner4)
stripped('gue v6 in v6', eth() / IPv6(src=LB6, dst=HOST6) / UDP(sport=0xc123, dport=GUE_PORT, chksum=0) / inner6, inner6)
stripped('gue v6 in v4', eth() / IP(src=LB4, dst=HOST4) / UDP(sport=0xc123, dport=GUE_PORT, chksum=0) / inner6, inner6)
if tc:
    # bpf_skb_adjust_room() handles only IPv4/IPv6 skbs: in-band tags pass.
    passed('vlan ipip passes (tc)', eth(9) / IP(src=LB4, dst=HOST4, proto=4) / inner4, 'PASS_NOT_ENCAP')
else:
    stripped('vlan ipip keeps tag', eth(9) / IP(src=LB4, dst=HOST4, proto=4) / inner4, inner4, vlan=9)
stripped('outer ipv4 options', eth() / IP(src=LB4, dst=HOST4, proto=4, options=[b'\x01\x01\x01\x01']) / inner4, inner4)

passed('ipip to other address', eth() / IP(src=LB4, dst='10.0.0.9', proto=4) / inner4, 'PASS_NOT_ENCAP')
passed('plain tcp to host', eth() / IP(src=LB4, dst=HOST4) / TCP(dport=80), 'PASS_NOT_ENCAP')
passed('udp to other port', eth() / IP(src=LB4, dst=HOST4) / UDP(dport=53) / Raw(b'\x45' * 20), 'PASS_NOT_ENCAP')
passed('ipv6 ext header', eth() / IPv6(src=LB6, dst=HOST6, nh=0) / Raw(bytes(8)) / inner6, 'PASS_NOT_ENCAP')
passed('arp', eth() / ARP(), 'PASS_NOT_IP')
passed('outer fragment', eth() / IP(src=LB4, dst=HOST4, proto=4, flags='MF') / inner4, 'PASS_FRAGMENT')
dropped('ipip with ipv6 inside', eth() / IP(src=LB4, dst=HOST4, proto=4) / inner6, 'DROP_DECAP_BAD')
dropped('gue with junk inside', eth() / IP(src=LB4, dst=HOST4) / UDP(dport=GUE_PORT) / Raw(bytes(20)), 'DROP_DECAP_BAD')
dropped('ipip without inner', eth() / IP(src=LB4, dst=HOST4, proto=4), 'DROP_DECAP_BAD')
dropped('gue udp header cut', eth() / IP(src=LB4, dst=HOST4, proto=17) / Raw(bytes(4)), 'DROP_TRUNC_L4')
dropped('bad outer version', eth() / IP(src=LB4, dst=HOST4, proto=4, version=7) / inner4, 'DROP_BAD_IP')

for name, pkt, iplen in [('ipip', eth() / IP(src=LB4, dst=HOST4, proto=4) / inner4, 20),
                         ('ip6ip6', eth() / IPv6(src=LB6, dst=HOST6, nh=41) / inner6, 40)]:
    raw = bytes(pkt)
    for n in range(len(raw)):
        t.row('%s truncated to %d' % (name, n))
        # BPF_PROG_TEST_RUN of an skb wants Ethernet and a whole IP header.
        if n < 14 or (tc and n < 14 + iplen):
            t.run_err(raw[:n], 22)
        else:
            t.run(raw[:n], DROP, R['DROP_TRUNC_L3'])

t.write(sys.argv[1])
