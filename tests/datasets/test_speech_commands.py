"""Speech Commands (docs/sources.md#speech-commands): split sizes, a small archive in the
official layout, the mirror."""

from __future__ import annotations

import io
import tarfile
import wave
from pathlib import Path

import numpy as np
import pytest
import torch

from zoo.data.splits import stratified_70_15_15
from zoo.datasets.speech_commands import FULL, TEST_SET, WORDS, SpeechCommandsConfig
from zoo.errors import InputError

from conftest import DATA_MIRROR as MIRROR, without_mirror


def wav_bytes(samples: np.ndarray) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(16000)
        wav.writeframes(samples.astype("<i2").tobytes())
    return out.getvalue()


def write_archive(path: Path, per_word: int = 4, extra: dict[str, bytes] | None = None) -> None:
    rng = np.random.default_rng(0)
    files = {f"{w}/clip{i}_nohash_0.wav": wav_bytes(rng.integers(-3000, 3000, 16000))
             for w in WORDS for i in range(per_word)}
    files["yes/short_nohash_0.wav"] = wav_bytes(rng.integers(-3000, 3000, 15000))  # dropped
    files["bed/clip0_nohash_0.wav"] = wav_bytes(rng.integers(-3000, 3000, 16000))  # not a word
    files.update(extra or {})
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOO_DATA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ZOO_DATA_MIRROR", str(tmp_path / "mirror"))
    return tmp_path / "mirror" / "speech_commands"


def test_paper_split_sizes_through_the_split_function():
    counts = [3500] * 5 + [3495] * 5  # 34,975 labels of ten classes
    y = np.repeat(np.arange(10), counts)
    train, val, test = stratified_70_15_15(y)
    assert (len(train), len(val), len(test)) == (24482, 5246, 5247)
    assert len(set(train) | set(val) | set(test)) == 34975


def test_small_archive_in_the_official_layout(mirror):
    write_archive(mirror / TEST_SET, per_word=10)
    bundle = SpeechCommandsConfig().load()
    assert "official test-set archive" in bundle.partial
    assert (len(bundle.train), len(bundle.val), len(bundle.test)) == (70, 15, 15)
    assert bundle.train.values.shape[1:] == (161, 21)
    torch.testing.assert_close(bundle.train.values[0, :, 0], torch.arange(161.0))
    assert (bundle.test.final_index == 160).all()
    mfccs = bundle.train.values[..., 1:]
    torch.testing.assert_close(mfccs.mean((0, 1)), torch.zeros(20), atol=1e-4, rtol=0)
    std = mfccs.reshape(-1, 20).std(0)  # (x − μ)/(σ + 1e−5): slightly below 1
    assert ((std < 1) & (std > 0.999)).all()
    assert sorted(torch.cat([bundle.train.y, bundle.val.y, bundle.test.y]).bincount().tolist()) \
        == [10] * 10


def test_intensity_adds_twenty_count_channels(mirror):
    write_archive(mirror / FULL, per_word=10)
    bundle = SpeechCommandsConfig(intensity=True).load()
    assert bundle.partial is None and bundle.input_channels == 41
    torch.testing.assert_close(bundle.val.values[3, :, 1:21],
                               torch.arange(1.0, 162.0)[:, None].expand(161, 20))


def test_bad_wav_names_the_dataset_and_file(mirror):
    write_archive(mirror / TEST_SET, extra={"no/broken.wav": b"RIFF....not a wav"})
    with pytest.raises(InputError, match=r"dataset 'speech_commands': .*no/broken\.wav"):
        SpeechCommandsConfig().load()


def test_archive_without_command_words(mirror):
    mirror.mkdir(parents=True)
    with tarfile.open(mirror / TEST_SET, "w:gz") as tar:
        data = wav_bytes(np.zeros(16000))
        info = tarfile.TarInfo("bed/a.wav")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(InputError, match="holds no 16000-sample clip"):
        SpeechCommandsConfig().load()


@without_mirror("speech_commands")
def test_real_mirror_subset(monkeypatch, tmp_path):
    monkeypatch.setenv("ZOO_DATA_HOME", str(tmp_path))
    monkeypatch.setenv("ZOO_DATA_MIRROR", str(MIRROR))
    bundle = SpeechCommandsConfig().load()
    assert bundle.info["clips"] == 1000 and "1,000-clip subset" in bundle.partial
    labels = torch.cat([bundle.train.y, bundle.val.y, bundle.test.y])
    assert labels.bincount().tolist() == [100] * 10
    assert (len(bundle.train), len(bundle.val), len(bundle.test)) == (700, 150, 150)
    assert bundle.train.values.shape[1:] == (161, 21)
    assert bundle.task.class_names == WORDS
