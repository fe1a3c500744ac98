"""Section 1: host wall time per cached launch of an empty kernel.

Kernels: e1 (one tensor) and e8 (four tensors, four ints), the same in
kjit IR (empty.mlir), in Triton (lb_triton.py) and in PTX (bench/gpu/
empty.ptx, for the raw floors). Launchers, each on the same context and
stream:

  c_floor       cuLaunchKernel n times from a C loop (_kjit_raw_launch.c_loop)
  python_floor  one prepared cuLaunchKernel per Python call (launch_prepared)
  kjit          kernel[grid](args...)
  kjit_bound    h = kernel.bind(grid, args...), then h()
  triton        kernel[grid](args...) of the @triton.jit kernel

A round launches `iters` times back to back from a Python loop (the C
floor: from C), then synchronizes; the figure is wall time / iters. Every
launcher and kernel runs once per round, interleaved, for `rounds` rounds.
"""

import lb_common as common

# e8's ints: none is 1 and none is divisible by 16 but the first, so kjit
# and Triton specialize them the same way on every launch.
INTS = (4096, 1000, 17, 3)
BLOCK_THREADS = 128  # num_warps=4, kjit's and Triton's default


def subscript_loop(kernel, grid, args):
    """n launches written as a user writes them: kernel[grid](...)."""
    if len(args) == 1:
        (a,) = args

        def loop(n):
            for _ in range(n):
                kernel[grid](a)
    else:
        a, b, c, d, i, j, k, m = args

        def loop(n):
            for _ in range(n):
                kernel[grid](a, b, c, d, i, j, k, m)
    return loop


def call_loop(fn, *args):
    """n calls of fn(*args), args spelled out (no unpacking per call)."""
    if not args:
        def loop(n):
            for _ in range(n):
                fn()
    else:
        (a,) = args

        def loop(n):
            for _ in range(n):
                fn(a)
    return loop


def build_variants(ctx, x):
    """{(launcher, kernel): loop(n)}, and {launcher: (kind, why)} for those
    left out, kind "skip" (does not apply here) or "error" (failed)."""
    loops, missing = {}, {}
    kjit, device = ctx.kjit, ctx.device
    args = {"e1": (x,), "e8": (x, x, x, x) + INTS}
    grid = (1,)

    # The floors: the PTX's kernels with the same parameters, on the
    # stream the tensors' launches use.
    if not device.is_cuda:
        missing["c_floor"] = missing["python_floor"] = ("skip", "not a CUDA device")
    elif ctx.raw is None:
        missing["c_floor"] = missing["python_floor"] = (
            "skip", "_kjit_raw_launch is not built beside the kjit package")
    elif ctx.raw_module is None:
        missing["c_floor"] = missing["python_floor"] = (
            "skip", "no empty.ptx: pass --raw-module")
    else:
        try:
            raw = ctx.raw
            image = ctx.raw_module.read_bytes()
            pointer = device.data_ptr(x)
            slots = {
                "e1": raw.prepare(raw.load(image, "e1"), 1, BLOCK_THREADS,
                                  "P", pointer, stream=device.stream()),
                "e8": raw.prepare(raw.load(image, "e8"), 1, BLOCK_THREADS,
                                  "PPPPIIII", pointer, pointer, pointer,
                                  pointer, *INTS, stream=device.stream()),
            }
            for name, slot in slots.items():
                loops[("c_floor", name)] = (
                    lambda n, slot=slot: raw.c_loop(n, slot))
                loops[("python_floor", name)] = call_loop(raw.launch_prepared, slot)
        except Exception as exc:
            missing["c_floor"] = missing["python_floor"] = (
                "error", common.error_text(exc))

    # kjit: compiled (or found on disk) by a first launch here.
    try:
        module = kjit.load(str(common.EMPTY_MLIR))
        for name in ("e1", "e8"):
            kernel = module.kernel(name)
            kernel[grid](*args[name])
            loops[("kjit", name)] = subscript_loop(kernel, grid, args[name])
    except Exception as exc:
        missing["kjit"] = missing["kjit_bound"] = ("error", common.error_text(exc))
    if "kjit" not in missing:
        try:
            for name in ("e1", "e8"):
                handle = module.kernel(name).bind(grid, *args[name])
                handle()
                loops[("kjit_bound", name)] = call_loop(handle)
        except Exception as exc:
            missing["kjit_bound"] = ("error", common.error_text(exc))

    if ctx.triton is None:
        missing["triton"] = ("skip", ctx.triton_error)
    else:
        try:
            for name in ("e1", "e8"):
                kernel = getattr(ctx.triton, name)
                kernel[grid](*args[name])
                loops[("triton", name)] = subscript_loop(kernel, grid, args[name])
        except Exception as exc:
            missing["triton"] = ("error", common.error_text(exc))
    device.sync()
    return loops, missing


LAUNCHERS = ["c_floor", "python_floor", "kjit", "kjit_bound", "triton"]


def run(ctx, report):
    device = ctx.device
    x = device.empty(1 << 20)
    loops, missing = build_variants(ctx, x)
    for launcher, (kind, why) in missing.items():
        (report.skip if kind == "skip" else report.error)("py_launch", launcher, why)
    variants = {key: common.per_launch_us(loop, ctx.iters, device.sync)
                for key, loop in loops.items()}
    samples, errors = common.interleave(variants, ctx.rounds, device.sync)
    for key, why in errors.items():
        report.error("py_launch", f"{key[0]} {key[1]}", why)

    def usable(key):
        return key in samples and key not in errors and samples[key]

    rows, per_arg_rows = [], []
    for launcher in LAUNCHERS:
        medians = {}
        for kernel in ("e1", "e8"):
            key = (launcher, kernel)
            if not usable(key):
                continue
            s = common.spread(samples[key])
            floor = ("c_floor", kernel)
            ratio = (common.median_ratio(samples[key], samples[floor])
                     if usable(floor) else None)
            medians[kernel] = s["median"]
            report.figure("py_launch", launcher=launcher, kernel=kernel,
                          args=1 if kernel == "e1" else 8,
                          us_per_launch_median=s["median"],
                          us_per_launch_min=s["min"], us_per_launch_max=s["max"],
                          ratio_to_c_floor=ratio, iters=ctx.iters,
                          rounds=ctx.rounds, device=device.name)
            rows.append([launcher, kernel, common.fmt(s["median"], 3),
                         f"{common.fmt(s['min'], 3)}-{common.fmt(s['max'], 3)}",
                         common.fmt(ratio)])
        if len(medians) == 2:
            # e8 has seven arguments more than e1: four ints, three tensors.
            per_arg_ns = (medians["e8"] - medians["e1"]) / 7 * 1e3
            report.figure("py_launch_per_arg", launcher=launcher,
                          ns_per_extra_arg=per_arg_ns, device=device.name)
            per_arg_rows.append([launcher, common.fmt(per_arg_ns, 1)])
    lines = [f"device {device.name} ({device.describe()}), {ctx.iters} launches"
             f" x {ctx.rounds} interleaved rounds; us per launch"]
    lines += common.table(["launcher", "kernel", "median", "min-max",
                           "x C floor"], rows)
    if per_arg_rows:
        lines.append("")
        lines.append("per extra argument ((e8 - e1) / 7: three tensors, four ints)")
        lines += common.table(["launcher", "ns"], per_arg_rows)
    report.section("1. launch overhead, empty kernels", lines)
