#!/usr/bin/env python3
"""mdprofile's lifecycle on real programs (data/profiler/Workload,
Lifecycle.cs): nothing lost, every process its own log, the launcher's
status right, and no byte of the profiler on a profiled program's standard
output or error.

    lifecycle.py children   a tree of three processes (two levels of child
                            `dotnet`), with -o NAME.log and with -o NAME.%p.log
    lifecycle.py signals    SIGTERM and SIGINT to the program and to mdprofile,
                            Ctrl-C on a terminal, SIGKILL
    lifecycle.py attach     three attaches in a row, two at once, a copy of the
                            library, an attach ended by SIGINT to mdprofile
    lifecycle.py output     -o unwritable or a device, a write error later

Run by the .sh tests of the same names (after common.sh built the programs;
MDT_TOP_SRCDIR, MDT_BUILDDIR and MDPROFILE_PROFILER set). Waits are bounded
and depend on the programs' own progress ("ready" after a second of their
CPU time, a log that has records), never on wall time alone. Prints one
line per check and "N passed, M failed"; exits 1 on a failure."""
import glob
import os
import pty
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
import mdtcheck  # noqa: E402  tests/common: the PASS/FAIL lines and the closing line

top = os.environ["MDT_TOP_SRCDIR"]
build = os.environ["MDT_BUILDDIR"]
work = os.path.join(build, "tests", "profiler")
mdprofile = os.path.join(build, "profiler", "mdprofile")
workload = os.path.join(work, "bin", "Workload", "Workload.dll")
check_py = os.path.join(top, "tests", "profiler", "check.py")
LIMIT = 300  # seconds: bounds a hang, nothing else

# What the test program itself prints: anything else on its output came
# from somewhere else.
PROGRAM_LINES = re.compile(r"^(names done -?[0-9]+|tree [0-9]+ [0-9]+ [0-9]+|ready [0-9]+|exiting on SIG[A-Z]+)$")


def ok(cond, what):
    mdtcheck.check(cond, what)
    return cond


def default_signals():
    """In the child: the signals a non-interactive shell ignores for its
    background jobs back to their defaults, as in a terminal."""
    for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def env_with_preload():
    env = dict(os.environ)
    pre = os.environ.get("MDP_PRELOAD")
    if pre:
        env["LD_PRELOAD"] = pre + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    return env


def program(base, *args):
    """The command line of the test program, its output and error going to
    BASE.out and BASE.err (the first process execs dotnet: same pid)."""
    return ["sh", "-c", 'exec "$@" >"$0.out" 2>"$0.err"', base, "dotnet", workload] + list(args)


def launch(args, preexec=None, **kw):
    def pre():
        default_signals()
        if preexec:
            preexec()
    return subprocess.Popen([mdprofile] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=pre, env=env_with_preload(), text=True, **kw)


def wait_line(path, pattern, proc=None, limit=LIMIT):
    """The first line of the file matching pattern (polled), or None when
    the process ended or the limit passed."""
    t = time.time()
    while time.time() - t < limit:
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    m = re.search(pattern, line)
                    if m:
                        return m
        except OSError:
            pass
        if proc is not None and proc.poll() is not None:
            return None
        time.sleep(0.1)
    return None


def finish(proc, limit=LIMIT):
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return proc.returncode, out, err


def header(path):
    with open(path, errors="replace") as f:
        first = f.readline().rstrip("\n")
    return dict(kv.split("=", 1) for kv in first.split(" ")[2:] if "=" in kv)


def last_line(path):
    with open(path, "rb") as f:
        data = f.read()
    lines = data.decode("utf-8", "replace").split("\n")
    return lines[-2] if len(lines) >= 2 and lines[-1] == "" else (lines[-1] if lines else "")


def stats(path):
    line = last_line(path)
    if not line.startswith("#stats "):
        return None
    return dict(kv.split("=", 1) for kv in line.split(" ")[1:])


def checked(mode, log, exp, offline=True):
    """check.py MODE LOG EXP [--assemblies ...]: its failures and summary."""
    args = [sys.executable, check_py, mode, log, exp]
    if offline:
        args += ["--assemblies"] + [os.path.join(work, "bin", p) for p in ("Workload", "PluginA", "PluginB")]
    r = subprocess.run(args, capture_output=True, text=True)
    lines = (r.stdout + r.stderr).strip().split("\n")
    bad = [x for x in lines if not x.startswith("PASS ")]
    return r.returncode == 0, "; ".join(bad[-4:])


