"""The shipped spec (recipe) of each registry entry, and how a run's resolved spec differs from it.

A run reproduces a published number only with the recipe shipped for it: its resolved spec,
logged as one MLflow param per dotted key, must equal the shipped spec's apart from ``seed`` and
the ``tracking`` settings (and ``model.n_parameters``, which the runner logs beside the spec).
The recipe of an entry is the spec under ``specs/`` whose ``reproduces:`` names it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..spec.files import spec_files
from ..spec.source import read_spec_file
from ..spec.validate import load_spec
from ..tracking.params import flatten

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "specs"
_IGNORED_SECTIONS = {"seed", "tracking"}
_NOT_SPEC = {"model.n_parameters"}
EPOCHS = "train.epochs"


@dataclass(frozen=True)
class Recipe:
    path: Path
    params: dict[str, str]  # comparable params of the shipped spec

    @property
    def epochs(self) -> int:
        return int(self.params[EPOCHS])


def comparable(params: dict[str, str]) -> dict[str, str]:
    """The params that must match the recipe: all but ``seed``, ``tracking.*`` and non-spec ones."""
    return {k: v for k, v in params.items()
            if k.partition(".")[0] not in _IGNORED_SECTIONS and k not in _NOT_SPEC}


def load_recipes(ids: Iterable[str], root: str | Path | None = None) -> dict[str, Recipe]:
    """The recipe of each of ``ids`` that a spec under ``root`` (default ``specs/``) reproduces."""
    wanted = set(ids)
    found: dict[str, Recipe] = {}
    for path in spec_files(root if root is not None else DEFAULT_ROOT):
        entry_id = read_spec_file(path).data.get("reproduces")
        if entry_id not in wanted:
            continue
        if entry_id in found:
            raise InputError(f"{found[entry_id].path} and {path} both reproduce '{entry_id}'")
        spec, _ = load_spec(path)
        found[entry_id] = Recipe(path, comparable(flatten(spec.model_dump(mode="json"))))
    return found


def differences(params: dict[str, str], recipe: Recipe | None) -> str | None:
    """``None`` when ``params`` are the recipe's, else what differs, ``train.epochs`` first:
    ``train.epochs=3 (recipe 200); train.optimizer.lr=0.1 (recipe 0.01)``."""
    if recipe is None:
        return "no shipped spec reproduces this entry"
    ran = comparable(params)
    if not ran:
        return "no resolved spec logged"
    keys = sorted(k for k in ran.keys() | recipe.params.keys()
                  if ran.get(k) != recipe.params.get(k))
    keys.sort(key=lambda k: k != EPOCHS)
    return "; ".join(f"{k}={ran.get(k, '(not logged)')} "
                     f"(recipe {recipe.params.get(k, 'has none')})" for k in keys) or None
