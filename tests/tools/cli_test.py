#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of the xbpf developer CLI.

usage: cli_test.py XBPF OBJECT GROUP

OBJECT is tests/tools/progs/cli_prog.bpf.o (one XDP program `cli_xdp` calling
the subprogram `classify`, one array map `counters`), or - for groups that
need none.  GROUP:
  unit         dump, disasm, verify exit codes, raw-program options
  conformance  the conformance-plugin protocol on hand-assembled programs
               (no object needed; runs in the arm64 cross build too)
  runtime      `xbpf run` under the interpreter and the kernel: same retval
               and output bytes (skips with 77 when the kernel engine is
               unavailable)
  jit          `xbpf jit` disassembles with the objdump of the code's
               architecture (XBPF_ARCH: x86_64 or aarch64), or says sizes only
XBPF_WRAPPER in the environment prefixes the xbpf command (qemu-aarch64 ...).
"""

import os
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what)
    else:
        print("ok: " + what)


def xbpf(*args, stdin=None):
    cmd = shlex.split(os.environ.get("XBPF_WRAPPER", "")) + [XBPF]
    res = subprocess.run(cmd + [str(a) for a in args], input=stdin, capture_output=True,
                         text=True, timeout=60)
    return res.returncode, res.stdout, res.stderr


# ---- a tiny assembler: enough to write conformance-style cases -------------

def insn(code, dst=0, src=0, off=0, imm=0):
    return struct.pack("<BBhi", code, (src << 4) | dst, off, imm)


def mov64_imm(dst, imm): return insn(0xb7, dst, 0, 0, imm)
def mov64_reg(dst, src): return insn(0xbf, dst, src)
def add64_imm(dst, imm): return insn(0x07, dst, 0, 0, imm)
def add64_reg(dst, src): return insn(0x0f, dst, src)
def div64_reg(dst, src): return insn(0x3f, dst, src)
def mod64_reg(dst, src): return insn(0x9f, dst, src)
def sdiv64_imm(dst, imm): return insn(0x37, dst, 0, 1, imm)
def movsx64_8(dst, src): return insn(0xbf, dst, src, 8)
def bswap(dst, bits): return insn(0xd7, dst, 0, 0, bits)
def ldxw(dst, src, off): return insn(0x61, dst, src, off)
def ldxb(dst, src, off): return insn(0x71, dst, src, off)
def stxb(dst, src, off): return insn(0x73, dst, src, off)
def jeq_imm(dst, imm, off): return insn(0x15, dst, 0, off, imm)
def gotol(imm): return insn(0x06, 0, 0, 0, imm)
def ldxsb(dst, src, off): return insn(0x91, dst, src, off)
def smod64_imm(dst, imm): return insn(0x97, dst, 0, 1, imm)
def ldxdw(dst, src, off): return insn(0x79, dst, src, off)
def stxdw(dst, src, off): return insn(0x7b, dst, src, off)
def atomic64(dst, src, off, op): return insn(0xdb, dst, src, off, op)
def mov32_imm(dst, imm): return insn(0xb4, dst, 0, 0, imm)
def call_local(off): return insn(0x85, 0, 1, 0, off)
def exit_(): return insn(0x95)


def lddw(dst, value, src=0):
    return insn(0x18, dst, src, 0, value & 0xffffffff) + \
        insn(0, 0, 0, 0, (value >> 32) & 0xffffffff)


def hexbytes(code):
    return " ".join("%02x" % b for b in code)


def u64(v):
    return v & 0xffffffffffffffff


# name, program, memory hex or None, expected r0 (computed by hand from the ISA)
CONFORMANCE_CASES = [
    ("mov-add", mov64_imm(0, 1) + add64_imm(0, 2) + exit_(), None, 3),
    ("ldxw-memory", ldxw(0, 1, 0) + exit_(), "01 02 03 04", 0x04030201),
    ("div-by-zero-is-zero", mov64_imm(0, 7) + mov64_imm(1, 0) + div64_reg(0, 1) + exit_(),
     None, 0),
    ("mod-by-zero-keeps-dst", mov64_imm(0, 7) + mov64_imm(1, 0) + mod64_reg(0, 1) + exit_(),
     None, 7),
    ("local-call-args-result",
     mov64_imm(1, 5) + call_local(1) + exit_() +
     mov64_reg(0, 1) + add64_imm(0, 10) + exit_(), None, 15),
    ("local-call-r6-survives",
     mov64_imm(6, 100) + mov64_imm(1, 5) + call_local(2) + add64_reg(0, 6) + exit_() +
     mov64_imm(6, 1) + mov64_reg(0, 1) + add64_reg(0, 6) + exit_(), None, 106),
    ("sdiv-v4", mov64_imm(0, -10) + sdiv64_imm(0, 3) + exit_(), None, u64(-3)),
    ("movsx8-v4", mov64_imm(1, 0x80) + movsx64_8(0, 1) + exit_(), None, u64(-128)),
    ("bswap16-v4", mov64_imm(0, 0x1234) + bswap(0, 16) + exit_(), None, 0x3412),
    ("lddw", lddw(0, 0x00abcdef12345678) + exit_(), None, 0x00abcdef12345678),
    ("jeq-taken",
     mov64_imm(0, 0) + mov64_imm(1, 5) + jeq_imm(1, 5, 1) + exit_() + mov64_imm(0, 1) + exit_(),
     None, 1),
    ("gotol-v4", mov64_imm(0, 1) + gotol(1) + mov64_imm(0, 2) + exit_(), None, 1),
    ("ldxsb-v4", ldxsb(0, 1, 0) + exit_(), "80", u64(-128)),
    ("smod-v4", mov64_imm(0, -7) + smod64_imm(0, 3) + exit_(), None, u64(-1)),
    ("mov32-zero-extends", mov64_imm(0, -1) + mov32_imm(0, -1) + exit_(), None, 0xffffffff),
    ("atomic-fetch-add",
     mov64_imm(2, 5) + atomic64(1, 2, 0, 0x01) + ldxdw(0, 1, 0) + add64_reg(0, 2) + exit_(),
     "0100000000000000", 7),
    ("atomic-cmpxchg",
     mov64_imm(0, 1) + mov64_imm(2, 9) + atomic64(1, 2, 0, 0xf1) + ldxdw(0, 1, 0) + exit_(),
     "0100000000000000", 9),
    ("local-call-own-stack",
     mov64_imm(1, 3) + stxdw(10, 1, -8) + call_local(3) + ldxdw(1, 10, -8) + add64_reg(0, 1) +
     exit_() +
     mov64_imm(2, 40) + stxdw(10, 2, -8) + ldxdw(0, 10, -8) + exit_(), None, 43),
    ("helper-call", mov64_imm(1, -1) + insn(0x85, 0, 0, 0, 5) + mov64_imm(0, 2) + exit_(),
     None, 2),
    ("store-to-memory",
     mov64_imm(2, 0x5a) + stxb(1, 2, 1) + ldxb(0, 1, 1) + exit_(), "00 00", 0x5a),
]


def test_conformance():
    for engine in ("interp", "jit"):
        for name, code, mem, expect in CONFORMANCE_CASES:
            args = ["conformance-plugin", "--engine", engine] + ([mem.replace(" ", "")] if mem else [])
            rc, out, err = xbpf(*args, stdin=hexbytes(code))
            got = None
            try:
                got = int(out.strip(), 16)
            except ValueError:
                pass
            check(rc == 0 and got == expect,
                  "conformance-plugin --engine %s %s: want %x, got rc %d out %r err %r"
                  % (engine, name, expect, rc, out.strip(), err.strip()[:200]))
    # Protocol errors: message on stderr, non-zero exit.
    endless = hexbytes(insn(0x05, 0, 0, -1, 0))  # ja -1: never exits
    for name, text in (("not-hex", "zz 00"), ("partial-insn", "b7 00 00"), ("empty", ""),
                       ("endless-loop", endless),
                       # the suite's call_runtime case: a kfunc call is an error
                       ("kfunc-call", hexbytes(insn(0x85, 0, 2, 0, 0x2a) + exit_()))):
        rc, out, err = xbpf("conformance-plugin", stdin=text)
        check(rc != 0 and err.strip() != "" and out.strip() == "",
              "conformance-plugin rejects %s input (rc %d, err %r)" % (name, rc, err.strip()))


def write(tmp, name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def test_dump_disasm():
    rc, out, err = xbpf("dump", OBJECT)
    check(rc == 0, "dump exits 0 (%s)" % err.strip())
    check("cli_xdp" in out and "xdp" in out, "dump lists program cli_xdp")
    lines = [l for l in out.splitlines() if "func" in l and "classify" in l]
    check(len(lines) == 1, "dump lists subprogram classify with its first insn")
    if lines:
        check("start" in lines[0] and "len" in lines[0] and " 0 " not in lines[0].split("start")[1][:7],
              "classify starts after the main program: %r" % lines[0].strip())
    maps = [l for l in out.splitlines() if l.startswith("map") and "counters" in l]
    check(len(maps) == 1 and "array" in maps[0] and "key    4" in maps[0] and
          "value     8" in maps[0] and "max_entries       4" in maps[0],
          "dump shows map counters: array, key 4, value 8, 4 entries: %r" % maps)

    rc, out, err = xbpf("disasm", OBJECT, "--prog", "cli_xdp")
    check(rc == 0, "disasm exits 0 (%s)" % err.strip())
    check("map_lookup_elem" in out, "disasm names the helper")
    check("map[counters]" in out, "disasm names the map")
    check("classify:" in out, "disasm marks the subprogram")
    check("exit" in out, "disasm shows exit")

    rc, out, err = xbpf("disasm", OBJECT, "--prog", "nosuch")
    check(rc == 2, "disasm --prog of a missing program exits 2 (got %d)" % rc)
    rc, out, err = xbpf("dump", OBJECT, "--bogus")
    check(rc == 2 and "unknown option" in err, "unknown option exits 2 with a message")
    rc, out, err = xbpf("frobnicate")
    check(rc == 2, "unknown command exits 2")
    rc, out, err = xbpf("--help")
    check(rc == 0 and all(c in out for c in ("dump", "disasm", "run", "verify", "jit",
                                             "conformance-plugin")),
          "help lists every command")


def test_verify(tmp):
    ok_prog = write(tmp, "ok.raw", mov64_imm(0, 2) + exit_())
    rc, out, err = xbpf("verify", "--type", "xdp", ok_prog)
    check(rc == 0, "verify accepts mov r0,2; exit (rc %d, %s%s)" % (rc, out, err))
    check("processed" in out and "insns" in out, "verify prints 'processed N insns'")

    bad_prog = write(tmp, "bad.raw", exit_())
    rc, out, err = xbpf("verify", "--type", "xdp", bad_prog)
    check(rc == 1, "verify rejects exit with R0 unset (rc %d)" % rc)
    check("R0" in out, "rejection names R0: %r" % out[-300:])

    oob_prog = write(tmp, "oob.raw", ldxw(0, 10, 8) + exit_())
    rc, out, err = xbpf("verify", "--type", "xdp", oob_prog)
    check(rc == 1, "verify rejects a read above the frame pointer (rc %d)" % rc)

    # A map-using raw program: ld_imm64 src_reg 1 imm 0 is the first --map.
    map_prog = write(tmp, "map.raw",
                     insn(0x62, 10, 0, -4, 0) +      # *(u32 *)(r10 - 4) = 0
                     mov64_reg(2, 10) + add64_imm(2, -4) +
                     lddw(1, 0, src=1) +
                     insn(0x85, 0, 0, 0, 1) +        # call bpf_map_lookup_elem
                     mov64_imm(0, 2) + exit_())
    rc, out, err = xbpf("verify", "--type", "xdp", "--map", "array:4:8:1", map_prog)
    check(rc == 0, "verify accepts a raw program using --map (rc %d, %s%s)" % (rc, out[-300:], err))
    rc, out, err = xbpf("verify", "--type", "xdp", map_prog)
    check(rc != 0, "the same program without --map is refused (rc %d)" % rc)

    # A limit is a rejection like any other: exit 1 with the kernel's message and count.
    limits = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verifier",
                          "limit_cases.py")
    for name, msg in (("limits: a live call chain of 9 frames", "the call stack of 9 frames is too deep"),
                      ("limits: a dead call chain of 8 frames (static walk)",
                       "the call stack of 8 frames is too deep !"),
                      ("limits: combined stack of three 200-byte frames",
                       "combined stack size of 3 calls is 624. Too large"),
                      ("limits: 1000000 processed insns", "BPF program is too large. Processed 1000001 insn"),
                      ("limits: 8193 pending jumps", "The sequence of 8193 jumps is too complex.")):
        raw = os.path.join(tmp, "limit.raw")
        subprocess.run([sys.executable, limits, "--emit", name, raw], check=True)
        rc, out, err = xbpf("verify", "--type", "xdp", raw)
        check(rc == 1 and msg in out and "rejected at insn" in out,
              "%s: exit 1 with %r (rc %d, %s%s)" % (name, msg, rc, out[-300:], err[-200:]))

    check(xbpf("verify", os.path.join(tmp, "missing.raw"))[0] == 2, "verify of a missing file exits 2")
    junk = write(tmp, "junk.raw", b"\x01\x02\x03\x04\x05\x06\x07")
    check(xbpf("verify", junk)[0] == 2, "verify of a 7-byte file exits 2")
    check(xbpf("verify", "--type", "nosuch", ok_prog)[0] == 2, "verify --type nosuch exits 2")
    check(xbpf("verify", "--map", "hash:4", ok_prog)[0] == 2, "malformed --map exits 2")


def test_runtime(tmp):
    pkt = bytes(12) + b"\x08\x00" + bytes(50)
    pkt_in = write(tmp, "pkt.bin", pkt)
    results = {}
    for engine in ("interp", "kernel"):
        out_path = os.path.join(tmp, "out-%s.bin" % engine)
        rc, out, err = xbpf("run", OBJECT, "--prog", "cli_xdp", "--data-in", pkt_in,
                            "--data-out", out_path, "--repeat", "11", "--engine", engine)
        if engine == "kernel" and rc != 0 and ("Operation not supported" in err or
                                               "Operation not permitted" in err):
            print("SKIP: kernel engine unavailable: " + err.strip())
            sys.exit(77)
        check(rc == 0, "run --engine %s exits 0 (%s)" % (engine, err.strip()[-300:]))
        fields = dict(l.split(" ", 1) for l in out.splitlines() if " " in l)
        data = open(out_path, "rb").read() if os.path.exists(out_path) else b""
        results[engine] = (fields.get("retval", "").split(" ")[0], data)
        check(fields.get("data_out", "").startswith("%d bytes" % len(pkt)),
              "run --engine %s reports the output length" % engine)
        check("ns/run" in fields.get("duration", ""), "run --engine %s reports ns per run" % engine)
    check(results["interp"][0] == "2" and results["kernel"][0] == "2",
          "cli_xdp passes IPv4 (XDP_PASS=2) on both engines: %r" % {k: v[0] for k, v in results.items()})
    check(results["interp"][1] == results["kernel"][1] and len(results["kernel"][1]) == len(pkt),
          "interp and kernel produce the same output bytes")
    # 11 runs on one packet buffer (as BPF_PROG_TEST_RUN does): an odd number of flips.
    check(results["kernel"][1][:1] == b"\xff", "the program's packet write is visible")

    # --ctx-in: an xdp_md image (data 0, data_end = packet length), as BPF_PROG_TEST_RUN takes it.
    ctx_in = write(tmp, "ctx.bin", struct.pack("<6I", 0, len(pkt), 0, 0, 0, 0))
    rets = {}
    for engine in ("interp", "kernel"):
        rc, out, err = xbpf("run", OBJECT, "--prog", "cli_xdp", "--data-in", pkt_in,
                            "--ctx-in", ctx_in, "--engine", engine)
        rets[engine] = out.splitlines()[1] if rc == 0 and len(out.splitlines()) > 1 else err.strip()
    check(rets["interp"] == rets["kernel"] == "retval 2 (0x2)",
          "run --ctx-in: same result on both engines: %r" % rets)

    raw = write(tmp, "raw.raw", mov64_imm(0, 1) + exit_())
    for engine in ("interp", "kernel"):
        rc, out, err = xbpf("run", "--type", "sched_cls", "--engine", engine, "--data-in", pkt_in, raw)
        check(rc == 0 and "retval 1 " in out, "raw sched_cls program under %s returns 1 (%s%s)"
              % (engine, out.strip(), err.strip()))


def test_jit(tmp):
    arch = os.environ.get("XBPF_ARCH", "x86_64")
    tools = {"x86_64": ["objdump", "x86_64-linux-gnu-objdump"],
             "aarch64": ["aarch64-linux-gnu-objdump"]}.get(arch, [])
    # mnemonics every JIT'd program has: its prologue and its return
    want = {"x86_64": ("push", "ret"), "aarch64": ("stp", "ret")}.get(arch, ())
    # A user's PATH: meson puts the cross toolchain's bin (whose plain `objdump`
    # is the aarch64 one) first, which would hide a wrong choice of objdump.
    os.environ["PATH"] = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                                         if "-linux-gnu" not in d)
    prog = write(tmp, "jit.raw", mov64_imm(0, 2) + exit_())
    rc, out, err = xbpf("jit", "--type", "xdp", prog)
    check(rc == 0 and "bytes native" in out, "jit prints the native size (rc %d, %s)"
          % (rc, err.strip()[-200:]))
    if any(shutil.which(t) for t in tools):
        lines = [l.split("\t") for l in out.splitlines() if l.count("\t") >= 2]
        mnemonics = {l[2].split()[0] for l in lines if l[2].split()}
        check(all(m in mnemonics for m in want),
              "jit disassembles %s code (%s among %s)" % (arch, want, sorted(mnemonics)))
    else:
        check("sizes only" in out, "without an objdump for %s, jit says sizes only" % arch)


def main():
    global XBPF, OBJECT
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    XBPF, OBJECT, group = sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="xbpf-cli-test-") as tmp:
        if group == "unit":
            test_dump_disasm()
            test_verify(tmp)
        elif group == "conformance":
            test_conformance()
        elif group == "runtime":
            test_runtime(tmp)
        elif group == "jit":
            test_jit(tmp)
        else:
            print("unknown group " + group)
            return 2
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
