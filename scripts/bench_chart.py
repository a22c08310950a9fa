#!/usr/bin/env python3
"""Charts against vault size, log scales, as SVG: from `authctl --json bench vault` output.

    .build/release/authctl --json bench vault --sizes 10,100,1000,10000,100000 > vault.json
    python3 scripts/bench_chart.py vault.json > docs/benchmarks-latency.svg            # in-process
    python3 scripts/bench_chart.py --commands vault.json > docs/benchmarks-commands.svg  # as processes

Without --commands: the in-process medians (open + index, register, sign, open + sign). With
--commands: two panels, each command's median wall time and its peak resident memory. A report
of several device counts (`--devices 1,2,5`) draws one line per device count, dashed by count.

Standard library only: the chart is drawn as SVG by hand.
"""
import json
import math
import sys

LIBRARY = [("openMs", "open + index", "#1f77b4"), ("registerMs", "register", "#2ca02c"),
           ("signMs", "sign", "#d62728"), ("openSignMs", "open + sign", "#9467bd")]
COMMANDS = [("sign", "sign", "#d62728"), ("signDiscoverable", "sign, discoverable", "#e377c2"), ("register", "register", "#2ca02c"),
            ("show", "credential show", "#ff7f0e"), ("delete", "delete", "#8c564b"), ("list", "list", "#1f77b4"),
            ("listRP", "list --rp-id", "#17becf")]
DASHES = ["", "7,4", "2,3", "10,3,2,3", "1,5"]
PANEL_W, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 560, 440, 70, 20, 40, 50
LEGEND_W = 190


def decades(low, high):
    return list(range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1))


def panel(out, x0, rows, lines, ylabel, title):
    """One log-log panel at horizontal offset x0. `lines`: (name, color, dash, [(size, value)])."""
    sizes = [r["size"] for r in rows]
    values = [v for _, _, _, points in lines for _, v in points if v > 0]
    if not values:
        raise SystemExit("nothing to chart: the report has no figures of that kind")
    xs, ys = decades(min(sizes), max(sizes)), decades(min(values), max(values))
    if len(xs) < 2:
        xs.append(xs[0] + 1)
    if len(ys) < 2:
        ys.append(ys[0] + 1)
    plot_w, plot_h = PANEL_W - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(size):
        return x0 + LEFT + (math.log10(size) - xs[0]) / (xs[-1] - xs[0]) * plot_w

    def y(v):
        return TOP + plot_h - (math.log10(v) - ys[0]) / (ys[-1] - ys[0]) * plot_h

    out.append(f'<text x="{x0 + LEFT + plot_w / 2}" y="{TOP - 16}" text-anchor="middle" font-weight="bold">{title}</text>')
    for d in xs:
        out.append(f'<line x1="{x(10 ** d):.1f}" y1="{TOP}" x2="{x(10 ** d):.1f}" y2="{TOP + plot_h}" stroke="#ddd"/>')
        out.append(f'<text x="{x(10 ** d):.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">{10 ** d:,}</text>')
    for d in ys:
        out.append(f'<line x1="{x0 + LEFT}" y1="{y(10.0 ** d):.1f}" x2="{x0 + LEFT + plot_w}" y2="{y(10.0 ** d):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 + LEFT - 8}" y="{y(10.0 ** d) + 4:.1f}" text-anchor="end">{10.0 ** d:g}</text>')
    out.append(f'<text x="{x0 + LEFT + plot_w / 2}" y="{HEIGHT - 12}" text-anchor="middle">passkeys in the vault (log)</text>')
    out.append(f'<text x="{x0 + 16}" y="{TOP + plot_h / 2}" text-anchor="middle" transform="rotate(-90 {x0 + 16} {TOP + plot_h / 2})">'
               f'{ylabel}</text>')
    for _, color, dash, points in lines:
        shown = [(s, v) for s, v in points if v > 0]
        style = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline points="{" ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in shown)}" fill="none" '
                   f'stroke="{color}" stroke-width="2"{style}/>')
        for s, v in shown:
            out.append(f'<circle cx="{x(s):.1f}" cy="{y(v):.1f}" r="3" fill="{color}"/>')


def legend(out, x0, series, device_counts):
    for i, (_, name, color) in enumerate(series):
        ly = TOP + 10 + i * 20
        out.append(f'<line x1="{x0 + 10}" y1="{ly}" x2="{x0 + 40}" y2="{ly}" stroke="{color}" stroke-width="2"/>')
        out.append(f'<text x="{x0 + 46}" y="{ly + 4}">{name}</text>')
    if len(device_counts) > 1:
        for j, n in enumerate(device_counts):
            ly = TOP + 10 + (len(series) + 1 + j) * 20
            dash = DASHES[j % len(DASHES)]
            style = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<line x1="{x0 + 10}" y1="{ly}" x2="{x0 + 40}" y2="{ly}" stroke="#333" stroke-width="2"{style}/>')
            out.append(f'<text x="{x0 + 46}" y="{ly + 4}">{n} device{"s" if n > 1 else ""}</text>')


def chart(report, commands=False):
    rows = sorted(report["rows"], key=lambda r: (r.get("devices", 1), r["size"]))
    if not rows:
        raise SystemExit("no rows in the report")
    counts = sorted({r.get("devices", 1) for r in rows})
    layout = "all passkeys on one RP" if report.get("bigRP") else "passkeys over 1,000 RPs"
    runs = report.get("runs", "?")

    def lines_of(series, value):
        out = []
        for j, n in enumerate(counts):
            mine = [r for r in rows if r.get("devices", 1) == n]
            for key, name, color in series:
                out.append((name, color, DASHES[j % len(DASHES)], [(r["size"], value(r, key)) for r in mine if value(r, key) is not None]))
        return out

    panels = []
    if commands:
        def command(r, key, field):
            # A report from before a command was timed has no figures for it: no line.
            return r["commands"][key][field] if key in (r.get("commands") or {}) else None
        panels.append((lines_of(COMMANDS, lambda r, k: command(r, k, "medianMs")),
                       f"milliseconds, median of {runs} runs (log)", f"authctl as a process: time ({layout})"))
        panels.append((lines_of(COMMANDS, lambda r, k: command(r, k, "maxRssMiB")),
                       "peak resident memory, MiB (log)", "authctl as a process: memory"))
        series = COMMANDS
    else:
        panels.append((lines_of(LIBRARY, lambda r, k: r.get(k)), f"milliseconds, median of {runs} runs (log)",
                       f"in-process ({layout})"))
        series = LIBRARY
    width = PANEL_W * len(panels) + LEGEND_W
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{HEIGHT}" fill="white"/>']
    for i, (lines, ylabel, title) in enumerate(panels):
        panel(out, i * PANEL_W, rows, lines, ylabel, title)
    legend(out, PANEL_W * len(panels), series, counts)
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--commands"]
    source = open(arguments[0]) if arguments and arguments[0] != "-" else sys.stdin
    sys.stdout.write(chart(json.load(source), commands="--commands" in sys.argv[1:]))
