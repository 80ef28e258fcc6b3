"""UEA EigenWorms as preprocessed by the FWP code (docs/sources.md#eigenworms-data).

``eigenworms/get_data/uea.py`` and ``experiments/ingredients/prepare_data.py``: the ``.arff``
train and test files concatenated (259 series × 17,984 steps × 6 channels), labels encoded in
sorted order of the train labels and shifted to start at 0; a time channel
``linspace(0, 1, 17984)`` prepended (7 channels); forward fill along time, leading gaps filled
with the channel mean over all series and steps, anything left (all-NaN channels) with 0
(EigenWorms itself has no missing value); the split (``lem``: the split the FWP code used,
``nrde``: the original neural-RDE one, both 181/39/39, :mod:`zoo.data.splits`); a
``StandardScaler`` fitted on the train series flattened over N·L, applied to channels 1..6.
The grid ``times`` is the step index 0..L−1 (log-signature windows are taken on it).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np
from pydantic import Field

from ..components import DatasetConfig
from ..data.records import DatasetRecord
from ..data.splits import lem_split, nrde_split
from ..data.cache import cached
from ..data.fetch import sha256_of
from ..data.uea_archive import train_test_paths, uea_record
from ..data.uea_format import read_uea
from ..errors import InputError
from ..series import DataBundle, SeriesSplit, TaskInfo

if TYPE_CHECKING:
    import torch

NAME = "EigenWorms"
RECORD = uea_record("eigenworms", "UEA EigenWorms (C. elegans movement, 5 classes)", [NAME],
                    "arff", notes="the FWP code read the .arff release")
SPLITS = {"lem": lem_split, "nrde": nrde_split}


def impute(x: np.ndarray) -> np.ndarray:
    """Forward fill (N, L, C) along L; leading NaNs → channel mean over N·L; rest → 0."""
    x = x.copy()
    for t in range(1, x.shape[1]):
        gap = np.isnan(x[:, t])
        x[:, t][gap] = x[:, t - 1][gap]
    flat = x.reshape(-1, x.shape[2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of an all-NaN channel
        mean = np.nanmean(flat, axis=0)
    rows, cols = np.nonzero(np.isnan(flat))
    flat[rows, cols] = mean[cols]
    flat[np.isnan(flat)] = 0.0
    return flat.reshape(x.shape)


class EigenWormsConfig(DatasetConfig):
    """UEA EigenWorms, 259 series of 17,984 steps, FWP-paper preprocessing and split."""

    time_first: ClassVar[bool | None] = True

    kind: Literal["eigenworms"] = "eigenworms"
    split: Literal["lem", "nrde"] = Field("lem", description="lem: the FWP code's split; "
                                                             "nrde: the neural-RDE paper's")

    record: ClassVar[DatasetRecord] = RECORD

    def task(self) -> TaskInfo:
        return TaskInfo("multiclass", 5)

    def load(self, smoke: bool = False) -> DataBundle:
        import torch
        from sklearn.preprocessing import StandardScaler

        paths = train_test_paths(RECORD, NAME, "arff")
        key = {"dataset": self.kind, "sources": [sha256_of(p) for p in paths], "version": 1}
        raw = cached(key, lambda: self._read(paths))
        x, y = raw["x"].numpy(), raw["y"]
        length = x.shape[1]
        time = np.broadcast_to(torch.linspace(0, 1, length).numpy()[None, :, None],
                               (x.shape[0], length, 1))
        x = impute(np.concatenate([time, x], axis=2))
        parts = SPLITS[self.split](len(y))
        scaler = StandardScaler().fit(x[parts[0], :, 1:].reshape(-1, x.shape[2] - 1))
        times = torch.arange(length, dtype=torch.float32)
        splits = []
        for index in parts:
            xi = x[index].copy()
            xi[:, :, 1:] = scaler.transform(xi[:, :, 1:].reshape(-1, x.shape[2] - 1)
                                            ).reshape(xi.shape[0], length, -1)
            splits.append(SeriesSplit(times=times, values=torch.from_numpy(xi),
                                      y=y[torch.as_tensor(index)]))
        return DataBundle(*splits, self.task(),
                          info={"split": self.split, "sources": [str(p) for p in paths]})

    def _read(self, paths) -> dict[str, torch.Tensor]:
        """Series (N, L, 6) float32 of train then test, and labels encoded from the train ones."""
        import torch
        from sklearn.preprocessing import LabelEncoder

        train, test = (read_uea(p, RECORD.name) for p in paths)
        cases = train.series + test.series
        if len({c.shape[1] for c in cases}) != 1:
            raise InputError(f"dataset '{self.kind}': {paths[0]}, {paths[1]}: series of "
                             f"unequal length; EigenWorms has 17,984 steps per series")
        encoder = LabelEncoder().fit(train.labels)
        if unseen := set(test.labels) - set(encoder.classes_):
            raise InputError(f"dataset '{self.kind}': {paths[1]}: labels {sorted(unseen)} do not "
                             f"occur in {paths[0]}")
        y = torch.tensor(encoder.transform(train.labels + test.labels), dtype=torch.long)
        x = np.stack(cases).transpose(0, 2, 1).astype(np.float32)
        return {"x": torch.from_numpy(x), "y": y - y.min()}
