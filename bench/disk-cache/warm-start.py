#!/usr/bin/env python3
"""Process start to the first launch finished, warm disk cache against cold,
against an empty C program, side by side in one run (docs/DiskCache.md).

    bench/disk-cache/warm-start.py [--build build] [--runs 40] [--backend cuda]
                                   [--bin BUNDLE/bin]

Each round starts, in turn:
  empty        build/bin/kjit-bench-empty: a C program that does nothing
  help         kjit-run --help: kjit's libraries loaded, nothing else
  cold         kjit-bench-warm-start with KJIT_CACHE_DIR= (no disk cache):
               parse, load LLVM, compile, launch (what every process did
               before the disk cache)
  warm         kjit-bench-warm-start on a warm cache: manifest and kernel
               from the disk, no compiler
  run-cold     kjit-run launching the vector add, no disk cache
  run-warm     kjit-run launching the vector add, warm cache
"first kernel" is Module::load plus the first launch inside a process
whose backend (a CUDA context) exists and has given its fingerprint ("warm
fingerprint", once per process); "later kernel" the first launch of a
second specialization (both found on disk). For kjit-bench-warm-start,
"first launch" is from the spawn (this script's
CLOCK_MONOTONIC before it starts the process) to the end of the first
launch (the program's CLOCK_MONOTONIC, printed); "process" is spawn to
exit. Medians with the 10th and 90th percentiles; the rounds interleave the
programs so that the machine's noise hits them alike."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "..", "build"))
parser.add_argument("--runs", type=int, default=40)
parser.add_argument("--backend", default="", help="a target other than the build's (cuda)")
parser.add_argument("--bin", default="", help="the programs' folder (a device bundle's bin/)")
args = parser.parse_args()
target = [args.backend] if args.backend else []
build = os.path.abspath(args.build)
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
kernel = os.path.join(root, "examples", "vector_add.mlir")
bin_dir = os.path.abspath(args.bin) if args.bin else os.path.join(build, "bin")
bench = os.path.join(bin_dir, "kjit-bench-warm-start")
empty = os.path.join(bin_dir, "kjit-bench-empty")
kjit_run = os.path.join(bin_dir, "kjit-run")
if not os.path.exists(kernel):
    kernel = os.path.join(os.path.dirname(bin_dir), "examples", "vector_add.mlir")
run_args = [kjit_run, kernel, "--kernel", "add", "--grid", "4", "--arg", "x=f32[4096]:random:const",
            "--arg", "y=f32[4096]:arange:const", "--arg", "out=f32[4096]:zeros", "--arg", "n=4096"]
if args.backend:
    run_args += ["--backend", args.backend]
for program in (bench, empty, kjit_run):
    if not os.access(program, os.X_OK):
        sys.exit("missing %s: build the benchmarks first (cmake --build build)" % program)

cache = tempfile.mkdtemp(prefix="kjit-warm-start-")
cache_dir = os.path.join(cache, "cache")
base_env = dict(os.environ)
for name in list(base_env):
    if name.startswith("KJIT_"):
        del base_env[name]
cold_env = dict(base_env, KJIT_CACHE_DIR="")
warm_env = dict(base_env, KJIT_CACHE_DIR=cache_dir)


def spawn(argv, env, first_launch=False):
    start = time.monotonic_ns()
    done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic_ns()
    if done.returncode != 0:
        sys.exit("%s failed:\n%s%s" % (" ".join(argv), done.stdout, done.stderr))
    first = None
    facts = {}
    for line in done.stdout.splitlines():
        key, _, value = line.partition(" ")
        facts[key] = value
    if first_launch:
        first = (int(facts["first_launch_done_ns"]) - start) / 1e6
    return first, (end - start) / 1e6, facts


# Warm the cache (and the page cache) once.
spawn([bench, kernel] + target, warm_env, True)
_, _, facts = spawn([bench, kernel] + target, warm_env, True)
if facts.get("source") != "disk" or facts.get("compiler") != "not-loaded":
    sys.exit("the cache is not warm: %s" % facts)
spawn(run_args, warm_env)

samples = {name: [] for name in ("empty", "help", "cold first launch", "cold process",
                                 "warm first launch", "warm process", "warm fingerprint", "warm first kernel",
                                 "warm later kernel", "run-cold process", "run-warm process")}
for _ in range(args.runs):
    samples["empty"].append(spawn([empty], base_env)[1])
    samples["help"].append(spawn([kjit_run, "--help"], base_env)[1])
    first, whole, facts = spawn([bench, kernel] + target, cold_env, True)
    assert facts["source"] == "compiled", facts
    samples["cold first launch"].append(first)
    samples["cold process"].append(whole)
    first, whole, facts = spawn([bench, kernel] + target, warm_env, True)
    assert facts["source"] == "disk" and facts["later_source"] == "disk", facts
    assert facts["compiler"] == "not-loaded", facts
    samples["warm first launch"].append(first)
    samples["warm process"].append(whole)
    samples["warm fingerprint"].append(int(facts["fingerprint_ns"]) / 1e6)
    samples["warm first kernel"].append(int(facts["first_kernel_ns"]) / 1e6)
    samples["warm later kernel"].append(int(facts["later_kernel_ns"]) / 1e6)
    samples["run-cold process"].append(spawn(run_args, cold_env)[1])
    samples["run-warm process"].append(spawn(run_args, warm_env)[1])
shutil.rmtree(cache)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


print("%d rounds, %s, %d CPUs; milliseconds" % (args.runs, os.uname().machine, os.cpu_count()))
print("%-22s %8s %8s %8s" % ("", "median", "p10", "p90"))
for name, values in samples.items():
    print("%-22s %8.1f %8.1f %8.1f" % (name, statistics.median(values), percentile(values, 10),
                                     percentile(values, 90)))
cold = statistics.median(samples["cold first launch"])
warm = statistics.median(samples["warm first launch"])
print("warm first launch is %.0fx faster than cold; %.1f ms above an empty C program"
      % (cold / warm, warm - statistics.median(samples["empty"])))
