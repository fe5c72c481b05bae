#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Differential test: random XDP programs built from the idioms the
verifier reasons about (scalar ALU in 32 and 64 bits, packet reads behind
range checks of random length, variable packet offsets, stack spills and
fills, map lookups with masked indexes, random conditional jumps) go through
xbpf_verify() and this machine's kernel; any verdict difference fails.

usage: random_programs.py --runner RUN_CASES_KERNEL [--seed S] [--count N]

The programs are deterministic for a seed, so a failure is reproducible;
--keep FILE writes the case file for run_cases.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

ALU_OPS = [0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x90, 0xa0, 0xc0]
JMP_OPS = [0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0xa0, 0xb0, 0xc0, 0xd0]
SCALARS = [0, 4, 5, 7, 8, 9]
LDX = {1: 0x71, 2: 0x69, 4: 0x61, 8: 0x79}


def insn(code, dst, src, off, imm):
    return "%x:%d:%d:%d:%d" % (code, dst, src, off, imm)


# (data, data_end, readable scalar fields) of the context, by program type
CTX = {"xdp": (0, 4, [12, 16]), "sched_cls": (76, 80, [0, 8, 16, 40, 48])}
PTYPE = "xdp"


def program(rng):
    data, data_end, fields = CTX[PTYPE]
    p = [insn(0xbf, 6, 1, 0, 0),          # r6 = ctx
         insn(0x61, 2, 1, data, 0),       # r2 = data
         insn(0x61, 3, 1, data_end, 0)]   # r3 = data_end
    for r in SCALARS:
        if rng.random() < 0.5:
            p.append(insn(0xb7, r, 0, 0, rng.choice([0, 1, 7, 255, -1, 1 << 20,
                                                     rng.randint(-1000, 1000)])))
        else:
            p.append(insn(0x61, r, 6, rng.choice(fields), 0))
    for _ in range(rng.randint(4, 18)):
        t = rng.random()
        if t < 0.35:   # scalar ALU, either width
            op, cls = rng.choice(ALU_OPS), rng.choice([0x07, 0x04])
            if rng.random() < 0.5:
                imm = rng.choice([1, 2, 3, 8, 31, 63, 0xff, -1, rng.randint(-64, 64)])
                if op in (0x60, 0x70, 0xc0):
                    imm = rng.randint(0, 31 if cls == 0x04 else 63)
                if op in (0x30, 0x90) and imm == 0:
                    imm = 3
                p.append(insn(cls | op, rng.choice(SCALARS), 0, 0, imm))
            else:
                p.append(insn(cls | op | 8, rng.choice(SCALARS), rng.choice(SCALARS), 0, 0))
        elif t < 0.55:   # packet read behind a check of random length
            size, off, chk = rng.choice([1, 2, 4, 8]), rng.randint(0, 20), rng.randint(0, 24)
            p += [insn(0xbf, 4, 2, 0, 0), insn(0x07, 4, 0, 0, chk), insn(0x2d, 4, 3, 1, 0),
                  insn(LDX[size], rng.choice([5, 7]), 2, off, 0)]
        elif t < 0.65:   # variable packet offset, then its own check
            r = rng.choice([5, 7, 8])
            p += [insn(0x57, r, 0, 0, rng.choice([7, 15, 63, 255])), insn(0xbf, 4, 2, 0, 0),
                  insn(0x0f, 4, r, 0, 0), insn(0xbf, 9, 4, 0, 0),
                  insn(0x07, 9, 0, 0, rng.choice([1, 2, 4])), insn(0x2d, 9, 3, 1, 0),
                  insn(0x71, 0, 4, rng.choice([0, 1, 2]), 0)]
        elif t < 0.75:   # spill or fill
            off = -8 * rng.randint(1, 6)
            if rng.random() < 0.5:
                p.append(insn(0x7b, 10, rng.choice(SCALARS), off, 0))
            else:
                p.append(insn(0x79, rng.choice(SCALARS), 10, off, 0))
        elif t < 0.85:   # map lookup, masked index into the 8-byte value
            r = rng.choice([5, 7, 8])
            p += [insn(0x7a, 10, 0, -56, 0), insn(0xbf, 2, 10, 0, 0), insn(0x07, 2, 0, 0, -56),
                  insn(0x18, 1, 1, 0, 0), insn(0, 0, 0, 0, 0), insn(0x85, 0, 0, 0, 1),
                  insn(0x15, 0, 0, 3, 0), insn(0x57, r, 0, 0, rng.choice([3, 7, 15])),
                  insn(0x0f, 0, r, 0, 0), insn(0x71, 0, 0, 0, 0),
                  insn(0x61, 2, 6, 0, 0), insn(0x61, 3, 6, 4, 0)]
        else:   # forward conditional jump
            op, cls, skip = rng.choice(JMP_OPS), rng.choice([0x05, 0x06]), rng.randint(0, 3)
            if rng.random() < 0.5:
                p.append(insn(cls | op, rng.choice(SCALARS), 0, skip,
                              rng.choice([0, 1, 7, 255, -1, 100])))
            else:
                p.append(insn(cls | op | 8, rng.choice(SCALARS), rng.choice(SCALARS), skip, 0))
    # landing pad for the last jumps, then return
    p += [insn(0xb7, 9, 0, 0, 0)] * 3 + [insn(0xb7, 0, 0, 0, 0), insn(0x95, 0, 0, 0, 0)]
    return p


