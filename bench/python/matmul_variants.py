"""Compiled variants of the bf16 matmul side by side: cubins that kjit-opt
wrote (from one lowering and another, or edited by hand) launched through
the driver, interleaved with Triton's anchor kernel and torch.matmul in
the same rounds as bench/python/matmul_bench.py. For A/B comparisons of a
lowering change in one run on one card, where two bundles cannot be.

Make a variant on the build machine (a record from a host warmup, then the
cuda pipeline and ptxas; the record's divisibility must hold for the
shapes timed: every size and stride a multiple of 16):

    kjit-run examples/matmul_bf16.mlir --kernel matmul_bf16 --warmup \\
        --grid 4 --option num_warps=8 --option num_stages=3 \\
        --arg a=bf16[256,64]:random:const --arg b=bf16[64,256]:random:const \\
        --arg c=bf16[256,256]:zeros --arg M=256 --arg N=256 --arg K=64 \\
        --arg stride_am=64 --arg stride_bk=256 --arg stride_cm=256 \\
        --record-out r.json
    kjit-opt examples/matmul_bf16.mlir \\
        --kjit-cuda-pipeline='record=r.json artifact=DIR/NAME.ptx' -o /dev/null
    ptxas -arch=sm_90a DIR/NAME.ptx -o DIR/NAME.cubin

then on the GPU machine:

    python3 bench/python/matmul_variants.py DIR [--anchors DIR] [--rounds N]

Each DIR/NAME.cubin launches with the dynamic shared memory of
DIR/NAME.ptx.json (kjit's compile metadata). Every result is checked
against an fp32 torch product first (also at 1008^3, whose tiles have
edges); one JSON line per shape with TFLOP/s and the ratio to Triton.
"""

import argparse
import ctypes
import json
import statistics
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import lb_common as common  # noqa: E402
from matmul_bench import (  # noqa: E402
    SHAPES, TOLERANCE, load_triton, relative_error, reps_for, timed_rounds)

# CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
MAX_DYNAMIC_SHARED = 8


def cdiv(a, b):
    return (a + b - 1) // b


def checked(result, what):
    if result != 0:
        raise RuntimeError(f"{what}: CUresult {result}")


def load_variants(directory, cuda):
    """{name: (function, dynamic shared bytes)} of every cubin in
    `directory`, in name order."""
    variants = {}
    for cubin in sorted(Path(directory).glob("*.cubin")):
        meta = json.loads(cubin.with_suffix(".ptx.json").read_text())
        module, function = ctypes.c_void_p(), ctypes.c_void_p()
        checked(cuda.cuModuleLoad(ctypes.byref(module), bytes(cubin)),
                f"loading {cubin}")
        checked(cuda.cuModuleGetFunction(ctypes.byref(function), module,
                                         meta["kernel"].encode()),
                f"{meta['kernel']} in {cubin}")
        shared = meta["shared_dynamic_bytes"]
        checked(cuda.cuFuncSetAttribute(function, MAX_DYNAMIC_SHARED, shared),
                f"{shared} bytes of dynamic shared memory for {cubin}")
        variants[cubin.stem] = (function, shared, meta["num_warps"])
    return variants


def variant_launcher(cuda, function, shared, warps, x, y, out):
    M, K = x.shape
    N = y.shape[1]
    values = [ctypes.c_uint64(t.data_ptr()) for t in (x, y, out)] + [
        ctypes.c_int32(v) for v in (M, N, K, x.stride(0), y.stride(0),
                                    out.stride(0))]
    params = (ctypes.c_void_p * len(values))(
        *[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in values])
    grid = cdiv(M, 128) * cdiv(N, 256)

    def launch():
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        checked(cuda.cuLaunchKernel(function, grid, 1, 1, 32 * warps, 1, 1,
                                    shared, stream, params, None), "launch")
    launch.keep = (values, params)  # the parameters outlive the launches
    return launch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", help="folder of NAME.cubin and "
                        "NAME.ptx.json")
    parser.add_argument("--anchors", default=str(common.REPO / ".anchors"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    torch.zeros(1, device="cuda")  # the primary context, current
    cuda = ctypes.CDLL("libcuda.so.1")
    variants = load_variants(args.variants, cuda)
    triton_launch = load_triton(args.anchors)
    torch.manual_seed(0)
    for M, N, K in [(1008, 1008, 1008)] + SHAPES:
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        y = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        want = x.float() @ y.float()
        outs, launches = {}, {}
        for name, (function, shared, warps) in variants.items():
            outs[name] = torch.zeros(M, N, device="cuda", dtype=torch.bfloat16)
            launches[name] = variant_launcher(cuda, function, shared, warps,
                                              x, y, outs[name])
        outs["triton"] = torch.zeros(M, N, device="cuda", dtype=torch.bfloat16)
        if triton_launch:
            launches["triton"] = (
                lambda out=outs["triton"]: triton_launch(x, y, out))
        outs["torch"] = torch.zeros(M, N, device="cuda", dtype=torch.bfloat16)
        launches["torch"] = lambda: torch.matmul(x, y, out=outs["torch"])
        for launch in launches.values():
            launch()
        torch.cuda.synchronize()
        errors = {name: relative_error(outs[name], want) for name in launches}
        line = {"M": M, "N": N, "K": K,
                "ok": {name: error <= TOLERANCE
                       for name, error in errors.items()}}
        if M != 1008:
            flop = 2.0 * M * N * K
            times = timed_rounds(launches, args.rounds, reps_for(flop))
            tflops = {name: round(flop / statistics.median(t) / 1e9, 1)
                      for name, t in times.items()}
            line["tflops"] = tflops
            if "triton" in tflops:
                line["vs_triton"] = {name: round(v / tflops["triton"], 3)
                                     for name, v in tflops.items()}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
