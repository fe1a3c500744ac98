#!/usr/bin/env python3
"""kjit from Python against Triton and the raw driver, in one process.

    PYTHONPATH=$BUNDLE/python python3 bench/python/launch_bench.py [--quick]

Sections (bench/python/README.md says what each figure means):

  1 launch     host time per cached launch of empty kernels (1 tensor; 4
               tensors + 4 ints): kjit k[grid](...), a bound handle h(),
               Triton k[grid](...), one prepared cuLaunchKernel per Python
               call, and the same from a C loop; the cost per extra argument
  2 torch      torch.compile of a function calling a kjit custom op, the
               same calling the Triton kernel, eager; CUDA-graph replay of
               1,000 small vector adds, kjit against Triton
  3 startup    fresh processes: `import kjit` and whether LLVM is loaded;
               the first launch of a kernel found in the disk cache
  4 bandwidth  vector add (n = 2^28) and softmax (4096x4096, 32768x1024,
               8192x8192): kjit, Triton and torch, GB/s, results checked

Every figure is one JSON line on stdout as it is measured; a summary
follows at the end. A piece that fails (no Triton, a torch.compile error)
is recorded as a JSON line with "error" and the run goes on. Timings are
never asserted; the exit status is 1 only when a result check failed.
"""

import argparse
import platform
import sys
import time

import lb_common as common
import lb_devices

SECTIONS = ["launch", "torch", "startup", "bandwidth"]


class Context:
    """What every section gets: the packages, the device, the settings."""

    def __init__(self, args, report):
        self.args = args
        self.quick = args.quick
        self.rounds = args.rounds or (3 if args.quick else 7)
        self.iters = args.iters or (2000 if args.quick else 20000)
        self.kjit = common.import_kjit()
        self.raw = common.import_raw(self.kjit)
        self.raw_module = common.raw_module_path(self.kjit, args.raw_module)
        self.examples = common.examples_dir(self.kjit, args.examples)
        self.device, notes = lb_devices.open_device(args.device, self.raw)
        for note in notes:
            report.figure("py_env", note=note)
        self.triton, self.triton_error = None, "not tried"
        if self.device.is_cuda and self.device.reference == "torch":
            try:
                import lb_triton
                self.triton, self.triton_error = lb_triton, None
            except Exception as exc:
                self.triton_error = common.error_text(exc)
        else:
            self.triton_error = "Triton needs torch CUDA tensors"
        self.failed_checks = 0


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="fewer rounds and launches, smaller sizes")
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help="comma-separated, of: " + ", ".join(SECTIONS))
    parser.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                        help="auto: torch CUDA tensors when there is a GPU")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (7; quick 3)")
    parser.add_argument("--iters", type=int,
                        help="launches per round in section 1 (20000; quick 2000)")
    parser.add_argument("--examples", help="the examples/ directory")
    parser.add_argument("--raw-module", help="PTX or cubin with e1 and e8 "
                        "(default: bench/gpu/empty.ptx)")
    args = parser.parse_args(argv)
    args.sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = set(args.sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    report = common.Report()
    ctx = Context(args, report)
    versions = {"python": platform.python_version(), "device": ctx.device.name,
                "device_name": ctx.device.describe(),
                "kjit": str(common.python_dir(ctx.kjit)),
                "raw_extension": ctx.raw is not None,
                "triton": ctx.triton.version if ctx.triton else None}
    if ctx.device.reference == "torch":
        versions["torch"] = ctx.device.torch.__version__
    report.figure("py_env", **versions)
    header = [f"{k}: {v}" for k, v in versions.items()]
    if ctx.triton is None:
        header.append(f"Triton left out: {ctx.triton_error}")
    report.section("environment", header)

    for name in args.sections:
        start = time.perf_counter()
        try:
            if name == "launch":
                import lb_launch
                lb_launch.run(ctx, report)
            elif name == "torch":
                import lb_torch
                lb_torch.run(ctx, report)
            elif name == "startup":
                import lb_startup
                lb_startup.run(ctx, report)
            elif name == "bandwidth":
                import lb_bandwidth
                lb_bandwidth.run(ctx, report)
        except Exception as exc:
            # A section that breaks leaves the others to run.
            report.error("py_section", name, exc)
        print(f"# section {name}: {time.perf_counter() - start:.1f} s",
              file=sys.stderr, flush=True)
    report.summary()
    return 1 if ctx.failed_checks else 0


if __name__ == "__main__":
    sys.exit(main())
