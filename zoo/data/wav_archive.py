"""Read 16-bit PCM mono wav clips out of a tar archive laid out as ``<word>/<clip>.wav``.

The Speech Commands archives have this layout (docs/sources.md#speech-commands). Samples are
returned divided by 2^15, as the authors' code does after reading the raw integers.
"""

from __future__ import annotations

import tarfile
import wave
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

import numpy as np

from ..errors import InputError


def read_wav(fh, where: str, dataset: str) -> np.ndarray:
    """The samples of one 16-bit mono wav file object as float32 in [−1, 1)."""
    try:
        with wave.open(fh) as wav:
            if wav.getnchannels() != 1 or wav.getsampwidth() != 2:
                raise InputError(f"dataset '{dataset}': {where}: expected 16-bit mono PCM, got "
                                 f"{wav.getnchannels()} channel(s) of {8 * wav.getsampwidth()} bit")
            frames = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as exc:
        raise InputError(f"dataset '{dataset}': {where}: not a readable wav file ({exc})") from None
    return np.frombuffer(frames, dtype="<i2").astype(np.float32) / 2 ** 15


def iter_clips(archive: Path, words: Sequence[str], dataset: str,
               per_word: int | None = None) -> Iterator[tuple[str, str, np.ndarray]]:
    """``(word, clip name, samples)`` for every ``<word>/<name>.wav`` with ``word`` in ``words``,
    in archive order; with ``per_word``, at most that many clips per word are read."""
    wanted = set(words)
    taken = dict.fromkeys(words, 0)
    try:
        with tarfile.open(archive) as tar:
            for member in tar:
                path = PurePosixPath(member.name)
                if not member.isfile() or path.suffix != ".wav" or len(path.parts) < 2:
                    continue
                word = path.parts[-2]
                if word not in wanted or (per_word is not None and taken[word] >= per_word):
                    continue
                taken[word] += 1
                where = f"{archive}:{member.name}"
                yield word, path.name, read_wav(tar.extractfile(member), where, dataset)
                if per_word is not None and min(taken.values()) >= per_word:
                    return
    except (tarfile.TarError, zlib.error, EOFError, OSError) as exc:
        raise InputError(f"dataset '{dataset}': {archive} is not a readable tar archive "
                         f"({exc})") from None
