"""Vector add from Python on the host backend, checked against NumPy.

    PYTHONPATH=build/python python3 examples/python/vector_add_numpy.py

Launches examples/vector_add.mlir's `add` on NumPy arrays (CPU memory, so
the host backend runs it): by position with a callable grid, by name with
a constexpr and a launch option, on views that are not 16-byte aligned and
sizes that are not a multiple of the block, through a bound handle, and
after a warmup that compiled from dtypes alone. Every result is compared
with NumPy's x + y, exactly; each check prints one line, and the exit
status is 1 if any failed.
"""

import os
import sys

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: nothing to check")
    sys.exit(0)

import kjit

EXAMPLES = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
failures = 0


def report(what, got, want):
    global failures
    ok = np.array_equal(got, want)
    failures += not ok
    detail = "" if ok else f" (max |diff| {np.abs(got - want).max():.3g})"
    print(f"{'ok  ' if ok else 'FAIL'} {what}{detail}")


def grid(meta):
    # Every bound argument by name, BLOCK's default (1024) included.
    return (kjit.cdiv(meta["n"], meta["BLOCK"]),)


add = kjit.load(os.path.join(EXAMPLES, "vector_add.mlir")).add
rng = np.random.default_rng(7)

# By position; sizes on and off the block and the vector width.
for n in (4096, 5000, 3, 1):
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    add[grid](x, y, out, n)
    report(f"add[grid](x, y, out, {n})", out, x + y)

# By name, with the constexpr BLOCK and the launch option num_warps.
n = 10000
x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
out = np.zeros(n, np.float32)
add[grid](x, y, n=n, out=out, BLOCK=256, num_warps=2)
report(f"by name, BLOCK=256, num_warps=2, n={n}", out, x + y)

# Views one element in: not 16-byte aligned, a specialization of its own.
base_x = rng.random(n + 1, dtype=np.float32)
base_y = rng.random(n + 1, dtype=np.float32)
base_out = np.zeros(n + 1, np.float32)
add[grid](base_x[1:], base_y[1:], base_out[1:], n)
report(f"unaligned views, n={n}", base_out[1:], base_x[1:] + base_y[1:])

# Read-only inputs bind as const pointers, as the kernel declares x and y.
x.setflags(write=False)
y.setflags(write=False)
out[:] = 0
add[(kjit.cdiv(n, 1024),)](x, y, out, n)
report("read-only inputs, a tuple grid", out, x + y)

# A bound handle: h() launches again, h(x2, y2) with new leading arguments.
h = add.bind(grid, x, y, out, n)
out[:] = 0
h()
report("bound handle h()", out, x + y)
x2, y2 = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
h(x2, y2)
report("bound handle h(x2, y2)", out, x2 + y2)

# A warmup from dtypes compiles a specialization without launching; the
# launch that follows finds it (no new compile).
n = 2048
compiles_before = add.stats()["host"]["compiles"]
record = add.warmup(kjit.float32, kjit.float32, kjit.float32, n, BLOCK=512)
x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
out = np.zeros(n, np.float32)
add[grid](x, y, out, n, BLOCK=512)
report(f"after warmup ({record['key'].split(',')[0]}, BLOCK=512)", out, x + y)
compiles = add.stats()["host"]["compiles"] - compiles_before
# A warm disk cache (KJIT_CACHE_DIR) compiles nothing at all.
print(f"{'ok  ' if compiles <= 1 else 'FAIL'} warmup then launch compiled "
      f"{compiles} time(s) (at most once)")
failures += compiles > 1

print(f"{failures} failed" if failures else "all checks passed")
sys.exit(1 if failures else 0)
