"""MFCC features in plain torch, equal to the torchaudio transform the Speech Commands code uses.

The code (docs/sources.md#speech-commands): ``torchaudio.transforms.MFCC(sample_rate=16000,
n_mfcc=20, log_mels=True, melkwargs={"n_fft": 200, "n_mels": 64})`` with torchaudio's defaults
otherwise, i.e. the chain

* power spectrogram: ``torch.stft`` with ``win_length = n_fft = 200``, ``hop = win_length // 2
  = 100``, periodic Hann window, ``center=True`` with reflect padding, ``|·|²``;
* mel filter bank: 64 triangular filters on the HTK mel scale (``2595 log10(1 + f/700)``),
  ``f_min = 0``, ``f_max = sample_rate / 2``, no area normalisation;
* ``log(mel + 1e-6)``, then the orthonormal DCT-II keeping the first 20 coefficients.

16,000 samples give 161 frames. torchaudio has no wheel for every platform, hence this copy.
"""

from __future__ import annotations

import math

import torch

SAMPLE_RATE = 16000
N_FFT = 200
N_MELS = 64
N_MFCC = 20
LOG_OFFSET = 1e-6


def hz_to_mel(freq: float) -> float:
    """HTK mel scale."""
    return 2595.0 * math.log10(1.0 + freq / 700.0)


def mel_to_hz(mels: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`hz_to_mel`."""
    return 700.0 * (10.0 ** (mels / 2595.0) - 1.0)


def mel_filter_bank(n_freqs: int, f_min: float, f_max: float, n_mels: int,
                    sample_rate: int) -> torch.Tensor:
    """Triangular HTK filters, (n_freqs, n_mels), as ``torchaudio.functional.melscale_fbanks``
    with ``norm=None, mel_scale="htk"``."""
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)
    m_pts = torch.linspace(hz_to_mel(f_min), hz_to_mel(f_max), n_mels + 2)
    f_pts = mel_to_hz(m_pts)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - all_freqs[:, None]
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return torch.clamp(torch.minimum(down, up), min=0.0)


def dct_matrix(n_mfcc: int, n_mels: int) -> torch.Tensor:
    """Orthonormal DCT-II basis, (n_mels, n_mfcc), as ``torchaudio.functional.create_dct``."""
    n = torch.arange(float(n_mels))
    k = torch.arange(float(n_mfcc))[:, None]
    dct = torch.cos(math.pi / float(n_mels) * (n + 0.5) * k)
    dct[0] *= 1.0 / math.sqrt(2.0)
    dct *= math.sqrt(2.0 / float(n_mels))
    return dct.t()


def power_spectrogram(waveform: torch.Tensor, n_fft: int = N_FFT) -> torch.Tensor:
    """|STFT|² of ``waveform`` (..., samples) → (..., n_fft // 2 + 1, frames)."""
    shape = waveform.shape
    spec = torch.stft(waveform.reshape(-1, shape[-1]), n_fft=n_fft, hop_length=n_fft // 2,
                      win_length=n_fft, window=torch.hann_window(n_fft, dtype=waveform.dtype),
                      center=True, pad_mode="reflect", normalized=False, onesided=True,
                      return_complex=True)
    power = spec.abs().pow(2.0)
    return power.reshape(shape[:-1] + power.shape[-2:])


def mfcc(waveform: torch.Tensor, sample_rate: int = SAMPLE_RATE, n_mfcc: int = N_MFCC,
         n_fft: int = N_FFT, n_mels: int = N_MELS) -> torch.Tensor:
    """MFCCs of ``waveform`` (..., samples) → (..., n_mfcc, frames), channels before time as in
    torchaudio (the Speech Commands code transposes afterwards)."""
    spec = power_spectrogram(waveform, n_fft)
    fb = mel_filter_bank(n_fft // 2 + 1, 0.0, sample_rate / 2, n_mels, sample_rate)
    mel = torch.matmul(spec.transpose(-1, -2), fb.to(spec.dtype)).transpose(-1, -2)
    log_mel = torch.log(mel + LOG_OFFSET)
    dct = dct_matrix(n_mfcc, n_mels).to(spec.dtype)
    return torch.matmul(log_mel.transpose(-1, -2), dct).transpose(-1, -2)
