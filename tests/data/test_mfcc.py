"""MFCC in torch (docs/sources.md#speech-commands) against torchaudio and an independent
numpy/scipy chain."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.fft import dct

from zoo.data.mfcc import dct_matrix, mel_filter_bank, mfcc, power_spectrogram


def numpy_mfcc(x: np.ndarray) -> np.ndarray:
    """The same chain written independently in float64: (samples,) → (20, frames)."""
    n_fft, hop, n_mels = 200, 100, 64
    padded = np.pad(x, n_fft // 2, mode="reflect")
    frames = np.stack([padded[i:i + n_fft] for i in range(0, len(padded) - n_fft + 1, hop)])
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    power = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2  # (frames, 101)
    freqs = np.linspace(0, 8000, n_fft // 2 + 1)
    mel = lambda f: 2595 * np.log10(1 + f / 700)  # noqa: E731
    edges = 700 * (10 ** (np.linspace(mel(0), mel(8000), n_mels + 2) / 2595) - 1)
    bank = np.zeros((n_fft // 2 + 1, n_mels))
    for m in range(n_mels):
        lo, mid, hi = edges[m:m + 3]
        bank[:, m] = np.maximum(0, np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)))
    log_mel = np.log(power @ bank + 1e-6)
    return dct(log_mel, type=2, norm="ortho", axis=1)[:, :20].T


def tone(freq: float) -> torch.Tensor:
    return 0.5 * torch.sin(2 * torch.pi * freq * torch.arange(16000) / 16000)


def test_one_second_gives_161_frames_of_20():
    assert mfcc(torch.zeros(2, 16000) + 0.01).shape == (2, 20, 161)


def test_dct_is_orthonormal():
    d = dct_matrix(20, 64)
    assert d.shape == (64, 20)
    torch.testing.assert_close(d.T @ d, torch.eye(20), atol=1e-5, rtol=0)


def test_matches_independent_numpy_chain():
    gen = torch.Generator().manual_seed(0)
    x = tone(440.0) + 0.05 * torch.randn(16000, generator=gen)
    ours = mfcc(x.double()).numpy()
    # the filter bank is built in float32, as torchaudio builds it
    np.testing.assert_allclose(ours, numpy_mfcc(x.double().numpy()), rtol=0, atol=1e-4)
    np.testing.assert_allclose(mfcc(x).numpy(), ours, rtol=0, atol=5e-3)


def test_mel_energy_peaks_at_the_tone_frequency():
    for freq in (300.0, 1000.0, 3000.0):
        fb = mel_filter_bank(101, 0.0, 8000.0, 64, 16000)
        mel = (power_spectrogram(tone(freq)).T @ fb).mean(0)
        centre = (fb * torch.linspace(0, 8000, 101)[:, None]).sum(0) / fb.sum(0)
        peak = centre[mel.argmax()].item()
        spacing = 8000 / 100  # one FFT bin
        assert abs(peak - freq) < 2 * spacing, (freq, peak)


def test_equals_torchaudio():
    torchaudio = pytest.importorskip("torchaudio")
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(3, 16000, generator=gen) * 0.1
    ref = torchaudio.transforms.MFCC(sample_rate=16000, n_mfcc=20, log_mels=True,
                                     melkwargs={"n_fft": 200, "n_mels": 64})(x)
    torch.testing.assert_close(mfcc(x), ref, atol=1e-4, rtol=1e-5)
