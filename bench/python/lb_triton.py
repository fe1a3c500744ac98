"""The Triton side of launch_bench.py and examples/python: the kernels kjit's
are measured against, with the same parameters in the same order.

Importing this module imports triton; callers treat an ImportError (or any
other failure) as "Triton is not here" and go on without it. @triton.jit
reads a kernel's source, so the kernels live in a file, not in a string.
"""

import triton
import triton.language as tl


@triton.jit
def e1(p):
    # Empty: the launch path alone (bench/python/empty.mlir's e1).
    pass


@triton.jit
def e8(a, b, c, d, n0, n1, n2, n3):
    # Empty, four pointers and four ints (empty.mlir's e8).
    pass


@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    # out = x + y over n elements; a program per BLOCK elements, as
    # examples/vector_add.mlir's add.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    a = tl.load(x + offsets, mask=inside)
    b = tl.load(y + offsets, mask=inside)
    tl.store(out + offsets, a + b, mask=inside)


@triton.jit
def softmax(inp, out, n_cols, stride, BLOCK: tl.constexpr):
    # Row-wise softmax, a program per row with the whole row in registers
    # (BLOCK >= n_cols), with examples/softmax.mlir's parameters.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < n_cols
    x = tl.load(inp + row * stride + cols, mask=inside, other=-float("inf"))
    shifted = x - tl.max(x, axis=0)
    e = tl.exp(shifted)
    tl.store(out + row * stride + cols, e / tl.sum(e, axis=0), mask=inside)


def softmax_config(n_cols):
    """BLOCK and num_warps for a row of n_cols: the row in one block, and
    the warps the existing anchors give Triton (8 up to 4096 columns, 16
    beyond), so that the figures compare with theirs."""
    return triton.next_power_of_2(n_cols), (8 if n_cols <= 4096 else 16)


version = triton.__version__
cdiv = triton.cdiv
