# SPDX-License-Identifier: MIT
"""Soak driver for bench_soak.sh: python3 soak.py MODE WORKDIR CMD...

MODE watch: start CMD (sparkops watch --interval 1 ...), let it run.
MODE serve: start CMD (sparkops serve ...), scrape /metrics SOAK_RATE times a
second from one client thread.
Either way, read the process's VmRSS, open fds and CPU time (utime+stime) at
the start mark and at the end, and print both with the ratio."""
import os
import subprocess
import sys
import threading
import time
import urllib.request

TICK = os.sysconf("SC_CLK_TCK")


def figures(pid):
    with open(f"/proc/{pid}/status") as f:
        rss = next((int(l.split()[1]) for l in f if l.startswith("VmRSS:")), 0)
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    with open(f"/proc/{pid}/stat") as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK  # utime + stime
    return rss, fds, cpu


def scraper(port, rate, stop, count, errors):
    url = f"http://127.0.0.1:{port}/metrics"
    period = 1.0 / rate
    nxt = time.monotonic()
    while not stop.is_set():
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                r.read()
            count[0] += 1
        except Exception:  # noqa: BLE001 -- a refused scrape is counted, not fatal
            errors[0] += 1
        nxt += period
        delay = nxt - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        else:
            nxt = time.monotonic()


def main():
    mode, work, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
    minutes = float(os.environ.get("SOAK_MINUTES", "1"))
    rate = float(os.environ.get("SOAK_RATE", "50"))
    port = int(os.environ.get("SOAK_PORT", "19455"))
    total = minutes * 60.0
    warm = min(60.0, total / 4)
    log = open(os.path.join(work, f"{mode}.out"), "w")
    p = subprocess.Popen(cmd, cwd=work, stdout=log, stderr=subprocess.STDOUT)
    stop = threading.Event()
    count, errors = [0], [0]
    t = None
    try:
        time.sleep(1.0)
        if p.poll() is not None:
            print(f"soak {mode}: '{' '.join(cmd[1:])}' exited at once ({p.returncode}); see its output:")
            log.flush()
            print(open(os.path.join(work, f"{mode}.out")).read()[-2000:])
            return 1
        if mode == "serve":
            t = threading.Thread(target=scraper, args=(port, rate, stop, count, errors), daemon=True)
            t.start()
        t0 = time.monotonic()
        w0, n_w0 = figures(p.pid), count[0]
        time.sleep(warm)
        a, n_a, t_a = figures(p.pid), count[0], time.monotonic()
        time.sleep(max(0.0, total - 2 * warm))
        c, n_c, t_c = figures(p.pid), count[0], time.monotonic()
        time.sleep(warm)
        b, n_b, t_b = figures(p.pid), count[0], time.monotonic()
        if p.poll() is not None:
            print(f"soak {mode}: it died during the run ({p.returncode})")
            return 1
    finally:
        stop.set()
        if t:
            t.join(timeout=10)
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
    what = "scrape" if mode == "serve" else "sample"

    def cpu_per(x, y, nx, ny, tx, ty):
        units = (ny - nx) if mode == "serve" else (ty - tx)  # watch: one sample a second
        return (y[2] - x[2]) / units * 1000.0 if units > 0 else float("nan")

    first = cpu_per(w0, a, n_w0, n_a, t0, t_a)
    last = cpu_per(c, b, n_c, n_b, t_c, t_b)
    shown = " ".join(os.path.basename(x) if i == 0 else x for i, x in enumerate(cmd))
    print(f"soak {mode}: {shown}")
    print(f"  {minutes:g} min; start = after {warm:.0f} s, end = at {t_b - t0:.0f} s; "
          f"CPU over the first and the last {warm:.0f} s")
    if mode == "serve":
        print(f"  scrapes {count[0]} ({count[0] / (t_b - t0):.1f}/s), failed {errors[0]}")

    def ratio(x, y):
        return f"{y / x:.3f}" if x else "n/a"

    print(f"  {'':16} {'start':>10} {'end':>10} {'end/start':>10}")
    print(f"  {'VmRSS KiB':16} {a[0]:>10} {b[0]:>10} {ratio(a[0], b[0]):>10}")
    print(f"  {'open fds':16} {a[1]:>10} {b[1]:>10} {ratio(a[1], b[1]):>10}")
    print(f"  {'CPU ms/' + what:16} {first:>10.3f} {last:>10.3f} {ratio(first, last):>10}")
    flat = b[0] <= a[0] * 1.05 + 256 and b[1] <= a[1]
    print(f"  verdict: {'flat' if flat else 'GROWING'} (RSS within 5% + 256 KiB, fds not growing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
