"""The history chart: each agent's accuracy per day with its 95% interval, as inline SVG.

Written at build time as plain SVG (no script, no external font): readable without JavaScript
and byte-identical for the same inputs. It scales with its container: a viewBox of WIDTH × HEIGHT
drawn at the container's width (100%, the stylesheet caps it at WIDTH px), so on a phone its
points and legend shrink with it instead of running off-screen. Days are evenly spaced on the x axis; a change of pool
version is a dashed vertical line labelled with the new version.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from html import escape

# Colour-blind-safe qualitative palette (Okabe–Ito), cycled.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
WIDTH, HEIGHT = 860, 360
LEFT, RIGHT, TOP, BOTTOM = 56, 170, 20, 48


@dataclass(frozen=True)
class Point:
    day: dt.date
    accuracy: float
    low: float
    high: float


def history_svg(series: dict[str, list[Point]], days: list[dt.date], pool_changes: dict[dt.date, str]) -> str:
    """SVG of `series` (agent -> points) over `days`; `pool_changes` maps a day to the pool version
    that starts on it."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    position = {d: i for i, d in enumerate(days)}

    def x(day: dt.date) -> float:
        return LEFT + (plot_w * position[day] / (len(days) - 1) if len(days) > 1 else plot_w / 2)

    def y(value: float) -> float:
        return TOP + plot_h * (1 - value)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="history-chart" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" '
           f'width="100%" preserveAspectRatio="xMidYMid meet" font-family="sans-serif" font-size="11">',
           "<title>Accuracy per day with 95% intervals, one line per agent</title>"]
    for tick in range(0, 11, 2):
        value = tick / 10
        out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(value):.1f}" y2="{y(value):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value:.0%}</text>')
    step = max(1, len(days) // 8)
    for i, day in enumerate(days):
        last = i == len(days) - 1
        if (i % step == 0 and (last or len(days) - 1 - i >= step / 2)) or last:
            out.append(f'<text x="{x(day):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle">{day.isoformat()}</text>')
    out.append(f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 8}" text-anchor="middle">gold date</text>')
    out.append(f'<text x="14" y="{TOP + plot_h / 2:.1f}" transform="rotate(-90 14 {TOP + plot_h / 2:.1f})" '
               'text-anchor="middle">accuracy</text>')
    for day, version in sorted(pool_changes.items()):
        if day in position:
            out.append(f'<line class="pool-change" x1="{x(day):.1f}" x2="{x(day):.1f}" y1="{TOP}" y2="{TOP + plot_h}" '
                       'stroke="#666" stroke-dasharray="4 3"/>')
            out.append(f'<text x="{x(day) + 3:.1f}" y="{TOP + 10}" fill="#444">pool {escape(version)}</text>')
    for index, (agent, points) in enumerate(sorted(series.items())):
        colour = PALETTE[index % len(PALETTE)]
        points = sorted((p for p in points if p.day in position), key=lambda p: position[p.day])
        out.append(f'<g class="series" data-agent="{escape(agent)}" stroke="{colour}" fill="{colour}">')
        for p in points:
            out.append(f'<line x1="{x(p.day):.1f}" x2="{x(p.day):.1f}" y1="{y(p.low):.1f}" y2="{y(p.high):.1f}" '
                       'stroke-width="1"/>')
        if len(points) > 1:
            path = " ".join(f"{x(p.day):.1f},{y(p.accuracy):.1f}" for p in points)
            out.append(f'<polyline points="{path}" fill="none" stroke-width="2"/>')
        for p in points:
            out.append(f'<circle cx="{x(p.day):.1f}" cy="{y(p.accuracy):.1f}" r="3">'
                       f'<title>{escape(agent)} {p.day.isoformat()}: {p.accuracy:.1%} '
                       f'[{p.low:.1%}, {p.high:.1%}]</title></circle>')
        out.append("</g>")
        legend_y = TOP + 14 + 16 * index
        out.append(f'<rect x="{LEFT + plot_w + 14}" y="{legend_y - 8}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{LEFT + plot_w + 30}" y="{legend_y + 1}">{escape(agent)}</text>')
    out.append("</svg>")
    return "\n".join(out)
