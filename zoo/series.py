"""Datasets as tensors: splits on a common time grid, task description, and mini-batches."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import torch

#: per-step class label of a step that has none (torch's cross-entropy ``ignore_index``);
#: per-step regression targets use NaN. Readouts leave such steps out of losses and metrics.
IGNORE_LABEL = -100


@dataclass(frozen=True)
class TaskInfo:
    """What is predicted: ``multiclass`` (``n_outputs`` classes), ``binary`` or ``regression``.

    ``per_step`` means every time step carries a label (sequence labelling, forecasting).
    """

    kind: Literal["multiclass", "binary", "regression"]
    n_outputs: int
    per_step: bool = False
    class_names: tuple[str, ...] = ()


@dataclass
class SeriesSplit:
    """One split: ``values`` (N, T, C) on the shared grid ``times`` (T,), NaN where unobserved.

    ``final_index`` (N,) is each series' last real step; ``static`` (N, S) optional time-invariant
    features; ``y`` is (N,) for per-series labels or (N, T[, K]) for per-step targets, with
    :data:`IGNORE_LABEL` (classes) or NaN (values) where a step has no target.
    """

    times: torch.Tensor
    values: torch.Tensor
    y: torch.Tensor
    final_index: torch.Tensor | None = None
    static: torch.Tensor | None = None

    def __post_init__(self) -> None:
        if self.final_index is None:
            import torch

            n, t = self.values.shape[:2]
            self.final_index = torch.full((n,), t - 1, dtype=torch.long)

    def __len__(self) -> int:
        return self.values.shape[0]

    def truncated(self, steps: int, per_step: bool) -> SeriesSplit:
        """The first ``steps`` time steps (labels too for per-step tasks)."""
        if self.values.shape[1] <= steps:
            return self
        return replace(self, times=self.times[:steps], values=self.values[:, :steps],
                       y=self.y[:, :steps] if per_step else self.y,
                       final_index=self.final_index.clamp(max=steps - 1))

    def subset(self, index: torch.Tensor | slice) -> SeriesSplit:
        return replace(
            self,
            values=self.values[index],
            y=self.y[index],
            final_index=self.final_index[index],
            static=None if self.static is None else self.static[index],
        )


@dataclass
class DataBundle:
    """The three splits plus what they mean; ``partial`` explains incomplete source data."""

    train: SeriesSplit
    val: SeriesSplit
    test: SeriesSplit
    task: TaskInfo
    partial: str | None = None
    info: dict = field(default_factory=dict)

    def smoke(self, series: int = 16, steps: int = 24) -> DataBundle:
        """A tiny version for ``--smoke`` checks: a few series, each cut to a few steps."""
        cut = [split.subset(slice(0, series)).truncated(steps, self.task.per_step)
               for split in (self.train, self.val, self.test)]
        return replace(self, train=cut[0], val=cut[1], test=cut[2])

    @property
    def input_channels(self) -> int:
        return self.train.values.shape[-1]

    @property
    def static_channels(self) -> int:
        return 0 if self.train.static is None else self.train.static.shape[-1]


@dataclass
class Batch:
    """A mini-batch as the model sees it: control coefficients instead of raw values."""

    times: torch.Tensor
    coeffs: torch.Tensor
    y: torch.Tensor
    final_index: torch.Tensor
    static: torch.Tensor | None = None

    def to(self, device: torch.device | str, dtype: torch.dtype | None = None) -> Batch:
        def move(x: torch.Tensor | None) -> torch.Tensor | None:
            if x is None:
                return None
            if dtype is not None and x.is_floating_point():
                return x.to(device=device, dtype=dtype)
            return x.to(device)

        return Batch(move(self.times), move(self.coeffs), self.y.to(device),
                     self.final_index.to(device), move(self.static))


@dataclass
class PreparedSplit:
    """A split with its control coefficients precomputed once."""

    split: SeriesSplit
    coeffs: torch.Tensor

    def __len__(self) -> int:
        return len(self.split)

    def batches(self, batch_size: int, shuffle: bool = False, drop_last: bool = False,
                generator: torch.Generator | None = None) -> Iterator[Batch]:
        import torch

        n = len(self)
        order = torch.randperm(n, generator=generator) if shuffle else torch.arange(n)
        stop = n - n % batch_size if drop_last and n >= batch_size else n
        for start in range(0, stop, batch_size):
            idx = order[start:start + batch_size]
            s = self.split
            yield Batch(s.times, self.coeffs[idx], s.y[idx], s.final_index[idx],
                        None if s.static is None else s.static[idx])

    def n_batches(self, batch_size: int, drop_last: bool = False) -> int:
        n = len(self)
        return n // batch_size if drop_last and n >= batch_size else -(-n // batch_size)
