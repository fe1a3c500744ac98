# Launches from Python on the host backend: arguments by position and name,
# tuple and callable grids, constexprs, launch options, the bound launch
# handle, explicit streams, globals, and results checked against NumPy.
#
# RUN: rm -rf %t.cache && env KJIT_CACHE_DIR=%t.cache %kjit-python %s %examples

import os
import sys

import numpy as np

import kjit

examples = sys.argv[1]
mod = kjit.load(os.path.join(examples, "vector_add.mlir"))
add = mod.add
assert add is mod.kernel("add") and mod.kernels == {"add": add}
assert [p["name"] for p in add.params] == ["x", "y", "out", "n", "BLOCK"]
assert add.params[4]["default"] == 1024 and add.params[0]["const"]

rng = np.random.default_rng(1)
n = 5000
x = rng.random(n, dtype=np.float32)
y = rng.random(n, dtype=np.float32)
out = np.zeros(n, np.float32)

# A callable grid sees every bound argument, the constexpr's default too.
seen = []


def grid(meta):
    seen.append(dict(meta))
    return (kjit.cdiv(meta["n"], meta["BLOCK"]),)


add[grid](x, y, out, n)
np.testing.assert_array_equal(out, x + y)
assert seen[0]["BLOCK"] == 1024 and seen[0]["n"] == n and seen[0]["x"] is x

# By name, with a constexpr and launch options as keywords.
out[:] = 0
add[grid](x, y, n=n, out=out, BLOCK=256, num_warps=2)
np.testing.assert_array_equal(out, x + y)
assert seen[-1]["BLOCK"] == 256

# A tuple grid, and the same launcher object again for the same grid.
out[:] = 0
g = (kjit.cdiv(n, 1024),)
assert add[g] is add[g]
add[g](x, y, out, n)
np.testing.assert_array_equal(out, x + y)

# launch() with an explicit stream (ignored by the host backend).
out[:] = 0
add.launch(g, x, y, out, n, stream=0)
np.testing.assert_array_equal(out, x + y)



def specializations():
    stats = add.stats()["host"]
    return stats["compiles"] + stats["disk_hits"]


# Compiled (or found on disk): BLOCK=1024 and BLOCK=256 over aligned arrays.
assert specializations() == 2, add.stats()

# The bound handle: replays, then takes new leading arguments.
out[:] = 0
h = add.bind(g, x, y, out, n)
assert not out.any()  # bind launches nothing
h()
np.testing.assert_array_equal(out, x + y)
x2 = rng.random(n, dtype=np.float32)
y2 = rng.random(n, dtype=np.float32)
h(x2, y2)
np.testing.assert_array_equal(out, x2 + y2)
h()  # the new arguments stay bound
np.testing.assert_array_equal(out, x2 + y2)
assert specializations() == 2

# An unaligned view is another specialization, and runs correctly.
xs, ys, outs = x[1:], y[1:], np.zeros(n - 1, np.float32)
add[grid](xs, ys, outs, n - 1)
np.testing.assert_array_equal(outs, xs + ys)
assert specializations() == 3

# A read-only array is taken by a kjit.const parameter (x, y) and refused
# where the kernel may write (out), before anything is launched.
ro = x.copy()
ro.flags.writeable = False
out[:] = 0
add[grid](ro, y, out, n)
np.testing.assert_array_equal(out, ro + y)
frozen = np.zeros(n, np.float32)
frozen.flags.writeable = False
for call in (lambda: add[grid](x, y, frozen, n), lambda: add[grid](x, y, n=n, out=frozen),
             lambda: add[grid](x, y, bytes(4 * n), n)):
    try:
        call()
        raise AssertionError("read-only memory was passed where the kernel writes")
    except kjit.ArgumentError as error:
        assert "argument 'out'" in str(error) and "read-only tensor" in str(error), error
assert not frozen.any()

# NumPy integer and float scalars are values, not memory.
out[:] = 0
add[grid](x, y, out, np.int32(n))
np.testing.assert_array_equal(out, x + y)

# An empty grid runs no program and is no error.
out[:] = 0
add[(0,)](x, y, out, n)
assert not out.any()

# saxpy: a float scalar, and the IR given as text.
with open(os.path.join(examples, "saxpy.mlir")) as f:
    text = f.read()
saxpy_mod = kjit.load(text, name="saxpy-from-text")
assert "saxpy-from-text" in repr(saxpy_mod)
saxpy = saxpy_mod.saxpy
ys = y.copy()
saxpy[lambda m: (kjit.cdiv(m["n"], m["BLOCK"]),)](2.5, x, ys, n)
np.testing.assert_allclose(ys, np.float32(2.5) * x + y, rtol=1e-6)

# Globals: a kernel that baked a global refuses a changed one by default,
# and a module's globals read back as text.
gmod = kjit.load(os.path.join(examples, "scaled_residual.mlir"))
kernel = gmod.scaled_residual
yr = y.copy()
kernel[(kjit.cdiv(n, 256),)](x, yr, n)
np.testing.assert_allclose(yr, y + (x * np.float32(0.5) + np.float32(1.0)), rtol=1e-6)
assert gmod.get_global("SCALE").startswith("0.5"), gmod.get_global("SCALE")
gmod.set_global("SCALE", 2.0)
try:
    kernel[(kjit.cdiv(n, 256),)](x, yr, n)
    raise AssertionError("a changed global was not noticed")
except kjit.Error as error:
    assert "SCALE" in str(error), error
print("launch: OK")
