# SPDX-License-Identifier: MIT
"""Golden table for the balancer with its rodata feature switches off
(xlb_enable_icmp = 0, xlb_enable_quic = 0): ICMP to a VIP address passes,
a QUIC packet with a known server id is routed by the ring like any UDP
flow.  Usage: gen_switches.py OUT.tab"""
import sys

from scapy.all import Ether, ICMP, IP, Raw, UDP

from xlbtab import *

LB_MAC, PEER_MAC, GW_MAC = '02:00:00:00:00:01', '02:00:00:00:00:02', '02:00:00:00:00:fe'
VIP, CLIENT, SRC4 = '192.0.2.16', '198.51.100.7', '10.255.0.0'
REALS = {1: '10.0.0.1', 2: '10.0.0.2', 3: '10.0.0.3'}
t = Table()
t.rodata('xlb_enable_icmp', bytes([0]))
t.rodata('xlb_enable_quic', bytes([0]))
t.row('setup')
t.update('xlb_config', u32(0), config(GW_MAC, src4=SRC4, src4_plen=16))
for r, a in REALS.items():
    t.update('xlb_reals', u32(r), real_val(a))
t.update('xlb_vips', vip_key(VIP, 443, 17), vip_meta(0, F_QUIC))
t.update('xlb_vip_addrs', addr_key(VIP), u32(1))
t.ring(0, 0, [1, 2])
t.update('xlb_server_ids', u32(7), u32(3))

echo = Ether(src=PEER_MAC, dst=LB_MAC) / IP(src=CLIENT, dst=VIP) / ICMP(type=8) / Raw(b'ping')
t.row('icmp echo passes with icmp off')
t.run(echo, XDP_PASS, R['PASS_ICMP_OTHER'], echo)
for sport in range(5000, 5006):
    pkt = Ether(src=PEER_MAC, dst=LB_MAC) / IP(src=CLIENT, dst=VIP) / \
        UDP(sport=sport, dport=443) / Raw(bytes([0x40, 0x40, 0x00, 0x07]) + bytes(24))
    h = flow_hash(CLIENT, VIP, sport, 443, 17, F_QUIC)
    real = [1, 2][(h % RING_SIZE) % 2]       # never 3: the CID is ignored
    inner = bytes(pkt[IP])
    out = Ether(src=LB_MAC, dst=GW_MAC) / IP(src=outer_src4(SRC4, 16, h), dst=REALS[real], id=0,
                                             flags=0, ttl=64, proto=4) / Raw(inner)
    t.row('quic off: sport %d by the ring' % sport)
    t.stat('xlb_event_stats', EV['QUIC_CID_HIT'], 0)
    t.run(pkt, XDP_TX, 0, out)
t.write(sys.argv[1])
