"""The speed-up figure of a benchmark section: fast over generic per case, with target and bound."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def speedup_figure(cases: list[str], speedups: list[float], targets: list[float | None],
                   bounds: list[float | None], path: Path, title: str) -> None:
    """Horizontal bars of the speed-ups (green where the target is met or there is none, red
    where it is missed), the targets as diamonds and the bounds as bars, on a log scale;
    written atomically to ``path`` (PNG)."""
    rows = range(len(cases))
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(cases) + 1.4))
    colours = ["tab:red" if t is not None and s < t else "tab:green"
               for s, t in zip(speedups, targets)]
    ax.barh(rows, [s - 1 for s in speedups], left=1, color=colours, height=0.6)
    for row, *values in zip(rows, speedups, targets, bounds):
        ax.annotate(f"{values[0]:.1f}×", (max(v for v in values if v is not None), row),
                    xytext=(6, 0), textcoords="offset points", va="center", fontsize="small")
    for values, style in ((targets, dict(marker="D", color="tab:orange", label="target")),
                          (bounds, dict(marker="|", s=250, color="black",
                                        label="bound (bench/floor.py)"))):
        points = [(v, row) for v, row in zip(values, rows) if v is not None]
        if points:
            ax.scatter(*zip(*points), zorder=3, **style)
    ax.axvline(1, color="grey", linewidth=0.8)
    ax.set_xscale("log")
    top = max(v for v in (*speedups, *targets, *bounds) if v is not None)
    ax.set_xlim(1, 1.8 * top)  # room for the labels
    ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200) if t <= 1.8 * top]
    ax.set_xticks(ticks, [f"{t}×" for t in ticks])
    ax.minorticks_off()
    ax.set_yticks(list(rows), cases)
    ax.invert_yaxis()
    ax.set_xlabel("training-step speed-up, fast over generic (log scale); the label is the bar")
    ax.set_title(title, fontsize="medium")
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)
    tmp.replace(path)
