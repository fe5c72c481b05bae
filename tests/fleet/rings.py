#!/usr/bin/env python3
"""Read every VIP's live Maglev ring straight from an LB's pinned maps.

  rings.py PIN_ROOT     prints JSON: {"VIP:PORT/PROTO": {"raw": sha256 of the
                        ring's bytes (real ids), "by_address": sha256 of the
                        slot -> real address table, "slots": {addr: n}}}

The ring is read with the bpf() syscall (BPF_OBJ_GET on the pins, batch
lookups), not through xlbd: the bytes the balancer reads are the bytes
compared.  Layouts follow dataplane/xlb_shared.h: xlb_vips (HASH,
struct xlb_vip_key -> struct xlb_vip_meta), xlb_rings (ARRAY of real ids,
(vip_num * 2 + ring_half) * ring_size + slot), xlb_reals (ARRAY of struct
xlb_real).
"""
import ctypes
import hashlib
import ipaddress
import json
import os
import struct
import sys

NR_BPF = 321  # x86_64
BPF_MAP_LOOKUP_ELEM, BPF_MAP_GET_NEXT_KEY, BPF_OBJ_GET = 1, 4, 7
BPF_OBJ_GET_INFO_BY_FD, BPF_MAP_LOOKUP_BATCH = 15, 24
RING_SIZE = 65537  # XLB_RING_SIZE
FAMILY_V4 = 4      # XLB_FAMILY_V4 (xlb_shared.h)

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bpf(cmd, attr):
    r = libc.syscall(NR_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


class Attr(ctypes.Structure):
    _fields_ = [('raw', ctypes.c_uint8 * 128)]


def pack_attr(fmt, *vals):
    a = Attr()
    b = struct.pack(fmt, *vals)
    ctypes.memmove(a.raw, b, len(b))
    return a


def obj_get(path):
    p = ctypes.create_string_buffer(path.encode())
    return bpf(BPF_OBJ_GET, pack_attr('=QII', ctypes.addressof(p), 0, 0))


def map_info(fd):
    info = ctypes.create_string_buffer(80)
    bpf(BPF_OBJ_GET_INFO_BY_FD, pack_attr('=IIQ', fd, 80, ctypes.addressof(info)))
    typ, mid, ksz, vsz, maxe = struct.unpack_from('=IIIII', info.raw)
    return ksz, vsz, maxe


def lookup(fd, key, vsz):
    k = ctypes.create_string_buffer(key, len(key))
    v = ctypes.create_string_buffer(vsz)
    bpf(BPF_MAP_LOOKUP_ELEM, pack_attr('=IIQQQ', fd, 0, ctypes.addressof(k), ctypes.addressof(v), 0))
    return v.raw


def keys(fd, ksz):
    prev, out = None, []
    while True:
        nk = ctypes.create_string_buffer(ksz)
        pk = ctypes.create_string_buffer(prev, ksz) if prev is not None else None
        try:
            bpf(BPF_MAP_GET_NEXT_KEY, pack_attr('=IIQQQ', fd, 0, ctypes.addressof(pk) if pk else 0,
                                                ctypes.addressof(nk), 0))
        except OSError:
            return out
        prev = nk.raw
        out.append(prev)


def array_range(fd, start, count):
    """Values of u32 keys start .. start+count-1 (u32 values), by batch lookups."""
    vals = []
    nxt = start
    while len(vals) < count:
        want = count - len(vals)
        kb = ctypes.create_string_buffer(4 * want)
        vb = ctypes.create_string_buffer(4 * want)
        inb = ctypes.create_string_buffer(struct.pack('=I', nxt - 1), 4) if nxt else None
        outb = ctypes.create_string_buffer(4)
        a = pack_attr('=QQQQIIQQ', ctypes.addressof(inb) if inb else 0, ctypes.addressof(outb),
                      ctypes.addressof(kb), ctypes.addressof(vb), want, fd, 0, 0)
        try:
            bpf(BPF_MAP_LOOKUP_BATCH, a)
        except OSError as e:
            if e.errno != 2:  # ENOENT: the end of the map, with what was read
                raise
        got = struct.unpack_from('=I', bytes(a.raw), 32)[0]
        if not got:
            raise RuntimeError('batch lookup read nothing at key %d' % nxt)
        ks = struct.unpack_from('=%dI' % got, kb.raw)
        if ks[0] != nxt:
            raise RuntimeError('batch lookup started at %d, not %d' % (ks[0], nxt))
        vals.extend(struct.unpack_from('=%dI' % got, vb.raw))
        nxt += got
    return vals[:count]


def addr(b, family):
    return str(ipaddress.ip_address(b[:4] if family == FAMILY_V4 else b[:16]))


def main(pins):
    m = pins + '/maps/'
    vfd, rfd, refd = obj_get(m + 'xlb_vips'), obj_get(m + 'xlb_rings'), obj_get(m + 'xlb_reals')
    vks, vvs, _ = map_info(vfd)
    _, revs, real_max = map_info(refd)
    real_vals = {}
    out = {}
    for k in keys(vfd, vks):
        meta = lookup(vfd, k, vvs)
        vip_num, flags, half = struct.unpack_from('=IIB', meta)
        port, proto, fam = struct.unpack_from('!HBB', k, 16)
        name = '%s:%d/%s' % (addr(k, fam), port, {6: 'tcp', 17: 'udp'}.get(proto, proto))
        ring = array_range(rfd, (vip_num * 2 + half) * RING_SIZE, RING_SIZE)
        table, slots = [], {}
        for rid in ring:
            if rid not in real_vals:
                r = lookup(refd, struct.pack('=I', rid), revs) if 0 < rid < real_max else b''
                real_vals[rid] = addr(r, r[16]) if r and any(r[:16]) else '-'
            a = real_vals[rid]
            table.append(a)
            slots[a] = slots.get(a, 0) + 1
        out[name] = {
            'raw': hashlib.sha256(struct.pack('=%dI' % len(ring), *ring)).hexdigest(),
            'by_address': hashlib.sha256('\n'.join(table).encode()).hexdigest(),
            'slots': slots,
        }
    print(json.dumps(out, sort_keys=True))


if __name__ == '__main__':
    main(sys.argv[1])
