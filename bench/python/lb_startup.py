"""Section 3: start-up, each figure from fresh Python processes.

  import       `import kjit` alone: its time, whether LLVM is mapped into
               the process afterwards (/proc/self/maps: libLLVM, libMLIR,
               or libkjit-compiler, which links them statically in the
               device bundle; libtriton for Triton) and
               kjit.compiler_loaded()
  kjit cold    with an empty KJIT_CACHE_DIR: import kjit, kjit.load(vector
               add), the first launch and synchronize (a compile), then a
               second launch
  kjit warm    the same in a fresh process with the cache the cold one
               filled: the first launch is a disk hit, and the compiler
               (with LLVM) should never be opened
  triton cold / warm   the same for Triton's add with TRITON_CACHE_DIR

With torch, each child first imports torch and creates the CUDA context
and the tensors; the clock starts after that, so the figures are kjit's
(or Triton's) part alone. This file is also the child: run as
`lb_startup.py child MODE TENSORS EXAMPLES`, it prints one JSON line.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

N = 1 << 20
BLOCK = 1024


# Libraries that bring LLVM into a process: LLVM's and MLIR's own, kjit's
# compiler module (LLVM linked in statically in the device bundle), and
# Triton's native module (likewise).
LLVM_CARRIERS = ("libLLVM", "libMLIR", "libkjit-compiler", "libtriton")


def mapped():
    """Which of LLVM_CARRIERS are mapped into this process."""
    found = dict.fromkeys(LLVM_CARRIERS, False)
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.rsplit(" ", 1)[-1]
            for name in found:
                if name in path:
                    found[name] = True
    return found


def llvm_mapped(maps, mode):
    """Whether `mode`'s own compiler stack (LLVM) was in the process: for
    kjit, libtriton does not count (torch may import Triton by itself)."""
    return any(present for name, present in maps.items()
               if mode != "kjit" or name != "libtriton")


def child_tensors(kind):
    """x, y, out and a synchronize, made before the clock starts."""
    if kind.startswith("torch"):
        import torch
        device = "cuda" if kind == "torch-cuda" else "cpu"
        x = torch.rand(N, device=device)
        y = torch.rand(N, device=device)
        out = torch.empty(N, device=device)
        sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
        sync()
        return x, y, out, sync, lambda: bool(torch.equal(out, x + y))
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.random(N, dtype=np.float32)
    y = rng.random(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    return x, y, out, (lambda: None), lambda: bool(np.array_equal(out, x + y))


def child(mode, tensors, examples):
    result = {"mode": mode}
    if mode == "import":
        start = time.perf_counter()
        import kjit
        result["import_ms"] = (time.perf_counter() - start) * 1e3
        result["compiler_loaded"] = bool(kjit.compiler_loaded())
        result["mapped"] = mapped()
        print(json.dumps(result))
        return
    x, y, out, sync, check = child_tensors(tensors)
    grid = ((N + BLOCK - 1) // BLOCK,)
    start = time.perf_counter()
    if mode == "kjit":
        import kjit
        imported = time.perf_counter()
        kernel = kjit.load(os.path.join(examples, "vector_add.mlir")).add
        loaded = time.perf_counter()

        def launch():
            kernel[grid](x, y, out, N)
    else:
        import lb_triton
        imported = loaded = time.perf_counter()
        triton_kernel = lb_triton.add

        def launch():
            triton_kernel[grid](x, y, out, N, BLOCK=BLOCK)
    launch()
    sync()
    first = time.perf_counter()
    launch()
    sync()
    second = time.perf_counter()
    result.update(import_ms=(imported - start) * 1e3,
                  load_ms=(loaded - imported) * 1e3,
                  first_launch_ms=(first - loaded) * 1e3,
                  second_launch_ms=(second - first) * 1e3,
                  total_ms=(first - start) * 1e3, correct=check())
    if mode == "kjit":
        result["compiler_loaded"] = bool(kjit.compiler_loaded())
        result["stats"] = kernel.stats()
    result["mapped"] = mapped()
    print(json.dumps(result))


# --------------------------------------------------------------------------
# The parent: runs the children, reports the figures
# --------------------------------------------------------------------------

def run_child(ctx, mode, env):
    """One fresh process; its JSON line as a dict, plus its wall time."""
    tensors = ctx.device.name
    command = [sys.executable, __file__, "child", mode, tensors, str(ctx.examples)]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True,
                          timeout=600)
    wall_ms = (time.perf_counter() - start) * 1e3
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"child {mode} exited {done.returncode}: {tail}")
    result = json.loads(lines[-1])
    result["process_wall_ms"] = wall_ms
    return result


def median_of(results, field):
    values = [r[field] for r in results if field in r]
    return statistics.median(values) if values else None


def run(ctx, report):
    import lb_common as common
    if ctx.device.name == "raw-cuda":
        report.skip("py_startup", "launches", "needs torch or NumPy tensors")
    repeats = 2 if ctx.quick else 3
    rows = []
    with tempfile.TemporaryDirectory(prefix="kjit-startup-") as scratch:
        env = common.child_env(ctx.kjit, {
            "KJIT_CACHE_DIR": os.path.join(scratch, "kjit-cache"),
            "TRITON_CACHE_DIR": os.path.join(scratch, "triton-cache")})
        try:
            results = [run_child(ctx, "import", env) for _ in range(repeats)]
            maps = results[-1]["mapped"]
            fields = dict(what="import kjit", import_ms=median_of(results, "import_ms"),
                          process_wall_ms=median_of(results, "process_wall_ms"),
                          compiler_loaded=results[-1]["compiler_loaded"],
                          llvm_mapped=llvm_mapped(maps, "kjit"), mapped=maps,
                          processes=repeats)
            report.figure("py_startup", **fields)
            rows.append(["import kjit", common.fmt(fields["import_ms"], 1), "-", "-",
                         str(fields["compiler_loaded"]), str(fields["llvm_mapped"])])
        except Exception as exc:
            report.error("py_startup", "import kjit", exc)
        modes = [] if ctx.device.name == "raw-cuda" else ["kjit"]
        if ctx.triton is not None:
            modes.append("triton")
        else:
            report.skip("py_startup", "triton", ctx.triton_error)
        for mode in modes:
            try:
                cold = run_child(ctx, mode, env)
                warm = [run_child(ctx, mode, env) for _ in range(repeats)]
            except Exception as exc:
                report.error("py_startup", mode, exc)
                continue
            for label, results in (("cold", [cold]), ("warm", warm)):
                last = results[-1]
                fields = {k: median_of(results, k) for k in (
                    "import_ms", "load_ms", "first_launch_ms", "second_launch_ms",
                    "total_ms", "process_wall_ms")}
                fields.update(what=f"{mode} {label}", processes=len(results),
                              correct=all(r.get("correct") for r in results),
                              llvm_mapped=llvm_mapped(last["mapped"], mode),
                              mapped=last["mapped"], tensors=ctx.device.name)
                if mode == "kjit":
                    fields["compiler_loaded"] = last.get("compiler_loaded")
                    fields["stats"] = last.get("stats")
                if not fields["correct"]:
                    ctx.failed_checks += 1
                report.figure("py_startup", **fields)
                rows.append([f"{mode} {label}", common.fmt(fields["import_ms"], 1),
                             common.fmt(fields["load_ms"], 1),
                             common.fmt(fields["first_launch_ms"], 1),
                             str(fields.get("compiler_loaded", "-")),
                             str(fields["llvm_mapped"])])
    lines = [f"fresh processes (median of {repeats}; cold: one); ms after "
             "torch, the context and the tensors were ready"]
    lines += common.table(["what", "import", "load", "first launch+sync",
                           "compiler loaded", "LLVM mapped"], rows)
    report.section("3. start-up", lines)


if __name__ == "__main__" and len(sys.argv) == 5 and sys.argv[1] == "child":
    child(sys.argv[2], sys.argv[3], sys.argv[4])
