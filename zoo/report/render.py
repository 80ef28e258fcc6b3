"""Render comparison rows: a text table for the terminal, Markdown, CSV and a PNG plot.

Files are written atomically (a temporary file in the same folder, then ``os.replace``), so an
interrupted report never leaves a partial file.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..results.registry import Entry
from .plot import comparison_figure
from .table import SPREAD, Row, Stats

RULE = (f"within = |ours - paper| <= {SPREAD:g} x paper std (or the paper's bound holds); "
        f"std over seeds with ddof=0")


def text_table(headers: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns separated by two spaces, with a dashed rule under the header."""
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows)]
    lines = [headers, ["-" * w for w in widths], *rows]
    return "\n".join("  ".join(f"{c:<{w}}" for c, w in zip(line, widths)).rstrip()
                     for line in lines)


def _decimals(*values: float | None) -> int:
    """Decimals the paper printed (at most 4), so our numbers are shown alike."""
    places = [len(repr(float(v)).split(".")[1].rstrip("0")) for v in values if v is not None]
    return min(max(places, default=0), 4)


def _stats(mean: float, std: float | None, n: int | None, places: int) -> str:
    text = f"{mean:.{places}f}"
    if std is not None:
        text += f" ± {std:.{places}f}"
    return text + (f" (n={n})" if n else "")


def _starred(entry: Entry) -> str:
    """The row label, marked * when the paper quoted the number from other work."""
    quoted = entry.quoted_from and not entry.row.endswith("*")
    return entry.row + ("*" if quoted else "")


def _cells(row: Row) -> dict[str, str]:
    e = row.entry
    places = _decimals(e.mean, e.std)
    paper = (f"{e.bound} " if e.bound else "") + _stats(e.mean, e.std, e.n, places)
    ours: Stats | None = row.ours
    verdict = {True: "yes", False: "no", None: "-"}[row.within]
    return {
        "id": e.id, "row": _starred(e), "column": e.column,
        "unit": e.metric.unit, "paper": paper,
        "ours": "not run" if ours is None else _stats(ours.mean, ours.std, ours.n, places),
        "diff": "" if row.diff is None else f"{row.diff:+.{places}f}",
        "within": "" if ours is None else verdict,
        "data": f"partial: {row.partial}" if row.partial else "",
    }


_SHOWN = ["row", "column", "unit", "paper", "ours", "diff", "within", "data"]


def as_text(rows: list[Row], title: str) -> str:
    cells = [_cells(r) for r in rows]
    body = text_table(_SHOWN, [[c[k] for k in _SHOWN] for c in cells])
    return f"{title}\n{body}\n"


def as_markdown(rows: list[Row], title: str) -> str:
    keys = ["id", *_SHOWN]
    cells = [_cells(r) for r in rows]
    lines = [f"# {title}", "", "| " + " | ".join(keys) + " |",
             "|" + "---|" * len(keys),
             *("| " + " | ".join(c[k].replace("|", "\\|") for k in keys) + " |" for c in cells),
             "", f"{RULE}. * = quoted by the paper from other work."]
    return "\n".join(lines) + "\n"


def as_csv(rows: list[Row]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "paper", "table", "row", "column", "metric", "unit", "paper_mean",
                     "paper_std", "paper_n", "paper_bound", "ours_mean", "ours_std", "ours_n",
                     "diff", "within", "partial_data", "run_ids"])
    for r in rows:
        e, o = r.entry, r.ours
        writer.writerow([e.id, e.paper, e.table, e.row, e.column, e.metric.name, e.metric.unit,
                         e.mean, _blank(e.std), _blank(e.n), _blank(e.bound),
                         _blank(o and o.mean), _blank(o and o.std), _blank(o and o.n),
                         _blank(r.diff), _blank(r.within), _blank(r.partial),
                         " ".join(r.runs)])
    return out.getvalue()


def _blank(value) -> str:
    return "" if value is None else str(value)


def atomic_write(path: Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then move it into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_files(rows: list[Row], title: str, folder: Path, stem: str) -> list[Path]:
    """``stem.md``, ``stem.csv`` and ``stem.png`` in ``folder``."""
    markdown, table = as_markdown(rows, title), as_csv(rows)
    written = [atomic_write(folder / f"{stem}.md", lambda p: p.write_text(markdown)),
               atomic_write(folder / f"{stem}.csv", lambda p: p.write_text(table))]
    return written + [atomic_write(folder / f"{stem}.png", comparison_figure(rows, title))]
