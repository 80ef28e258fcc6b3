"""Figures logged with a run, drawn with matplotlib's object API: no pyplot, no backend
selected, so a notebook's matplotlib settings are left as they are."""

from __future__ import annotations

from pathlib import Path

from .spec.sections import TRAIN_EVAL


def learning_curves(history: list[dict], path: Path, title: str) -> Path:
    """Training loss, then each evaluated metric (validation and training split) per panel."""
    names = sorted({k.split("/", 1)[1] for r in history for k in r
                    if k.startswith(("val/", f"{TRAIN_EVAL}/"))})
    panels = [("train/loss", ["train/loss"])]
    panels += [(name, [f"{TRAIN_EVAL}/{name}", f"val/{name}"]) for name in names]
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4 * len(panels), 3.2))
    axes = fig.subplots(1, len(panels), squeeze=False)
    for ax, (name, keys) in zip(axes[0], panels):
        for key in keys:
            points = [(r["epoch"], r[key]) for r in history if key in r]
            if points:
                ax.plot(*zip(*points), marker="o", markersize=3, label=key)
        if len(ax.lines) > 1:
            ax.legend(fontsize="small")
        ax.set_title(ax.lines[0].get_label() if len(ax.lines) == 1 else name)
        ax.set_xlabel("epoch")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path
