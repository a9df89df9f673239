#!/usr/bin/env python3
"""Loopback load for data/profiler/Web in the profiler's cost bench
(cost.sh): waits for the server's "listening URL" line in OUT, sends
REQUESTS requests of /work?n=50..249 on one connection (as
tests/profiler/web.sh does), then waits IDLE seconds with the server
doing nothing (a process that waits: the drain thread's cost alone), then
/quit. Only 127.0.0.1; every wait is bounded.

    webload.py OUT REQUESTS [IDLE]
"""
import http.client
import re
import sys
import time


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: webload.py OUT REQUESTS [IDLE]")
    out, requests = sys.argv[1], int(sys.argv[2])
    idle = float(sys.argv[3]) if len(sys.argv) == 4 else 0.0
    deadline = time.time() + 120
    port = None
    while time.time() < deadline and not port:
        try:
            with open(out, errors="replace") as f:
                m = re.search(r"^listening http://127\.0\.0\.1:(\d+)", f.read(), re.M)
        except FileNotFoundError:
            m = None
        port = m and int(m.group(1))
        time.sleep(0.1)
    if not port:
        sys.exit("webload.py: the server did not say where it listens")
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for n in range(requests):
        c.request("GET", "/work?n=%d" % (50 + n % 200))
        r = c.getresponse()
        body = r.read()
        if r.status != 200 or not body.startswith(b"["):
            sys.exit("webload.py: request %d: status %d" % (n, r.status))
    time.sleep(idle)
    c.request("GET", "/quit")
    c.getresponse().read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
