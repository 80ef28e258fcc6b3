"""Speech Commands v0.02, ten command words as MFCC sequences (docs/sources.md#speech-commands).

Preprocessing of the FWP/NCDE code: the clips of the words yes, no, up, down, left, right, on,
off, stop, go (labels 0–9 in that order) that have exactly 16,000 samples (34,975 clips in the
full archive), samples / 2^15, MFCC (20 coefficients × 161 frames, :mod:`zoo.data.mfcc`),
per-channel normalisation with train statistics, then the channels [time 0..160,
(20 cumulative counts with ``intensity``), 20 MFCCs] and the stratified 70/15/15 split
(:mod:`zoo.data.ncde_pipeline`). ``final_index`` is 160 for every clip.

Clips are taken in sorted order within each word (the original code used the file system's
directory order, which is not reproducible). Sources, best first: the full archive, the official
test-set archive, the mirror's 1,000-clip test subset; the last two are labelled partial.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np
from pydantic import Field

from ..components import DatasetConfig
from ..data.cache import cached
from ..data.fetch import best_located, fetch, sha256_of
from ..data.records import DatasetRecord, RemoteFile
from ..data.wav_archive import iter_clips
from ..errors import InputError
from ..series import DataBundle, TaskInfo

if TYPE_CHECKING:
    import torch

WORDS = ("yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go")
CLIP_SAMPLES = 16000
FULL = "speech_commands_v0.02.tar.gz"
TEST_SET = "speech_commands_test_set_v0.02.tar.gz"
SUBSET = "speech_commands_test_set_v0.02_subset.tar.gz"
SMOKE_PER_WORD = 8
MFCC_BATCH = 1024

RECORD = DatasetRecord(
    name="speech_commands",
    title="Speech Commands v0.02 (Warden, 2018)",
    files=(
        RemoteFile(FULL, ("http://download.tensorflow.org/data/speech_commands_v0.02.tar.gz",),
                   note="no checksum is published; 105,829 clips, about 2.3 GB"),
        RemoteFile(TEST_SET,
                   ("http://download.tensorflow.org/data/speech_commands_test_set_v0.02.tar.gz",),
                   note="the official test set only; no checksum is published"),
        RemoteFile(SUBSET, (), size=22426755,
                   sha256="68a4530be569316492a2c9c4c6c2e7523aadee5a52995d8f2effa1a0bdb10f06",
                   note="not an official file: the first 100 clips (by name) of each of the ten "
                        "words of the official test set, kept in a mirror"),
    ),
    licence="CC BY 4.0",
    citation="P. Warden, Speech Commands: A Dataset for Limited-Vocabulary Speech Recognition, "
             "arXiv:1804.03209, 2018",
    homepage="https://www.tensorflow.org/datasets/catalog/speech_commands",
    mirror_subdir="speech_commands",
    alternatives=True,
    notes="The FWP and NCDE papers use the 34,975 clips of 16,000 samples of the ten command "
          "words of the full archive.",
)

PARTIAL = {
    TEST_SET: "only the official test-set archive of Speech Commands v0.02 was available, not "
              "the full archive (34,975 clips of the ten words); results are not the paper's",
    SUBSET: "only a 1,000-clip subset (100 per word) of the official Speech Commands v0.02 test "
            "set was available, not the full archive (34,975 clips); results are not the paper's",
}


def read_clips(archive, per_word: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Waveforms (N, 16000) of the 16,000-sample clips of :data:`WORDS` and their labels,
    word by word, sorted by clip name within a word."""
    import torch

    found = {word: [] for word in WORDS}
    for word, name, samples in iter_clips(archive, WORDS, RECORD.name, per_word):
        if len(samples) == CLIP_SAMPLES:
            found[word].append((name, samples))
    clips = [(label, s) for label, word in enumerate(WORDS) for _, s in sorted(found[word],
                                                                               key=lambda c: c[0])]
    if not clips:
        raise InputError(f"dataset '{RECORD.name}': {archive} holds no {CLIP_SAMPLES}-sample clip "
                         f"in the folders {', '.join(WORDS)}")
    waves = torch.from_numpy(np.stack([s for _, s in clips]))
    return waves, torch.tensor([label for label, _ in clips], dtype=torch.long)


def mfcc_features(waves: torch.Tensor) -> torch.Tensor:
    """(N, 16000) waveforms → (N, 161, 20) MFCC sequences, computed in batches."""
    import torch

    from ..data.mfcc import mfcc

    return torch.cat([mfcc(chunk).transpose(1, 2) for chunk in waves.split(MFCC_BATCH)])


class SpeechCommandsConfig(DatasetConfig):
    """Speech Commands v0.02, 10 command words as 161 × 20 MFCC sequences (FWP/NCDE papers)."""

    time_first: ClassVar[bool | None] = True

    kind: Literal["speech_commands"] = "speech_commands"
    intensity: bool = Field(False, description="add the 20 cumulative observation-count channels "
                                               "(for ODE-RNN/GRU-D/GRU-Δt baselines)")

    record: ClassVar[DatasetRecord] = RECORD

    def task(self) -> TaskInfo:
        return TaskInfo("multiclass", len(WORDS), class_names=WORDS)

    def source(self) -> str:
        """The best archive available without downloading, else the full one (downloaded)."""
        best = best_located(RECORD)
        return FULL if best is None else best.name

    def load(self, smoke: bool = False) -> DataBundle:
        import torch

        from ..data.ncde_pipeline import ncde_bundle

        name = self.source()
        archive = fetch(RECORD, name)
        per_word = SMOKE_PER_WORD if smoke else None
        key = {"dataset": self.kind, "archive": name, "sha256": sha256_of(archive),
               "per_word": per_word, "version": 1}

        def build() -> dict[str, torch.Tensor]:
            waves, y = read_clips(archive, per_word)
            return {"x": mfcc_features(waves), "y": y}

        tensors = cached(key, build)
        x = tensors["x"]
        times = torch.arange(x.shape[1], dtype=x.dtype)
        final_index = torch.full((x.shape[0],), x.shape[1] - 1, dtype=torch.long)
        bundle = ncde_bundle(times, x, tensors["y"], final_index, self.task(),
                             intensity=self.intensity)
        bundle.partial = PARTIAL.get(name)
        bundle.info.update(source=str(archive), clips=x.shape[0])
        return bundle
