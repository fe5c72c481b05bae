#!/usr/bin/env python3
"""Checks and figures of the site tests (tests/fleet/it_*.sh).

  site.py spread SPREAD_JSON N TOL      the reals' shares of N connections,
                                        each within TOL (0.15) of N/reals
  site.py lbspread TOL BEFORE AFTER...  per LB, new flows between two
                                        `lbctl -j stats` (files BEFORE_i
                                        AFTER_i alternating), each within TOL
  site.py survival HOLD_JSON MIN_PCT    long-lived connections (client.py
                                        hold): the share that saw no error
                                        and one real only must be >= MIN_PCT
  site.py withdraw MONITOR T0 VIP WANT  the first route to VIP with WANT next
                                        hops in an `ip -ts monitor route` log
                                        after wall-clock T0 (s); prints ms
  site.py rings [--by-address] FILE...  rings.py outputs: every VIP's ring
                                        identical on all hosts: its bytes (the
                                        real ids), or its slot -> address table
"""
import datetime
import json
import sys


def spread(path, n, tol):
    r = json.load(open(path))
    assert r['fails'] == 0, ('failed connections', r)
    c = r['counts']
    want = n / len(c)
    for k, v in sorted(c.items()):
        assert abs(v - want) <= tol * want, ('real %s got %d of %d (want %.0f +-%d%%)'
                                            % (k, v, n, want, tol * 100))
    print('spread over reals: %s (each within %d%% of %.0f)' % (dict(sorted(c.items())),
                                                             tol * 100, want))


def new_flows(path):
    s = json.load(open(path))
    return sum(v['counters']['new_flows'] for v in s['vips'])


def lbspread(tol, files):
    per = [new_flows(files[i + 1]) - new_flows(files[i]) for i in range(0, len(files), 2)]
    total = sum(per)
    want = total / len(per)
    print('spread over LBs: %s new flows (each within %d%% of %.0f)' % (per, tol * 100, want))
    for i, v in enumerate(per):
        assert abs(v - want) <= tol * want, ('LB %d got %d of %d' % (i + 1, v, total))


def survival(path, min_pct):
    hold = json.load(open(path))
    ok = [c for c in hold if not c['errors'] and len(c['reals']) == 1]
    broken = [c for c in hold if c['errors']]
    moved = [c for c in hold if not c['errors'] and len(c['reals']) != 1]
    pct = 100.0 * len(ok) / len(hold)
    print('survived with the same real: %d of %d (%.1f%%); broken %d, changed real %d'
          % (len(ok), len(hold), pct, len(broken), len(moved)))
    for c in (broken + moved)[:5]:
        print('  e.g.', c)
    assert pct >= min_pct, 'survival %.1f%% below %.1f%%' % (pct, min_pct)


def withdraw(path, t0, vip, want):
    events, cur = [], None
    for line in open(path):
        if line.startswith('['):
            stamp, _, rest = line[1:].partition(']')
            cur = [datetime.datetime.fromisoformat(stamp).timestamp(), rest.strip(), 0]
            events.append(cur)
        elif cur is not None and 'nexthop' in line:
            cur[2] += 1
    for ts, head, hops in events:
        if ts < t0 or head.startswith('Deleted') or not head.startswith(vip + ' '):
            continue
        hops = hops or (1 if ' via ' in head else 0)
        if hops == want:
            print('%.0f' % ((ts - t0) * 1000))
            return
    sys.exit('no route to %s with %d next hops after %.3f in %s' % (vip, want, t0, path))


def rings(files):
    key = 'raw'
    if files[0] == '--by-address':
        key, files = 'by_address', files[1:]
    tables = [json.load(open(f)) for f in files]
    assert tables[0], 'no VIP ring read from ' + files[0]
    for f, t in zip(files[1:], tables[1:]):
        assert t.keys() == tables[0].keys(), ('VIPs differ', files[0], f)
        for vip in t:
            assert t[vip][key] == tables[0][vip][key], ('rings differ', key, vip, files[0], f,
                                                        tables[0][vip], t[vip])
    for vip in sorted(tables[0]):
        print('ring %s identical on %d hosts (%s sha256 %s..., slots %s)'
              % (vip, len(files), key, tables[0][vip][key][:12], tables[0][vip]['slots']))


if __name__ == '__main__':
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == 'spread':
        spread(a[0], int(a[1]), float(a[2]))
    elif cmd == 'lbspread':
        lbspread(float(a[0]), a[1:])
    elif cmd == 'survival':
        survival(a[0], float(a[1]))
    elif cmd == 'withdraw':
        withdraw(a[0], float(a[1]), a[2], int(a[3]))
    elif cmd == 'rings':
        rings(a)
    else:
        sys.exit('unknown command ' + cmd)
