#!/usr/bin/env python3
"""Plots a run of bench/python/launch_bench.py (its JSON lines) as one SVG of
three panels: the launch cost of an empty kernel from Python as a ratio to
the in-process C floor (1 tensor; 4 tensors + 4 ints), the per-launch cost
of 1,000 launches replayed from a CUDA graph and of a torch.compile'd call,
and bandwidth from Python. A run of matmul_bench.py (its matmul_tflops
lines) becomes one panel instead: TFLOP/s per shape, kjit's configurations
beside Triton and torch.matmul.

  bench/python/plot.py BENCH.log OUT.svg [TITLE]

Plain SVG written by hand, as scripts/plot-gpu-results.py does: no plotting
library is common to the GPU machine's Python and Debian's.
"""

import json
import sys
from xml.sax.saxutils import escape

COLORS = {"c_floor": "#9e9e9e", "python_floor": "#bdbdbd", "kjit": "#1f77b4",
          "kjit_bound": "#6baed6", "triton": "#ff7f0e", "torch": "#2ca02c",
          "copy": "#7f7f7f"}
MATMUL_COLORS = {"kjit_s3": "#6baed6", "kjit_s4": "#1f77b4",
                 "triton": "#ff7f0e", "torch": "#2ca02c"}


def records(path):
    found = []
    with open(path) as f:
        for line in f:
            if line.startswith("{"):
                try:
                    found.append(json.loads(line))
                except ValueError:
                    pass
    return found


def panel(x, y, width, height, title, groups, unit, svg):
    """Grouped bars: groups is [(label, [(series, value)])]."""
    values = [v for _, bars in groups for _, v in bars if v is not None]
    top = max(values) * 1.15 if values else 1
    svg.append(f'<text x="{x + width / 2}" y="{y - 8}" text-anchor="middle" '
               f'font-size="13" font-weight="bold">{escape(title)}</text>')
    svg.append(f'<line x1="{x}" y1="{y + height}" x2="{x + width}" '
               f'y2="{y + height}" stroke="black"/>')
    slot = width / max(1, len(groups))
    for g, (label, bars) in enumerate(groups):
        bar = slot * 0.8 / max(1, len(bars))
        for b, (series, value) in enumerate(bars):
            if value is None:
                continue
            h = height * value / top
            bx = x + g * slot + slot * 0.1 + b * bar
            svg.append(f'<rect x="{bx:.1f}" y="{y + height - h:.1f}" width="{bar * 0.9:.1f}" '
                       f'height="{h:.1f}" fill="{COLORS.get(series, "#444")}"/>')
            svg.append(f'<text x="{bx + bar * 0.45:.1f}" y="{y + height - h - 3:.1f}" '
                       f'text-anchor="middle" font-size="9">{value:.3g}</text>')
        svg.append(f'<text x="{x + g * slot + slot / 2:.1f}" y="{y + height + 14}" '
                   f'text-anchor="middle" font-size="10">{escape(label)}</text>')
    svg.append(f'<text x="{x - 6}" y="{y + 10}" text-anchor="end" font-size="10">'
               f'{escape(unit)}</text>')


def matmul_svg(found, title):
    """One panel of TFLOP/s per shape from matmul_bench.py's lines."""
    shapes, impls = {}, []
    for r in found:
        if r.get("bench") != "matmul_tflops":
            continue
        shape = f'{r["M"]}x{r["N"]}x{r["K"]}'
        shapes.setdefault(shape, {})[r["impl"]] = r["tflops"]
        if r["impl"] not in impls:
            impls.append(r["impl"])
    groups = [(shape, [(i, values.get(i)) for i in impls])
              for shape, values in shapes.items()]
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="760" height="360" '
           'font-family="sans-serif">',
           f'<text x="380" y="20" text-anchor="middle" font-size="15">{escape(title)}</text>']
    COLORS.update(MATMUL_COLORS)
    # Series of other names (variants of an A/B run) take blues in order.
    spare = iter(["#c6dbef", "#6baed6", "#2171b5", "#08306b", "#9ecae1"])
    for series in impls:
        if series not in COLORS:
            COLORS[series] = next(spare, "#444")
    panel(70, 60, 660, 220, "C = A @ B, bf16, f32 accumulation", groups,
          "TFLOP/s", svg)
    for i, series in enumerate(impls):
        svg.append(f'<rect x="{70 + i * 150}" y="325" width="12" height="12" '
                   f'fill="{COLORS.get(series, "#444")}"/>')
        svg.append(f'<text x="{86 + i * 150}" y="336" font-size="11">{series}</text>')
    svg.append("</svg>")
    return svg


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    found = records(sys.argv[1])
    if any(r.get("bench") == "matmul_tflops" for r in found):
        svg = matmul_svg(found, sys.argv[3] if len(sys.argv) > 3
                         else "kjit's bf16 matmul")
        with open(sys.argv[2], "w") as out:
            out.write("\n".join(svg) + "\n")
        return
    title = sys.argv[3] if len(sys.argv) > 3 else "kjit from Python"
    launchers = ["c_floor", "python_floor", "kjit", "kjit_bound", "triton"]
    launch = {(r["launcher"], r["kernel"]): r.get("ratio_to_c_floor")
              for r in found if r.get("bench") == "py_launch" and "launcher" in r}
    launch_groups = [(name, [(s, launch.get((s, kernel))) for s in launchers])
                     for name, kernel in (("1 tensor", "e1"), ("4 tensors + 4 ints", "e8"))]
    graph = {(r.get("kernel"), r.get("mode")): r.get("us_per_launch_median")
             for r in found if r.get("bench") == "py_graph"}
    compiled = {(r.get("function"), r.get("mode")): r.get("us_per_call_median")
                for r in found if r.get("bench") == "py_compile"}
    call_groups = [("graph replay", [(k, graph.get((k, "graph")))
                                     for k in ("kjit", "triton", "torch")]),
                   ("eager launch", [(k, graph.get((k, "eager")))
                                     for k in ("kjit", "kjit_bound", "triton", "torch")]),
                   ("torch.compile", [(k, compiled.get((k, "compiled")))
                                      for k in ("kjit", "triton", "torch")])]
    bandwidth = {}
    for r in found:
        if r.get("bench") == "py_bandwidth" and r.get("impl"):
            bandwidth.setdefault(r.get("kernel"), []).append(
                (r["impl"], r.get("GBps_median")))
    bw_groups = sorted(bandwidth.items())
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="380" '
           'font-family="sans-serif">',
           f'<text x="600" y="20" text-anchor="middle" font-size="15">{escape(title)}</text>']
    panel(60, 60, 330, 240, "cached launch, x C floor", launch_groups, "ratio", svg)
    panel(460, 60, 330, 240, "per launch or call", call_groups, "us", svg)
    panel(860, 60, 320, 240, "bandwidth", bw_groups, "GB/s", svg)
    for i, (series, color) in enumerate(COLORS.items()):
        svg.append(f'<rect x="{60 + i * 150}" y="345" width="12" height="12" fill="{color}"/>')
        svg.append(f'<text x="{76 + i * 150}" y="356" font-size="11">{series}</text>')
    svg.append("</svg>")
    with open(sys.argv[2], "w") as out:
        out.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
