"""What the sections of launch_bench.py share.

- Finding things: the kjit package, the raw-launch extension beside it,
  the kernel files (bench/python/empty.mlir, examples/, bench/gpu/empty.ptx).
- Timing: interleaved rounds (A B C A B C ...), each variant's per-round
  figure, and its median, min and max.
- The report: one JSON line per figure as it is measured, and a human
  summary at the end.

The devices (where the tensors live) are in lb_devices.py.
"""

import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def error_text(exc):
    """An exception as one line: its type and message."""
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0] if text else type(exc).__name__


# --------------------------------------------------------------------------
# Finding kjit, the raw extension and the kernel files
# --------------------------------------------------------------------------

def import_kjit():
    """The kjit package: from PYTHONPATH, else from the checkout's build."""
    try:
        import kjit
        return kjit
    except ImportError:
        candidate = REPO / "build" / "python"
        if not (candidate / "kjit").is_dir():
            raise
        sys.path.insert(0, str(candidate))
        import kjit
        return kjit


def python_dir(kjit):
    """The directory that holds the kjit package (and _kjit_raw_launch)."""
    return Path(kjit.__file__).resolve().parent.parent


def import_raw(kjit):
    """_kjit_raw_launch, built beside the kjit package; None if absent."""
    directory = str(python_dir(kjit))
    if directory not in sys.path:
        sys.path.append(directory)
    try:
        import _kjit_raw_launch
        return _kjit_raw_launch
    except ImportError:
        return None


def first_existing(*paths):
    for path in paths:
        if path and Path(path).exists():
            return Path(path)
    return None


def examples_dir(kjit, given=None):
    """examples/: given, the checkout's, or the bundle's (beside python/)."""
    found = first_existing(given, REPO / "examples",
                           python_dir(kjit).parent / "examples")
    if not found:
        raise FileNotFoundError("no examples/ directory: pass --examples")
    return found


def raw_module_path(kjit, given=None):
    """The empty kernels e1 and e8 as PTX: bench/gpu/empty.ptx."""
    return first_existing(given, REPO / "bench" / "gpu" / "empty.ptx",
                          python_dir(kjit).parent / "share" / "kjit" / "empty.ptx")


EMPTY_MLIR = HERE / "empty.mlir"


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------

def spread(values):
    """Median, min and max of a list of numbers."""
    return {"median": statistics.median(values), "min": min(values),
            "max": max(values)}


def interleave(variants, rounds, sync, warmup=True):
    """Runs every variant once per round, in order, for `rounds` rounds.

    `variants` maps a key to a callable that does one round's work and
    returns what to record for it (such as seconds per launch). A variant
    that raises is left out of later rounds; its exception is kept.
    Returns ({key: [figure per round]}, {key: error text})."""
    samples = {key: [] for key in variants}
    errors = {}
    if warmup:
        for key, run in variants.items():
            try:
                run()
                sync()
            except Exception as exc:
                errors[key] = error_text(exc)
    for _ in range(rounds):
        for key, run in variants.items():
            if key in errors:
                continue
            try:
                samples[key].append(run())
            except Exception as exc:
                errors[key] = error_text(exc)
    return samples, errors


def per_launch_us(loop, count, sync):
    """A round's work for launch timing: `loop(count)` launches, then the
    device's synchronize; host wall time per launch in microseconds."""
    def run():
        start = time.perf_counter()
        loop(count)
        sync()
        return (time.perf_counter() - start) * 1e6 / count
    return run


def median_ratio(values, floors):
    """The median over rounds of value / floor in the same round: rounds
    are interleaved, so this cancels the machine's drift between rounds."""
    ratios = [v / f for v, f in zip(values, floors) if f > 0]
    return statistics.median(ratios) if ratios else None


# --------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------

def _rounded(value):
    """Four significant digits (one decimal from 1000 up): enough for a
    noisy figure, and a 1e-9 difference stays visible."""
    if isinstance(value, float):
        return round(value, 1) if abs(value) >= 1000 else float(f"{value:.4g}")
    return value


class Report:
    """Prints one JSON line per figure as it comes (so that what was
    measured survives a later failure), and a summary at the end."""

    def __init__(self, out=sys.stdout):
        self.out = out
        self.sections = []  # (title, [lines])
        self.errors = []
        self.skipped = []

    def figure(self, bench, **fields):
        record = {"bench": bench}
        record.update({k: _rounded(v) for k, v in fields.items()})
        print(json.dumps(record), file=self.out, flush=True)
        return record

    def error(self, bench, what, error):
        """A piece that failed: recorded, and the run goes on."""
        text = error if isinstance(error, str) else error_text(error)
        self.errors.append(f"{bench} {what}: {text}")
        return self.figure(bench, what=what, error=text)

    def skip(self, bench, what, why):
        """A piece that does not apply here (no GPU, no Triton)."""
        self.skipped.append(f"{bench} {what}: {why}")
        return self.figure(bench, what=what, skipped=why)

    def section(self, title, lines):
        self.sections.append((title, list(lines)))

    def summary(self):
        print("\n=== summary ===", file=self.out)
        for title, lines in self.sections:
            print(f"\n-- {title}", file=self.out)
            for line in lines:
                print(("  " + line).rstrip(), file=self.out)
        if self.skipped:
            print("\n-- left out (does not apply here)", file=self.out)
            for line in self.skipped:
                print("  " + line, file=self.out)
        if self.errors:
            print("\n-- what failed (recorded, the run went on)", file=self.out)
            for line in self.errors:
                print("  " + line, file=self.out)
        self.out.flush()


def table(header, rows):
    """Rows of strings as aligned columns, the header first."""
    widths = [max(len(str(row[i])) for row in [header] + rows)
              for i in range(len(header))]
    return ["  ".join(str(cell).ljust(width)
                      for cell, width in zip(row, widths)).rstrip()
            for row in [header] + rows]


def fmt(value, digits=2):
    if value is None:
        return "-"
    return f"{value:.{digits}f}"


def child_env(kjit, extra=None):
    """The environment for a fresh Python: this one, with PYTHONPATH naming
    the kjit package's directory and this one (for lb_triton)."""
    env = dict(os.environ)
    paths = [str(python_dir(kjit)), str(HERE)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(extra or {})
    return env
