#!/usr/bin/env python3
"""A fleet cache hit against a local compile of the same kernel, and what an
unreachable store adds to a launch, side by side in one run
(docs/RemoteCache.md).

    bench/remote-cache/remote-hit.py [--build build] [--runs 20] [--store redis|dir]

Each round runs kjit-run on the vector add, in turn:
  compile       no store, fresh disk cache: analyse, compile, launch
  remote-hit    the store holds the kernel, fresh disk cache: fetch, verify,
                write to disk, load, launch (no compile)
  disk-hit      the kernel on disk already (the store is not asked)
and with --store redis also:
  refused       KJIT_REDIS_URL names a port nobody listens on: connect
                refused, then the compile
  stalled       a server that accepts and never answers: one operation
                timeout (KJIT_REDIS_TIMEOUT, 250ms here), then the compile
The figure is the process's wall time (spawn to exit) and kjit-run's own
"first launch" time is not used: the fleet lookup happens inside the first
launch. Medians with the 10th and 90th percentiles; rounds interleave the
cases so that the machine's noise hits them alike. --store dir uses the
tests' directory store (no Redis needed)."""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "..", "build"))
parser.add_argument("--runs", type=int, default=20)
parser.add_argument("--store", choices=("redis", "dir"), default="redis")
args = parser.parse_args()
build = os.path.abspath(args.build)
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
kjit_run = os.path.join(build, "bin", "kjit-run")
kernel = os.path.join(root, "examples", "vector_add.mlir")
run_args = [kjit_run, kernel, "--kernel", "add", "--grid", "4", "--arg", "x=f32[4096]:random:const",
            "--arg", "y=f32[4096]:arange:const", "--arg", "out=f32[4096]:zeros", "--arg", "n=4096"]

work = tempfile.mkdtemp(prefix="kjit-remote-bench-")
key_file = os.path.join(work, "key")
with open(key_file, "w") as f:
    f.write(os.urandom(32).hex() + "\n")
os.chmod(key_file, 0o600)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


server = None
stall_port = None
if args.store == "redis":
    plugin = os.path.join(build, "lib", "libkjit-redis.so")
    if not os.path.exists(plugin) or not shutil.which("redis-server"):
        sys.exit("needs %s and redis-server (or --store dir)" % plugin)
    port = free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no", "--dir", work],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    store_env = {"KJIT_REDIS_URL": "redis://127.0.0.1:%d/0" % port}
    # A listener that accepts and never answers.
    stall = socket.socket()
    stall.bind(("127.0.0.1", 0))
    stall.listen(64)
    stall_port = stall.getsockname()[1]
    held = []
    threading.Thread(target=lambda: [held.append(stall.accept()) for _ in iter(int, 1)],
                     daemon=True).start()
else:
    plugin = os.path.join(build, "test", "RemoteCache", "bin", "libkjit-test-dirstore.so")
    store_dir = os.path.join(work, "store")
    os.makedirs(store_dir)
    store_env = {"KJIT_TEST_STORE_DIR": store_dir}


def run(case, disk, extra_env, with_store=True):
    env = dict(os.environ)
    env.update({"KJIT_CACHE_DIR": disk, "KJIT_REDIS_KEY_FILE": key_file,
                "KJIT_REDIS_TIMEOUT": "250ms", "KJIT_REDIS_CONNECT_TIMEOUT": "250ms"})
    env.update(extra_env)
    argv = run_args + (["--load-plugin", plugin] if with_store else [])
    start = time.monotonic()
    out = subprocess.run(argv, env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - start
    if out.returncode != 0:
        sys.exit("%s failed:\n%s%s" % (case, out.stdout, out.stderr))
    first = [l for l in out.stdout.splitlines() if l.startswith("first launch:")]
    return elapsed * 1000, first[0] if first else "?"


expect = {"compile": "compiled", "remote-hit": "remote hit", "disk-hit": "disk hit",
          "refused": "compiled", "stalled": "compiled"}
times = {case: [] for case in expect}
# Publish once, so that the store holds the kernel.
run("publish", os.path.join(work, "publisher"), store_env)
for i in range(args.runs):
    fresh = lambda name: os.path.join(work, "%s-%d" % (name, i))
    cases = [("compile", fresh("compile"), {}, False),
             ("remote-hit", fresh("remote"), store_env, True),
             ("disk-hit", os.path.join(work, "publisher"), store_env, True)]
    if server:
        cases += [("refused", fresh("refused"),
                   {"KJIT_REDIS_URL": "redis://127.0.0.1:%d/0" % free_port()}, True),
                  ("stalled", fresh("stalled"),
                   {"KJIT_REDIS_URL": "redis://127.0.0.1:%d/0" % stall_port}, True)]
    for case, disk, env, with_store in cases:
        ms, first = run(case, disk, env, with_store)
        if expect[case] not in first:
            sys.exit("%s: expected '%s', got '%s'" % (case, expect[case], first))
        times[case].append(ms)

print("kjit fleet cache, vector add, %d rounds, store: %s (process wall time, ms)" %
      (args.runs, args.store))
print("%-12s %8s %8s %8s" % ("case", "median", "p10", "p90"))
for case, values in times.items():
    if not values:
        continue
    values.sort()
    p = lambda q: values[min(len(values) - 1, int(q * len(values)))]
    print("%-12s %8.1f %8.1f %8.1f" % (case, statistics.median(values), p(0.1), p(0.9)))
median = {c: statistics.median(v) for c, v in times.items() if v}
print("remote hit / compile: %.2f" % (median["remote-hit"] / median["compile"]))
if "refused" in median:
    print("added by a refused port: %+.1f ms; by a stalled server: %+.1f ms (vs compile)" %
          (median["refused"] - median["compile"], median["stalled"] - median["compile"]))
if server:
    server.terminate()
    server.wait()
shutil.rmtree(work, ignore_errors=True)
