# SPDX-License-Identifier: MIT
"""Predict which real answers each of the netns test's connections, from the
specifications alone: xlb-testctl's Maglev population (FNV-1a offset, djb2
skip over the 16-byte address) and the flow hash (hash.h, via xlbtab).
Usage: spread_model.py CLIENT VIP PORT FIRST_SPORT COUNT REAL...
Prints "rN COUNT" per real (r1 = first real)."""
import socket
import sys

from xlbtab import RING_SIZE as M, addr16, flow_hash


def maglev(addrs):
    offset, skip = [], []
    for a in addrs:
        b = addr16(a)
        h1, h2 = 2166136261, 5381
        for x in b:
            h1 = ((h1 ^ x) * 16777619) & 0xffffffff
            h2 = (h2 * 33 + x) & 0xffffffff
        offset.append(h1 % M)
        skip.append(h2 % (M - 1) + 1)
    ring, nxt, filled = [0] * M, [0] * len(addrs), 0
    while filled < M:
        for r in range(len(addrs)):
            if filled >= M:
                break
            while True:
                c = (offset[r] + nxt[r] * skip[r]) % M
                nxt[r] += 1
                if not ring[c]:
                    break
            ring[c] = r + 1
            filled += 1
    return ring


client, vip, port, first, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
reals = sys.argv[6:]
ring = maglev(reals)
counts = [0] * len(reals)
for sp in range(first, first + count):
    counts[ring[flow_hash(client, vip, sp, port, 6) % M] - 1] += 1
for i, c in enumerate(counts):
    print('r%d %d' % (i + 1, c))
