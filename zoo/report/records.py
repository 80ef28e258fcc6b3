"""Per-seed records of the runs that count, kept in the repository (``reproductions/results/``).

One JSON Lines file per registry entry and variant, named after its recipe key
(``hasani2021/table3/ozone/ltc`` → ``hasani2021/table3/ozone/ltc.jsonl``; its variant
``paper-text`` → ``ltc@paper-text.jsonl`` beside it), one line per seed (in the timings folder
per seed and device), sorted by seed, keys in a fixed order: a new run shows as a one-line diff.
``value`` is the logged ``test/<metric>`` (not scaled to the paper's units). ``recipe`` is the
digest of the shipped spec the run matched (:func:`.collect.spec_digest`); ``spec_hash`` the
runner's ``zoo.spec_hash`` tag. ``select``, ``kept_epoch`` and ``validation`` say which
checkpoint gave ``value`` and why (null where not recorded). Re-exporting merges with the file
by the rule of :func:`merge`.
"""

from __future__ import annotations

import json
from dataclasses import MISSING, asdict, dataclass, fields
from datetime import datetime
from pathlib import Path

from ..errors import InputError
from ..outputs import atomic_write
from .recipes import recipe_key

SUFFIX = ".jsonl"


@dataclass(frozen=True)
class Record:
    id: str  # registry entry id
    variant: str | None  # the spec's ``variant`` (None: the entry's recipe)
    seed: int
    metric: str  # the logged metric, ``test/<name>``
    value: float  # as logged
    epochs: int | None  # epochs trained: the last logged epoch, else ``train.epochs``; None
    #                     for a measurement of an untrained model (``zoo.trained`` tag false)
    epoch_seconds: float | None  # mean of the logged ``time/epoch_seconds``
    date: str  # run start, ISO 8601 UTC with milliseconds
    device: str | None  # ``zoo.device`` tag, with the GPU's name (``cuda (NAME)``) on a GPU
    threads: int | None  # ``zoo.threads`` tag: torch's CPU threads (None: not recorded)
    commit: str | None  # ``zoo.git_commit`` tag, else ``mlflow.source.git.commit``
    spec_hash: str | None  # ``zoo.spec_hash`` tag
    recipe: str  # digest of the shipped spec the run matched
    partial_data: str | None  # ``zoo.partial_data`` tag
    run_id: str
    select: str | None = None  # the spec's ``train.select``: the metric that chose the checkpoint
    kept_epoch: int | None = None  # the epoch of that checkpoint, which gave ``value``
    validation: dict[str, float] | None = None  # each ``val/<name>`` logged at ``kept_epoch``

    @property
    def started(self) -> datetime:
        return datetime.fromisoformat(self.date)

    @property
    def key(self) -> str:
        return recipe_key(self.id, self.variant)


def path_of(root: Path, key: str) -> Path:
    """The file of a recipe key (:func:`.recipes.recipe_key`)."""
    return root / f"{key}{SUFFIX}"


def dumps(records: list[Record]) -> str:
    """One JSON object per line, sorted by seed, then device."""
    return "".join(json.dumps(asdict(r), ensure_ascii=False) + "\n"
                   for r in sorted(records, key=lambda r: (r.seed, r.device or "")))


_JSON_TYPES = {"str": (str,), "int": (int,), "float": (int, float), "None": (type(None),),
               "dict[str, float]": (dict,)}  # the annotations of Record, as JSON reads them


def _check_types(data: dict) -> None:
    """ValueError naming the first value whose JSON type its :class:`Record` field does not
    allow."""
    for f in fields(Record):
        if f.name in data:
            allowed = sum((_JSON_TYPES[t.strip()] for t in f.type.split("|")), ())
            if not isinstance(data[f.name], allowed) or isinstance(data[f.name], bool):
                raise ValueError(f"{f.name} must be {f.type}, not {data[f.name]!r}")


def _not_a_number(constant: str):
    raise ValueError(f"{constant} is not a finite number")


def read(path: Path) -> list[Record]:
    """The records of one file; a malformed line is an :class:`InputError` naming it. The keys
    added later (those with a default) may be missing: they read as null."""
    names = {f.name for f in fields(Record)}
    required = {f.name for f in fields(Record) if f.default is MISSING}
    records = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    for number, line in enumerate(text.splitlines(), 1):
        try:
            data = json.loads(line, parse_constant=_not_a_number)
            if not isinstance(data, dict):
                raise ValueError("a record is a JSON object")
            if missing := required - set(data):
                raise ValueError(f"missing {', '.join(sorted(missing))}")
            if unknown := set(data) - names:
                raise ValueError(f"unknown {', '.join(sorted(unknown))}; the keys are "
                                 f"{', '.join(f.name for f in fields(Record))}")
            _check_types(data)
            records.append(Record(**data))
        except (ValueError, TypeError) as exc:
            raise InputError(f"{path}:{number}: not a record: {exc}") from None
    return records


def load(root: Path, per_device: bool = False) -> dict[str, list[Record]]:
    """Records per recipe key, from every ``*.jsonl`` under ``root`` (none if it is absent);
    a seed once per file, or once per device (``per_device``: the timings)."""
    found = {}
    for path in sorted(root.rglob(f"*{SUFFIX}")):
        key = path.relative_to(root).with_suffix("").as_posix()
        records = read(path)
        if any(r.key != key for r in records):
            raise InputError(f"{path}: holds records of another entry or variant than '{key}'")
        seen = [(r.seed, r.device if per_device else None) for r in records]
        if twice := sorted({s for s in seen if seen.count(s) > 1}, key=str):
            raise InputError(f"{path}: seed {twice[0][0]} is recorded twice"
                             f"{f' for device {twice[0][1]}' if per_device else ''}")
        found[key] = records
    return found


def write(path: Path, records: list[Record]) -> Path:
    """Write ``records`` atomically (temporary file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dumps(records)
    return atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def _run(r: Record) -> str:
    return f"run {r.run_id} ({r.date})"


def merge(old: list[Record], new: list[Record], recipe: str, per_device: bool = False
          ) -> tuple[list[Record], list[str]]:
    """Merge freshly exported records into a file's records, and say what was chosen.

    Recorded seeds of an earlier shipped spec (another ``recipe`` digest) are dropped: their
    runs no longer count. A seed recorded from another run is replaced only when the new run
    started later; a seed recorded from the same run is refreshed; other seeds are kept.
    ``per_device``: a seed is one record per device (the timings, whose cost is the device's).
    """
    def key(r: Record):
        return (r.seed, r.device) if per_device else r.seed

    notes = [f"seed {r.seed}: dropped {_run(r)}, recorded under an earlier shipped spec"
             for r in old if r.recipe != recipe]
    merged = {key(r): r for r in old if r.recipe == recipe}
    for r in new:
        kept = merged.get(key(r))
        if kept is None or kept.run_id == r.run_id:
            merged[key(r)] = r
        elif r.started > kept.started:
            merged[key(r)] = r
            notes.append(f"seed {r.seed}: {_run(r)} replaces {_run(kept)}, which is older")
        else:
            notes.append(f"seed {r.seed}: kept {_run(kept)}; {_run(r)} is not newer")
    return sorted(merged.values(), key=lambda r: (r.seed, r.device or "")), notes
