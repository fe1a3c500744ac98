"""C = A @ B in bf16 on the GPU: kjit's examples/matmul_bf16.mlir against
Triton (the anchor's autotuned kernel, anchors/triton_matmul.py) and
torch.matmul (cuBLAS).

    PYTHONPATH=<bundle>/python python3 bench/python/matmul_bench.py \
        [--anchors DIR] [--rounds N] [MxNxK ...]

For each shape (default 4096^3, 8192^3 and 8192x1024x8192; A and B
row-major, torch.randn): every implementation's result is first checked
against an fp32 torch product (max |diff| relative to the largest |entry|
of the reference, at most 2^-7: one bf16 rounding of the output plus the
summation order), then timed in interleaved rounds (kjit, Triton, torch,
kjit, ...): a round is `reps` launches between two CUDA events, the figure
the median round, as TFLOP/s = 2 M N K / time. It also reports kjit's
first launch of each specialization (num_stages, shape class): the first
of the process loads the compiler library, all compile unless the disk
cache has them (run it with CUDA_CACHE_DISABLE=1 and an empty KJIT_CACHE_DIR
for compile figures: nvJitLink, which finalizes the later ones, keeps a
cache of its own across processes).
One JSON line per figure, a summary table at the end. Triton's kernel comes
from the anchor file, whose timing loop is not run (its source up to
`shapes =` is executed); without Triton or the anchor, kjit and torch only.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import lb_common as common  # noqa: E402

BLOCK_M = 128
TOLERANCE = 2.0 ** -7
# The shapes timed by default (M, N, K).
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 1024, 8192)]


def emit(**fields):
    print(json.dumps(fields), flush=True)


def anchor_namespace(anchors):
    """The globals of the anchor file's source up to `shapes =` (its
    kernel `mm`, its CONFIGS, triton), without running its timing loop."""
    path = Path(anchors) / "triton_matmul.py"
    namespace = {"__name__": "triton_matmul_anchor"}
    exec(compile(path.read_text().split("\nshapes = ")[0], str(path),
                 "exec"), namespace)
    return namespace


def load_example(kjit, kernel_file=None):
    """The matmul_bf16 kernel of `kernel_file`, by default the example (in
    the checkout or, beside this file, in the device bundle)."""
    example = Path(kernel_file) if kernel_file else (
        common.REPO / "examples" / "matmul_bf16.mlir")
    if not example.exists():  # the device bundle's layout
        example = HERE.parents[1] / "examples" / "matmul_bf16.mlir"
    return kjit.load(str(example)).matmul_bf16


def load_triton(anchors):
    """A launcher of the anchor's autotuned kernel `mm` writing into `out`,
    or None (with the reason printed)."""
    try:
        namespace = anchor_namespace(anchors)
        mm, cdiv = namespace["mm"], namespace["triton"].cdiv
    except Exception as exc:
        emit(bench="matmul_note",
             what=f"Triton left out: {common.error_text(exc)}")
        return None

    def launch(x, y, out):
        M, K = x.shape
        N = y.shape[1]
        grid = lambda meta: (cdiv(M, meta["BM"]) * cdiv(N, meta["BN"]),)
        mm[grid](x, y, out, M, N, K, x.stride(0), y.stride(0), out.stride(0))
    return launch


def kjit_launcher(kernel, kjit, block_n, num_stages):
    def launch(x, y, out):
        M, K = x.shape
        N = y.shape[1]
        grid = (kjit.cdiv(M, BLOCK_M) * kjit.cdiv(N, block_n),)
        kernel[grid](x, y, out, M, N, K, x.stride(0), y.stride(0),
                     out.stride(0), num_warps=8, num_stages=num_stages)
    return launch


def relative_error(got, want):
    return ((got.float() - want).abs().max() /
            want.abs().max().clamp_min(1e-30)).item()


def reps_for(flop):
    """Launches a round: some 20 ms of work at 2 PFLOP/s, at least 3."""
    return max(3, int(2e12 / flop * 20))


def timed_rounds(launches, rounds, reps):
    """{name: [ms per launch, one per round]}, names interleaved."""
    times = {name: [] for name in launches}
    for _ in range(rounds):
        for name, launch in launches.items():
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(reps):
                launch()
            stop.record()
            stop.synchronize()
            times[name].append(start.elapsed_time(stop) / reps)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapes", nargs="*", help="MxNxK (default: the three "
                        "benchmark shapes)")
    parser.add_argument("--anchors", default=str(common.REPO / ".anchors"))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--kernel", help="a matmul_bf16 kernel file of "
                        "another tile width (default: the example)")
    parser.add_argument("--block-n", type=int, default=256,
                        help="the kernel's tile width N (grid = "
                        "cdiv(M, 128) * cdiv(N, block-n))")
    parser.add_argument("--num-stages", default="3,4",
                        help="kjit's num_stages values, each timed as its "
                        "own implementation")
    parser.add_argument("--check-only", action="store_true",
                        help="check the results, time nothing")
    args = parser.parse_args()
    shapes = [tuple(int(v) for v in s.split("x"))
              for s in args.shapes] or SHAPES

    kjit = common.import_kjit()
    kernel = load_example(kjit, args.kernel)
    launchers = {f"kjit_s{stages}": kjit_launcher(kernel, kjit, args.block_n,
                                                  int(stages))
                 for stages in args.num_stages.split(",")}
    triton_launch = None if args.check_only else load_triton(args.anchors)
    if triton_launch is not None:
        launchers["triton"] = triton_launch
    launchers["torch"] = lambda x, y, out: torch.matmul(x, y, out=out)

    torch.manual_seed(0)
    failed = 0
    summary = []
    kjit_compiles = 0  # kjit specializations compiled so far
    for M, N, K in shapes:
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        y = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        want = x.float() @ y.float()
        outs = {}
        for name, launch in launchers.items():
            out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            torch.cuda.synchronize()
            began = time.perf_counter()
            launch(x, y, out)
            torch.cuda.synchronize()
            first_ms = (time.perf_counter() - began) * 1e3
            if name.startswith("kjit"):
                emit(bench="matmul_first_launch", impl=name, M=M, N=N, K=K,
                     first_in_process=kjit_compiles == 0,
                     ms=round(first_ms, 2))
                kjit_compiles += 1
            error = relative_error(out, want)
            ok = error <= TOLERANCE
            failed += not ok
            emit(bench="matmul_check", impl=name, M=M, N=N, K=K,
                 max_rel_error=error, tolerance=TOLERANCE, ok=ok)
            outs[name] = out
        if args.check_only:
            continue
        flop = 2.0 * M * N * K
        reps = reps_for(flop)
        launches = {name: (lambda l=launch, o=outs[name]: l(x, y, o))
                    for name, launch in launchers.items()}
        for launch in launches.values():  # warm-up, clocks up
            launch()
        times = timed_rounds(launches, args.rounds, reps)
        row = {"shape": f"{M}x{N}x{K}"}
        for name, samples in times.items():
            ms = statistics.median(samples)
            tflops = flop / ms / 1e9
            row[name] = round(tflops, 1)
            emit(bench="matmul_tflops", impl=name, M=M, N=N, K=K,
                 ms=round(ms, 4), tflops=round(tflops, 1),
                 min_ms=round(min(samples), 4), max_ms=round(max(samples), 4),
                 rounds=len(samples), reps=reps)
        summary.append(row)
    for row in summary:
        best = max(v for k, v in row.items() if k.startswith("kjit"))
        ratios = []
        if "triton" in row:
            ratios.append(f"{best / row['triton']:.2f}x Triton")
        ratios.append(f"{best / row['torch']:.2f}x torch")
        print(f"{row['shape']}: " + ", ".join(
            f"{k} {v} TFLOP/s" for k, v in row.items() if k != "shape") +
            " (best kjit " + ", ".join(ratios) + ")")
    if failed:
        print(f"{failed} result checks failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
