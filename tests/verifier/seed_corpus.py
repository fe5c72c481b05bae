#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run the seed verifier tests (seed 003, the kernel's test_verifier cases
for bpf-to-bpf calls) through xbpf_verify(), or through the kernel too.

At test time: extract every test entry added by the seed patch, compile a
small generator in which the kernel's instruction macro names are defined
as xlb's own builders (tests/lib/insn.h), print the cases in
run_cases' text format and run them.  Nothing from the seed is kept in the
repository.

Where this machine's kernel no longer gives the 2017 verdict or wording,
MODERN below records what the kernel says now and why; the kernel is the
reference (run with --kernel to check that claim against it).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

# name -> (verdict, errstr or None, reason)
MODERN = {
    "calls: recursive call. test1": (
        "reject", "the call stack of 9 frames is too deep",
        "privileged loaders may have back-edges since 5.3; recursion is now caught "
        "when the ninth frame is pushed"),
    "calls: recursive call. test2": (
        "reject", "the call stack of 9 frames is too deep",
        "as test1: no back-edge error for a privileged loader"),
    "calls: two calls that return map_value with incorrect bool check": (
        "reject", "R0 invalid mem access 'scalar'",
        "privileged loaders may read uninitialized stack since 5.x "
        "(allow_uninit_stack): the read yields an unknown scalar, the store through "
        "it fails instead"),
    "calls: two calls that receive map_value_ptr_or_null via arg. test2": (
        "reject", "R0 invalid mem access 'scalar'",
        "register type 'inv' is called 'scalar' since 5.x"),
    "calls: callee changing pkt pointers": (
        "reject", "R6 invalid mem access 'scalar'",
        "register type 'inv' is called 'scalar' since 5.x"),
}

MACROS = r"""
/* The kernel's instruction macro names, as xlb's own builders. */
#define BPF_RAW_INSN(c, d, s, o, i) INSN(c, d, s, o, i)
#define BPF_ALU64_REG(op, d, s) INSN(XBPF_ALU64 | (op) | XBPF_X, d, s, 0, 0)
#define BPF_ALU64_IMM(op, d, i) INSN(XBPF_ALU64 | (op) | XBPF_K, d, 0, 0, i)
#define BPF_ALU32_REG(op, d, s) INSN(XBPF_ALU | (op) | XBPF_X, d, s, 0, 0)
#define BPF_ALU32_IMM(op, d, i) INSN(XBPF_ALU | (op) | XBPF_K, d, 0, 0, i)
#define BPF_MOV64_REG(d, s) MOV64X(d, s)
#define BPF_MOV32_REG(d, s) MOV32X(d, s)
#define BPF_MOV64_IMM(d, i) MOV64K(d, i)
#define BPF_MOV32_IMM(d, i) MOV32K(d, i)
#define BPF_LDX_MEM(sz, d, s, o) INSN(XBPF_LDX | XBPF_MEM | (sz), d, s, o, 0)
#define BPF_STX_MEM(sz, d, s, o) INSN(XBPF_STX | XBPF_MEM | (sz), d, s, o, 0)
#define BPF_ST_MEM(sz, d, o, i) INSN(XBPF_ST | XBPF_MEM | (sz), d, 0, o, i)
#define BPF_LD_IMM64(d, v) LDIMM64(d, v)
#define BPF_LD_MAP_FD(d, fd) LD_MAP(d, fd)
#define BPF_LD_ABS(sz, i) INSN(XBPF_LD | XBPF_ABS | (sz), 0, 0, 0, i)
#define BPF_JMP_REG(op, d, s, o) INSN(XBPF_JMP | (op) | XBPF_X, d, s, o, 0)
#define BPF_JMP_IMM(op, d, i, o) INSN(XBPF_JMP | (op) | XBPF_K, d, 0, o, i)
#define BPF_JMP32_IMM(op, d, i, o) INSN(XBPF_JMP32 | (op) | XBPF_K, d, 0, o, i)
#define BPF_JMP_A(o) JA(o)
#define BPF_EXIT_INSN() EXIT()
"""

