"""Render comparison rows: a text table for the terminal, Markdown, CSV and a PNG plot.

Files are written atomically (:mod:`.files`), so an interrupted report never leaves a partial
file.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..results.published import Entry
from ..tables import text_table
from ..outputs import atomic_write
from .plot import comparison_figure
from .table import PICK_RULE, SPREAD, Row, Stats

RULE = (f"within = |ours - paper| <= {SPREAD:g} x paper std (or the paper's bound holds); "
        f"std over seeds with ddof=0")
COUNTED = ("counted: FINISHED non-smoke runs whose resolved spec equals the shipped spec apart "
           f"from seed and tracking; {PICK_RULE}")
APART = "Runs whose spec differs from the shipped one (not counted, no verdict)"


def decimals(*values: float | None) -> int:
    """Decimals the paper printed (at most 4), so our numbers are shown alike."""
    places = [len(repr(float(v)).split(".")[1].rstrip("0")) for v in values if v is not None]
    return min(max(places, default=0), 4)


def stats_text(mean: float, std: float | None, n: int | None, places: int) -> str:
    """``mean ± std (n=N)``; no spread for one run."""
    text = f"{mean:.{places}f}"
    if std is not None:
        text += f" ± {std:.{places}f}"
    return text + (f" (n={n})" if n else "")


def _starred(entry: Entry) -> str:
    """The row label, marked * when the paper quoted the number from other work."""
    quoted = entry.quoted_from and not entry.row.endswith("*")
    return entry.row + ("*" if quoted else "")


def label(row: Row) -> str:
    """The row label, with the variant of the protocol it counts: ``LTC [paper-text]``."""
    return _starred(row.entry) + (f" [{row.variant}]" if row.variant else "")


def _unused(row: Row) -> str:
    """``2 other runs of seed 3 not used, ...`` (empty when every run was used)."""
    return ", ".join(f"{k} other run{'s' * (k > 1)} of seed {seed} not used"
                     for seed, k in row.unused)


def _unfinished(row: Row) -> str:
    """``seed 1 at epoch 70 of 200, RUNNING (run ID); ...`` (empty when none)."""
    return "; ".join(
        f"seed {u.seed} "
        + ("before its first epoch" if u.trained is None else f"at epoch {u.trained}")
        + ("" if row.epochs is None else f" of {row.epochs}")
        + f", {u.status}{' but its process is gone' if u.gone else ''} (run {u.run_id})"
        for u in row.unfinished)


def span(epochs: list[int | None] | tuple[int | None, ...]) -> str:
    """``200 epochs``, ``120–200 epochs`` when the runs differ, ``untrained`` when none
    trained."""
    known = sorted({n for n in epochs if n is not None})
    if not known:
        return "untrained"
    return f"{known[0]} epochs" if len(known) == 1 else f"{known[0]}–{known[-1]} epochs"


def _epochs(row: Row) -> str:
    """The epochs its runs trained (:func:`span`, without the word); the spec's
    ``train.epochs`` for a row not run."""
    if row.trained:
        return span(row.trained).removesuffix(" epochs")
    return "" if row.epochs is None else str(row.epochs)


def cells(row: Row) -> dict[str, str]:
    """The text of each column of ``row``."""
    e = row.entry
    places = decimals(e.mean, e.std)
    paper = (f"{e.bound} " if e.bound else "") + stats_text(e.mean, e.std, e.n, places)
    ours: Stats | None = row.ours
    verdict = {True: "yes", False: "no", None: "-"}[row.within]
    return {
        "id": e.id, "row": label(row), "column": e.column,
        "unit": e.metric.unit, "paper": paper,
        "ours": (stats_text(ours.mean, ours.std, ours.n, places) if ours is not None
                 else "not finished" if row.unfinished else "not run"),
        "epochs": _epochs(row),
        "diff": "" if row.diff is None else f"{row.diff:+.{places}f}",
        "within": "" if ours is None else verdict,
        "data": f"partial: {row.partial}" if row.partial else "",
        "differs": row.differs or "",
    }


_SHOWN = ["row", "column", "unit", "paper", "ours", "epochs", "diff", "within", "data"]
_SHOWN_APART = ["row", "column", "unit", "ours", "epochs", "differs", "data"]


def _notes(rows: list[Row]) -> list[str]:
    """The counting rule, then one line per row with runs not used, and one per row with runs
    not finished."""
    notes = [COUNTED + "."]
    for r in rows:
        name = f"{label(r)} · {r.entry.column}"
        if r.unused:
            notes.append(f"{name}{f' [{r.differs}]' if r.differs else ''}: {_unused(r)}")
        if r.unfinished:
            notes.append(f"{name}: not finished, not counted: {_unfinished(r)}")
    return notes


def _split(rows: list[Row]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Cells of the recipe rows and of the rows listed apart."""
    return ([cells(r) for r in rows if r.differs is None],
            [cells(r) for r in rows if r.differs is not None])


