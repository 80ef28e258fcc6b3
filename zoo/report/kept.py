"""Which checkpoint each seed kept, for the entries where some run kept it by a validation
metric other than the one the paper reports (``train.select``; e.g. the authors' validation
accuracy on Sepsis, whose table reports the test AUC), with their shipped variants beside them.

Per entry, seed and protocol: the epochs trained, the epoch kept, each selecting metric as
logged at that epoch, and the test value in the paper's unit, all from the records
(:class:`.records.Record` ``select``, ``kept_epoch``, ``validation``); then, per selecting
metric, how many of its runs kept the checkpoint of epoch 1 (the model after one epoch).
"""

from __future__ import annotations

from ..results.published import Registry
from .records import Record
from .recipes import recipe_key, variants
from .render import decimals, markdown_head, markdown_row

HEADING = "### Checkpoint kept per seed"


def _compared(entry_id: str, records: dict[str, list[Record]]) -> list[Record]:
    """The entry's records that name their kept checkpoint, when any of them was kept by a
    metric other than ``val/<reported metric>``; else none."""
    mine = [r for v in [None, *variants(entry_id, records)]
            for r in records.get(recipe_key(entry_id, v), []) if r.kept_epoch is not None]
    reported = {"val/" + r.metric.removeprefix("test/") for r in mine}
    return mine if {r.select for r in mine} - reported else []


def _value(record: Record, metric: str) -> str:
    value = (record.validation or {}).get(metric)
    return "–" if value is None else f"{value:.3f}"


def table(registry: Registry, records: dict[str, list[Record]]) -> list[str]:
    """The Markdown lines of the table (none when no entry compares selection rules)."""
    rows, metrics = [], set()
    for entry in registry.entries.values():
        mine = _compared(entry.id, records)
        metrics |= {r.select for r in mine if r.select}
        places = decimals(entry.mean, entry.std)
        rows += [(entry, r, f"{r.value * entry.metric.scale:.{places}f}")
                 for r in sorted(mine, key=lambda r: (r.seed, r.variant or ""))]
    if not rows:
        return []
    shown = sorted(metrics)
    head = ["id", "seed", "protocol", "kept by", "epochs", "kept epoch",
            *(f"{m} there" for m in shown), "test (paper's unit)"]
    lines = [HEADING, "",
             "Where runs of an entry kept the checkpoint by a validation metric other than the "
             "one the paper reports (and for the entry's shipped variants beside them): per "
             "seed, the epochs each run trained, the epoch whose checkpoint it kept, the "
             "selecting metrics as logged at that epoch, and the test value of that "
             "checkpoint.", "",
             *markdown_head(head)]
    for entry, r, test in rows:
        cells = [entry.id, str(r.seed), r.variant or "recipe", r.select or "–", str(r.epochs),
                 str(r.kept_epoch), *(_value(r, m) for m in shown), test]
        lines.append(markdown_row(cells))
    return [*lines, "", _first_epochs([r for _, r, _ in rows], shown), ""]


def _first_epochs(records: list[Record], metrics: list[str]) -> str:
    """How many of the runs kept by each metric kept the checkpoint of epoch 1."""
    counts = []
    for metric in metrics:
        mine = [r for r in records if r.select == metric]
        counts.append(f"{sum(r.kept_epoch == 1 for r in mine)} of the {len(mine)} runs kept "
                      f"by {metric}")
    return ("Runs that kept the checkpoint of epoch 1 (the model after one epoch of training): "
            + ", ".join(counts) + ".")