def program_output_clean(base):
    """The program's own output only: its known lines on stdout, nothing on
    stderr."""
    try:
        with open(base + ".out", errors="replace") as f:
            out = [x.rstrip("\n") for x in f]
        with open(base + ".err", errors="replace") as f:
            err = f.read()
    except OSError as e:
        return False, str(e)
    strange = [x for x in out if not PROGRAM_LINES.match(x)]
    return not strange and not err, "stdout %r, stderr %r" % (strange[:3], err[:300])


def launcher_lines(err):
    """mdprofile's stderr lines about logs: {path: (pid, state)}."""
    logs = {}
    for line in err.split("\n"):
        m = re.match(r"^mdprofile: log (.*): pid ([0-9]+) \(.*?\): ((?:complete|still running|cut short|incomplete).*)$",
                     line)
        if m:
            logs[m.group(1)] = (int(m.group(2)), m.group(3))
    return logs


def clean(pattern):
    for p in glob.glob(os.path.join(work, pattern)):
        if os.path.isdir(p):
            shutil.rmtree(p)
        else:
            os.unlink(p)


# ---------------------------------------------------------------- children

def children():
    for name, out, offline in (("tree", "tree.log", True), ("treep", "treep.%p.log", False)):
        clean(name + ".*")
        base = os.path.join(work, name)
        p = launch(["-o", os.path.join(work, out), "--debug-names", "--"] + program(base, "tree", base, "2", "300"))
        rc, _, err = finish(p)
        ok(rc == 0, "%s: three processes under mdprofile, status 0 (%d): %s" % (out, rc, err.strip()[-300:]))
        with open(base + ".out", errors="replace") as f:
            tree = {int(m.group(3)): (int(m.group(1)), int(m.group(2)))
                    for m in (re.match(r"^tree ([0-9]+) ([0-9]+) ([0-9]+)$", x.strip()) for x in f) if m}
        if not ok(sorted(tree) == [0, 1, 2], "%s: every level ran and said its pid (%s)" % (out, tree)):
            continue
        root, child, grand = tree[2][0], tree[1][0], tree[0][0]
        ok(tree[2][1] == p.pid and tree[1][1] == root and tree[0][1] == child,
           "%s: a chain of processes, mdprofile %d -> %d -> %d -> %d" % (out, p.pid, root, child, grand))
        if "%p" in out:
            want = {pid: base + ".%d.log" % pid for pid in (root, child, grand)}
        else:
            want = {root: base + ".log", child: base + ".%d.log" % child, grand: base + ".%d.log" % grand}
        have = sorted(x for x in glob.glob(base + ".*") if re.search(r"\.log", x))
        ok(have == sorted(want.values()),
           "%s: exactly one log per process, named %s (found %s)"
           % (out, sorted(os.path.basename(x) for x in want.values()), [os.path.basename(x) for x in have]))
        listed = launcher_lines(err)
        ok({path: pid for path, (pid, _) in listed.items()} == {v: k for k, v in want.items()} and
           all(state == "complete (end=exit)" for _, state in listed.values()),
           "%s: mdprofile listed each log with its pid, complete: %s" % (out, listed))
        parents = {root: p.pid, child: root, grand: child}
        for pid, log in sorted(want.items()):
            if not os.path.exists(log):
                continue
            h = header(log)
            ok(h.get("pid") == str(pid) and h.get("ppid") == str(parents[pid]) and "tree" in h.get("cmd", ""),
               "%s: header pid=%s ppid=%s cmd=%s" % (os.path.basename(log), h.get("pid"), h.get("ppid"),
                                                     h.get("cmd", "")[:80]))
            good, why = checked("named", log, base + ".%d.expected" % pid, offline)
            ok(good, "%s: complete, and every frame named as the process named itself%s%s"
               % (os.path.basename(log), " (offline too)" if offline else "", (": " + why) if not good else ""))
        good, why = program_output_clean(base)
        ok(good, "%s: nothing but the programs' own lines on their output (%s)" % (out, why))


# ---------------------------------------------------------------- signals

