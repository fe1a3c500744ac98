#!/usr/bin/env python3
"""Plots a GPU run's results (results.jsonl of scripts/run-on-gpu.sh) as one
SVG of three panels: the launch cost on a cache hit (raw cuLaunchKernel,
kjit, Triton), bandwidth (kjit, Triton, torch, a device copy) and the first
launch of a new kernel (kjit, Triton; log scale). Each bar is the median
over the run's processes; the run's summary.txt has every figure. Prints
the later kernels' medians and their ratio (the issue's target) as one
line for the summary.

  scripts/plot-gpu-results.py RESULTS.jsonl OUT.svg [TITLE]

Plain SVG, written by hand: the GPU machine's Python and Debian's have no
plotting library in common, and three bar charts do not need one.
"""

import json
import math
import statistics
import sys
from xml.sax.saxutils import escape

COLORS = {"raw": "#9e9e9e", "kjit": "#1f77b4", "Triton": "#ff7f0e",
          "torch": "#2ca02c", "copy": "#7f7f7f"}


def load(path):
    steps = []
    with open(path) as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec.get("result"), dict):
                steps.append((rec["step"], rec["result"]))
    return steps


def median(values):
    values = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(values) if values else None


def collect(steps):
    """[(title, [(group, {series: value})], log scale, relative width)]
    from the run's steps."""
    def where(prefix, **match):
        return [r for s, r in steps if s.startswith(prefix) and
                all(r.get(k) == v for k, v in match.items())]

    dispatch = []
    for args in (1, 8):
        raw = where("kjit dispatch cuda #", bench="raw_in_process",
                    args=args, num_warps=1)
        kjit = where("kjit dispatch cuda #", bench="kjit_dispatch",
                     args=args, num_warps=1)
        triton = where("anchor triton dispatch")
        # The target's statistic: kjit over raw round by round, in one
        # process (the bars' medians of separate series differ from it).
        ratio = median(r["ratio_median"] for r in where(
            "kjit dispatch cuda #", bench="kjit_over_raw", args=args,
            num_warps=1))
        label = f"{args} argument{'s' if args > 1 else ''}"
        if ratio:
            label += f"|kjit/raw {ratio:.3f}"
        dispatch.append((label, {
            "raw": median(r["us_per_launch_median"] for r in raw),
            "kjit": median(r["us_per_launch_median"] for r in kjit),
            "Triton": median(r.get(f"us_per_launch_empty{args}")
                             for r in triton),
        }))

    bandwidth = []
    anchors = where("anchor triton dispatch")
    bandwidth.append(("vector add|n = 2^28", {
        "kjit": median(r["GBps_median"] for r in where(
            "kjit bandwidth", bench="kjit_vector_add_n268435456")),
        "Triton": median(r.get("add_GBps_n2^28") for r in anchors),
        "torch": median(r.get("torch_add_GBps_n2^28") for r in anchors),
    }))
    softmax = where("anchor triton softmax")
    for rows, cols in ((4096, 4096), (32768, 1024), (8192, 8192)):
        shape = f"{rows}x{cols}"
        bandwidth.append((f"softmax|{rows} x {cols}", {
            "kjit": median(r["GBps_median"] for r in where(
                "kjit bandwidth", bench=f"kjit_softmax_{shape}")),
            "Triton": median(r.get(f"softmax_{shape}_triton_GBps")
                             for r in softmax),
            "torch": median(r.get(f"softmax_{shape}_torch_GBps")
                            for r in softmax),
            "copy": median(r.get(f"copy_{shape}_GBps") for r in softmax),
        }))

    ours = where("kjit first launch cuda #")
    later = [x for r in ours for x in
             [r.get("second_kernel_first_launch_ms")] +
             list(r.get("later_add_first_launch_ms") or [])
             if isinstance(x, (int, float))]
    triton_later = [r.get(f"kernel{i}_first_launch_ms")
                    for r in where("anchor triton later kernels cold")
                    for i in (1, 2, 3)]
    if later and triton_later:
        ours_median = median(later)
        theirs = median([x for x in triton_later if x is not None])
        if ours_median and theirs:
            print(f"  later kernels: kjit median {ours_median:.1f} ms "
                  f"[{min(later):.1f}, {max(later):.1f}] (n={len(later)}), "
                  f"Triton median {theirs:.1f} ms (n={len(triton_later)}), "
                  f"kjit/Triton {ours_median / theirs:.3f} (target at most 0.5)")
    first = [(
        "first kernel", {
            "kjit": median(r.get("first_launch_ms") for r in ours),
            "Triton": median(r.get("first_launch_ms") for r in
                             where("anchor triton first launch cold")),
        }), (
        "later new kernels", {
            "kjit": median(later),
            "Triton": median(triton_later),
        })]
    return [
        ("Launch on a cache hit, empty kernel (µs)", dispatch, False, 1.0),
        ("Bandwidth (GB/s)", bandwidth, False, 2.0),
        ("First launch, new kernel (ms, log)", first, True, 0.9),
    ]