def program_with_calls(rng):
    """main passes ctx and a pointer to its stack to a subprogram built from
    the same idioms, which may write through it; main then reads that slot
    and its own spills, and may call a second, trivial subprogram."""
    sub = program(rng)[:-1]              # drop exit, keep the r0 = 0
    # the subprogram may store a scalar or a pointer through R7 (caller's fp-8)
    store = rng.choice([insn(0x7b, 7, 0, 0, 0), insn(0x7b, 7, 2, 0, 0), insn(0x7b, 7, 10, 0, 0),
                        insn(0x72, 7, 0, 0, 1), insn(0xb7, 0, 0, 0, 0)])
    sub = [insn(0xbf, 7, 2, 0, 0)] + sub[:1] + sub[1:] + [store, insn(0x95, 0, 0, 0, 0)]
    sub[0] = insn(0xbf, 7, 2, 0, 0)      # r7 = caller's pointer (R2 at entry)
    tail = [insn(0xb7, 0, 0, 0, rng.randint(0, 3)), insn(0x95, 0, 0, 0, 0)]
    main = [insn(0x7a, 10, 0, -8, rng.choice([0, 5])),
            insn(0xbf, 2, 10, 0, 0), insn(0x07, 2, 0, 0, -8)]
    n_after = 4
    two = rng.random() < 0.5
    main_len = len(main) + 1 + n_after + (1 if two else 0) + 1
    # call into the subprogram placed right after main
    call_at = len(main)
    main.append(None)
    main += [insn(0x79, 3, 10, -8, 0),                       # fill what the callee wrote
             insn(0xbf, 4, 0, 0, 0),                         # use R0 from the callee
             rng.choice([insn(0x71, 0, 3, 0, 0), insn(0x07, 3, 0, 0, 1), insn(0xb7, 3, 0, 0, 0)]),
             insn(0xb7, 0, 0, 0, 0)]
    if two:
        main.append(None)
    main.append(insn(0x95, 0, 0, 0, 0))
    sub_start = len(main)
    tail_start = sub_start + len(sub)
    main[call_at] = insn(0x85, 0, 1, 0, sub_start - call_at - 1)
    if two:
        idx = len(main) - 2
        main[idx] = insn(0x85, 0, 1, 0, tail_start - idx - 1)
    return main + sub + (tail if two else [])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runner", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--keep")
    ap.add_argument("--calls", action="store_true", help="wrap programs in bpf-to-bpf calls")
    ap.add_argument("--type", default="xdp", choices=sorted(CTX))
    args = ap.parse_args()
    global PTYPE
    PTYPE = args.type
    rng = random.Random(args.seed)
    make = program_with_calls if args.calls else program
    lines = ["rnd%d-%d\t%s\taccept\t-\t-\t1:8:8:16\t%s" % (args.seed, i, args.type, " ".join(make(rng)))
             for i in range(args.count)]
    with tempfile.NamedTemporaryFile("w", prefix="xlbt-v3-rnd-", suffix=".txt", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    try:
        if args.keep:
            with open(args.keep, "w") as k:
                k.write("\n".join(lines) + "\n")
        r = subprocess.run([args.runner, "--kernel", "--file", path, "-v"], capture_output=True,
                           text=True)
        out = r.stdout
        accepted = out.count(": both accept")
        for line in out.splitlines():
            if not line.startswith("same "):
                print(line)
        print("seed %d: %d programs, %d accepted by both" % (args.seed, args.count, accepted))
        return r.returncode
    finally:
        os.unlink(path)


if __name__ == "__main__":
    sys.exit(main())
