"""Kidger et al.'s shared preprocessing (``experiments/datasets/common.py``;
docs/sources.md#speech-commands and #sepsis).

Used unchanged by the Speech Commands, PhysioNet sepsis and UEA experiments of the NCDE and FWP
papers: per-channel normalisation with train-split statistics, then the channels
``[time, cumulative observation counts (optional), values]``, then the stratified 70/15/15 split.
"""

from __future__ import annotations

import torch

from ..series import DataBundle, SeriesSplit, TaskInfo
from .splits import stratified_70_15_15


def normalise(x: torch.Tensor, train_index) -> torch.Tensor:
    """``(x − μ) / (σ + 1e−5)`` per last-axis channel, μ and σ over the train rows, NaN ignored.

    σ is torch's unbiased standard deviation; NaNs stay NaN, and so does a channel with fewer
    than two observed train values (its μ or σ is NaN in the original code too).
    """
    train = x[torch.as_tensor(train_index)]
    out = []
    for channel, train_channel in zip(x.unbind(-1), train.unbind(-1)):
        seen = train_channel.masked_select(~torch.isnan(train_channel))
        if seen.numel() < 2:  # no statistics: the channel becomes NaN, as in the original
            out.append(torch.full_like(channel, float("nan")))
            continue
        out.append((channel - seen.mean()) / (seen.std() + 1e-5))
    return torch.stack(out, dim=-1)


def with_time_and_intensity(times: torch.Tensor, x: torch.Tensor, intensity: bool) -> torch.Tensor:
    """Prepend the (unnormalised) time channel and, with ``intensity``, the per-channel
    cumulative count of observations (``cumsum`` of not-NaN) in that order: time, counts, x."""
    parts = [times.to(x.dtype).expand(x.shape[0], -1)[..., None]]
    if intensity:
        parts.append((~torch.isnan(x)).to(x.dtype).cumsum(dim=1))
    parts.append(x)
    return torch.cat(parts, dim=-1)


def ncde_bundle(times: torch.Tensor, x: torch.Tensor, y: torch.Tensor, final_index: torch.Tensor,
                task: TaskInfo, *, intensity: bool, static: torch.Tensor | None = None,
                static_normalised: int | None = None) -> DataBundle:
    """The three splits of ``x`` (N, T, C) after Kidger et al.'s preprocessing.

    ``static`` (N, S) is normalised the same way on its first ``static_normalised`` columns
    (all when ``None``); the remaining columns (observation flags) are kept as they are.
    """
    train, val, test = stratified_70_15_15(y)
    values = with_time_and_intensity(times, normalise(x, train), intensity)
    if static is not None:
        k = static.shape[1] if static_normalised is None else static_normalised
        static = torch.cat([normalise(static[:, :k], train), static[:, k:]], dim=1)
    whole = SeriesSplit(times=times, values=values, y=y, final_index=final_index, static=static)
    return DataBundle(*(whole.subset(torch.as_tensor(i)) for i in (train, val, test)), task)
