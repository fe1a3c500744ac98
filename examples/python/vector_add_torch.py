"""Vector add on torch tensors: the kjit kernel beside the same kernel in
Triton, both checked against torch and against each other.

    PYTHONPATH=build/python python3 examples/python/vector_add_torch.py

kjit launches examples/vector_add.mlir's `add` as Triton launches a
@triton.jit function: `kernel[grid](x, y, out, n, ...)`. On a GPU the
tensors are CUDA tensors and both run there; without one, kjit runs the
same kernel on CPU tensors (the host backend) and Triton is left out, as it
is when it is not installed. Sizes cover a multiple of the block, a partial
last block, a tiny n and a view that is not 16-byte aligned. Results must
equal torch's x + y exactly. Each check prints one line; the exit status
is 1 if any failed.
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
    def triton_add(x, y, out, n, BLOCK: tl.constexpr):
        # The Triton spelling of examples/vector_add.mlir: a program per
        # BLOCK elements, masked at the end.
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        inside = offsets < n
        total = tl.load(x + offsets, mask=inside) + tl.load(y + offsets, mask=inside)
        tl.store(out + offsets, total, mask=inside)

EXAMPLES = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = 1024
failures = 0


def check(what, ok, detail=""):
    global failures
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {what}{'' if ok else ' ' + detail}")


def same(a, b):
    return bool(torch.equal(a, b))


def diff(a, b):
    return f"(max |diff| {(a - b).abs().max().item():.3g})"


device = "cuda" if torch.cuda.is_available() else "cpu"
use_triton = triton is not None and device == "cuda"
print(f"device: {device}; torch {torch.__version__}; Triton: "
      + (triton.__version__ if use_triton else
         "left out (" + (TRITON_MISSING or "needs a CUDA device") + ")"))

add = kjit.load(os.path.join(EXAMPLES, "vector_add.mlir")).add
grid = lambda meta: (kjit.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
generator = torch.Generator(device=device).manual_seed(0)

sizes = [(1 << 20, 0), (5000, 0), (7, 0), (4097, 1)]  # (n, offset of the view)
for n, offset in sizes:
    x = torch.rand(n + offset, device=device, generator=generator)[offset:]
    y = torch.rand(n + offset, device=device, generator=generator)[offset:]
    expected = x + y
    out = torch.empty_like(x)
    add[grid](x, y, out, n)
    if device == "cuda":
        torch.cuda.synchronize()
    label = f"n={n}" + (f", view at +{offset}" if offset else "")
    check(f"kjit   == torch  ({label})", same(out, expected), diff(out, expected))
    if use_triton:
        triton_out = torch.empty_like(x)
        triton_add[(triton.cdiv(n, BLOCK),)](x, y, triton_out, n, BLOCK=BLOCK)
        torch.cuda.synchronize()
        check(f"triton == torch  ({label})", same(triton_out, expected),
              diff(triton_out, expected))
        check(f"kjit   == triton ({label})", same(out, triton_out),
              diff(out, triton_out))

# The same kernel on a side stream, and replayed through a bound handle.
n = 1 << 16
x = torch.rand(n, device=device, generator=generator)
y = torch.rand(n, device=device, generator=generator)
out = torch.zeros_like(x)
if device == "cuda":
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        add[grid](x, y, out, n)  # on `side`: the current stream
    side.synchronize()
    check("kjit on a side stream == torch", same(out, x + y), diff(out, x + y))
handle = add.bind(grid, x, y, out, n)
x2, y2 = torch.rand_like(x), torch.rand_like(y)
handle(x2, y2)
if device == "cuda":
    torch.cuda.synchronize()
check("kjit bound handle h(x2, y2) == torch", same(out, x2 + y2), diff(out, x2 + y2))

print(f"{failures} failed" if failures else "all checks passed")
sys.exit(1 if failures else 0)
