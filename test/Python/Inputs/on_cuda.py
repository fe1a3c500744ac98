"""The Python package on a CUDA GPU (run by scripts/run-on-gpu.sh; CI has no
GPU): launches on torch tensors checked against torch, streams, a CPU tensor
refused, the bound handle, hooks, CUDA-graph capture and replay, a miss
during capture refused with the capture left valid, torch.compile in both
modes through kjit.torch.custom_op, and a CuPy array.

    PYTHONPATH=BUNDLE/python python3 on_cuda.py BUNDLE/examples

Prints one line per check and exits non-zero if any failed.
"""

import os
import sys
import traceback

import torch

import kjit

examples = sys.argv[1] if len(sys.argv) > 1 else "examples"
mod = kjit.load(os.path.join(examples, "vector_add.mlir"))
add = mod.add
failures = []


def check(name):
    def wrap(function):
        try:
            function()
            print(f"PASS {name}")
        except Exception:
            failures.append(name)
            print(f"FAIL {name}")
            traceback.print_exc()
        return function
    return wrap


def grid(meta):
    return (kjit.cdiv(meta["n"], meta["BLOCK"]),)


def tensors(n, offset=0):
    x = torch.rand(n + offset, device="cuda")[offset:]
    y = torch.rand(n + offset, device="cuda")[offset:]
    return x, y, torch.empty_like(x)


@check("vector add on torch tensors, aligned and unaligned, several sizes")
def _():
    for n, offset in [(4096, 0), (5000, 0), (1, 0), (4097, 1), (1 << 20, 3)]:
        x, y, out = tensors(n, offset)
        add[grid](x, y, out, n)
        torch.cuda.synchronize()
        torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    x, y, out = tensors(3000)
    add[grid](x, y, n=3000, out=out, BLOCK=256, num_warps=2)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


@check("current stream and explicit stream= reach the launch")
def _():
    seen = []
    hook = lambda metadata: seen.append(metadata["stream"])  # noqa: E731
    kjit.knobs.launch_enter_hook.add(hook)
    try:
        x, y, out = tensors(4096)
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            add[grid](x, y, out, 4096)
        add.launch(grid, x, y, out, 4096, stream=s)
        add.launch(grid, x, y, out, 4096, stream=s.cuda_stream)
        s.synchronize()
        assert seen == [s.cuda_stream] * 3, (seen, s.cuda_stream)
        torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    finally:
        kjit.knobs.launch_enter_hook.remove(hook)


@check("a CPU tensor beside CUDA tensors is refused, naming it")
def _():
    x, y, out = tensors(64)
    try:
        add[grid](x, y.cpu(), out, 64)
        raise AssertionError("not refused")
    except kjit.ArgumentError as error:
        assert "argument 'y' (at 1) is on host:0" in str(error), error


@check("bound launch handle replays with new tensors")
def _():
    x, y, out = tensors(4096)
    h = add.bind(grid, x, y, out, 4096)
    h()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    x2, y2, _ = tensors(4096)
    h(x2, y2)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, x2 + y2, rtol=0, atol=0)


@check("compile hooks see cuda compiles")
def _():
    events = []
    kjit.knobs.compiled_hook = lambda **kw: events.append(kw)
    try:
        x, y, out = tensors(4096)
        add[grid](x, y, out, 4096, BLOCK=512, num_warps=8)
        assert events and events[0]["fn"].target == "cuda", events
        assert events[0]["compile"]["artifact_format"], events[0]["compile"]
    finally:
        kjit.knobs.compiled_hook = None


@check("CUDA graph: cached launches capture and replay bit-exactly")
def _():
    n = 4096
    x, y, out = tensors(n)
    add[grid](x, y, out, n)  # warm
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        with torch.cuda.graph(graph, stream=s):
            for _ in range(10):
                add[grid](x, y, out, n)
    out.zero_()
    x.copy_(torch.rand_like(x))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


@check("CUDA graph: a miss during capture is refused, the capture stays valid")
def _():
    n = 4096
    x, y, out = tensors(n)
    add[grid](x, y, out, n)  # warm the usual specialization
    graph = torch.cuda.CUDAGraph()
    refused = None
    with torch.cuda.graph(graph):
        try:
            add[grid](x, y, out, n, BLOCK=128, num_warps=1)  # never compiled
        except kjit.Error as error:
            refused = error
        add[grid](x, y, out, n)
    assert refused is not None and "warm up first" in str(refused), refused
    assert "is capturing a graph" in str(refused), refused
    out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


@check("torch.compile: fullgraph and reduce-overhead call the kjit op")
def _():
    import kjit.torch as kjit_torch
    op = kjit_torch.custom_op(add, "kjit_test::vector_add", grid=grid)

    def f(x, y):
        out = torch.empty_like(x)
        op(x, y, out, x.numel())
        return out * 2

    x, y, _ = tensors(8192)
    expected = (x + y) * 2
    torch.testing.assert_close(f(x, y), expected, rtol=0, atol=0)
    compiled = torch.compile(f, fullgraph=True)
    torch.testing.assert_close(compiled(x, y), expected, rtol=0, atol=0)
    overhead = torch.compile(f, mode="reduce-overhead", fullgraph=True)
    for _ in range(3):
        torch.testing.assert_close(overhead(x, y), expected, rtol=0, atol=0)


@check("a CuPy array launches")
def _():
    try:
        import cupy
    except ImportError:
        print("  (cupy not installed)")
        return
    n = 4096
    x = cupy.random.rand(n, dtype=cupy.float32)
    y = cupy.random.rand(n, dtype=cupy.float32)
    out = cupy.empty_like(x)
    add[grid](x, y, out, n)
    cupy.cuda.Device().synchronize()
    assert cupy.array_equal(out, x + y)


print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
