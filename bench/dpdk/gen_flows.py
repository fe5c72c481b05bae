#!/usr/bin/env python3
"""gen_flows.py OUT.pcap VIP FLOWS [DST_MAC]: one 64-byte TCP ACK per flow to
VIP:80 (flow i: source 10.0.0.0 + i // 50000, port 1024 + i % 50000, the
way lbgen spreads its flows), checksums whole.  net_pcap's infinite_rx
replays the file in a loop: each flow is established after its first
packet (an LRU hit from then on)."""
import socket
import struct
import sys


def csum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def frame(vip, dmac, i):
    src = struct.pack('!I', (10 << 24) + i // 50000)
    sport = 1024 + i % 50000
    tcp = struct.pack('!HHIIBBHHH', sport, 80, 0x1000, 0x2000, 5 << 4, 0x10, 65535, 0, 0)
    pseudo = src + vip + struct.pack('!BBH', 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack('!H', csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp), i & 0xffff, 0x4000, 64, 6, 0, src, vip)
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    eth = dmac + bytes.fromhex('020000000001') + b'\x08\x00'
    f = eth + ip + tcp
    return f + b'\0' * (60 - len(f))  # 64 bytes on the wire with the FCS


def main():
    out, vip, flows = sys.argv[1], socket.inet_aton(sys.argv[2]), int(sys.argv[3])
    dmac = bytes.fromhex((sys.argv[4] if len(sys.argv) > 4 else '02:00:00:00:00:02').replace(':', ''))
    with open(out, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i in range(flows):
            p = frame(vip, dmac, i)
            f.write(struct.pack('<IIII', 0, 0, len(p), len(p)) + p)


main()