def run_signal(case, sig, target, cancel=False):
    """cancel: the program handles the signal itself and exits (then
    the runtime shuts down cleanly, and the log says end=exit)."""
    base = os.path.join(work, "sig-" + case)
    clean("sig-%s.*" % case)
    log = base + ".log"
    args = ["-o", log, "--debug-names", "-v", "--"] + program(base, "signal", base + ".expected",
                                                             *(["cancel"] if cancel else []))
    master = None
    if target == "terminal":
        # mdprofile in a session of its own on a pseudo-terminal: Ctrl-C
        # there reaches the whole foreground group (si_code SI_KERNEL)
        master, slave = pty.openpty()

        def ctty():
            import fcntl
            import termios
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        p = launch(args, preexec=ctty, stdin=slave, pass_fds=(slave,))
        os.close(slave)
    else:
        p = launch(args)
    m = wait_line(base + ".out", r"^ready ([0-9]+)", p)
    if not ok(m is not None, "%s: the program got ready" % case):
        p.kill()
        finish(p)
        return
    # mid-run: once the log holds records (a write happened)
    wait_line(log, r"^stack ", p)
    if target == "program":
        os.kill(int(m.group(1)), sig)
    elif target == "mdprofile":
        os.kill(p.pid, sig)
    else:
        os.write(master, b"\x03")
    rc, _, err = finish(p)
    if master is not None:
        os.close(master)
    name = signal.Signals(sig).name
    ok(rc == 128 + sig, "%s: mdprofile's status is the program's, 128 + %s (%d)" % (case, name, rc))
    s = stats(log) or {}
    end = "exit" if cancel else "signal:" + name
    ok(s.get("end") == end, "%s: the log ends with #stats end=%s (%s)"
       % (case, end, last_line(log)[:60] + "..." + last_line(log)[-30:]))
    good, why = checked("names", log, base + ".expected")
    ok(good, "%s: every frame named as the program named itself, offline too%s" % (case, (": " + why) if not good else ""))
    try:
        with open(base + ".expected") as f:
            got = [x.split()[2] for x in f if x.startswith("# signals ")]
    except OSError:
        got = []
    ok(got == ["1"], "%s: the program got the signal once (%s)" % (case, got))
    # (two SIGINTs in a row coalesce in the kernel, so the program's count
    # cannot tell a second one sent at once; mdprofile says what it did)
    said = re.search(r"signals: ([0-9]+) forwarded to the program, ([0-9]+) from the terminal", err)
    want = (0, 1) if target == "terminal" else (1, 0) if target == "mdprofile" else None
    ok(want is None and not said or said and (int(said.group(1)), int(said.group(2))) == want,
       "%s: mdprofile forwarded what was sent to it alone, not what the terminal sent (%s)"
       % (case, said.group(0) if said else "nothing said"))
    good, why = program_output_clean(base)
    ok(good, "%s: nothing but the program's own lines on its output (%s)" % (case, why))
    ok(launcher_lines(err).get(log, (0, ""))[1].startswith("complete"),
       "%s: mdprofile says the log is complete: %s" % (case, err.strip()[-200:]))


def signals():
    run_signal("term-program", signal.SIGTERM, "program")
    run_signal("term-mdprofile", signal.SIGTERM, "mdprofile")
    run_signal("int-program", signal.SIGINT, "program")
    run_signal("int-mdprofile", signal.SIGINT, "mdprofile")
    run_signal("int-terminal", signal.SIGINT, "terminal", cancel=True)
    # SIGKILL: nothing can finish the log; it keeps what was written
    base = os.path.join(work, "sig-kill")
    clean("sig-kill.*")
    log = base + ".log"
    p = launch(["-o", log, "--"] + program(base, "signal", base + ".expected"))
    m = wait_line(base + ".out", r"^ready ([0-9]+)", p)
    if ok(m is not None, "kill: the program got ready"):
        wait_line(log, r"^stack ", p)
        os.kill(int(m.group(1)), signal.SIGKILL)
    rc, _, err = finish(p)
    ok(rc == 128 + signal.SIGKILL, "kill: mdprofile's status is 137 (%d)" % rc)
    sys.path.insert(0, os.path.dirname(check_py))
    import check
    lg = check.Log(log)
    ok(lg.stats is None and not lg.errors and lg.records,
       "kill: the log holds %d whole records and no #stats (errors: %s)" % (len(lg.records), lg.errors[:3]))
    ok("cut short" in launcher_lines(err).get(log, (0, ""))[1],
       "kill: mdprofile says the log is cut short: %s" % err.strip()[-200:])


# ---------------------------------------------------------------- attach

