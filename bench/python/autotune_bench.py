"""Autotuning in fresh processes: kjit.autotune against Triton's
@triton.autotune, tuning a row-wise softmax over 16 configurations for
three keys.

    PYTHONPATH=<bundle>/python python3 bench/python/autotune_bench.py \
        [--rows N] [--rounds N]

kjit tunes examples/softmax.mlir, Triton the same one-program-per-row
softmax written in Triton (the row in one block), each over num_warps 1-32
and num_stages 1-3 (16 of the 18 pairs; num_stages changes neither
kernel's code, but each configuration is a specialization of its own and
compiles on its own) for n_cols 1024, 4096 and 16384 (key: n_cols), 4096
rows of fp32. Every phase is a new process, timed from the first call of
a key to its return (synchronized), the tuning included:

  cold   empty caches (kjit's disk cache, Triton's cache directory)
  warm   the same caches again: kjit finds its timing and choice records
         and times nothing; Triton (cache_results=True where it has it)
         finds its compiled kernels and, with cache_results, its timings

kjit's processes run with KJIT_LOG=autotune, whose lines give the
configurations timed and found and the trial launches (warm-up included)
of each key (none when the records decide). The warm kjit process
then re-times every configuration of every key (interleaved rounds of 200
launches between CUDA events, the median) and reports the chosen one's
time against the best. Last, a key first launched inside a CUDA graph
capture must be refused with a message, and replay right once tuned. One
JSON line per figure, a table at the end.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KEYS = (1024, 4096, 16384)
CONFIGS = [(w, s) for w in (1, 2, 4, 8, 16, 32) for s in (1, 2, 3)][:16]
HERE = Path(__file__).resolve().parent


def emit(**fields):
    print(json.dumps(fields), flush=True)


def softmax_path():
    """examples/softmax.mlir from the bundle or the source tree."""
    for base in (HERE.parent.parent, HERE.parent):
        path = base / "examples" / "softmax.mlir"
        if path.exists():
            return path
    raise SystemExit("autotune_bench: examples/softmax.mlir not found")


def run_kjit(rows, retime_rounds):
    import torch
    import kjit

    kernel = kjit.load(str(softmax_path())).softmax
    tuned = kjit.autotune(
        kernel, key=["n_cols"],
        configs=[kjit.Config({}, num_warps=w, num_stages=s)
                 for w, s in CONFIGS])
    inputs, chosen = {}, {}
    for n_cols in KEYS:
        x = torch.randn(rows, n_cols, device="cuda")
        out = torch.empty_like(x)
        inputs[n_cols] = (x, out)
        torch.cuda.synchronize()
        start = time.perf_counter()
        tuned[(rows,)](x, out, n_cols, n_cols)
        torch.cuda.synchronize()
        ms = (time.perf_counter() - start) * 1e3
        error = (out - torch.softmax(x, dim=1)).abs().max().item()
        chosen[n_cols] = tuned.best_config  # the call's: it changes per key
        emit(impl="kjit", n_cols=n_cols, first_call_ms=round(ms, 3),
             chosen=repr(chosen[n_cols]), max_err=error)
    if retime_rounds:
        for n_cols, (x, out) in inputs.items():
            def launch(w, s):
                kernel[(rows,)](x, out, n_cols, n_cols, num_warps=w,
                                num_stages=s)
            times = retime(launch, retime_rounds)
            best = min(times, key=times.get)
            pick = (chosen[n_cols].num_warps, chosen[n_cols].num_stages)
            emit(impl="kjit", n_cols=n_cols, retimed_best=str(best),
                 best_us=round(times[best], 3),
                 chosen_us=round(times[pick], 3),
                 chosen_over_best=round(times[pick] / times[best], 4))


def retime(launch, rounds, reps=200):
    import torch
    samples = {c: [] for c in CONFIGS}
    for c in CONFIGS:
        launch(*c)
    torch.cuda.synchronize()
    for _ in range(rounds):
        for c in CONFIGS:
            begin = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            begin.record()
            for _ in range(reps):
                launch(*c)
            end.record()
            end.synchronize()
            samples[c].append(begin.elapsed_time(end) * 1e3 / reps)
    return {c: statistics.median(v) for c, v in samples.items()}


def run_capture():
    """A key tuned inside a CUDA graph capture is refused with a message;
    once tuned, the key is captured and replays the right result."""
    import torch
    import kjit

    kernel = kjit.load(str(softmax_path())).softmax
    tuned = kjit.autotune(kernel, key=["n_cols"],
                          configs=[kjit.Config({}, num_warps=w)
                                   for w in (1, 2, 4)])
    x = torch.randn(64, 1024, device="cuda")
    out = torch.empty_like(x)
    refused = None
    try:
        with torch.cuda.graph(torch.cuda.CUDAGraph()):
            tuned[(64,)](x, out, 1024, 1024)
    except Exception as exc:  # the refusal, whatever its type
        refused = str(exc)
    tuned[(64,)](x, out, 1024, 1024)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tuned[(64,)](x, out, 1024, 1024)
    out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    emit(impl="kjit", what="capture", refused=refused,
         replay_max_err=(out - torch.softmax(x, dim=1)).abs().max().item())


def run_triton(rows):
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def softmax(inp, out, n_cols, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        inside = cols < n_cols
        x = tl.load(inp + row * stride + cols, mask=inside,
                    other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out + row * stride + cols, e / tl.sum(e, axis=0),
                 mask=inside)

    configs = [triton.Config({}, num_warps=w, num_stages=s)
               for w, s in CONFIGS]
    try:
        tuned = triton.autotune(configs=configs, key=["n_cols"],
                                cache_results=True)(softmax)
        cached = True
    except TypeError:  # a Triton without cache_results
        tuned = triton.autotune(configs=configs, key=["n_cols"])(softmax)
        cached = False
    for n_cols in KEYS:
        x = torch.randn(rows, n_cols, device="cuda")
        out = torch.empty_like(x)
        block = triton.next_power_of_2(n_cols)
        torch.cuda.synchronize()
        start = time.perf_counter()
        tuned[(rows,)](x, out, n_cols, n_cols, BLOCK=block)
        torch.cuda.synchronize()
        ms = (time.perf_counter() - start) * 1e3
        error = (out - torch.softmax(x, dim=1)).abs().max().item()
        emit(impl="triton", n_cols=n_cols, first_call_ms=round(ms, 3),
             chosen=str(tuned.best_config), max_err=error,
             cache_results=cached, triton=triton.__version__)


def autotune_log(stderr):
    """Per key (n_cols), what a process's KJIT_LOG=autotune lines say:
    configurations timed and found, trial launches (warm-up included), the
    decision, and where a stored choice was found ("disk", "remote"). The
    lines: "kjit: autotune softmax [n_cols=1024; in=fp32, out=fp32]: config
    3 (num_warps=2, ...): 40 trials after 7 warm-up launches: median ...",
    "... found: ...", "chose config ...", "the stored choice kept: ...",
    "16 configurations; choice found (disk, by HOST:PID): config ..."."""
    keys = {}
    for line in stderr.splitlines():
        found = re.search(r"autotune \w+ \[n_cols=(\d+)[^\]]*\]: (.*)", line)
        if not found:
            continue
        entry = keys.setdefault(int(found.group(1)), {
            "timed": 0, "found": 0, "trial_launches": 0, "decision": None,
            "found_by": None})
        text = found.group(2)
        counts = re.search(r"(\d+) trials after (\d+) warm-up launches", text)
        where = re.search(r"choice found \((\w+)", text)
        if counts:
            entry["timed"] += 1
            entry["trial_launches"] += int(counts.group(1)) + int(
                counts.group(2))
        elif " found: " in text:
            entry["found"] += 1
        elif text.startswith("chose ") or "choice kept" in text or where:
            entry["decision"] = text
        if where:
            entry["found_by"] = where.group(1)
    return keys


def phase(impl, name, env, args):
    """One fresh process of `impl`; its JSON lines, tagged with `name`,
    and for kjit the trial launches its autotune log counts per key."""
    command = [sys.executable, __file__, "--child", impl, "--rows",
               str(args.rows), "--rounds",
               str(args.rounds if name == "warm" else 0)]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True,
                          timeout=900)
    wall = (time.perf_counter() - start) * 1e3
    if done.returncode != 0:
        emit(impl=impl, phase=name, error=done.stderr[-2000:])
        return []
    trials = autotune_log(done.stderr)
    results = []
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            fields = json.loads(line)
            fields["phase"] = name
            if impl == "kjit" and "first_call_ms" in fields:
                fields.update(trials.get(fields["n_cols"],
                                         {"log": "no autotune line"}))
            emit(**fields)
            results.append(fields)
    emit(impl=impl, phase=name, process_wall_ms=round(wall, 1))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=5,
                        help="re-timing rounds in the warm kjit process")
    parser.add_argument("--child", choices=("kjit", "triton", "capture"))
    args = parser.parse_args()
    if args.child == "kjit":
        return run_kjit(args.rows, args.rounds)
    if args.child == "triton":
        return run_triton(args.rows)
    if args.child == "capture":
        return run_capture()

    table = {}
    with tempfile.TemporaryDirectory() as kjit_cache, \
            tempfile.TemporaryDirectory() as triton_cache:
        kjit_env = dict(os.environ, KJIT_CACHE_DIR=kjit_cache,
                        KJIT_LOG="autotune")
        triton_env = dict(os.environ, TRITON_CACHE_DIR=triton_cache)
        for name in ("cold", "warm"):
            for impl, env in (("kjit", kjit_env), ("triton", triton_env)):
                for r in phase(impl, name, env, args):
                    if "first_call_ms" in r:
                        table[(impl, name, r["n_cols"])] = r
        phase("capture", "capture", kjit_env, args)
    print("\n| n_cols | kjit cold ms (trial launches) | Triton cold ms | "
          "kjit/Triton | kjit warm ms (trial launches) | Triton warm ms |")
    print("|---|---|---|---|---|---|")
    for n_cols in KEYS:
        kc = table.get(("kjit", "cold", n_cols), {})
        tc = table.get(("triton", "cold", n_cols), {})
        kw = table.get(("kjit", "warm", n_cols), {})
        tw = table.get(("triton", "warm", n_cols), {})
        ratio = (kc["first_call_ms"] / tc["first_call_ms"]
                 if kc and tc else float("nan"))
        print(f"| {n_cols} | {kc.get('first_call_ms')} "
              f"({kc.get('trial_launches')}) | {tc.get('first_call_ms')} | "
              f"{ratio:.2f} | {kw.get('first_call_ms')} "
              f"({kw.get('trial_launches')}) | {tw.get('first_call_ms')} |")


if __name__ == "__main__":
    main()
