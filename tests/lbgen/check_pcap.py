#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check lbgen's frames in a pcap against the flow space it was told to make.

usage: check_pcap.py PCAP FAMILY(4|6) PROTO(tcp|udp|quic) FLOWS SIZE VIP PORT [SYN_RATIO]

Every frame must parse, carry correct IPv4 header and L4 checksums
(recomputed by scapy from the bytes, never taken from lbgen), go to
VIP:PORT, be SIZE bytes, and name a flow of the space (source port
1024 + f % 64512, source address base + f // 64512); all FLOWS flows must
appear when at least FLOWS frames were captured in sequence; a SYN ratio
must hold within 10 points.
"""
import sys

from scapy.all import IP, IPv6, TCP, UDP, Ether, rdpcap  # noqa: E402


def main():
    path, fam, proto, flows, size, vip, port = sys.argv[1:8]
    syn_ratio = float(sys.argv[8]) if len(sys.argv) > 8 else None
    flows, size, port = int(flows), int(size), int(port)
    frames = rdpcap(path)
    if not frames:
        sys.exit("no frames captured")
    seen, syns, bad = set(), 0, []
    for i, raw in enumerate(frames):
        b = bytes(raw)
        p = Ether(b)
        ip = p[IPv6] if fam == "6" else p[IP]
        l4 = p[TCP] if proto == "tcp" else p[UDP]
        if len(b) != size:
            bad.append("frame %d: %d bytes" % (i, len(b)))
        if ip.dst != vip or l4.dport != port:
            bad.append("frame %d: to %s:%d" % (i, ip.dst, l4.dport))
        want_l4 = l4.chksum
        clone = Ether(b)
        c4 = clone[TCP] if proto == "tcp" else clone[UDP]
        del c4.chksum
        if fam == "4":
            del clone[IP].chksum
        rebuilt = Ether(bytes(clone))
        r4 = rebuilt[TCP] if proto == "tcp" else rebuilt[UDP]
        if r4.chksum != want_l4:
            bad.append("frame %d: L4 checksum %#x, the bytes say %#x" % (i, want_l4, r4.chksum))
        if fam == "4" and rebuilt[IP].chksum != ip.chksum:
            bad.append("frame %d: IPv4 checksum %#x, the bytes say %#x" % (i, ip.chksum, rebuilt[IP].chksum))
        src_low = int.from_bytes(bytes(raw)[26:30] if fam == "4" else bytes(raw)[34:38], "big")
        seen.add((src_low, l4.sport))
        if proto == "tcp" and l4.flags & 0x02:
            syns += 1
    if bad:
        sys.exit("\n".join(bad[:10]))
    base = min(s for s, _ in seen)
    ids = {(s - base) * 64512 + (sp - 1024) for s, sp in seen}
    if any(f < 0 or f >= flows for f in ids):
        sys.exit("a frame outside the flow space: %s" % sorted(ids)[-3:])
    if len(frames) >= flows and len(ids) != flows:
        sys.exit("%d frames in sequence named %d of %d flows" % (len(frames), len(ids), flows))
    if syn_ratio is not None and abs(syns / len(frames) - syn_ratio) > 0.1:
        sys.exit("SYN share %.2f, asked for %.2f" % (syns / len(frames), syn_ratio))
    print("%d frames, %d flows, checksums right" % (len(frames), len(ids)))


main()
