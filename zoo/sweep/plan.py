"""Expand spec files × seeds into jobs."""

from __future__ import annotations

import re

from ..errors import InputError
from ..limits import SEED_MAX
from ..spec.files import spec_files
from ..spec.identity import spec_hash
from ..spec.validate import load_spec
from .job import Job


#: the most seeds one ``--seeds`` may name
MAX_SWEEP_SEEDS = 10_000


def parse_seeds(text: str) -> list[int]:
    """``"1-5"`` -> [1, 2, 3, 4, 5]; ``"1,3,5"``; ``"1-3,7"``; duplicates removed, order kept."""
    seeds: list[int] = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not match:
            raise InputError(f"--seeds '{text}': expected numbers and ranges like 1-5 or 1,3,5")
        first, last = int(match[1]), int(match[2] or match[1])
        if last < first:
            raise InputError(f"--seeds '{text}': range {first}-{last} is empty")
        if last > SEED_MAX:
            raise InputError(f"--seeds '{text}': seed {last} is out of range: torch accepts "
                             f"seeds up to {SEED_MAX} (2**64 - 1)")
        if last - first + len(seeds) >= MAX_SWEEP_SEEDS:
            raise InputError(f"--seeds '{text}': more than {MAX_SWEEP_SEEDS} seeds")
        seeds += [s for s in range(first, last + 1) if s not in seeds]
    return seeds


def plan(targets: list[str], seeds: list[int] | None, overrides: list[str],
         smoke: bool) -> tuple[list[Job], set[str]]:
    """One job per spec and seed (default: each spec's ``train.seeds``), and the specs' own
    ``tracking.uri`` values."""
    jobs, uris = [], set()
    for path in (p for t in targets for p in spec_files(t)):
        spec, _ = load_spec(path, overrides)
        if spec.tracking.uri:
            uris.add(spec.tracking.uri)
        metric = spec.model.readout.default_metric[0]
        for seed in seeds or spec.train.seeds:
            jobs.append(Job(str(path.resolve()), tuple(overrides), seed, spec.name,
                            spec_hash(spec), spec.reproduces, metric, smoke,
                            None if smoke else spec.train.epochs))
    return jobs, uris
