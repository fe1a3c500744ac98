"""Section 4: bandwidth from Python, kjit against Triton and torch.

  vector add  examples/vector_add.mlir's add over n = 2^28 float32 (bytes
              moved: 3 * 4 * n), grid = n / BLOCK, BLOCK = 1024
  softmax     examples/softmax.mlir on 4096x4096, 32768x1024 and 8192x8192
              (bytes: 2 * 4 * rows * cols): one program per row, with the
              smallest power-of-two num_warps whose 1024 * num_warps
              columns cover a row, as bench/gpu/kjit_gpu_bench.cpp runs it
  copy        out.copy_(in) on each softmax shape: the ceiling

The same shapes and byte counts as kjit-gpu-bench bandwidth and the Triton
anchors, so the figures compare. A round is `reps` launches then a
synchronize (host wall time); GB/s = bytes / (time / reps); kernels and
implementations interleave, round after round. Before any timing every
result is checked against the reference (torch, or NumPy without torch):
vector add exactly, softmax to 1e-5 absolute, and kjit against Triton.

On the CPU (the host backend) the sizes shrink to what two cores finish.
"""

import lb_common as common
import time

SOFTMAX_TOLERANCE = 1e-5


def kjit_softmax_warps(n_cols):
    warps = 1
    while warps < 32 and warps * 1024 < n_cols:
        warps *= 2
    return warps


def sizes(ctx):
    if ctx.device.is_cuda:
        if ctx.quick:
            return 1 << 24, [(4096, 4096)]
        return 1 << 28, [(4096, 4096), (32768, 1024), (8192, 8192)]
    if ctx.quick:
        return 1 << 20, [(64, 1000)]
    return 1 << 22, [(256, 1024), (64, 4096)]


def check(ctx, report, what, impl, got, want, exact):
    """Records the check of one result; returns whether it passed."""
    device = ctx.device
    diff = device.max_abs_diff(got, want)
    ok = (device.equal(got, want) if exact else diff <= SOFTMAX_TOLERANCE)
    report.figure("py_check", what=what, impl=impl, max_abs_diff=diff,
                  tolerance=0 if exact else SOFTMAX_TOLERANCE, ok=ok)
    if not ok:
        ctx.failed_checks += 1
    return ok


def vector_add_measures(ctx, report, n):
    """[(label, impl, bytes, launch)] for vector add, each checked."""
    device, kjit = ctx.device, ctx.kjit
    x, y = device.rand(n, seed=11), device.rand(n, seed=12)
    want = device.add_reference(x, y)
    kernel = kjit.load(str(ctx.examples / "vector_add.mlir")).add
    grid = (kjit.cdiv(n, 1024),)
    launches = {}
    out = device.empty(n)
    launches["kjit"] = (out, lambda: kernel[grid](x, y, out, n))
    if ctx.triton is not None:
        triton_out = device.empty(n)
        triton_add = ctx.triton.add
        launches["triton"] = (
            triton_out, lambda: triton_add[grid](x, y, triton_out, n, BLOCK=1024))
    reference_out = device.empty(n)
    launches[device.reference] = (
        reference_out, device.add_reference_launch(x, y, reference_out))
    label = f"vector_add_n{n}"
    measures = []
    for impl, (result, launch) in launches.items():
        try:
            device.zero(result)
            launch()
            device.sync()
            if check(ctx, report, label, impl, result, want, exact=True):
                measures.append((label, impl, 3 * 4 * n, launch))
        except Exception as exc:
            report.error("py_bandwidth", f"{label} {impl}", exc)
    return measures


