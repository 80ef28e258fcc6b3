"""A PNG per table: paper and reproduced means with ± std error bars, one panel per metric.

Only the rows of the shipped recipe are drawn; runs listed apart are not results.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .table import Row  # noqa: E402


def comparison_figure(rows: list[Row], title: str) -> Callable[[Path], None]:
    """A function that saves the figure as PNG to a given path."""
    panels: dict[str, list[Row]] = {}
    for row in (r for r in rows if r.differs is None):
        panels.setdefault(f"{row.entry.metric.name} ({row.entry.metric.unit})", []).append(row)
    height = 1.2 + 0.32 * max(len(p) for p in panels.values())
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), height), squeeze=False)
    for ax, (label, members) in zip(axes[0], panels.items()):
        ys = range(len(members))
        ax.errorbar([r.entry.mean for r in members], [y - 0.15 for y in ys],
                    xerr=[r.entry.std or 0 for r in members], fmt="s", color="0.45",
                    capsize=3, label="paper")
        ran = [(y, r) for y, r in zip(ys, members) if r.ours is not None]
        if ran:
            ax.errorbar([r.ours.mean for _, r in ran], [y + 0.15 for y, _ in ran],
                        xerr=[r.ours.std or 0 for _, r in ran], fmt="o", color="tab:blue",
                        capsize=3, label="ours")
        ax.set_yticks(list(ys), [f"{r.entry.row}{f' [{r.variant}]' if r.variant else ''} · "
                                 f"{r.entry.column}" for r in members])
        ax.invert_yaxis()
        ax.set_xlabel(label)
        ax.grid(alpha=0.3, axis="x")
        ax.legend(loc="best", fontsize="small")
    fig.suptitle(title, wrap=True)  # long titles break into lines instead of leaving the figure
    fig.tight_layout()

    def save(path: Path) -> None:
        try:
            fig.savefig(path, format="png", dpi=100, bbox_inches="tight")
        finally:
            plt.close(fig)

    return save
