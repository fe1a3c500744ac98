"""Compile time of the bf16 matmul: kjit's examples/matmul_bf16.mlir
against the anchor's Triton kernel at the same configuration (128 x 256 x
64 tiles, 8 warps), each in fresh Python processes with an empty cache.

    PYTHONPATH=<bundle>/python python3 bench/python/matmul_compile.py \\
        [--anchors DIR] [--repeats N]

Each child imports torch, makes the CUDA context and the 4096^3 inputs,
then imports kjit (or runs the anchor's source up to `shapes =`, which
defines Triton's kernel) and starts the clock: `first` is the first launch
and synchronize (num_stages 3: the compile, for kjit with the compiler
library loading first), `second` a launch at num_stages 4 (a second
specialization compiled in the same process). Triton's kernel is the
anchor's `mm` without its autotuner (`mm.fn`) at the anchor's first
configuration, so it compiles one kernel, not six. Children alternate
(kjit, Triton, kjit, ...); one JSON line per child, the medians at the end.

Children run with CUDA_CACHE_DISABLE=1: nvJitLink, which finalizes kjit's
later kernels, keeps a cache of its own across processes, and with it a
PTX that an earlier child (or an earlier benchmark on the machine) has
finalized takes about 1 ms instead of a compile. Triton's ptxas has no
such cache.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZE = 4096


def child(side, anchors):
    import torch
    sys.path.insert(0, str(HERE))
    import lb_common as common
    from matmul_bench import (anchor_namespace, kjit_launcher, load_example,
                              relative_error)
    x = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(SIZE, SIZE, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    if side == "kjit":
        kjit = common.import_kjit()
        kernel = load_example(kjit)

        def launch(stages):
            kjit_launcher(kernel, kjit, 256, stages)(x, y, out)
    else:
        namespace = anchor_namespace(anchors)
        config = namespace["CONFIGS"][0]
        mm = namespace["mm"].fn  # the jitted kernel under the autotuner
        grid = (SIZE // config.kwargs["BM"]) * (SIZE // config.kwargs["BN"])

        def launch(stages):
            mm[(grid,)](x, y, out, SIZE, SIZE, SIZE, SIZE, SIZE, SIZE,
                        **config.kwargs, num_warps=config.num_warps,
                        num_stages=stages)
    times = {}
    for name, stages in (("first", 3), ("second", 4)):
        began = time.perf_counter()
        launch(stages)
        torch.cuda.synchronize()
        times[name] = round((time.perf_counter() - began) * 1e3, 1)
    error = relative_error(out, x.float() @ y.float())
    print(json.dumps({"side": side, **times, "max_rel_error": error}))


def main():
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--anchors",
                        default=str(HERE.parents[1] / ".anchors"),
                        help="the folder of triton_matmul.py (default: "
                        ".anchors of the checkout)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="processes of each side (default 3); the "
                        "summary is their median")
    parser.add_argument("--child", choices=["kjit", "triton"],
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.child:
        child(args.child, args.anchors)
        return 0
    results = {"kjit": [], "triton": []}
    for _ in range(args.repeats):
        for side in results:
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, KJIT_CACHE_DIR=cache,
                           TRITON_CACHE_DIR=cache, CUDA_CACHE_DISABLE="1")
                run = subprocess.run(
                    [sys.executable, __file__, "--child", side,
                     "--anchors", args.anchors],
                    env=env, capture_output=True, text=True, timeout=300)
            if run.returncode != 0:
                print(json.dumps({"side": side, "error":
                                  run.stderr.strip().splitlines()[-1:]}))
                continue
            line = json.loads(run.stdout.strip().splitlines()[-1])
            print(json.dumps(line), flush=True)
            results[side].append(line)
    for side, lines in results.items():
        if lines:
            print(f"{side}: first launch (num_stages 3) "
                  f"{statistics.median(l['first'] for l in lines)} ms, "
                  f"second specialization (num_stages 4) "
                  f"{statistics.median(l['second'] for l in lines)} ms "
                  f"(medians of {len(lines)} processes)")
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