def as_text(rows: list[Row], title: str) -> str:
    recipe, apart = _split(rows)
    parts = [title, text_table(_SHOWN, [[c[k] for k in _SHOWN] for c in recipe])]
    if apart:
        parts += ["", APART + ":",
                  text_table(_SHOWN_APART, [[c[k] for k in _SHOWN_APART] for c in apart])]
    return "\n".join([*parts, "", *_notes(rows)]) + "\n"


def markdown_row(cells: list[str]) -> str:
    """One Markdown table row, ``|`` inside a cell escaped."""
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown_head(keys: list[str]) -> list[str]:
    """A Markdown table's header row and its separator."""
    return [markdown_row(keys), "|" + "---|" * len(keys)]


def _markdown_table(keys: list[str], cells: list[dict[str, str]]) -> list[str]:
    return [*markdown_head(keys), *(markdown_row([c[k] for k in keys]) for c in cells)]


def as_markdown(rows: list[Row], title: str) -> str:
    recipe, apart = _split(rows)
    lines = [f"# {title}", "", *_markdown_table(["id", *_SHOWN], recipe)]
    if apart:
        lines += ["", f"## {APART}", "", *_markdown_table(["id", *_SHOWN_APART], apart)]
    lines += ["", f"{RULE}. * = quoted by the paper from other work.", "",
              *(f"- {note}" for note in _notes(rows))]
    return "\n".join(lines) + "\n"


def as_csv(rows: list[Row]) -> str:
    """Every row, the recipe's with an empty ``differs``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "variant", "paper", "table", "row", "column", "metric", "unit",
                     "paper_mean", "paper_std", "paper_n", "paper_bound", "ours_mean",
                     "ours_std", "ours_n", "epochs", "epochs_trained", "diff", "within",
                     "partial_data", "differs", "not_used", "run_ids", "unfinished"])
    for r in rows:
        e, o = r.entry, r.ours
        writer.writerow([e.id, _blank(r.variant), e.paper, e.table, e.row, e.column,
                         e.metric.name, e.metric.unit, e.mean, _blank(e.std), _blank(e.n),
                         _blank(e.bound),
                         _blank(o and o.mean), _blank(o and o.std), _blank(o and o.n),
                         _blank(r.epochs), " ".join(map(_blank, r.trained)), _blank(r.diff),
                         _blank(r.within), _blank(r.partial),
                         _blank(r.differs), _unused(r), " ".join(r.runs), _unfinished(r)])
    return out.getvalue()


def _blank(value) -> str:
    return "" if value is None else str(value)


def write_files(rows: list[Row], title: str, folder: Path, stem: str) -> list[Path]:
    """``stem.md``, ``stem.csv`` and ``stem.png`` in ``folder``."""
    markdown, table = as_markdown(rows, title), as_csv(rows)
    written = [atomic_write(folder / f"{stem}.md", lambda p: p.write_text(markdown)),
               atomic_write(folder / f"{stem}.csv", lambda p: p.write_text(table))]
    return written + [atomic_write(folder / f"{stem}.png", comparison_figure(rows, title))]
