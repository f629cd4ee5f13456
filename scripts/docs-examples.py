#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The example outputs pasted in README.md and docs/*.md, made by the binary.

A pasted example is a fenced block right after a marker line:

    <!-- example: status -->
    ```
    $ sparkops status
    ...what the binary prints...
    ```

The marker names a row of EXAMPLES below: the command a reader sees (the
block's first line) and the command that makes the output, on a fixture tree
with the fake NVML, so the output is the same on every machine.

    scripts/docs-examples.py BUILD write FILE...   rewrite the blocks
    scripts/docs-examples.py BUILD check FILE...   exit 1, with a diff, when a
                                                   block differs from the binary

`make docs-examples` writes; tests/cli/test_docs_examples.sh checks.
"""
import difflib
import os
import re
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(TOP, "tests", "fixtures")
SCN = os.path.join(TOP, "tests", "fake-nvml", "scenarios")


def roots(name):
    return ["--procfs", os.path.join(FIX, name, "proc"), "--sysfs", os.path.join(FIX, name, "sys")]


# id: (what the reader sees, the arguments after `sparkops`, the fake-NVML scenario or None)
EXAMPLES = {
    "status": ("sparkops status", roots("gb10-loaded") + ["status"], "gb10.scn"),
    "status-idle": ("sparkops status", roots("gb10-idle") + ["status"], "gb10.scn"),
    "plan-qlora": (
        "sparkops plan llama-3.1-70b --method qlora --seq 2048",
        roots("gb10-idle") + ["plan", "llama-3.1-70b", "--method", "qlora", "--seq", "2048"],
        "gb10.scn",
    ),
    "plan-lora-8b": (
        "sparkops plan llama-3.1-8b --method lora",
        roots("gb10-idle") + ["plan", "llama-3.1-8b", "--method", "lora"],
        "gb10.scn",
    ),
}

# examples that read another node: a `sparkops serve` on a loopback port
# stands in for it (these roots), its address put in place of @PEER@
PEERS = {"top-nodes": roots("gb10-idle")}
EXAMPLES["top-nodes"] = (
    "sparkops top --once --node http://spark-gb10-idle:9851",
    roots("gb10-loaded") + ["top", "--once", "--node", "http://@PEER@"],
    "gb10.scn",
)

MARK = re.compile(r"^<!-- example: ([a-z0-9-]+) -->\s*$")


def output(build, ex_id):
    shown, args, scn = EXAMPLES[ex_id]
    env = dict(os.environ)
    for k in ("SPARKOPS_PROCFS", "SPARKOPS_SYSFS", "FAKE_NVML_SCENARIO", "SPARKOPS_PAGE_SIZE"):
        env.pop(k, None)
    env["NO_COLOR"] = "1"
    env["TZ"] = "UTC"
    if scn:
        env["SPARKOPS_NVML_LIB"] = os.path.join(build, "libfake-nvml.so")
        env["FAKE_NVML_SCENARIO"] = os.path.join(SCN, scn)
    else:
        env["SPARKOPS_NVML_LIB"] = "/nonexistent/libnvidia-ml.so.1"
    peer = None
    if ex_id in PEERS:
        peer = subprocess.Popen([os.path.join(build, "sparkops"), "serve", "--listen", "127.0.0.1:0"] + PEERS[ex_id],
                                env=env, cwd=TOP, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        addr = None
        for line in peer.stderr:
            m = re.search(rb"serving http://([0-9.:]+)/metrics", line)
            if m:
                addr = m.group(1).decode()
                break
        if not addr:
            peer.kill()
            raise SystemExit(f"example '{ex_id}': the peer's serve did not start")
        # two readings a second apart: the peer's link has bytes per second
        subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://{addr}/api/status"], timeout=10)
        time.sleep(1.2)
        args = [a.replace("@PEER@", addr) for a in args]
    try:
        p = subprocess.run([os.path.join(build, "sparkops")] + args, env=env, cwd=TOP,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
    finally:
        if peer:
            peer.terminate()
            peer.wait()
    text = p.stdout.decode("utf-8", "replace")
    lines = ["$ " + shown] + [ln.rstrip() for ln in text.rstrip("\n").split("\n")]
    return lines


def process(build, path, write):
    with open(path, encoding="utf-8") as f:
        src = f.read().split("\n")
    out, i, problems, found = [], 0, [], 0
    while i < len(src):
        line = src[i]
        out.append(line)
        m = MARK.match(line)
        if not m:
            i += 1
            continue
        ex_id = m.group(1)
        if ex_id not in EXAMPLES:
            problems.append(f"{path}:{i + 1}: no example named '{ex_id}' in scripts/docs-examples.py")
            i += 1
            continue
        if i + 1 >= len(src) or not src[i + 1].startswith("```"):
            problems.append(f"{path}:{i + 1}: the example marker is not followed by a fenced block")
            i += 1
            continue
        end = i + 2
        while end < len(src) and not src[end].startswith("```"):
            end += 1
        if end >= len(src):
            problems.append(f"{path}:{i + 1}: the example's fenced block is never closed")
            i += 1
            continue
        found += 1
        pasted = src[i + 2:end]
        made = output(build, ex_id)
        if pasted != made:
            if write:
                print(f"{path}:{i + 1}: example '{ex_id}' rewritten")
            else:
                diff = "\n".join(difflib.unified_diff(pasted, made, f"{path} (pasted)", f"sparkops now", lineterm=""))
                problems.append(f"{path}:{i + 1}: example '{ex_id}' differs from what the binary prints now "
                                f"(make docs-examples rewrites it):\n{diff}")
        out.append(src[i + 1])
        out.extend(made)
        out.append(src[end])
        i = end + 1
    if write:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(out))
    return problems, found


def main(argv):
    if len(argv) < 4 or argv[2] not in ("check", "write"):
        print(__doc__.strip().split("\n\n")[-2], file=sys.stderr)
        return 2
    build = os.path.abspath(argv[1])
    write = argv[2] == "write"
    problems, total = [], 0
    for path in argv[3:]:
        p, n = process(build, path, write)
        problems += p
        total += n
    for p in problems:
        print(p)
    print(f"docs-examples: {total} examples in {len(argv) - 3} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
