"""Row-wise softmax on torch tensors: the kjit kernel beside the same kernel
in Triton, both checked against torch.softmax and against each other.

    PYTHONPATH=build/python python3 examples/python/softmax_torch.py

examples/softmax.mlir's `softmax(in, out, n_cols, stride)` runs one
program per row (grid = rows); its row stays in registers when
1024 * num_warps columns cover it, so each launch picks the smallest
power-of-two num_warps that does. The shapes cover a row that fits one
warp, a ragged one (n_cols % 4 != 0), a row longer than one pass of its
threads (num_warps forced to 1: the kernel's online two-pass path), and
rows of a wider matrix (stride > n_cols). The Triton kernel keeps a whole
row in one block. On a GPU both run on CUDA tensors; without one, kjit
runs on CPU tensors (the host backend) and Triton is left out, as it is
when not installed. Each check prints one line; the exit status is 1 if
any failed.
"""

import os
import sys

try:
    import torch
except ImportError:
    print("torch is not installed: nothing to check")
    sys.exit(0)

import kjit

try:
    import triton
    import triton.language as tl
    TRITON_MISSING = None
except Exception as exc:  # not installed, or no usable backend here
    triton = None
    TRITON_MISSING = f"{type(exc).__name__}: {exc}"

if triton is not None:
    @triton.jit
    def triton_softmax(inp, out, n_cols, stride, BLOCK: tl.constexpr):
        # One program per row, the row in one block of BLOCK >= n_cols.
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        inside = cols < n_cols
        x = tl.load(inp + row * stride + cols, mask=inside, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out + row * stride + cols, e / tl.sum(e, axis=0), mask=inside)

EXAMPLES = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# softmax.mlir computes exp as exp2 (one ex2.approx per element on the GPU),
# within a few ulp of torch: absolute error on values at most 1.
TOLERANCE = 1e-5
failures = 0


def check(what, error, tolerance):
    global failures
    ok = error <= tolerance
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {what}: max |diff| {error:.2e}"
          f" (<= {tolerance:.0e})")


def kjit_warps(n_cols):
    """The smallest power of two whose 1024 * num_warps columns cover a row."""
    warps = 1
    while warps < 32 and warps * 1024 < n_cols:
        warps *= 2
    return warps


def max_diff(a, b):
    return (a.double() - b.double()).abs().max().item()


device = "cuda" if torch.cuda.is_available() else "cpu"
use_triton = triton is not None and device == "cuda"
print(f"device: {device}; torch {torch.__version__}; Triton: "
      + (triton.__version__ if use_triton else
         "left out (" + (TRITON_MISSING or "needs a CUDA device") + ")"))

softmax = kjit.load(os.path.join(EXAMPLES, "softmax.mlir")).softmax
generator = torch.Generator(device=device).manual_seed(0)

# (rows, n_cols, stride, num_warps or None for kjit_warps(n_cols))
cases = [(256, 1024, 1024, None), (100, 781, 781, None),
         (32, 5000, 5000, 1), (64, 3000, 3200, None)]
if device == "cuda":
    cases.append((4096, 4096, 4096, None))
for rows, n_cols, stride, forced_warps in cases:
    warps = forced_warps or kjit_warps(n_cols)
    # Rows of a [rows, stride] matrix, n_cols of each used: in and out
    # share the stride, as the kernel's single `stride` parameter says.
    full = torch.randn(rows, stride, device=device, generator=generator) * 3
    a = full[:, :n_cols]
    expected = torch.softmax(a, dim=1)
    out_full = torch.zeros(rows, stride, device=device)
    out = out_full[:, :n_cols]
    softmax[(rows,)](a, out, n_cols, stride, num_warps=warps)
    if device == "cuda":
        torch.cuda.synchronize()
    label = f"{rows}x{n_cols}" + (f" stride {stride}" if stride != n_cols else "")
    label += f", num_warps={warps}"
    check(f"kjit   vs torch  ({label})", max_diff(out, expected), TOLERANCE)
    untouched = bool((out_full[:, n_cols:] == 0).all())
    print(f"{'ok  ' if untouched else 'FAIL'} kjit left the columns past n_cols alone"
          f" ({label})")
    failures += not untouched
    if use_triton:
        triton_full = torch.zeros(rows, stride, device=device)
        triton_out = triton_full[:, :n_cols]
        block = triton.next_power_of_2(n_cols)
        triton_softmax[(rows,)](a, triton_out, n_cols, stride, BLOCK=block,
                                num_warps=8 if n_cols <= 4096 else 16)
        torch.cuda.synchronize()
        check(f"triton vs torch  ({label})", max_diff(triton_out, expected), TOLERANCE)
        check(f"kjit   vs triton ({label})", max_diff(out, triton_out), 2 * TOLERANCE)

print(f"{failures} failed" if failures else "all checks passed")
sys.exit(1 if failures else 0)
