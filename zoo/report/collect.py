"""Read the runs that reproduce registry entries from an MLflow store.

A run counts when it FINISHED, is not a smoke run, carries ``zoo.reproduces`` naming a registry
entry, and logged ``test/<metric>`` for that entry's metric. Only the newest such run per seed
counts, so re-running a seed replaces its result. Values are converted to the paper's units
(e.g. accuracy fraction × 100 = %).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..results.registry import Entry
from ..results.runs import finished_runs
from ..tracking.mlflow_run import check_store


@dataclass(frozen=True)
class Measurement:
    run_id: str
    seed: str | None
    value: float  # in the paper's units
    partial: str | None  # the run's ``zoo.partial_data`` label


def open_store(uri: str) -> None:
    """Fail with one message if the store is missing or unreachable (reading creates nothing)."""
    if uri.startswith("sqlite:///") and not Path(uri[len("sqlite:///"):]).is_file():
        raise InputError(f"tracking store {uri} does not exist; run 'zoo sweep' first or pass "
                         f"--tracking-uri")
    check_store(uri)


def collect(uri: str, entries: list[Entry]) -> dict[str, list[Measurement]]:
    """Measurements per entry id (every id present, possibly with an empty list)."""
    by_id = {e.id: e for e in entries}
    found: dict[str, list[Measurement]] = {e.id: [] for e in entries}
    counted: set[tuple[str, str | None]] = set()
    for run in finished_runs(uri, "tags.`zoo.reproduces` LIKE '%'"):
        tags = run.data.tags
        entry = by_id.get(tags.get("zoo.reproduces", ""))
        if entry is None or tags.get("zoo.smoke") == "true":
            continue
        seed = tags.get("zoo.seed")
        value = run.data.metrics.get(f"test/{entry.metric.name}")
        if (entry.id, seed) in counted or value is None or math.isnan(value):
            continue
        counted.add((entry.id, seed))
        found[entry.id].append(Measurement(run.info.run_id, seed, value * entry.metric.scale,
                                           tags.get("zoo.partial_data")))
    return found