GEN = r"""
#include <stddef.h>
#include <stdio.h>
#include <linux/bpf.h>
#include "insn.h"
%(macros)s
enum { ACCEPT = 1, REJECT = 2 };
#define MAX_INSNS 512
#define MAX_FIXUPS 8
struct bpf_test {
	const char *descr;
	struct xbpf_insn insns[MAX_INSNS];
	int fixup_map1[MAX_FIXUPS];
	const char *errstr;
	const char *errstr_unpriv;
	int result;
	int result_unpriv;
	int prog_type;
};
static struct bpf_test tests[] = {
#include "seed_tests.inc"
};
static const char *type_name(int t)
{
	switch (t) {
	case 0: /* test_verifier's default */
	case BPF_PROG_TYPE_SOCKET_FILTER: return "socket_filter";
	case BPF_PROG_TYPE_SCHED_CLS: return "sched_cls";
	case BPF_PROG_TYPE_SCHED_ACT: return "sched_act";
	case BPF_PROG_TYPE_XDP: return "xdp";
	case BPF_PROG_TYPE_TRACEPOINT: return "tracepoint";
	}
	return "unsupported";
}
int main(void)
{
	for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++) {
		struct bpf_test *c = &tests[t];
		int n = 0;

		for (int i = 0; i < MAX_INSNS; i++)
			if (c->insns[i].code || c->insns[i].imm || c->insns[i].off ||
			    c->insns[i].dst_reg || c->insns[i].src_reg)
				n = i + 1;
		for (int f = 0; f < MAX_FIXUPS && c->fixup_map1[f]; f++)
			c->insns[c->fixup_map1[f]].imm = 0; /* map index 0 */
		printf("%%s\t%%s\t%%s\t%%s\t-\t%%s\t", c->descr, type_name(c->prog_type),
		       c->result == ACCEPT ? "accept" : "reject", c->errstr ? c->errstr : "-",
		       c->fixup_map1[0] ? "1:8:8:1024" : "-");
		for (int i = 0; i < n; i++)
			printf("%%s%%x:%%u:%%u:%%d:%%d", i ? " " : "", c->insns[i].code, c->insns[i].dst_reg,
			       c->insns[i].src_reg, c->insns[i].off, c->insns[i].imm);
		printf("\n");
	}
	return 0;
}
"""


def extract_tests(patch_text):
    """The test entries the seed adds to tests[] (the 'calls:' block)."""
    out, in_block = [], False
    for line in patch_text.splitlines():
        if line.startswith("@@"):
            in_block = False
            continue
        if line.startswith('+\t{') and not in_block:
            in_block = True
        if in_block and line.startswith("+"):
            out.append(line[1:])
    text = "\n".join(out)
    # Only complete entries: from the first "\t{" to the last "\t},".
    start = text.find("\t{")
    end = text.rfind("\t},")
    if start < 0 or end < 0:
        return ""
    return text[start:end + 3] + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds-dir", required=True)
    ap.add_argument("--runner", required=True)
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("-I", dest="incs", action="append", default=[])
    ap.add_argument("--kernel", action="store_true")
    ap.add_argument("--keep", help="write the generated case file here")
    args = ap.parse_args()

    patches = sorted(glob.glob(os.path.join(args.seeds_dir, "003-*.patch")))
    if not patches:
        print("SKIP: no seed 003 patch under %s" % args.seeds_dir)
        return 77
    if not shutil.which(args.cc.split()[0]):
        print("SKIP: no C compiler (%s) to build the case generator" % args.cc)
        return 77
    with open(patches[0], encoding="utf-8", errors="replace") as f:
        body = extract_tests(f.read())
    names = re.findall(r'^\t\t"([^"]+)",', body, re.M)
    if not names:
        print("FAIL: no test entries found in %s" % patches[0])
        return 1
    with tempfile.TemporaryDirectory(prefix="xlbt-v3-seeds-") as tmp:
        with open(os.path.join(tmp, "seed_tests.inc"), "w") as f:
            f.write(body)
        with open(os.path.join(tmp, "gen.c"), "w") as f:
            f.write(GEN % {"macros": MACROS})
        exe = os.path.join(tmp, "gen")
        cmd = args.cc.split() + ["-std=gnu11", "-w", "-o", exe, os.path.join(tmp, "gen.c"),
                                 "-I", tmp] + sum([["-I", i] for i in args.incs], [])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            print("FAIL: generator does not compile:\n" + r.stderr[-3000:])
            return 1
        r = subprocess.run([exe], capture_output=True, text=True, check=True)
        lines = []
        for line in r.stdout.splitlines():
            f = line.split("\t")
            name = f[0]
            if name in MODERN:
                verdict, err, reason = MODERN[name]
                print("modern kernel differs on '%s': %s%s (2017: %s%s) -- %s" % (
                    name, verdict, ": " + err if err else "", f[2],
                    ": " + f[3] if f[3] != "-" else "", reason))
                f[2] = verdict
                f[3] = err or "-"
            lines.append("\t".join(f))
        case_file = os.path.join(tmp, "cases.txt")
        with open(case_file, "w") as f:
            f.write("\n".join(lines) + "\n")
        if args.keep:
            shutil.copy(case_file, args.keep)
        print("%d seed cases extracted from %s" % (len(lines), os.path.basename(patches[0])))
        cmd = [args.runner, "--file", case_file, "-v"] + (["--kernel"] if args.kernel else [])
        r = subprocess.run(cmd)
        return r.returncode


if __name__ == "__main__":
    sys.exit(main())