def attach():
    base = os.path.join(work, "att")
    clean("att.*")
    clean("att-copy")
    stop = base + ".stop"
    app = subprocess.Popen(["dotnet", workload, "wait", base + ".expected", stop],
                           stdout=open(base + ".out", "w"), stderr=open(base + ".err", "w"),
                           env=env_with_preload(), preexec_fn=default_signals)
    try:
        _attach(base, app)
    finally:
        open(stop, "w").close()
        try:
            rc = app.wait(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            app.kill()
            rc = app.wait()
    ok(rc == 0, "the program ran on after every session and ended normally (%d)" % rc)
    good, why = program_output_clean(base)
    ok(good, "nothing but the program's own lines on its output (%s)" % why)
    for i in (1, 2, 3):
        log = "%s.%d.log" % (base, i)
        if os.path.exists(log) and os.path.exists(base + ".expected"):
            good, why = checked("reattach", log, base + ".expected")
            ok(good, "session %d: every frame named as the program named itself, offline too%s"
               % (i, (": " + why) if not good else ""))


def perf_fds(pid):
    """The perf_events fds process PID holds (the sampler's CPU clocks,
    profiler/core/perfclock.c)."""
    n = 0
    d = "/proc/%d/fd" % pid
    for f in os.listdir(d):
        try:
            n += "perf_event" in os.readlink(os.path.join(d, f))
        except OSError:
            pass
    return n


def header_key(log, key):
    with open(log) as f:
        m = re.search(r" %s=(\S+)" % key, f.readline())
    return m.group(1) if m else None


def attach_cmd(pid, log, *opts):
    return ["--attach", str(pid), "-o", log] + list(opts)


def _attach(base, app):
    if not ok(wait_line(base + ".out", r"^ready", app) is not None, "the program got ready"):
        return
    pid = app.pid
    # three sessions in a row: each returns once its log is complete
    for i in (1, 2, 3):
        log = "%s.%d.log" % (base, i)
        # --clock auto: the perf clock where the kernel allows it, so the fd
        # checks below meet its fds (the default starts every thread on the timer)
        p = launch(attach_cmd(pid, log, "--samples", "2000", "--debug-names", "--clock", "auto"))
        rc, _, err = finish(p)
        s = stats(log) if os.path.exists(log) else None
        ok(rc == 0 and s is not None and s.get("end") == "detach" and int(s.get("samples", 0)) >= 2000,
           "session %d: mdprofile --attach returned 0 with the log complete (end=detach, %s samples): %s"
           % (i, s and s.get("samples"), err.strip()[-300:]))
        # the sampler's perf clocks closed at detach: none left after three
        # sessions' worth of threads (profiler/core/perfclock.c)
        n = perf_fds(pid)
        ok(n == 0, "session %d (cpu_clock=%s): no perf_events fd left open after the detach (%d)"
           % (i, os.path.exists(log) and header_key(log, "cpu_clock"), n))
    # two at once: the runtime refuses the second, and says why
    loga, logb = base + ".A.log", base + ".B.log"
    a = launch(attach_cmd(pid, loga, "--samples", "6000", "--clock", "auto"))
    started = wait_line(loga, r"^#mdprofile ", a)
    if started is not None and header_key(loga, "cpu_clock") in ("perf", "perf_user"):
        # and open while a session samples with them (the check above can fail)
        ok(perf_fds(pid) > 0, "a session on the perf clock holds its fds (%d)" % perf_fds(pid))
    b = launch(attach_cmd(pid, logb, "--samples", "1000"))
    rcb, _, errb = finish(b)
    ok(started is not None and rcb == 1 and "CORPROF_E_PROFILER_ALREADY_ACTIVE" in errb and
       "one at a time" in errb,
       "a second session at once is refused with the runtime's reason, explained (%d): %s" % (rcb, errb.strip()))
    rca, _, erra = finish(a)
    ok(rca == 0 and (stats(loga) or {}).get("end") == "detach",
       "the first session goes on to a complete log (%d): %s" % (rca, erra.strip()[-200:]))
    # a copy of the library at another path: the runtime loads a second copy
    copy = os.path.join(work, "att-copy")
    os.makedirs(copy, exist_ok=True)
    so = os.environ["MDPROFILE_PROFILER"]
    shutil.copy(so, os.path.join(copy, os.path.basename(so)))
    logc = base + ".copy.log"
    env = dict(os.environ, MDPROFILE_PROFILER=os.path.join(copy, os.path.basename(so)))
    p = subprocess.Popen([mdprofile] + attach_cmd(pid, logc, "--samples", "1000"), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rc, _, err = finish(p)
    ok(rc == 0 and (stats(logc) or {}).get("end") == "detach",
       "a session with a second copy of the library (%d): %s" % (rc, err.strip()[-200:]))
    # SIGINT to mdprofile ends an open-ended session, with a whole log
    logi = base + ".int.log"
    p = launch(attach_cmd(pid, logi))
    if ok(wait_line(logi, r"^stack ", p) is not None, "an open-ended session writes its log as it goes"):
        os.kill(p.pid, signal.SIGINT)
    rc, _, err = finish(p)
    ok(rc == 0 and (stats(logi) or {}).get("end") == "detach",
       "SIGINT to mdprofile --attach ends the session with a complete log (%d): %s" % (rc, err.strip()[-200:]))
    # and the first library again, after the copy's session
    log4 = base + ".4.log"
    p = launch(attach_cmd(pid, log4, "--samples", "500"))
    rc, _, err = finish(p)
    ok(rc == 0 and (stats(log4) or {}).get("end") == "detach",
       "the first library again after the copy's session (%d): %s" % (rc, err.strip()[-200:]))


# ---------------------------------------------------------------- output

def output():
    marker = os.path.join(work, "out.ran")
    clean("out.*")
    never = ["--", "sh", "-c", 'touch "$0"', marker]
    regular = os.path.join(work, "out.file")
    open(regular, "w").close()
    for what, path, says in (("a character device", "/dev/full", "not a regular file (a character device)"),
                             ("a directory", work, "not a regular file (a directory)"),
                             ("a missing folder", os.path.join(work, "out.none", "x.log"), "No such file or directory"),
                             ("a file as folder", os.path.join(regular, "x.log"), "Not a directory"),
                             ("%p in a folder", os.path.join(work, "out.%p", "x.log"), "%p may appear in the log's file name only")):
        t = time.time()
        p = launch(["-o", path] + never)
        rc, _, err = finish(p, limit=30)
        ok(rc == 2 and says in err and not os.path.exists(marker),
           "-o %s: refused before the program starts, status 2, the reason said (%d in %.2f s): %s"
           % (what, rc, time.time() - t, err.strip()))
    # a first process that is not a .NET one: its path is not left behind
    # empty, a .NET child's log is beside it, the status is the program's;
    # with no .NET process at all, no file either
    log = os.path.join(work, "out.sh.log")
    base = os.path.join(work, "out.sh")
    p = launch(["-o", log, "--", "sh", "-c", '"$@"; exit 3', "sh"] + program(base, "names", base + ".expected", "50"))
    rc, _, err = finish(p)
    kids = glob.glob(os.path.join(work, "out.sh.*.log"))
    listed = launcher_lines(err)
    ok(rc == 3 and not os.path.exists(log) and "is not a .NET process" in err and len(kids) == 1 and
       listed.get(kids[0], (0, ""))[1] == "complete (end=exit)",
       "a shell starting dotnet: status 3, no empty %s left, the child's log %s listed complete (%d): %s"
       % (os.path.basename(log), [os.path.basename(x) for x in kids], rc, err.strip()[-300:]))
    log = os.path.join(work, "out.none.log")
    p = launch(["-o", log, "--", "true"])
    rc, _, err = finish(p, limit=30)
    ok(rc == 1 and not os.path.exists(log) and "did not load the profiler" in err,
       "no .NET process at all: status 1, no %s left, the reason said (%d): %s"
       % (os.path.basename(log), rc, err.strip()))
    # a write error later: the file size limit, which the profiler honours
    # (a write past it would raise SIGXFSZ and kill the program)
    log = os.path.join(work, "out.fsize.log")
    # a few writes fit (quarter-second ones: native frames make a sample
    # log's first seconds some 100 KB; a first write past the limit, which
    # a drain thread starved on a loaded machine once made, would leave
    # nothing to check), the whole log (350-400 KB) does not
    limit = 200000

    def fsize():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    base = os.path.join(work, "out.fsize")
    # (the runtime's W^X double mapping sizes a memfd past such a limit)
    p = launch(["-o", log, "--", "env", "DOTNET_EnableWriteXorExecute=0", "MDPROFILE_FLUSH_MS=250"] +
               program(base, "names", base + ".expected", "2000"), preexec=fsize)
    rc, _, err = finish(p)
    ok(rc == 0, "a log past RLIMIT_FSIZE: the program runs to its end, status 0 (%d)" % rc)
    said = [x for x in err.split("\n") if "cannot write the log" in x]
    ok(len(said) == 1 and "File too large" in said[0],
       "the write error is said once, with its errno: %s" % said)
    size = os.path.getsize(log)
    with open(log, "rb") as f:
        data = f.read()
    sys.path.insert(0, os.path.dirname(check_py))
    import check
    lg = check.Log(log)
    ok(size <= limit and data.endswith(b"\n") and not lg.errors and lg.records and lg.stats is None,
       "the log holds whole lines up to the limit (%d bytes, %d records, no #stats; %s)"
       % (size, len(lg.records), lg.errors[:2]))
    ok("writing it failed" in launcher_lines(err).get(log, (0, ""))[1],
       "mdprofile says the log is incomplete because a write failed: %s" % err.strip()[-200:])


def main():
    {"children": children, "signals": signals, "attach": attach, "output": output}[sys.argv[1]]()
    return mdtcheck.closing()


if __name__ == "__main__":
    sys.exit(main())
