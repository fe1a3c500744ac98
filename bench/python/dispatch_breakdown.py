"""Where a Python launch's time goes, without a GPU: the cost of each layer
of `kernel[grid](...)` on a cache hit, measured with the null backend
(bench/NullBackend.c: a backend whose launch does nothing), so that what is
left is Python's call, the argument reading, the GIL hand-off, the binder
and the runtime's replay.

    KJIT_PLUGINS=build/bench/libkjit-bench-null-backend.so \\
    PYTHONPATH=build/python python3 bench/python/dispatch_breakdown.py

Rows (nanoseconds per call, median of interleaved rounds, min-max):
  python call     a METH_FASTCALL builtin with the same arguments (len of a
                  tuple is too cheap; kjit.dtype's __eq__ is no better): the
                  floor any C extension pays, measured with `isinstance`
  read arguments  kernel.bind(...) refused after reading (no launch): not
                  separable from the binder, so see the next rows
  bound h()       the bound handle: vectorcall, GIL release, runtime replay
  k[grid](...)    the full launch with argument reading
The C++ runtime's own share on the same null backend is kjit-bench-dispatch's
(build/bin/kjit-bench-dispatch), printed at the end when it is built.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import kjit

KERNELS = """
kjit.kernel @one(%x: !kjit.ptr<f32>) {
  kjit.return
}
kjit.kernel @eight(%a: !kjit.ptr<f32>, %b: !kjit.ptr<f32>, %c: !kjit.ptr<f32>,
                   %d: !kjit.ptr<f32>, %n: i32, %m: i32, %s: i32, %k: i32) {
  kjit.return
}
"""


def per_call(function, iterations):
    start = time.perf_counter_ns()
    function(iterations)
    return (time.perf_counter_ns() - start) / iterations


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    if "null-backend" not in os.environ.get("KJIT_PLUGINS", ""):
        sys.exit("dispatch_breakdown: set KJIT_PLUGINS to "
                 "build/bench/libkjit-bench-null-backend.so")

    mod = kjit.load(KERNELS, name="breakdown.mlir")
    one, eight = mod.one, mod.eight
    a, b, c, d = (np.zeros(64, np.float32) for _ in range(4))
    grid = (1,)
    one[grid](a)
    eight[grid](a, b, c, d, 1, 2, 3, 4)
    bound_one = one.bind(grid, a)
    bound_eight = eight.bind(grid, a, b, c, d, 1, 2, 3, 4)
    isinstance_ = isinstance

    def python_call_1(n):
        for _ in range(n):
            isinstance_(a, int)

    def python_call_8(n):
        f = max
        for _ in range(n):
            f(1, 2, 3, 4, 5, 6, 7, 8)

    def empty_loop(n):
        for _ in range(n):
            pass

    def launch_1(n):
        k = one
        for _ in range(n):
            k[grid](a)

    def launch_8(n):
        k = eight
        for _ in range(n):
            k[grid](a, b, c, d, 1, 2, 3, 4)

    def bound_1(n):
        h = bound_one
        for _ in range(n):
            h()

    def bound_8(n):
        h = bound_eight
        for _ in range(n):
            h()

    rows = {"empty loop": empty_loop, "python call (1 arg)": python_call_1,
            "python call (8 args)": python_call_8, "bound h() 1 arg": bound_1,
            "bound h() 8 args": bound_8, "k[grid](...) 1 tensor": launch_1,
            "k[grid](...) 4 tensors + 4 ints": launch_8}
    samples = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, function in rows.items():
            samples[name].append(per_call(function, args.iterations))
    print(f"{'row':34} {'ns/call':>9} {'min':>8} {'max':>8}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:34} {median:9.1f} {min(values):8.1f} {max(values):8.1f}")
        print(json.dumps({"bench": "python_dispatch_breakdown", "row": name,
                          "ns_median": round(median, 1), "ns_min": round(min(values), 1),
                          "ns_max": round(max(values), 1)}))
    bench = os.path.join(os.path.dirname(kjit.__file__), "..", "..", "bin",
                         "kjit-bench-dispatch")
    if os.path.exists(bench):
        result = subprocess.run([bench, "--benchmark_filter=^(oneArgument|eightArguments)/real_time/threads:1$",
                                 "--benchmark_min_time=0.2"],
                                capture_output=True, text=True)
        print(result.stdout[-800:])


if __name__ == "__main__":
    main()
