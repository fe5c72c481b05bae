#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The report of scripts/bench.sh: one table, one JSON file, PNG plots.

usage: bench_report.py OUT_DIR [--publish]

Reads OUT_DIR/rows.jsonl (rows the benchmarks wrote), the verifier's and
the control benchmark's text output, and lbgen's live-veth summaries; writes
OUT_DIR/bench.json, OUT_DIR/table.md, OUT_DIR/mpps_vs_flows.png and
OUT_DIR/ns_by_path_engine.png.  --publish copies the table and plots into
doc/bench/ and the table into README.md between its bench markers.
Every figure is a measurement of this run; targets are compared, never
asserted.
"""

import glob
import json
import os
import re
import shutil
import statistics
import sys

# (bench, name, engine or None, what is compared, op, target): issue 14's targets
TARGETS = [
    ("balancer", "established flow (LRU hit, fast path)", "kernel", "ratio", "<=", 0.8),
    ("balancer", "TCP SYN (ring pick + LRU insert)", "kernel", "ratio", "<=", 1.2),
    ("balancer", "non-VIP (XDP_PASS)", "kernel", "ratio", "<=", 0.3),
    ("live", "veth Mpps, 1 flows, 1 cores", None, "ratio", ">=", 1.2),
    ("live", "veth Mpps, 16384 flows, 1 cores", None, "ratio", ">=", 1.0),
    ("live", "veth Mpps, 1000000 flows, 1 cores", None, "ratio", ">=", 0.8),
    ("live", "2 cores vs 1 core, 1000000 flows", None, "ratio", ">=", 1.8),
    ("engines", "test_xdp_noinline pkt_v4", "jit", "ratio", "<=", 0.9),
    ("engines", "test_xdp_noinline pkt_v6", "jit", "ratio", "<=", 0.9),
    ("engines", "xlb_balancer est_v4", "jit", "ratio", "<=", 0.9),
    ("engines", "test_xdp_noinline pkt_v4", "interp", "ratio", "<=", 4.0),
    ("engines", "test_xdp_noinline pkt_v6", "interp", "ratio", "<=", 4.0),
    ("maglev", "build 1000 reals, equal weights", None, "value", "<=", 0.5),
    ("http", "HTTP requests/s through the VIP (wrk -t2 -c40)", None, "ratio", ">=", 0.95),
    # issue 11's (bench/dpdk/bench.sh; smoke runs use fewer flows, so no target there)
    ("dpdk", "balancer Mpps per lcore, xlb-dpdk vs kernel native XDP (16384 flows)", "jit", "ratio", ">=", 1.5),
    ("dpdk", "balancer Mpps per lcore, xlb-dpdk JIT over interpreter (16384 flows)", "interp", "ratio", "<=", 4.0),
]


def stats(v):
    return {"min": min(v), "median": statistics.median(v), "max": max(v), "n": len(v)}


def one(v):
    return {"min": v, "median": v, "max": v, "n": 1}


def read_rows(out):
    rows = []
    with open(os.path.join(out, "rows.jsonl")) as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    return rows


def verifier_rows(out):
    rows = []
    path = os.path.join(out, "verifier.txt")
    if not os.path.exists(path):
        return rows
    for line in open(path):
        # object program xbpf-insns kernel-insns insns-x/k xbpf-us kernel-us load-us time-x/k
        m = re.match(r"^(\S+\.o)\s+(\S+)\s+(\d+)\s+(\d+)\s+[\d.]+\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s*$",
                     line)
        if m:
            obj, prog, xi, ki, xus, kus, _, ratio = m.groups()
            rows.append({"bench": "verifier", "name": "%s %s (insns %s vs %s)" % (obj, prog, xi, ki),
                         "unit": "us", "ref": "kernel verifier (its stats log)",
                         "value": one(float(xus)), "ref_value": one(float(kus)), "ratio": one(float(ratio))})
    return rows


def control_rows(out):
    rows = []
    path = os.path.join(out, "control.txt")
    if not os.path.exists(path):
        return rows
    text = open(path).read()
    add = re.search(r"first connection answered by the new real: ([\d.]+) ms", text)
    ref = re.search(r"lbctl status round trip .*?: +([\d.]+) ms", text)
    if add:
        row = {"bench": "control", "name": "lbctl real add -> first connection to the new real",
               "unit": "ms", "value": one(float(add.group(1)))}
        if ref:
            row.update(ref="lbctl status round trip", ref_value=one(float(ref.group(1))),
                       ratio=one(float(add.group(1)) / float(ref.group(1))))
        rows.append(row)
    base = None
    for m in re.finditer(r"^(weight of .*?)\s+(\d+) updates/s", text, re.M):
        name, rate = m.group(1).strip(), float(m.group(2))
        row = {"bench": "control", "name": "API: " + name, "unit": "updates/s", "value": one(rate)}
        if base is None:
            base = rate
        else:
            row.update(ref="no-ring updates", ref_value=one(base), ratio=one(rate / base))
        rows.append(row)
    return rows


# Largest idle share of lbgen's sending CPUs a live run may have (about 4%
# is the dispatcher's grace periods at one call a second).
LIVE_IDLE_MAX = 0.10


def live_rows(out):
    """xlb vs seed per pair, and 2 cores vs 1 core per pair, from lbgen summaries."""
    runs = {}
    for path in glob.glob(os.path.join(out, "live", "live-*.json")):
        m = re.match(r"live-(\w+)-f(\d+)-t(\d+)-(\d+)\.json", os.path.basename(path))
        lb, flows, threads, pair = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
        d = json.load(open(path))
        runs[(lb, flows, threads, pair)] = d
    rows, checks = [], []
    for (lb, flows, threads, pair), d in sorted(runs.items()):
        # the path check: the LB counted the packets lbgen sent to its VIP
        seen = d.get("lb", {}).get("packets", 0)
        if d["sent"] and seen < 0.5 * d["sent"]:
            checks.append("%s %d flows %d cores pair %d: the LB counted %d of %d frames" %
                          (lb, flows, threads, pair, seen, d["sent"]))
        # and the sending CPUs worked: an idle generator times its own waits
        # (lbgen/live.c: each BPF_PROG_RUN call waits for RCU grace periods)
        if d.get("sender_cpu_idle", 0) > LIVE_IDLE_MAX:
            checks.append("%s %d flows %d cores pair %d: the sending CPUs idled %.0f%% of the run" %
                          (lb, flows, threads, pair, 100 * d["sender_cpu_idle"]))
    for flows in sorted({k[1] for k in runs}):
        for threads in sorted({k[2] for k in runs}):
            pairs = sorted(k[3] for k in runs if k[:3] == ("xlb", flows, threads))
            x = [runs[("xlb", flows, threads, p)]["lb"]["pps"] / 1e6 for p in pairs]
            s = [runs[("seed", flows, threads, p)]["lb"]["pps"] / 1e6 for p in pairs
                 if ("seed", flows, threads, p) in runs]
            if not x:
                continue
            row = {"bench": "live", "name": "veth Mpps, %d flows, %d cores" % (flows, threads),
                   "unit": "Mpps", "value": stats(x), "flows": flows, "cores": threads,
                   "lb_egress_mpps": stats([runs[("xlb", flows, threads, p)].get("egress", {}).get("pps", 0) / 1e6
                                            for p in pairs]),
                   "sender_cpu_idle": stats([runs[k].get("sender_cpu_idle", 0) for k in runs
                                             if k[1:3] == (flows, threads)])}
            if len(s) == len(x):
                row.update(ref="seed test_xdp_noinline as a forwarding LB (its VIP packets; it inserts every flow, LRU sized as xlb's)", ref_value=stats(s),
                           ratio=stats([a / b for a, b in zip(x, s) if b > 0]))
            rows.append(row)
        one_core = [k for k in runs if k[0] == "xlb" and k[1] == flows and k[2] == 1]
        two = {k[3]: runs[k] for k in runs if k[0] == "xlb" and k[1] == flows and k[2] == 2}
        r = [two[k[3]]["lb"]["pps"] / runs[k]["lb"]["pps"] for k in one_core if k[3] in two and runs[k]["lb"]["pps"]]
        if r:
            rows.append({"bench": "live", "name": "2 cores vs 1 core, %d flows" % flows, "unit": "x",
                         "value": stats(r), "ratio": stats(r), "ref": "xlb on 1 core, same pair"})
    return rows, checks


def lbgen_dpdk_row(out):
    path = os.path.join(out, "lbgen-dpdk.json")
    if not os.path.exists(path):
        return [{"bench": "lbgen", "name": "lbgen DPDK TX into net_null (the generator alone)",
                 "error": "not measured (see lbgen-dpdk.txt)"}]
    d = json.load(open(path))
    return [{"bench": "lbgen", "name": "lbgen DPDK TX into net_null (the generator alone)", "unit": "Mpps",
             "value": one(d["pps"] / 1e6)}]


def fmt(s, unit):
    if not s:
        return "-"
    f = "%.3f" if s["median"] < 10 else "%.1f" if s["median"] < 1000 else "%.0f"
    if s["n"] == 1:
        return f % s["median"]
    return (f + " [" + f + "–" + f + "]") % (s["median"], s["min"], s["max"])


def target_of(row):
    for bench, name, engine, what, op, goal in TARGETS:
        if row.get("bench") == bench and row.get("name") == name and row.get("engine") == engine:
            got = row.get(what, {}).get("median") if not row.get("error") else None
            if got is None:
                return "%s %s: not measured" % (op, goal)
            ok = got <= goal if op == "<=" else got >= goal
            return "%s %g: %s" % (op, goal, "met" if ok else "missed")
    return ""


def table(rows):
    lines = ["| benchmark | measured | unit | median [min–max] | reference | reference median [min–max] "
             "| ratio median [min–max] | target (issue 14) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        name = ((r.get("engine") + " ") if r.get("engine") else "") + r.get("name", "")
        if r.get("error"):
            lines.append("| %s | %s | | not measured: %s | | | | %s |" % (r["bench"], name, r["error"], target_of(r)))
            continue
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["bench"], name, r.get("unit", ""), fmt(r.get("value"), r.get("unit")), r.get("ref", ""),
            fmt(r.get("ref_value"), r.get("unit")), fmt(r.get("ratio"), "x"), target_of(r)))
    return "\n".join(lines) + "\n"


def plots(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    live = [r for r in rows if r["bench"] == "live" and "flows" in r]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for who, key, style in (("xlb", "value", "-o"), ("seed", "ref_value", "--s")):
        for cores in sorted({r["cores"] for r in live}):
            pts = sorted((r["flows"], r[key]) for r in live if r["cores"] == cores and key in r)
            if not pts:
                continue
            xs = [p[0] for p in pts]
            med = [p[1]["median"] for p in pts]
            lo = [p[1]["median"] - p[1]["min"] for p in pts]
            hi = [p[1]["max"] - p[1]["median"] for p in pts]
            ax.errorbar(xs, med, yerr=[lo, hi], fmt=style, capsize=3, label="%s, %d core%s" %
                        (who if who == "xlb" else "seed test_xdp_noinline", cores, "s" if cores > 1 else ""))
    ax.set_xscale("log")
    ax.set_xlabel("distinct flows")
    ax.set_ylabel("Mpps the LB handled (its own counter)")
    ax.set_title("native XDP on veth, lbgen live frames (median, min–max)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "mpps_vs_flows.png"), dpi=110)
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, bench, title in ((axes[0], "balancer", "xlb balancer by path"),
                             (axes[1], "engines", "programs by engine")):
        sel = [r for r in rows if r["bench"] == bench and not r.get("error") and "value" in r]
        names = []
        for r in sel:
            if r["name"] not in names:
                names.append(r["name"])
        engines = ["kernel", "jit", "interp"]
        width = 0.8 / len(engines)
        for i, e in enumerate(engines):
            vals = []
            for n in names:
                m = [r for r in sel if r["name"] == n and r.get("engine") == e]
                vals.append(m[0]["value"]["median"] if m else 0)
            ax.bar([k + i * width for k in range(len(names))], vals, width, label=e)
        ax.set_xticks([k + width for k in range(len(names))])
        ax.set_xticklabels([n.replace(" (", "\n(") for n in names], fontsize=7, rotation=20, ha="right")
        ax.set_ylabel("ns per packet (median)")
        ax.set_yscale("log")
        ax.set_title(title)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "ns_by_path_engine.png"), dpi=110)
    plt.close(fig)


def publish(out, md):
    doc = os.path.join("doc", "bench")
    os.makedirs(doc, exist_ok=True)
    for f in ("mpps_vs_flows.png", "ns_by_path_engine.png", "table.md", "bench.json"):
        shutil.copy(os.path.join(out, f), os.path.join(doc, f))
    readme = open("README.md").read()
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    if begin in readme and end in readme:
        head, rest = readme.split(begin, 1)
        _, tail = rest.split(end, 1)
        open("README.md", "w").write(head + begin + "\n" + md + end + tail)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    rows = read_rows(out) + verifier_rows(out) + control_rows(out)
    lrows, checks = live_rows(out)
    rows += lrows + lbgen_dpdk_row(out)
    order = ["balancer", "engines", "live", "verifier", "maglev", "control", "http", "dpdk", "lbgen"]
    rows.sort(key=lambda r: order.index(r["bench"]) if r["bench"] in order else len(order))
    md = table(rows)
    if checks:
        md += "\nPath checks that failed (these figures time another path):\n" + \
              "".join("- %s\n" % c for c in checks)
    json.dump({"rows": rows, "path_check_failures": checks}, open(os.path.join(out, "bench.json"), "w"), indent=1)
    open(os.path.join(out, "table.md"), "w").write(md)
    plots(rows, out)
    print(md)
    print("wrote %s/{bench.json,table.md,mpps_vs_flows.png,ns_by_path_engine.png}" % out)
    if "--publish" in sys.argv:
        publish(out, md)
        print("published into doc/bench/ and README.md")
    bad = [r for r in rows if r.get("error") and r["bench"] not in ("dpdk", "lbgen")]
    return 1 if checks or bad else 0


if __name__ == "__main__":
    sys.exit(main())
