"""Load the published-results registry: one YAML file per paper table under ``registry/``.

A file names its ``paper``, ``table``, ``caption`` and ``source`` once, optional ``defaults``
for every entry (e.g. ``n``, ``metric``), and ``entries``. Each entry is one published number:
``id`` (``paper/table/...``, what a spec's ``reproduces:`` names), ``row`` and ``column`` as
printed in the paper, ``metric``, ``mean``, ``std``, ``n`` (runs), optional ``params``,
``quoted_from`` (baselines the paper copied from other work, marked * there), ``bound`` (the
paper gives only ``< mean`` or ``> mean``) and ``note``. Problems are reported as
``FILE:LINE:COL: entry ID: field: message``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError, SpecError
from ..located_yaml import Loc, Source, parse_text
from ..suggest import did_you_mean

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "registry"
_SLUG = r"[a-z0-9][a-z0-9_.-]*"


class RegistryError(InputError):
    """Malformed registry files; one ``FILE:LINE:COL: ...`` line per problem."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


class Metric(BaseModel):
    """How a number is measured: the run logs ``test/<name>``; the paper prints ``scale`` × it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9_]+$", description="metric logged as test/<name>")
    direction: Literal["max", "min", "none"] = Field(description="which way is better")
    unit: str = Field(description="unit as printed, e.g. '%', 'AUC x100', 'MSE'")
    scale: float = Field(1.0, gt=0, description="paper value = scale x logged value")


class Entry(BaseModel):
    """One published number."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=rf"^{_SLUG}(/{_SLUG})+$")
    paper: str
    table: str
    row: str
    column: str
    metric: Metric
    mean: float
    std: float | None = Field(None, ge=0)
    n: int | None = Field(None, ge=1)
    bound: Literal["<", ">"] | None = None
    params: int | None = Field(None, ge=1)
    quoted_from: str | None = None
    source: str
    note: str | None = None

    @property
    def key(self) -> str:
        """``paper/table``: the table this entry belongs to."""
        return f"{self.paper}/{self.table}"


class _TableFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paper: str = Field(pattern=rf"^{_SLUG}$")
    table: str = Field(pattern=rf"^{_SLUG}$")
    caption: str
    source: str
    defaults: dict[str, Any] = {}
    entries: list[dict[str, Any]] = Field(min_length=1)


@dataclass(frozen=True)
class Registry:
    """Every entry by id, in file order, and each table's caption."""

    entries: dict[str, Entry]
    captions: dict[str, str]

    def tables(self) -> list[str]:
        return list(self.captions)

    def select(self, key: str | None) -> list[Entry]:
        """Entries of table ``paper/table``, of every table of ``paper``, or all (``None``)."""
        if key is None:
            return list(self.entries.values())
        key = key.strip("/")
        chosen = [e for e in self.entries.values() if key in (e.key, e.paper)]
        if not chosen:
            choices = self.tables() + sorted({e.paper for e in self.entries.values()})
            raise InputError(f"unknown paper or table '{key}'{did_you_mean(key, choices)}; "
                             f"known tables: {', '.join(self.tables())}")
        return chosen


def _located(src: Source, path: tuple, message: str, entry_id: Any = None,
             key: bool = False) -> str:
    label = f"entry '{entry_id}'" if isinstance(entry_id, str) else \
        f"entry #{path[1] + 1}" if len(path) > 1 and path[0] == "entries" else None
    field = ".".join(map(str, path[2:] if label else path))
    parts = [str(src.where(path, key=key)), label, field, message]
    return ": ".join(p for p in parts if p)


def _message(err: dict) -> str:
    if err["type"] == "extra_forbidden":
        known = [*_TableFile.model_fields, *Entry.model_fields, *Metric.model_fields]
        return f"unknown field{did_you_mean(err['loc'][-1], known)}"
    return err["msg"]


def _errors(exc: ValidationError, src: Source, prefix: tuple, entry_id: Any = None) -> list[str]:
    return [_located(src, prefix + tuple(e["loc"]), _message(e), entry_id,
                     key=e["type"] == "extra_forbidden") for e in exc.errors()]


def _load_file(path: Path, shown: str) -> tuple[list[tuple[Entry, Loc]], str, list[str]]:
    """Entries with their locations, the table's caption, and the problems of one file."""
    try:
        src = parse_text(path.read_text(encoding="utf-8"), shown)
    except SpecError as exc:
        return [], "", exc.problems
    try:
        table = _TableFile.model_validate(src.data)
    except ValidationError as exc:
        return [], "", _errors(exc, src, ())
    entries, problems = [], []
    inherited = {"paper": table.paper, "table": table.table, "source": table.source}
    for i, raw in enumerate(table.entries):
        data = {**inherited, **table.defaults, **raw}
        where = ("entries", i)
        try:
            entry = Entry.model_validate(data)
        except ValidationError as exc:
            problems += _errors(exc, src, where, raw.get("id"))
            continue
        if not entry.id.startswith(f"{entry.key}/"):
            problems.append(_located(src, where + ("id",), f"id must start with "
                                     f"'{entry.key}/'", entry.id))
            continue
        entries.append((entry, src.where(where)))
    return entries, table.caption, problems


def load_registry(root: str | Path | None = None) -> Registry:
    """Load and check every ``*.yaml`` under ``root`` (default: the repository's ``registry/``)."""
    root = Path(root) if root is not None else DEFAULT_ROOT
    if not root.is_dir():
        raise InputError(f"registry folder {root} not found")
    entries: dict[str, Entry] = {}
    captions: dict[str, str] = {}
    seen: dict[str, Loc] = {}
    problems: list[str] = []
    for path in sorted(root.rglob("*.yaml")):
        found, caption, bad = _load_file(path, str(path))
        problems += bad
        for entry, loc in found:
            if entry.id in seen:
                problems.append(f"{loc}: entry '{entry.id}': duplicate id (first at "
                                f"{seen[entry.id]})")
            seen[entry.id] = loc
            entries[entry.id] = entry
            captions[entry.key] = caption
    if problems:
        raise RegistryError(problems)
    return Registry(entries, captions)
