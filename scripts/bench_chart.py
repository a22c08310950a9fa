#!/usr/bin/env python3
"""Latency against vault size, log scales, as an SVG: from `authctl --json bench vault` output.

    .build/release/authctl --json bench vault --sizes 10,100,1000,10000,100000 > vault.json
    python3 scripts/bench_chart.py vault.json > docs/benchmarks-latency.svg

Standard library only: the chart is drawn as SVG by hand.
"""
import json
import math
import sys

SERIES = [("openMs", "open + index", "#1f77b4"), ("registerMs", "register", "#2ca02c"),
          ("signMs", "sign", "#d62728"), ("openSignMs", "open + sign", "#9467bd")]
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 720, 420, 70, 170, 30, 50


def decades(low, high):
    return list(range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1))


def chart(report):
    rows = sorted(report["rows"], key=lambda r: r["size"])
    if not rows:
        raise SystemExit("no rows in the report")
    sizes = [r["size"] for r in rows]
    values = [r[key] for r in rows for key, _, _ in SERIES if r[key] > 0]
    xs, ys = decades(min(sizes), max(sizes)), decades(min(values), max(values))
    if len(xs) < 2:
        xs.append(xs[0] + 1)
    if len(ys) < 2:
        ys.append(ys[0] + 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(size):
        return LEFT + (math.log10(size) - xs[0]) / (xs[-1] - xs[0]) * plot_w

    def y(ms):
        return TOP + plot_h - (math.log10(ms) - ys[0]) / (ys[-1] - ys[0]) * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>']
    for d in xs:
        out.append(f'<line x1="{x(10 ** d):.1f}" y1="{TOP}" x2="{x(10 ** d):.1f}" y2="{TOP + plot_h}" stroke="#ddd"/>')
        out.append(f'<text x="{x(10 ** d):.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">{10 ** d:,}</text>')
    for d in ys:
        label = f"{10.0 ** d:g}"
        out.append(f'<line x1="{LEFT}" y1="{y(10.0 ** d):.1f}" x2="{LEFT + plot_w}" y2="{y(10.0 ** d):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 8}" y="{y(10.0 ** d) + 4:.1f}" text-anchor="end">{label}</text>')
    out.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 12}" text-anchor="middle">passkeys in the vault (log)</text>')
    out.append(f'<text x="16" y="{TOP + plot_h / 2}" text-anchor="middle" transform="rotate(-90 16 {TOP + plot_h / 2})">'
               f'milliseconds, median of {report.get("runs", "?")} runs (log)</text>')
    for i, (key, name, color) in enumerate(SERIES):
        points = " ".join(f"{x(r['size']):.1f},{y(r[key]):.1f}" for r in rows if r[key] > 0)
        out.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2"/>')
        for r in rows:
            if r[key] > 0:
                out.append(f'<circle cx="{x(r["size"]):.1f}" cy="{y(r[key]):.1f}" r="3" fill="{color}"/>')
        ly = TOP + 10 + i * 20
        out.append(f'<line x1="{WIDTH - RIGHT + 15}" y1="{ly}" x2="{WIDTH - RIGHT + 40}" y2="{ly}" stroke="{color}" stroke-width="2"/>')
        out.append(f'<text x="{WIDTH - RIGHT + 46}" y="{ly + 4}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    source = open(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "-" else sys.stdin
    sys.stdout.write(chart(json.load(source)))
