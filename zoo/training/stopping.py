"""Early stopping: per-monitor best values and staleness, and the decision to stop.

The FWP/NCDE authors' rule (FWP ``experiments/common.py:169-175``,
``260-274``; docs/sources.md#fwp-recipe) is one instance: two monitors (train loss, relative
min_delta 1e-4; train accuracy, relative 1e-3), patience counted in epochs, stop on ``any``.
"""

from __future__ import annotations

from ..spec.sections import StoppingSpec


def improved(value: float, best: float | None, mode: str, min_delta: float = 0.0,
             delta_mode: str = "abs") -> bool:
    """Whether ``value`` beats ``best`` by more than ``min_delta`` (``rel``: a fraction)."""
    if best is None:
        return True
    if delta_mode == "rel":
        return value > best * (1 + min_delta) if mode == "max" else value * (1 + min_delta) < best
    return value > best + min_delta if mode == "max" else value + min_delta < best


class EarlyStopping:
    """Applies a :class:`StoppingSpec` to the records of successive epochs.

    ``state`` maps each monitored metric to ``{"best", "epoch", "stale"}`` (its best value, the
    epoch of its last progress, the values recorded since); it is updated in place, so the
    caller persists it to resume.
    """

    def __init__(self, spec: StoppingSpec, state: dict[str, dict]):
        self.spec, self.state = spec, state
        self.monitors = spec.criteria()

    def update(self, record: dict, epoch: int) -> bool:
        """Take the monitors recorded at ``epoch``; True when training should stop."""
        recorded = [m for m in self.monitors if m.metric in record]
        if not recorded:
            return False
        for m in recorded:
            s = self._state(m.metric)
            value = record[m.metric]
            if improved(value, s["best"], m.mode, m.min_delta, m.delta_mode):
                s.update(best=value, epoch=epoch, stale=0)
            else:
                s["stale"] += 1
        stale = [self._staleness(m.metric, epoch) >= self.spec.patience for m in self.monitors]
        return any(stale) if self.spec.stop_on == "any" else all(stale)

    def _state(self, metric: str) -> dict:
        return self.state.setdefault(metric, {"best": None, "epoch": 0, "stale": 0})

    def _staleness(self, metric: str, epoch: int) -> int:
        s = self._state(metric)
        return epoch - s["epoch"] if self.spec.patience_unit == "epochs" else s["stale"]
