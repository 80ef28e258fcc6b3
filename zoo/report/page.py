"""The results section of ``docs/reproduction.md``, regenerated from the records alone (the cost
table also reads the shipped specs' epochs).

The section is what lies between :data:`BEGIN` and :data:`END`; the rest of the page is never
touched. Per registry table: the entries with records (paper, ours over the recorded seeds with n
and epochs, ours − paper and the verdict of :mod:`.table`, seconds per epoch and device; a row per
recorded variant of the protocol after the entry's), a plot of them (:mod:`.plot`, written beside
the records), then the entries without records; the checkpoint each seed kept where runs select
it by another metric than the reported one (:mod:`.kept`); the cost table.
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path

from ..durations import duration
from ..errors import InputError
from ..results.published import Registry
from . import kept
from .plot import comparison_figure
from .recipes import Recipe, recipe_key, split_key, variants
from .records import Record
from ..outputs import atomic_write
from .render import cells, decimals, markdown_head, markdown_row, span, stats_text
from .table import Row, summarise

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
VERDICT = {True: "within", False: "outside", None: "no verdict"}
_COLUMNS = ["id", "row · column", "unit", "paper", "ours (n, epochs)", "diff", "within",
            "s / epoch"]


def tables(registry: Registry, records: dict[str, list[Record]]) -> dict[str, list[Row]]:
    """Per table, a row per entry in registry order, ours from its records (none without),
    each followed by a row per variant with records."""
    unknown = sorted(k for k in records if split_key(k)[0] not in registry.entries)
    if unknown:
        raise InputError(f"records of entries not in the registry: {', '.join(unknown)}")
    found: dict[str, list[Row]] = {}
    for entry in registry.entries.values():
        for variant in [None, *variants(entry.id, records)]:
            mine = records.get(recipe_key(entry.id, variant), [])
            if any(r.metric != f"test/{entry.metric.name}" for r in mine):
                raise InputError(f"records of {entry.id} are not of its metric "
                                 f"test/{entry.metric.name}")
            partial = "; ".join(sorted({r.partial_data for r in mine if r.partial_data})) or None
            found.setdefault(entry.key, []).append(Row(
                entry, summarise([r.value * entry.metric.scale for r in mine]), partial,
                tuple(r.run_id for r in mine), variant=variant))
    return found


def _line(row: Row, mine: list[Record]) -> str:
    c, e, o = cells(row), row.entry, row.ours
    ours = stats_text(o.mean, o.std, None, decimals(e.mean, e.std))
    ours += f" (n={o.n}, {span([r.epochs for r in mine])})"
    if row.partial:
        ours += f", partial data: {row.partial}"
    per_epoch = _per_epoch([r for r in mine if r.epoch_seconds is not None])
    devices = ", ".join(sorted({r.device for r in mine if r.device}))
    text = [e.id, f"{c['row']} · {c['column']}", c["unit"], c["paper"], ours,
            c["diff"], VERDICT[row.within], f"{devices}: {per_epoch}" if devices else per_epoch]
    return markdown_row(text)


def _durations(full: list[Record]) -> str:
    """The seeds' training times (epochs × seconds per epoch): ``12 s`` for one seed, ``12 s
    each`` when they agree as printed, else the fastest to the slowest (seeds run on machines of
    other speed or load)."""
    shown = sorted(r.epoch_seconds * r.epochs for r in full)
    low, high = duration(shown[0]), duration(shown[-1])
    if low != high:
        return f"{low} to {high}"
    return f"{low} each" if len(shown) > 1 else low


def _cost_line(key: str, mine: list[Record], timed: list[Record],
               recipe: Recipe | None) -> str | None:
    """One row of the cost table, or None when no record has an epoch time."""
    full = [r for r in mine if r.epoch_seconds is not None and r.epochs]
    short = [r for r in timed if r.epoch_seconds is not None and r.epochs]
    both = full + short
    if not both:
        return None
    seeds = (f"{len(full)}: {_durations(full)} ({span([r.epochs for r in full])})"
             if full else "none")
    timed_text = ", ".join(f"seed {r.seed}: {r.epochs}" for r in short) or "–"
    devices = ", ".join(sorted({r.device for r in both if r.device})) or "?"
    partial = "; ".join(sorted({r.partial_data for r in both if r.partial_data})) or "complete"
    text = [key, devices, _per_epoch(both), _recipe_seed(both, recipe), seeds, timed_text,
            partial]
    return markdown_row(text)


def _by_threads(timed: list[Record], show) -> str:
    """``show`` of the mean seconds per epoch of the records, per thread count where any is
    recorded (``–`` for none)."""
    if not timed:
        return "–"
    groups: dict[int | None, list[float]] = {}
    for r in sorted(timed, key=lambda r: (r.threads is None, r.threads or 0)):
        groups.setdefault(r.threads, []).append(r.epoch_seconds)
    parts = []
    for threads, seconds in groups.items():
        text = show(statistics.fmean(seconds))
        if len(groups) > 1 or threads is not None:
            text += (" (threads not recorded)" if threads is None else
                     f" ({threads} thread{'s' * (threads > 1)})")
        parts.append(text)
    return "; ".join(parts)


def _per_epoch(timed: list[Record]) -> str:
    return _by_threads(timed, lambda mean: f"{mean:.3g}" if mean < 100 else f"{mean:.0f}")


def _recipe_seed(timed: list[Record], recipe: Recipe | None) -> str:
    """The recipe's epochs × the seconds per epoch: a seed's training time, at most that where
    the recipe may stop early."""
    if recipe is None:
        return "–"
    bound = "≤ " * recipe.stops_early
    epochs = f"{bound}{recipe.epochs} epochs{' (stops early)' * recipe.stops_early}"
    return f"{epochs}: " + _by_threads(timed, lambda s: bound + duration(recipe.epochs * s))


def _on(device: str, records: list[Record]) -> list[Record]:
    return [r for r in records if (r.device or "") == device]


def costs(records: dict[str, list[Record]], timings: dict[str, list[Record]],
          recipes: dict[str, Recipe] | None = None) -> list[str]:
    """The cost table: per recipe key with timed epochs and per device, the mean over its
    records of their seconds per training epoch, the training time of a seed at the recipe's
    epochs (``recipes`` by key), the complete seeds and their mean training time (seconds per
    epoch × epochs, both measured), and the shortened timing runs."""
    recipes = recipes or {}
    lines = [_cost_line(k, _on(device, records.get(k, [])), _on(device, timings.get(k, [])),
                        recipes.get(k))
             for k in sorted(records.keys() | timings.keys())
             for device in sorted({r.device or "" for r in [*records.get(k, []),
                                                            *timings.get(k, [])]})]
    lines = [line for line in lines if line is not None]
    if not lines:
        return []
    head = ["id", "device", "s / epoch", "a seed at the recipe: epochs, training time",
            "seeds run to the end: training time",
            "shortened timing runs: epochs", "data"]
    return ["### Cost per training epoch", "",
            "Seconds per training epoch (per record the mean of its logged "
            "`time/epoch_seconds`, averaged over the entry's records, complete and shortened "
            "runs alike, a row per device, apart per number of CPU threads where the runs "
            "recorded it); what a seed of the shipped recipe would take at that rate (its "
            "epochs, at most, where it stops early); for the seeds run to the end of the "
            "recipe, their training time (the sum of their epochs; fastest to slowest where "
            "they differ, as seeds may run on machines of other speed or load); the shortened "
            "runs (`-o train.epochs=N`) recorded for their cost only.", "",
            *markdown_head(head), *lines, ""]


def section(registry: Registry, records: dict[str, list[Record]], plots: str,
            timings: dict[str, list[Record]] | None = None,
            recipes: dict[str, Recipe] | None = None) -> str:
    """The marked section, ``BEGIN`` to ``END``; ``plots`` links the records folder from the
    page (a table's plot is ``<records>/<paper>/<table>.png``); ``timings`` adds the cost
    table, with a seed's time at the epochs of ``recipes`` (by recipe key)."""
    entries = {split_key(key)[0] for key in records}  # an entry's variants count once
    lines = [BEGIN, "", f"{sum(map(len, records.values()))} seeds recorded for {len(entries)} "
             f"of the {len(registry.entries)} registry entries.", ""]
    for key, rows in tables(registry, records).items():
        lines += [f"### {key}: {registry.captions[key]}", ""]
        have = [r for r in rows if r.ours is not None]
        if have:
            lines += [*markdown_head(_COLUMNS),
                      *(_line(r, records[recipe_key(r.entry.id, r.variant)]) for r in have), "",
                      f"![{key} from the records]({plots}/{key}.png)", ""]
        missing = [r.entry.id.removeprefix(f"{key}/") for r in rows
                   if r.ours is None and r.variant is None]
        if missing:
            label = "Other entries: no" if have else "No"
            lines += [f"{label} recipe runs recorded ({', '.join(missing)}).", ""]
    lines += kept.table(registry, records)
    if timings is not None:
        lines += costs(records, timings, recipes)
    return "\n".join([*lines, END])


def replace(page: str, new: str) -> str:
    """``page`` with its marked section replaced by ``new``."""
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start or page.count(BEGIN) != 1 or page.count(END) != 1:
        raise InputError(f"the page needs one '{BEGIN}' line, then one '{END}' line")
    return page[:start] + new + page[end + len(END):]


def link(page: Path, root: Path) -> str:
    """The records folder as a link from ``page``."""
    return Path(os.path.relpath(root.resolve(), page.resolve().parent)).as_posix()


def write_plots(registry: Registry, records: dict[str, list[Record]], root: Path) -> list[Path]:
    """One PNG per table with records, ``root/<paper>/<table>.png``."""
    written = []
    for key, rows in tables(registry, records).items():
        if any(r.ours is not None for r in rows):
            path = root / f"{key}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            title = f"{key} from the records: {registry.captions[key]}"
            written.append(atomic_write(path, comparison_figure(rows, title)))
    return written
