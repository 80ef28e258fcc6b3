"""Figures logged with a run."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def learning_curves(history: list[dict], path: Path, title: str) -> Path:
    """Training loss and every validation metric against the epoch, one panel each."""
    keys = ["train/loss"] + sorted({k for r in history for k in r if k.startswith("val/")})
    fig, axes = plt.subplots(1, len(keys), figsize=(4 * len(keys), 3.2), squeeze=False)
    for ax, key in zip(axes[0], keys):
        points = [(r["epoch"], r[key]) for r in history if key in r]
        if points:
            ax.plot(*zip(*points), marker="o", markersize=3)
        ax.set_title(key)
        ax.set_xlabel("epoch")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
