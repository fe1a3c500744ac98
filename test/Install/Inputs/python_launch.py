"""Imports kjit from wherever PYTHONPATH points and runs the vector add on
NumPy arrays, checked against NumPy."""
import os
import sys

import numpy as np

import kjit

print("kjit from", kjit.__file__)
mod = kjit.load(os.path.join(sys.argv[1], "vector_add.mlir"))
x = np.arange(4096, dtype=np.float32)
y = np.full(4096, 0.5, np.float32)
out = np.zeros_like(x)
mod.add[(4,)](x, y, out, 4096)
assert (out == x + y).all()
print("vector add:", int((out == x + y).sum()), "elements equal")
