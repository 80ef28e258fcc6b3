"""``zoo report --export``: per-seed records (:mod:`.records`) of the runs that count.

The runs that count are the report's (:mod:`.collect`, :mod:`.table`): FINISHED, non-smoke runs
tagged with the entry whose resolved spec is the shipped recipe (or a shipped variant of it,
recorded in a file of its own), the newest run of each seed. Runs of any other spec and older
runs of a seed are skipped, and said so, grouped by reason.

With a ``timings`` folder, the runs that changed only the recipe's number of epochs (and at
most whether a last incomplete batch is trained and evaluated, which a subset smaller than a
batch needs), as
``reproductions/epoch_timing.sh`` runs them, are recorded there the same way, for their cost per
epoch only: they are never results.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from ..results.published import Entry
from .collect import Measurement, collect, spec_digest
from .recipes import EPOCHS, Recipe, recipe_key, variants
from .records import Record, merge, path_of, read, write
from .table import newest_per_seed

BEST_EPOCH, SELECT = "best_epoch", "train.select"  # the runner's metric; the spec's key
OLDER = "an older run of its seed (the newest counts)"


def iso(ms: int) -> str:
    """An MLflow time (ms since the epoch) as ISO 8601 UTC with milliseconds."""
    return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(timespec="milliseconds")


def _choose(runs: list[Measurement]) -> tuple[list[Measurement], dict[str, list[str]]]:
    """The runs that count, and the seeds of the others by the reason they do not."""
    newest = newest_per_seed([m for m in runs if m.differs is None])
    chosen, skipped = [], {}
    for m in runs:
        if m.differs is not None:
            reason = m.differs
        elif newest[m.seed] is not m:
            reason = OLDER
        elif not (m.seed and m.seed.isdigit()):
            reason = "no integer zoo.seed tag"
        else:
            chosen.append(m)
            continue
        skipped.setdefault(reason, []).append(m.seed or "none")
    return chosen, skipped


TIMING_CHANGES = {EPOCHS, "train.eval_shuffle_drop_last", "train.drop_last"}


def shortened(m: Measurement) -> bool:
    """Whether the run is the entry's recipe with other epochs, changing its training step
    nothing (see :data:`TIMING_CHANGES`)."""
    return (m.variant is None and EPOCHS in m.changed
            and set(m.changed) <= TIMING_CHANGES)


def _record(client, entry: Entry, m: Measurement) -> Record:
    """The record of a run that counts: its tags, test value, epochs and the checkpoint it
    kept."""
    run = client.get_run(m.run_id)
    tags, metric = run.data.tags, f"test/{entry.metric.name}"
    kept = run.data.metrics.get(BEST_EPOCH) if m.trained is not None else None
    kept = None if kept is None else int(kept)
    return Record(
        id=entry.id, variant=m.variant, seed=int(m.seed), metric=metric,
        value=run.data.metrics[metric],
        epochs=m.trained,
        epoch_seconds=m.epoch_seconds,
        date=iso(m.start), device=_device(tags),
        threads=int(tags["zoo.threads"]) if "zoo.threads" in tags else None,
        commit=tags.get("zoo.git_commit") or tags.get("mlflow.source.git.commit"),
        spec_hash=tags.get("zoo.spec_hash"), recipe=m.config, partial_data=m.partial,
        run_id=m.run_id, select=run.data.params.get(SELECT) if kept is not None else None,
        kept_epoch=kept, validation=_at_epoch(client, m.run_id, run.data.metrics, kept))


def _at_epoch(client, run_id: str, latest: dict[str, float], epoch: int | None
              ) -> dict[str, float] | None:
    """Each ``val/<name>`` the run logged at ``epoch`` (the last value logged there: a resumed
    run may have logged an epoch twice), by name; None when there is none."""
    if epoch is None:
        return None
    found = {}
    for key in sorted(k for k in latest if k.startswith("val/")):
        there = [h for h in client.get_metric_history(run_id, key) if h.step == epoch]
        if there:
            found[key] = max(there, key=lambda h: h.timestamp).value
    return found or None


def _device(tags: dict[str, str]) -> str | None:
    """The ``zoo.device`` tag, with the GPU's name (``zoo.gpu``) where the run recorded one."""
    from ..training.device import label

    device = tags.get("zoo.device")
    return label(device, tags.get("zoo.gpu")) if device else None


def _skip_notes(skipped: dict[str, list[str]]) -> list[str]:
    notes = []
    for reason, seeds in skipped.items():
        s = "s" * (len(seeds) > 1)
        shown = ", ".join(sorted(seeds, key=lambda x: x.zfill(9)))
        notes.append(f"skipped {len(seeds)} run{s} (seed{s} {shown}): {reason}")
    return notes


def _update(path: Path, old: list[Record], merged: list[Record], noun: str = "seeds") -> str:
    """Write or remove the file; what was done (``noun``: what its lines are)."""
    if merged == old:
        return f"{path} unchanged ({len(merged)} {noun})"
    if not merged:
        path.unlink()
        return f"removed {path}: none of its records counts"
    write(path, merged)
    return f"wrote {path} ({len(merged)} {noun})"


def _timings(client, entry: Entry, runs: list[Measurement], recipe: Recipe,
             root: Path) -> list[str]:
    """Merge the records of the shortened runs of ``recipe`` into ``root``, a seed per device;
    the lines to print."""
    short = newest_per_seed([m for m in runs if shortened(m)
                             and m.seed and m.seed.isdigit()]).values()
    path = path_of(root, entry.id)
    old = read(path) if path.is_file() else []
    if not short and not old:
        return []
    digest = spec_digest(recipe.params)
    new = [replace(_record(client, entry, m), recipe=digest) for m in short]
    merged, notes = merge(old, new, digest, per_device=True)
    return [f"{entry.id} (timings): {_update(path, old, merged, 'timings')}",
            *(f"  {n}" for n in notes)]


def export(uri: str, entries: list[Entry], recipes: dict[str, Recipe], root: Path,
           timings: Path | None = None) -> list[str]:
    """Merge the records of the runs in ``uri`` that count into ``root`` (and of the shortened
    recipe runs into ``timings``); the lines to print."""
    from ..tracking.mlflow_run import open_client

    found = collect(uri, entries, recipes)
    client = open_client(uri)
    lines, busy = [], set()
    for entry in entries:
        shipped = variants(entry.id, recipes)
        for variant in [None, *shipped]:  # a run of an unshipped variant is the recipe's, altered
            key = recipe_key(entry.id, variant)
            chosen, skipped = _choose([m for m in found[entry.id] if variant == (
                m.variant if m.variant in shipped else None)])
            path, recipe = path_of(root, key), recipes.get(key)
            old = read(path) if path.is_file() else []
            notes = []
            if recipe is not None and (chosen or old):
                new = [_record(client, entry, m) for m in chosen]
                merged, notes = merge(old, new, spec_digest(recipe.params))
                head = _update(path, old, merged)
            elif skipped:
                head = "nothing written: no run counts"
            elif old:
                head = f"{path} left as it is: no shipped spec reproduces this entry"
            else:
                continue
            busy.add(entry.id)
            lines += [f"{key}: {head}", *(f"  {n}" for n in notes + _skip_notes(skipped))]
        if timings is not None and entry.id in recipes:
            lines += _timings(client, entry, found[entry.id], recipes[entry.id], timings)
    lines.append(f"{len(busy)} of {len(entries)} entries have runs or records; "
                 f"unfinished and smoke runs are not read")
    return lines
