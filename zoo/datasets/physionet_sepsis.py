"""PhysioNet/CinC Challenge 2019 sepsis prediction from the first 72 ICU hours
(docs/sources.md#sepsis).

Preprocessing of the FWP/NCDE code: stays read by :mod:`zoo.data.sepsis_psv` from training
sets A and B, padded with NaN to the longest kept stay (72 hours on the real data),
``final_index`` = last real row, time channel 1..72, then :mod:`zoo.data.ncde_pipeline`
(per-channel normalisation with train statistics ignoring NaN, optional 34 cumulative-count
channels between time and values, stratified 70/15/15 split). Static features [Age, Gender,
Unit1, Unit2, HospAdmTime] are normalised with train statistics; with ``intensity`` (the
papers' "OI") the unnormalised flags "Unit1 observed", "Unit2 observed" are appended and the
count channels are added (input channels 1 + 34 + 34 = 69; without OI 35).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from ..components import DatasetConfig
from ..data.cache import cached
from ..data.fetch import fetch, sha256_of
from ..data.records import DatasetRecord, RemoteFile
from ..data.sepsis_psv import N_FEATURES, psv_members, read_stays
from ..errors import InputError
from ..series import DataBundle, TaskInfo

if TYPE_CHECKING:
    import torch

SET_A = "training_setA.zip"
SET_B = "training_setB.zip"
SMOKE_FILES = 200
FULL_SIZES = (20336, 20000)
_URL = "https://archive.physionet.org/users/shared/challenge-2019/"

RECORD = DatasetRecord(
    name="physionet_sepsis",
    title="PhysioNet/CinC Challenge 2019: early prediction of sepsis (training sets A and B)",
    files=(
        RemoteFile(SET_A, (_URL + SET_A,), note="20,336 stays; no checksum is published",
                   partial_in_mirror="the mirror's training set A holds 17,652 of its 20,336 "
                                     "stays (p009894–p012577 are missing); results on it are "
                                     "not the paper's"),
        RemoteFile(SET_B, (_URL + SET_B,), note="20,000 stays; no checksum is published"),
    ),
    licence="Open Data Commons Attribution License v1.0 (PhysioNet open access)",
    citation="M. A. Reyna et al., Early Prediction of Sepsis From Clinical Data: the "
             "PhysioNet/Computing in Cardiology Challenge 2019, Critical Care Medicine 48(2), 2020",
    homepage="https://physionet.org/content/challenge-2019/",
    mirror_subdir="physionet2019",
)


class PhysioNetSepsisConfig(DatasetConfig):
    """PhysioNet 2019 sepsis, first 72 ICU hours, binary label (FWP/NCDE papers)."""

    time_first: ClassVar[bool | None] = True

    kind: Literal["physionet_sepsis"] = "physionet_sepsis"
    intensity: bool = Field(False, description="observational intensity (OI): 34 cumulative "
                                               "count channels and 2 static observed flags")
    count_channels: bool | None = Field(
        None, description="the 34 count channels alone (default: as intensity; the ODE-RNN, "
                          "GRU-Δt and GRU-D baselines use them without OI)")

    record: ClassVar[DatasetRecord] = RECORD

    def task(self) -> TaskInfo:
        return TaskInfo("binary", 1, class_names=("no sepsis", "sepsis"))

    def load(self, smoke: bool = False) -> DataBundle:
        import torch

        from ..data.ncde_pipeline import ncde_bundle

        archives = [fetch(RECORD, SET_A), fetch(RECORD, SET_B)]
        limit = SMOKE_FILES if smoke else None
        key = {"dataset": self.kind, "flags": self.intensity, "limit": limit, "version": 1,
               "sources": [sha256_of(p) for p in archives]}
        tensors = cached(key, lambda: self._parse(archives, limit))
        x = tensors["x"]
        times = torch.linspace(1, x.shape[1], x.shape[1])
        counts = self.intensity if self.count_channels is None else self.count_channels
        bundle = ncde_bundle(times, x, tensors["y"], tensors["final_index"], self.task(),
                             intensity=counts, static=tensors["static"], static_normalised=5)
        bundle.partial = self._partial(archives)
        bundle.info.update(stays=x.shape[0], sources=[str(p) for p in archives])
        return bundle

    @staticmethod
    def _partial(archives) -> str | None:
        """Says which training set holds fewer stays than the official one (the mirror's set A
        lacks 2,684)."""
        held = [len(psv_members(p, RECORD.name)) for p in archives]
        short = [f"training set {s} holds {n:,} of its {full:,} stays"
                 for s, n, full in zip("AB", held, FULL_SIZES) if n < full]
        return "; ".join(short) + "; results are not the paper's" if short else None

    def _parse(self, archives, limit) -> dict[str, torch.Tensor]:
        import torch

        stays = [stay for _, stay in read_stays(archives, RECORD.name, self.intensity, limit)]
        if not stays:
            raise InputError(f"dataset '{RECORD.name}': no stay with more than 2 hours in "
                             f"{', '.join(map(str, archives))}")
        length = max(len(s.rows) for s in stays)
        pad = [math.nan] * N_FEATURES
        x = torch.tensor([s.rows + [pad] * (length - len(s.rows)) for s in stays])
        return {"x": x,
                "static": torch.tensor([s.static for s in stays]),
                "y": torch.tensor([s.label for s in stays]),
                "final_index": torch.tensor([len(s.rows) - 1 for s in stays])}
