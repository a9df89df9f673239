#!/bin/sh
# Native time named (issue 24) on a server: the ASP.NET Core minimal API of
# data/profiler/Web, profiled from its start, serves a bounded loop of
# requests on 127.0.0.1 (a port the system chose; at most REQUESTS
# requests or 60 s), then /quit. The log must name the program's own
# frames, resolve offline against the program and both shared frameworks
# (Microsoft.NETCore.App and Microsoft.AspNetCore.App), carry the ELF file
# of at least 95% of its native frames and split the runtime's share by
# activity (native.py web). Skipped without the ASP.NET Core framework.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
dotnet --list-runtimes 2>/dev/null | grep -q '^Microsoft.AspNetCore.App ' ||
    skip "dotnet has no Microsoft.AspNetCore.App runtime"
build_programs
build_web

log=$work/native-web.log
out=$work/native-web.out
rm -f "$log" "$out"
if [ -n "${MDP_PRELOAD:-}" ]; then
    LD_PRELOAD="$MDP_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}" timeout 300 "$mdprofile" -o "$log" --debug-names \
        -- dotnet "$work/bin/Web/Web.dll" "$work/native-web.expected" >"$out" 2>&1 &
else
    timeout 300 "$mdprofile" -o "$log" --debug-names -- dotnet "$work/bin/Web/Web.dll" "$work/native-web.expected" \
        >"$out" 2>&1 &
fi
server=$!
python3 - "$out" <<'PY' || { kill "$server" 2>/dev/null; wait "$server"; cat "$out" >&2; fail "the request loop failed"; }
import http.client, re, sys, time
out = sys.argv[1]
deadline = time.time() + 120
url = None
while time.time() < deadline and not url:
    m = re.search(r"^listening http://127\.0\.0\.1:(\d+)", open(out).read(), re.M)
    url = m and int(m.group(1))
    time.sleep(0.1)
if not url:
    sys.exit("the server did not say where it listens")
c = http.client.HTTPConnection("127.0.0.1", url, timeout=30)
n = 0
end = time.time() + 60
while n < 3000 and time.time() < end:
    c.request("GET", "/work?n=%d" % (50 + n % 200))
    r = c.getresponse()
    body = r.read()
    if r.status != 200 or not body.startswith(b"["):
        sys.exit("request %d: status %d" % (n, r.status))
    n += 1
c.request("GET", "/quit")
c.getresponse().read()
print("%d requests" % n)
PY
wait "$server" || { cat "$out" >&2; fail "the profiled server failed"; }
runtime=$(sed -n '1s/.* runtime=\([^ ]*\).*/\1/p' "$log")
aspnet=$(dotnet --list-runtimes | sed -n "s/^Microsoft.AspNetCore.App \([^ ]*\) \[\(.*\)\]\$/\2\/\1/p" | tail -n 1)
[ -d "$aspnet" ] || fail "no Microsoft.AspNetCore.App folder"
python3 "$top/tests/profiler/native.py" web "$log" "$work/native-web.expected" --assemblies "$work/bin/Web" "$aspnet"