def panel(x0, y0, width, height, title, groups, log):
    """One bar chart at (x0, y0); returns its SVG elements."""
    out = [f'<text x="{x0 + width / 2}" y="{y0 - 12}" text-anchor="middle" '
           f'font-size="14" font-weight="bold">{escape(title)}</text>']
    values = [v for _, series in groups for v in series.values() if v]
    if not values:
        out.append(f'<text x="{x0 + width / 2}" y="{y0 + height / 2}" '
                   f'text-anchor="middle">no data</text>')
        return out
    top = max(values) * 1.15
    low = min(values) / 2 if log else 0.0

    def scale(v):
        if log:
            return height * (math.log10(v) - math.log10(low)) / (
                math.log10(top) - math.log10(low))
        return height * v / top

    out.append(f'<line x1="{x0}" y1="{y0 + height}" x2="{x0 + width}" '
               f'y2="{y0 + height}" stroke="black"/>')
    group_width = width / len(groups)
    for g, (name, series) in enumerate(groups):
        present = [(k, v) for k, v in series.items() if v]
        bar = min(40.0, (group_width - 16) / max(1, len(present)))
        start = x0 + g * group_width + (group_width - bar * len(present)) / 2
        for i, (key, value) in enumerate(present):
            h = scale(value)
            x = start + i * bar
            out.append(f'<rect x="{x:.1f}" y="{y0 + height - h:.1f}" '
                       f'width="{bar - 2:.1f}" height="{h:.1f}" '
                       f'fill="{COLORS[key]}"><title>{escape(key)}: '
                       f'{value:.4g}</title></rect>')
            out.append(f'<text x="{x + bar / 2 - 1:.1f}" '
                       f'y="{y0 + height - h - 3:.1f}" text-anchor="middle" '
                       f'font-size="9">{value:.4g}</text>')
        # A group's name: lines split at "|".
        for line, text in enumerate(name.split("|")):
            out.append(f'<text x="{x0 + (g + 0.5) * group_width:.1f}" '
                       f'y="{y0 + height + 16 + 13 * line}" '
                       f'text-anchor="middle" font-size="11">'
                       f'{escape(text)}</text>')
    return out


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    title = sys.argv[3] if len(sys.argv) == 4 else "kjit on the H200"
    panels = collect(load(sys.argv[1]))
    width, height, margin = 1260, 450, 40
    unit = (width - margin * (len(panels) + 1)) / sum(p[3] for p in panels)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{height}" font-family="sans-serif">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2}" y="22" text-anchor="middle" '
             f'font-size="16">{escape(title)}</text>']
    x = margin
    for name, groups, log, share in panels:
        parts += panel(x, 80, unit * share, 290, name, groups, log)
        x += unit * share + margin
    x = margin
    for key, color in COLORS.items():
        parts.append(f'<rect x="{x}" y="{height - 28}" width="12" '
                     f'height="12" fill="{color}"/>')
        parts.append(f'<text x="{x + 16}" y="{height - 18}" '
                     f'font-size="12">{escape(key)}</text>')
        x += 90
    parts.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