def softmax_measures(ctx, report, rows, cols):
    device, kjit = ctx.device, ctx.kjit
    a = device.rand(rows, cols, seed=rows + cols)
    # Spread the values out: rand's [0, 1) makes every row almost flat.
    a = a * 8 - 4
    want = device.softmax_reference(a)
    kernel = kjit.load(str(ctx.examples / "softmax.mlir")).softmax
    warps = kjit_softmax_warps(cols)
    label = f"softmax_{rows}x{cols}"
    launches = {}
    out = device.empty(rows, cols)
    launches["kjit"] = (out, lambda: kernel[(rows,)](a, out, cols, cols,
                                                      num_warps=warps))
    if ctx.triton is not None:
        block, triton_warps = ctx.triton.softmax_config(cols)
        triton_out = device.empty(rows, cols)
        triton_softmax = ctx.triton.softmax
        launches["triton"] = (triton_out, lambda: triton_softmax[(rows,)](
            a, triton_out, cols, cols, BLOCK=block, num_warps=triton_warps))
    launches[device.reference] = (None, device.softmax_reference_launch(a, None))
    copy_out = device.empty(rows, cols)
    launches["copy"] = (None, device.copy_launch(a, copy_out))
    measures, results = [], {}
    for impl, (result, launch) in launches.items():
        try:
            if result is not None:
                device.zero(result)
            launch()
            device.sync()
            if result is not None:
                if not check(ctx, report, label, impl, result, want, exact=False):
                    continue
                results[impl] = result
            measures.append((label, impl, 2 * 4 * rows * cols, launch))
        except Exception as exc:
            report.error("py_bandwidth", f"{label} {impl}", exc)
    if "kjit" in results and "triton" in results:
        diff = device.max_abs_diff(results["kjit"], results["triton"])
        report.figure("py_check", what=label, impl="kjit vs triton",
                      max_abs_diff=diff, tolerance=2 * SOFTMAX_TOLERANCE,
                      ok=diff <= 2 * SOFTMAX_TOLERANCE)
    return measures


def run(ctx, report):
    device = ctx.device
    if device.reference is None:
        report.skip("py_bandwidth", "all", "needs torch or NumPy tensors")
        return
    if ctx.triton is None:
        report.skip("py_bandwidth", "triton", ctx.triton_error)
    n, shapes = sizes(ctx)
    measures = []
    try:
        measures += vector_add_measures(ctx, report, n)
    except Exception as exc:
        report.error("py_bandwidth", "vector_add", exc)
    for rows, cols in shapes:
        try:
            measures += softmax_measures(ctx, report, rows, cols)
        except Exception as exc:
            report.error("py_bandwidth", f"softmax_{rows}x{cols}", exc)
    reps = 5 if ctx.quick or not device.is_cuda else 20

    def timed(launch):
        def run_round():
            start = time.perf_counter()
            for _ in range(reps):
                launch()
            device.sync()
            return (time.perf_counter() - start) / reps
        return run_round
    variants = {(label, impl): timed(launch) for label, impl, _, launch in measures}
    byte_counts = {(label, impl): nbytes for label, impl, nbytes, _ in measures}
    samples, errors = common.interleave(variants, ctx.rounds, device.sync)
    rows = []
    for key, seconds in samples.items():
        if key in errors or not seconds:
            if key in errors:
                report.error("py_bandwidth", f"{key[0]} {key[1]}", errors[key])
            continue
        gbps = common.spread([byte_counts[key] / s / 1e9 for s in seconds])
        report.figure("py_bandwidth", kernel=key[0], impl=key[1],
                      GBps_median=gbps["median"], GBps_min=gbps["min"],
                      GBps_max=gbps["max"], reps=reps, rounds=ctx.rounds,
                      device=device.name)
        rows.append([key[0], key[1], common.fmt(gbps["median"], 1),
                     f"{common.fmt(gbps['min'], 1)}-{common.fmt(gbps['max'], 1)}"])
    lines = [f"GB/s, {reps} launches then synchronize, median of {ctx.rounds} "
             f"interleaved rounds ({device.describe()})"]
    lines += common.table(["kernel", "impl", "median", "min-max"], rows)
    report.section("4. bandwidth", lines)
