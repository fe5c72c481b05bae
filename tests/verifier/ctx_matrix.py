#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Differential test of the context rules: for xdp, sched_cls, sched_act,
socket_filter and tracepoint programs, every (offset, size, load / store
register / store immediate) access to R1 in -4..199 is verified by
xbpf_verify() and by this machine's kernel; any verdict difference fails.

usage: ctx_matrix.py --runner RUN_CASES_KERNEL [--types xdp,...]
"""
import argparse
import os
import subprocess
import sys
import tempfile

SIZE_BITS = {1: 0x10, 2: 0x08, 4: 0x00, 8: 0x18}


def insn(code, dst, src, off, imm):
    return "%x:%d:%d:%d:%d" % (code, dst, src, off, imm)


def cases(types):
    for t in types:
        for off in range(-4, 200):
            for size, bits in SIZE_BITS.items():
                body = {
                    "ldx": [insn(0x61 | bits, 2, 1, off, 0)],
                    "stx": [insn(0xb7, 2, 0, 0, 7), insn(0x63 | bits, 1, 2, off, 0)],
                    "st": [insn(0x62 | bits, 1, 0, off, 7)],
                }
                for kind, prog in body.items():
                    prog = prog + [insn(0xb7, 0, 0, 0, 0), insn(0x95, 0, 0, 0, 0)]
                    yield "ctx-%s-%s-off%d-size%d\t%s\taccept\t-\t-\t-\t%s" % (
                        t, kind, off, size, t, " ".join(prog))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runner", required=True)
    ap.add_argument("--types", default="xdp,sched_cls,sched_act,socket_filter,tracepoint")
    args = ap.parse_args()
    lines = list(cases(args.types.split(",")))
    with tempfile.NamedTemporaryFile("w", prefix="xlbt-v3-ctx-", suffix=".txt", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    try:
        r = subprocess.run([args.runner, "--kernel", "--file", path, "-v"], capture_output=True,
                           text=True)
        for line in r.stdout.splitlines():
            if not line.startswith("same "):
                print(line)
        print("%d context accesses compared, %d allowed by both" % (
            len(lines), r.stdout.count(": both accept")))
        return r.returncode
    finally:
        os.unlink(path)


if __name__ == "__main__":
    sys.exit(main())
