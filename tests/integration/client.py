#!/usr/bin/env python3
"""HTTP clients for xlb's integration tests (run in the client namespace).

  client.py spread VIP N          N new connections, one GET each; prints
                                  {"counts": {"r1": n, ...}, "fails": n}
  client.py hold VIP N SECONDS [READY_FILE [GO_FILE]]
                                  N keep-alive connections, a GET on each
                                  every 100 ms for SECONDS; prints per
                                  connection the reals that answered and
                                  the errors seen.  READY_FILE is created
                                  once every connection got its first
                                  answer (SECONDS count from then); with
                                  GO_FILE, the GETs wait until it exists.
  XLB_CLIENT_TIMEOUT (seconds, default 2): how long a connect or an answer
  may take before it counts as an error.
"""
import json
import os
import socket
import sys
import time

TIMEOUT = float(os.environ.get('XLB_CLIENT_TIMEOUT', '2'))


def get(sock):
    sock.sendall(b'GET / HTTP/1.1\r\nHost: vip\r\n\r\n')
    data = b''
    while b'\r\n\r\n' not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError('closed by peer')
        data += chunk
    head, body = data.split(b'\r\n\r\n', 1)
    length = 0
    for line in head.split(b'\r\n'):
        if line.lower().startswith(b'content-length:'):
            length = int(line.split(b':')[1])
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError('closed by peer')
        body += chunk
    return body.strip().decode()


def spread(vip, n):
    counts, fails, errors = {}, 0, []
    for _ in range(n):
        try:
            s = socket.create_connection((vip, 80), timeout=TIMEOUT)
            name = get(s)
            s.close()
            counts[name] = counts.get(name, 0) + 1
        except Exception as e:  # noqa: BLE001 - every failure counts
            fails += 1
            if len(errors) < 5:
                errors.append(repr(e))
    print(json.dumps({'counts': counts, 'fails': fails, 'errors': errors}))


def hold(vip, n, seconds, ready=None, go=None):
    conns = []
    for _ in range(n):
        s = socket.create_connection((vip, 80), timeout=TIMEOUT)
        c = {'sock': s, 'reals': [get(s)], 'errors': []}
        conns.append(c)
    if ready:
        open(ready, 'w').close()
    while go and not os.path.exists(go):
        time.sleep(0.01)
    end = time.time() + seconds
    while time.time() < end:
        for c in conns:
            if c['sock'] is None:
                continue
            try:
                name = get(c['sock'])
                if not c['reals'] or c['reals'][-1] != name:
                    c['reals'].append(name)
            except Exception as e:  # noqa: BLE001
                c['errors'].append(repr(e))
                c['sock'].close()
                c['sock'] = None
        time.sleep(0.1)
    for c in conns:
        if c['sock'] is not None:
            c['sock'].close()
    print(json.dumps([{'reals': c['reals'], 'errors': c['errors']} for c in conns]))


if __name__ == '__main__':
    mode = sys.argv[1]
    if mode == 'spread':
        spread(sys.argv[2], int(sys.argv[3]))
    elif mode == 'hold':
        hold(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]),
             sys.argv[5] if len(sys.argv) > 5 else None,
             sys.argv[6] if len(sys.argv) > 6 else None)
    else:
        sys.exit('unknown mode ' + mode)
