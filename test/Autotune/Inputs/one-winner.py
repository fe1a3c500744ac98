"""Starts N kjit-run processes at once on one disk cache, each tuning the
same eight configurations on a fake clock that makes a different one the
fastest (process i: configuration i), and prints each process's autotune
lines (its log and its summary), one process after another
(test/Autotune/one-winner-disk.test).

    one-winner.py KERNEL-FILE CACHE-DIR N [--separate] [ARGS...]

The key is n=7, or $ONE_WINNER_N.

--separate: each process has a disk cache of its own (CACHE-DIR.0, ...),
as processes on separate machines do; ARGS go to every kjit-run (a store
plugin to load)."""
import json
import os
import subprocess
import sys

kernel, cache, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
separate = sys.argv[4:5] == ["--separate"]
extra = sys.argv[5 if separate else 4:]
work = os.path.dirname(cache.rstrip("/"))
os.makedirs(work, exist_ok=True)
processes = []
for i in range(count):
    spec = {"configs": [{"C": c + 1} for c in range(8)], "key": ["n"],
            "fake_launch_ns": [1000 if c == i % 8 else 2000 + 100 * c
                               for c in range(8)]}
    path = os.path.join(work, "process%d.json" % i)
    with open(path, "w") as out:
        json.dump(spec, out)
    env = dict(os.environ, KJIT_LOG="autotune",
               KJIT_CACHE_DIR=cache + (".%d" % i if separate else ""))
    processes.append(subprocess.Popen(
        ["kjit-run", kernel, "--kernel", "count", "--autotune", path,
         "--arg", "o=i32[2]:zeros",
         "--arg", "n=" + os.environ.get("ONE_WINNER_N", "7")] + extra,
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
failed = 0
for i, process in enumerate(processes):
    output, _ = process.communicate()
    print("== process %d (exit %d)" % (i, process.returncode))
    for line in output.splitlines():
        if "autotune" in line or "warning" in line:
            print(line)
    failed += process.returncode != 0
sys.exit(1 if failed else 0)
