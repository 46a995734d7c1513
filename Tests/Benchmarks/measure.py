#!/usr/bin/env python3
"""Runs `btlens stats` (and `btmon -a` when installed) on the bench captures; prints MB/s, records/s, peak RSS,
and processor time (user + system, all threads), which wall time hides when a command runs on two threads."""
import json, os, resource, shutil, subprocess, sys, tempfile, time

def run(cmd):
    """Wall time, peak RSS (KiB), exit code and processor time (user + system seconds) of one child process."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        # The child must never return into the parent's loop: if the exec fails it says why on the real
        # standard error and ends with 127 (as a shell does), which the parent reports.
        try:
            stderr = os.dup(2)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            try:
                os.execvp(cmd[0], cmd)
            except BaseException as error:
                os.write(stderr, f"measure.py: cannot run {cmd[0]}: {error}\n".encode())
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    return (time.perf_counter() - start, usage.ru_maxrss, os.waitstatus_to_exitcode(status),
            usage.ru_utime + usage.ru_stime)

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))

def best_of_interleaved(cmds, rounds=ROUNDS):
    """Best wall time (with its peak RSS) and best processor time of each command over `rounds` rounds that run
    every command once, in turn: on a shared machine whose speed drifts, each command meets the same conditions,
    so the ratios hold."""
    best = {}
    for _ in range(rounds):
        for label, cmd in cmds:
            secs, rss, code, cpu = run(cmd)
            if code not in (0, 1):
                sys.exit(f"{' '.join(cmd)} exited {code}")
            wall, wall_rss, least_cpu = best.get(label, (secs, rss, cpu))
            if secs < wall:
                wall, wall_rss = secs, rss
            best[label] = (wall, wall_rss, min(cpu, least_cpu))
    return best

def main():
    btlens, files = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory(prefix="btlens-bench-") as scratch:
        measure(btlens, files, scratch)

def measure(btlens, files, scratch):
    print(f"{'tool':22} {'file':28} {'MB':>6} {'seconds':>8} {'MB/s':>7} {'records/s':>11} {'peak RSS':>10} {'vs stats':>9}"
          f" {'CPU s':>6} {'CPU vs stats':>12}")
    for f in files:
        size_mb = os.path.getsize(f) / 1e6
        records = json.loads(subprocess.run([btlens, "stats", "--json", f], capture_output=True, text=True).stdout)["records"]
        base = cpu_base = None
        # stats: reading and decoding; timeline --track-only: plus the tracking layer (connections, ATT, GATT,
        # scans, advertisers); audit: plus the rules; energy: the radio model over the same model; devices: the
        # advertisers and scans (links slimmed as they finish); timeline: every line a person reads.
        cmds = [("btlens stats", [btlens, "stats", f]),
                ("btlens tracking", [btlens, "timeline", "--track-only", f]),
                ("btlens audit", [btlens, "audit", "--fail-on", "never", f]),
                ("btlens energy", [btlens, "energy", f]),
                ("btlens devices", [btlens, "devices", f]),
                ("btlens timeline", [btlens, "timeline", f])]
        if os.environ.get("BENCH_ALL_FORMATS"):
            # Every format of every command, the exports included (written to a temporary directory).
            cmds += [(f"btlens audit {fmt}", [btlens, "audit", "--fail-on", "never", "--format", fmt, f])
                     for fmt in ("json", "sarif", "junit", "markdown", "html")]
            cmds += [("btlens energy json", [btlens, "energy", "--json", f]),
                     ("btlens devices json", [btlens, "devices", "--json", f]),
                     ("btlens timeline json", [btlens, "timeline", "--json", f]),
                     ("btlens gatt", [btlens, "gatt", f]),
                     ("btlens gatt json", [btlens, "gatt", "--json", f]),
                     ("btlens export perfetto", [btlens, "export", "--format", "perfetto", "-o",
                                                 os.path.join(scratch, "trace.pftrace"), f]),
                     ("btlens export jsonl", [btlens, "export", "--format", "jsonl", "-o", os.path.join(scratch, "facts"), f]),
                     # diff reads two captures: the capture compared with itself.
                     ("btlens diff", [btlens, "diff", "--fail-on", "never", f, f]),
                     ("btlens diff json", [btlens, "diff", "--fail-on", "never", "--format", "json", f, f]),
                     # Two readings and a copy as large as the capture (overwritten by the next one).
                     ("btlens anonymize", [btlens, "anonymize", f, os.path.join(scratch, "copy.btsnoop")])]
        best = best_of_interleaved(cmds)
        for label, _ in cmds:
            secs, rss, cpu = best[label]
            base = base or secs
            cpu_base = cpu_base or cpu
            print(f"{label:22} {os.path.basename(f):28} {size_mb:6.0f} {secs:8.2f} {size_mb/secs:7.0f} {records/secs:11.0f} {rss/1024:8.1f} MB {secs/base:8.2f}x"
                  f" {cpu:6.2f} {cpu/cpu_base:11.2f}x")
    # bench-large leaves btmon out: at its 15 MB/s a gigabyte takes minutes and says nothing new.
    btmon = None if os.environ.get("BENCH_NO_BTMON") else shutil.which("btmon")
    small = files[0]
    if btmon:
        secs, rss, code, cpu = run([btmon, "-a", small])
        size_mb = os.path.getsize(small) / 1e6
        print(f"{'btmon -a':22} {os.path.basename(small):28} {size_mb:6.0f} {secs:8.2f} {size_mb/secs:7.0f} {'':>11} {rss/1024:8.1f} MB")
    elif not os.environ.get("BENCH_NO_BTMON"):
        print("btmon not installed (Debian package bluez): no comparison")

main()
