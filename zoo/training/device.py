"""The torch device a spec's ``device:`` (or ``--device``) names, and what a run records of it."""

from __future__ import annotations

import os

import torch

from ..errors import InputError

#: the epoch metric of the largest GPU memory that torch's allocator held during the epoch
PEAK_MEMORY = "gpu/peak_memory_mb"
#: the run's: the largest of its epochs'
RUN_PEAK_MEMORY = "gpu/run_peak_memory_mb"


def resolve_device(name: str) -> torch.device:
    """``auto`` is CUDA where available, else the CPU; ``cuda`` without one is an error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise InputError("device 'cuda' requested but no CUDA device is available "
                         "(use --device cpu or auto)")
    return torch.device(name)


def device_tags(device: torch.device) -> dict[str, str]:
    """The run's tags naming its software and GPU: ``zoo.torch``; ``zoo.cuda_visible_devices``
    where set (Ray sets it to the GPUs a task holds); on CUDA ``zoo.gpu`` (the GPU's name),
    ``zoo.gpu_memory_gb`` and ``zoo.cuda`` (torch's CUDA version)."""
    tags = {"zoo.torch": torch.__version__}
    if (visible := os.environ.get("CUDA_VISIBLE_DEVICES")) is not None:
        tags["zoo.cuda_visible_devices"] = visible
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        tags |= {"zoo.gpu": props.name, "zoo.gpu_memory_gb": f"{props.total_memory / 2**30:.1f}",
                 "zoo.cuda": str(torch.version.cuda)}
    return tags


def label(device: str, gpu: str | None) -> str:
    """``cpu``, or ``cuda (GPU NAME)``: how runs and records name a device."""
    return f"{device} ({gpu})" if gpu else device


def device_label(device: torch.device) -> str:
    """:func:`label` of a live device."""
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    return label(str(device), gpu)


def start_peak(device: torch.device) -> None:
    """Start measuring the peak GPU memory anew (nothing on the CPU)."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def peak_memory(device: torch.device) -> dict[str, float]:
    """``{PEAK_MEMORY: MiB}`` since :func:`start_peak` on CUDA; empty on the CPU."""
    if device.type != "cuda":
        return {}
    return {PEAK_MEMORY: torch.cuda.max_memory_allocated(device) / 2**20}
