#!/usr/bin/env python3
"""Runs `btlens stats` (and `btmon -a` when installed) on the bench captures; prints MB/s, records/s, peak RSS."""
import json, os, resource, shutil, subprocess, sys, time

def run(cmd):
    """Wall time and peak RSS (KiB) of one child process."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execvp(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss, os.waitstatus_to_exitcode(status)

def main():
    btlens, files = sys.argv[1], sys.argv[2:]
    print(f"{'tool':10} {'file':28} {'MB':>8} {'seconds':>8} {'MB/s':>8} {'records/s':>12} {'peak RSS':>10}")
    for f in files:
        size_mb = os.path.getsize(f) / 1e6
        records = json.loads(subprocess.run([btlens, "stats", "--json", f], capture_output=True, text=True).stdout)["records"]
        best = None
        for _ in range(3):
            secs, rss, code = run([btlens, "stats", f])
            if code != 0:
                sys.exit(f"btlens stats {f} exited {code}")
            best = (secs, rss) if best is None or secs < best[0] else best
        secs, rss = best
        print(f"{'btlens':10} {os.path.basename(f):28} {size_mb:8.0f} {secs:8.2f} {size_mb/secs:8.0f} {records/secs:12.0f} {rss/1024:8.1f} MB")
    btmon = shutil.which("btmon")
    small = files[0]
    if btmon:
        secs, rss, code = run([btmon, "-a", small])
        size_mb = os.path.getsize(small) / 1e6
        print(f"{'btmon -a':10} {os.path.basename(small):28} {size_mb:8.0f} {secs:8.2f} {size_mb/secs:8.0f} {'':>12} {rss/1024:8.1f} MB")
    else:
        print("btmon not installed (Debian package bluez): no comparison")

main()
