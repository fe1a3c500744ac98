"""Section 2: kjit inside PyTorch's own machinery, against Triton.

torch.compile: f(x, y) allocates out, runs vector add (n = 4096: launch
bound) and returns out; written three ways, each run eager, compiled
(fullgraph=True) and compiled with mode="reduce-overhead" (CUDA graphs
made by torch):
  kjit    the kjit kernel registered by kjit.torch.custom_op
  triton  the @triton.jit kernel called directly (torch.compile traces
          user Triton kernels)
  torch   x + y
Figure: host wall time per call of f, calls back to back then synchronize.

CUDA graphs: 1,000 launches of the same vector add captured once with
torch.cuda.graph, then replayed; per launch = replay time / 1,000. Beside
it, the same 1,000 launches eager. kjit launches by kernel[grid](...) and
by a handle bound inside the capture (a handle launches on the stream it
was bound on, so it must be bound while the capture stream is current).
"""

import time
import types

import lb_common as common

N_SMALL = 4096
BLOCK = 1024
GRAPH_LAUNCHES = 1000


def fresh(fn):
    """A copy of fn with its own code object: torch.compile keeps its
    compiled code on the code object, so each mode gets a fresh one."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__,
                              fn.__name__, fn.__defaults__, fn.__closure__)


def make_functions(ctx, add_kernel):
    """{name: f(x, y) -> x + y} for each way of writing it."""
    torch = ctx.device.torch
    kjit = ctx.kjit
    functions, missing = {}, {}
    try:
        import kjit.torch as kjit_torch
        op = kjit_torch.custom_op(
            add_kernel, "kjit_bench::vector_add",
            grid=lambda meta: (kjit.cdiv(meta["n"], meta["BLOCK"]),),
            constexprs={"BLOCK": BLOCK})

        def kjit_add(x, y):
            out = torch.empty_like(x)
            op(x, y, out, x.numel())
            return out
        functions["kjit"] = kjit_add
    except Exception as exc:
        missing["kjit"] = ("error", exc)
    if ctx.triton is None:
        missing["triton"] = ("skip", ctx.triton_error)
    else:
        triton_kernel = ctx.triton.add
        cdiv = ctx.triton.cdiv

        def triton_add(x, y):
            out = torch.empty_like(x)
            n = x.numel()
            triton_kernel[(cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)
            return out
        functions["triton"] = triton_add

    def torch_add(x, y):
        return x + y
    functions["torch"] = torch_add
    return functions, missing


def run_compile(ctx, report, add_kernel):
    device, torch = ctx.device, ctx.device.torch
    x, y = device.rand(N_SMALL, seed=1), device.rand(N_SMALL, seed=2)
    expected = x + y
    functions, missing = make_functions(ctx, add_kernel)
    for name, (kind, why) in missing.items():
        (report.skip if kind == "skip" else report.error)("py_compile", name, why)
    modes = {"eager": None, "compiled": {"fullgraph": True},
             "reduce-overhead": {"fullgraph": True, "mode": "reduce-overhead"}}
    if not device.is_cuda:
        del modes["reduce-overhead"]  # CUDA graphs
    try:
        # Compile in this process: the worker pool Inductor starts
        # otherwise costs seconds here and nothing in the figures.
        import torch._inductor.config as inductor_config
        inductor_config.compile_threads = 1
    except Exception:
        pass
    calls, first_call_s = {}, {}
    for name, fn in functions.items():
        for mode, options in modes.items():
            key = (name, mode)
            try:
                f = fn if options is None else torch.compile(fresh(fn), **options)
                start = time.perf_counter()
                # reduce-overhead records its graph on a later call: three
                # calls, then the check.
                for _ in range(3):
                    out = f(x, y)
                device.sync()
                first_call_s[key] = time.perf_counter() - start
                if not device.equal(out, expected):
                    ctx.failed_checks += 1
                    report.error("py_compile", f"{name} {mode}",
                                 f"wrong result: max |diff| "
                                 f"{device.max_abs_diff(out, expected):.3g}")
                    continue
                calls[key] = f
            except Exception as exc:
                report.error("py_compile", f"{name} {mode}", exc)
    count = 200 if ctx.quick else 1000

    def timed(f):
        def loop(n):
            for _ in range(n):
                f(x, y)
        return common.per_launch_us(loop, count, device.sync)
    samples, errors = common.interleave(
        {key: timed(f) for key, f in calls.items()}, ctx.rounds, device.sync)
    rows = []
    for key, values in samples.items():
        if key in errors or not values:
            if key in errors:
                report.error("py_compile", f"{key[0]} {key[1]}", errors[key])
            continue
        s = common.spread(values)
        report.figure("py_compile", function=key[0], mode=key[1], n=N_SMALL,
                      us_per_call_median=s["median"], us_per_call_min=s["min"],
                      us_per_call_max=s["max"],
                      first_calls_s=first_call_s[key], calls=count,
                      rounds=ctx.rounds)
        rows.append([key[0], key[1], common.fmt(s["median"]),
                     f"{common.fmt(s['min'])}-{common.fmt(s['max'])}",
                     common.fmt(first_call_s[key])])
    lines = [f"f(x, y) = x + y, n = {N_SMALL}, a new out each call; "
             f"us per call ({count} calls x {ctx.rounds} rounds)"]
    lines += common.table(["kernel", "mode", "median", "min-max",
                           "first 3 calls s"], rows)
    report.section("2a. torch.compile", lines)


def graph_bodies(ctx, add_kernel, x, y, out):
    """{name: body(count)}: count launches of out = x + y each."""
    torch, kjit = ctx.device.torch, ctx.kjit
    bodies = {}
    grid = (kjit.cdiv(N_SMALL, BLOCK),)

    def kjit_body(count):
        for _ in range(count):
            add_kernel[grid](x, y, out, N_SMALL)
    bodies["kjit"] = kjit_body

    def kjit_bound_body(count):
        handle = add_kernel.bind(grid, x, y, out, N_SMALL)
        for _ in range(count):
            handle()
    bodies["kjit_bound"] = kjit_bound_body
    if ctx.triton is not None:
        triton_kernel = ctx.triton.add

        def triton_body(count):
            for _ in range(count):
                triton_kernel[grid](x, y, out, N_SMALL, BLOCK=BLOCK)
        bodies["triton"] = triton_body

    def torch_body(count):
        for _ in range(count):
            torch.add(x, y, out=out)
    bodies["torch"] = torch_body
    return bodies


def run_graphs(ctx, report, add_kernel):
    device, torch = ctx.device, ctx.device.torch
    if ctx.triton is None:
        report.skip("py_graph", "triton", ctx.triton_error)
    x, y = device.rand(N_SMALL, seed=3), device.rand(N_SMALL, seed=4)
    out = device.empty(N_SMALL)
    expected = x + y
    bodies = graph_bodies(ctx, add_kernel, x, y, out)
    replays = 2 if ctx.quick else 10
    variants, capture_ms = {}, {}
    for name, body in bodies.items():
        try:
            body(1)  # compile and load before capture: a capture refuses a miss
            device.sync()
            graph = torch.cuda.CUDAGraph()
            start = time.perf_counter()
            with torch.cuda.graph(graph):
                body(GRAPH_LAUNCHES)
            capture_ms[name] = (time.perf_counter() - start) * 1e3
            out.zero_()
            graph.replay()
            device.sync()
            if not device.equal(out, expected):
                ctx.failed_checks += 1
                report.error("py_graph", name, "wrong result after replay")
                continue

            def replay(graph=graph):
                start = time.perf_counter()
                for _ in range(replays):
                    graph.replay()
                device.sync()
                return (time.perf_counter() - start) * 1e6 / (replays * GRAPH_LAUNCHES)

            def eager(body=body):
                start = time.perf_counter()
                body(GRAPH_LAUNCHES)
                device.sync()
                return (time.perf_counter() - start) * 1e6 / GRAPH_LAUNCHES
            variants[(name, "graph")] = replay
            variants[(name, "eager")] = eager
        except Exception as exc:
            report.error("py_graph", name, exc)
    samples, errors = common.interleave(variants, ctx.rounds, device.sync)
    rows = []
    for key, values in samples.items():
        if key in errors or not values:
            if key in errors:
                report.error("py_graph", f"{key[0]} {key[1]}", errors[key])
            continue
        s = common.spread(values)
        fields = dict(kernel=key[0], mode=key[1], launches=GRAPH_LAUNCHES,
                      n=N_SMALL, us_per_launch_median=s["median"],
                      us_per_launch_min=s["min"], us_per_launch_max=s["max"],
                      rounds=ctx.rounds)
        if key[1] == "graph":
            fields["capture_ms"] = capture_ms[key[0]]
            fields["replays_per_round"] = replays
        report.figure("py_graph", **fields)
        capture = capture_ms[key[0]] if key[1] == "graph" else None
        rows.append([key[0], key[1], common.fmt(s["median"], 3),
                     f"{common.fmt(s['min'], 3)}-{common.fmt(s['max'], 3)}",
                     common.fmt(capture, 1)])
    lines = [f"{GRAPH_LAUNCHES} launches of vector add (n = {N_SMALL}); "
             "us per launch, graph = replay time / launches"]
    lines += common.table(["kernel", "mode", "median", "min-max", "capture ms"], rows)
    report.section("2b. CUDA graphs", lines)


def run(ctx, report):
    if ctx.device.reference != "torch":
        report.skip("py_compile", "all", "needs torch")
        report.skip("py_graph", "all", "needs torch")
        return
    add_kernel = ctx.kjit.load(str(ctx.examples / "vector_add.mlir")).add
    try:
        # No autograd: each call of a reduce-overhead function then starts
        # a new generation of its CUDA graphs, as in inference.
        with ctx.device.torch.no_grad():
            run_compile(ctx, report, add_kernel)
    except Exception as exc:
        report.error("py_compile", "section", exc)
    if not ctx.device.is_cuda:
        report.skip("py_graph", "all", "needs a CUDA device")
        return
    try:
        run_graphs(ctx, report, add_kernel)
    except Exception as exc:
        report.error("py_graph", "section", exc)
