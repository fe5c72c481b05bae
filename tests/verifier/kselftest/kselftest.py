#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The kernel's own verifier test suite as an external fixture.

Debian's linux-source-6.1 package carries tools/testing/selftests/bpf/
test_verifier.c and its tables (verifier/*.c).  At test time this script
extracts them from the package's tarball into a cache directory (never into
the repository), builds a dumper from test_verifier.c up to the end of its
tests[] table plus kselftest_dump.c, writes every case out as text, and
hands the dump to kselftest_run, which runs each runnable case through
xlb's verifier and through this machine's kernel and prints the agreement,
every disagreement with both messages, and the skip list with reasons.

usage: kselftest.py --runner KSELFTEST_RUN --cache DIR [--cc CC]
                    [--tarball PATH] [--limit-seconds S] [-- RUNNER ARGS]

Exit status: the runner's (0 all runnable cases agree, 1 disagreement),
77 when the tarball is absent or the kernel refuses BPF.
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = "linux-source-6.1"
SELFTESTS = TOP + "/tools/testing/selftests/bpf"
MEMBERS_PREFIX = (SELFTESTS + "/verifier/",)
MEMBERS = (SELFTESTS + "/test_verifier.c", SELFTESTS + "/test_btf.h",
           SELFTESTS + "/bpf_rand.h", SELFTESTS + "/bpf_util.h",
           SELFTESTS + "/cap_helpers.h", TOP + "/tools/include/linux/filter.h")


def skip(msg):
    print("SKIP: " + msg)
    sys.exit(77)


def extract(tarball, cache):
    """Extract the files the fixture needs once per tarball (by size+mtime)."""
    st = os.stat(tarball)
    stamp = os.path.join(cache, "stamp")
    key = "%s %d %d\n" % (tarball, st.st_size, int(st.st_mtime))
    if os.path.exists(stamp) and open(stamp).read() == key:
        return os.path.join(cache, SELFTESTS)
    if os.path.exists(cache):
        shutil.rmtree(cache)
    os.makedirs(cache)
    print("extracting the verifier selftests from %s ..." % tarball, flush=True)
    # tar(1) with wildcards streams the xz once; tarfile would too but slower.
    pats = [m for m in MEMBERS] + [p + "*" for p in MEMBERS_PREFIX]
    r = subprocess.run(["tar", "-xf", tarball, "-C", cache, "--wildcards"] + pats,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode:
        skip("cannot extract the selftests from %s: %s" % (tarball, r.stderr.strip()))
    open(stamp, "w").write(key)
    return os.path.join(cache, SELFTESTS)


def make_dumper(src, cc, cache):
    """test_verifier.c up to its tests[] table, then kselftest_dump.c."""
    vdir = os.path.join(src, "verifier")
    names = sorted(n for n in os.listdir(vdir) if n.endswith(".c"))
    with open(os.path.join(vdir, "tests.h"), "w") as f:
        # What the selftests Makefile generates.
        f.write("#ifdef FILL_ARRAY\n")
        for n in names:
            f.write('#include "%s"\n' % n)
        f.write("#endif\n")
    text = open(os.path.join(src, "test_verifier.c")).read().split("\n")
    out, in_table = [], False
    for line in text:
        out.append(line)
        if line.startswith("static struct bpf_test tests[] = {"):
            in_table = True
        elif in_table and line.startswith("};"):
            break
    else:
        skip("test_verifier.c has no tests[] table this fixture understands")
    head = os.path.join(src, "xlb_dump_tests.c")
    with open(head, "w") as f:
        f.write("\n".join(out) + "\n")
        f.write('#include "%s"\n' % os.path.join(HERE, "kselftest_dump.c"))
    exe = os.path.join(cache, "dump_tests")
    digest = hashlib.sha256(open(head, "rb").read() +
                            open(os.path.join(HERE, "kselftest_dump.c"), "rb").read()).hexdigest()
    stamp = exe + ".sha"
    if os.path.exists(exe) and os.path.exists(stamp) and open(stamp).read() == digest:
        return exe
    cmd = [cc, "-O0", "-w", "-o", exe, head, "-I", src, "-I", vdir,
           "-I", os.path.join(src, "../../../include/uapi"), "-lbpf"]
    r = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        print(r.stderr[-4000:])
        print("FAIL: cannot build the selftest dumper: " + " ".join(cmd))
        sys.exit(1)
    open(stamp, "w").write(digest)
    return exe


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runner", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--tarball", default="/usr/src/linux-source-6.1.tar.xz")
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if not os.path.exists(a.tarball):
        skip("%s absent (Debian package linux-source-6.1; scripts/install-deps.sh installs it)"
             % a.tarball)
    src = extract(a.tarball, a.cache)
    exe = make_dumper(src, a.cc, a.cache)
    dump = os.path.join(a.cache, "cases.txt")
    with open(dump, "w") as f:
        r = subprocess.run([exe], stdout=f)
    if r.returncode:
        print("FAIL: the selftest dumper exited %d" % r.returncode)
        return 1
    rest = a.rest[1:] if a.rest[:1] == ["--"] else a.rest
    return subprocess.run([a.runner, dump] + rest).returncode


if __name__ == "__main__":
    sys.exit(main())
