"""Read the runs that reproduce registry entries from an MLflow store.

A run is read when it FINISHED, is not a smoke run, carries ``zoo.reproduces`` naming a registry
entry, and logged ``test/<metric>`` for that entry's metric. Every such run is kept, with what
its resolved spec changes from the recipe it names (the entry's, or the variant's its spec
sets; see :mod:`.recipes`); which runs count
is decided in :mod:`.table`. Values are converted to the paper's units (e.g. accuracy fraction ×
100 = %). The recipe's runs that have not finished (running, interrupted or failed) are read
apart (:func:`unfinished`): they count for nothing, and the report names them.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..results.published import Entry
from ..results.runs import finished_runs, store_runs
from ..tracking import owner
from ..tracking.mlflow_run import check_store, open_client
from .recipes import (EPOCHS, Recipe, changed_keys, comparable, differences, recipe_key, unset,
                      variant_of)

EPOCH_SECONDS = "time/epoch_seconds"


@dataclass(frozen=True)
class Measurement:
    run_id: str
    seed: str | None
    start: int  # start time (ms): the newest run of a seed is the one that started last
    value: float  # in the paper's units
    partial: str | None  # the run's ``zoo.partial_data`` label
    epochs: int | None  # the run's ``train.epochs``
    differs: str | None  # what its spec changes from the recipe; None: it is the recipe
    config: str  # digest of its comparable spec: runs are pooled only when it is equal
    variant: str | None = None  # the variant its spec names (None: the entry's recipe)
    changed: tuple[str, ...] = ()  # the keys its spec changes from the recipe (when logged)
    trained: int | None = None  # epochs trained (:func:`trained_epochs`)
    epoch_seconds: float | None = None  # mean of its logged ``time/epoch_seconds``


@dataclass(frozen=True)
class Unfinished:
    """A non-smoke run of an entry's recipe (or of a shipped variant) that has not finished."""

    run_id: str
    seed: str | None
    status: str  # as the store has it: RUNNING, KILLED or FAILED (SCHEDULED: not started)
    variant: str | None
    trained: int | None  # the last epoch it logged (None: none yet)
    gone: bool = False  # RUNNING, but the process that wrote it (``zoo.owner``) is gone


def open_store(uri: str) -> None:
    """Fail with one message if the store is missing, empty or unreachable (reading creates
    nothing)."""
    if uri.startswith("sqlite:///"):
        db = Path(uri[len("sqlite:///"):])
        if db.is_dir():
            raise InputError(f"tracking store {uri}: {db} is a directory, not an SQLite file")
        if not db.is_file() or not db.stat().st_size:
            state = "is empty" if db.is_file() else "does not exist"
            raise InputError(f"tracking store {uri} {state}; run 'zoo sweep' first or pass "
                             f"--tracking-uri")
    check_store(uri)


def spec_digest(params: dict[str, str]) -> str:
    """Digest of the comparable spec in ``params``: equal exactly when no compared key differs,
    a key left unset (null) counting as absent, as in :func:`.recipes.changed_keys`: an option
    added later at its unset value changes neither a recipe's digest nor its records'."""
    kept = sorted((k, v) for k, v in comparable(params).items() if not unset(v))
    return hashlib.sha256(repr(kept).encode()).hexdigest()[:16]


def trained_epochs(run, history) -> int | None:
    """Epochs the run trained: the last epoch of ``history`` (its logged
    ``time/epoch_seconds``), else its ``train.epochs``; None for a measurement of an untrained
    model (tag ``zoo.trained`` false)."""
    if run.data.tags.get("zoo.trained") == "false":
        return None
    if history:
        return max(h.step for h in history)
    epochs = run.data.params.get(EPOCHS)
    return int(epochs) if epochs and epochs.isdigit() else None


def collect(uri: str, entries: list[Entry],
            recipes: dict[str, Recipe]) -> dict[str, list[Measurement]]:
    """Measurements per entry id (every id present, possibly with an empty list)."""
    client = open_client(uri)
    by_id = {e.id: e for e in entries}
    found: dict[str, list[Measurement]] = {e.id: [] for e in entries}
    for run in finished_runs(uri, "tags.`zoo.reproduces` LIKE '%'"):
        tags, params = run.data.tags, run.data.params
        entry = by_id.get(tags.get("zoo.reproduces", ""))
        if entry is None or tags.get("zoo.smoke") == "true":
            continue
        value = run.data.metrics.get(f"test/{entry.metric.name}")
        if value is None or math.isnan(value):
            continue
        epochs, variant = params.get(EPOCHS), variant_of(params)
        history = client.get_metric_history(run.info.run_id, EPOCH_SECONDS)
        recipe = recipes.get(recipe_key(entry.id, variant))
        found[entry.id].append(Measurement(
            run.info.run_id, tags.get("zoo.seed"), run.info.start_time,
            value * entry.metric.scale, tags.get("zoo.partial_data"),
            int(epochs) if epochs and epochs.isdigit() else None,
            differences(params, recipe), spec_digest(params), variant,
            tuple(changed_keys(params, recipe)) if recipe and comparable(params) else (),
            trained_epochs(run, history),
            round(statistics.fmean(h.value for h in history), 3) if history else None))
    return found


def unfinished(uri: str, entries: list[Entry],
               recipes: dict[str, Recipe]) -> dict[str, list[Unfinished]]:
    """Per entry id with any, its recipe's and shipped variants' runs that are not FINISHED,
    oldest first."""
    client = open_client(uri)
    ids = {e.id for e in entries}
    found: dict[str, list[Unfinished]] = {}
    for run in store_runs(uri, "tags.`zoo.reproduces` LIKE '%' and "
                               "attributes.status != 'FINISHED'"):
        tags, params = run.data.tags, run.data.params
        entry_id, variant = tags.get("zoo.reproduces", ""), variant_of(params)
        if (entry_id not in ids or tags.get("zoo.smoke") == "true"
                or differences(params, recipes.get(recipe_key(entry_id, variant))) is not None):
            continue
        history = client.get_metric_history(run.info.run_id, EPOCH_SECONDS)
        status = run.info.status
        found.setdefault(entry_id, []).insert(0, Unfinished(
            run.info.run_id, tags.get("zoo.seed"), status, variant,
            max((h.step for h in history), default=None),
            status == "RUNNING" and owner.alive(tags.get(owner.TAG)) is False))
    return found
