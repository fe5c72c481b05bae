#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Differential test of instruction encodings: every one of the 256 opcodes,
with a few register / offset / immediate variants, in the middle of a small
program of each program type, through xbpf_verify() and this machine's
kernel; any verdict difference fails.

Known difference, excluded: opcode 0xe5 (JMP|JCOND, the kernel's may_goto)
is not in the ISA table (isa/opcodes.c), so xbpf refuses what the kernel
takes.

usage: opcode_matrix.py --runner RUN_CASES_KERNEL
"""
import argparse
import os
import subprocess
import sys
import tempfile

VARIANTS = [(0, 0, 0, 0), (0, 1, 0, 0), (0, 0, 0, 1), (2, 1, 0, 0), (0, 0, 1, 0), (11, 0, 0, 0),
            (0, 0, 0, 16), (0, 10, -8, 0), (10, 2, -8, 0)]
TYPES = ["xdp", "sched_cls", "socket_filter", "tracepoint"]
MAY_GOTO = 0xe5


def insn(code, dst, src, off, imm):
    return "%x:%d:%d:%d:%d" % (code, dst, src, off, imm)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runner", required=True)
    args = ap.parse_args()
    lines = []
    for t in TYPES:
        for code in range(256):
            if code == MAY_GOTO:
                continue
            for d, s, o, i in VARIANTS:
                prog = [insn(0xb7, 0, 0, 0, 0), insn(0xb7, 2, 0, 0, 5), insn(0x7a, 10, 0, -8, 0),
                        insn(code, d, s, o, i), insn(0xb7, 0, 0, 0, 0), insn(0x95, 0, 0, 0, 0)]
                lines.append("op%02x-%d-%d-%d-%d-%s\t%s\taccept\t-\t-\t-\t%s" % (
                    code, d, s, o, i, t, t, " ".join(prog)))
    with tempfile.NamedTemporaryFile("w", prefix="xlbt-v3-ops-", suffix=".txt", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    try:
        r = subprocess.run([args.runner, "--kernel", "--file", path, "-v"], capture_output=True,
                           text=True)
        for line in r.stdout.splitlines():
            if not line.startswith("same "):
                print(line)
        print("%d encodings compared, %d accepted by both" % (len(lines),
                                                              r.stdout.count(": both accept")))
        return r.returncode
    finally:
        os.unlink(path)


if __name__ == "__main__":
    sys.exit(main())
