"""The shipped spec (recipe) of each registry entry, and how a run's resolved spec differs from it.

A run reproduces a published number only with the recipe shipped for it: its resolved spec,
logged as one MLflow param per dotted key, must equal the shipped spec's apart from ``seed`` and
the ``tracking`` settings (and ``model.n_parameters``, which the runner logs beside the spec).
The recipe of an entry is the spec under ``specs/`` whose ``reproduces:`` names it and that
sets no ``variant:``. A spec that also sets ``variant: NAME`` is the recipe of that reading of
the paper's protocol (e.g. the paper's text where it differs from the authors' code): its runs
are compared with the same published number in a row of their own, keyed ``ID@NAME``.
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
_IGNORED_SECTIONS = {"seed", "tracking", "search"}  # search: how to tune, not what is trained
_NOT_SPEC = {"model.n_parameters"}
EPOCHS = "train.epochs"


@dataclass(frozen=True)
class Recipe:
    path: Path
    params: dict[str, str]  # comparable params of the shipped spec
    variant: str | None = None

    @property
    def epochs(self) -> int:
        return int(self.params[EPOCHS])

    @property
    def stops_early(self) -> bool:
        """Whether the recipe may end before its epochs (``train.stopping`` monitors a metric)."""
        return any(not unset(self.params.get(f"train.stopping.{k}"))
                   for k in ("monitor", "monitors"))


def comparable(params: dict[str, str]) -> dict[str, str]:
    """The params that must match the recipe: all but ``seed``, ``tracking.*``, ``search.*`` and
    non-spec ones."""
    return {k: v for k, v in params.items()
            if k.partition(".")[0] not in _IGNORED_SECTIONS and k not in _NOT_SPEC}


def unset(value: str | None) -> bool:
    """Whether a logged param value leaves its option unset (null)."""
    return value in (None, "null")


def recipe_key(entry_id: str, variant: str | None) -> str:
    """``ID`` for the entry's recipe, ``ID@VARIANT`` for a variant's."""
    return entry_id if variant is None else f"{entry_id}@{variant}"


def split_key(key: str) -> tuple[str, str | None]:
    """The inverse of :func:`recipe_key`."""
    entry_id, _, variant = key.partition("@")
    return entry_id, variant or None


def variants(entry_id: str, keys) -> list[str]:
    """The variant names among recipe ``keys`` (:func:`recipe_key`) of ``entry_id``, sorted."""
    return sorted(v for i, v in map(split_key, keys) if i == entry_id and v)


def load_recipes(ids: Iterable[str], root: str | Path | None = None) -> dict[str, Recipe]:
    """By :func:`recipe_key`, the recipes (and variants) of ``ids`` shipped under ``root``
    (default ``specs/``)."""
    wanted = set(ids)
    found: dict[str, Recipe] = {}
    for path in spec_files(root if root is not None else DEFAULT_ROOT):
        data = read_spec_file(path).data
        if data.get("reproduces") not in wanted:
            continue
        key = recipe_key(data["reproduces"], data.get("variant"))
        if key in found:
            raise InputError(f"{found[key].path} and {path} both reproduce '{key}'")
        spec, _ = load_spec(path)
        found[key] = Recipe(path, comparable(flatten(spec.model_dump(mode="json"))),
                            spec.variant)
    return found


def recipes_of(keys: Iterable[str], root: str | Path | None = None) -> dict[str, Recipe]:
    """The recipes of the entries that recipe ``keys`` name (with all their variants)."""
    return load_recipes({split_key(k)[0] for k in keys}, root)


def variant_of(params: dict[str, str]) -> str | None:
    """The ``variant`` a run's logged spec names (None: the entry's recipe)."""
    value = params.get("variant", "null")
    return None if value == "null" else value


def changed_keys(params: dict[str, str], recipe: Recipe) -> list[str]:
    """The compared keys whose value in ``params`` differs from the recipe's, ``train.epochs``
    first. A key the run did not log where the recipe leaves it unset (null) is an option added
    after the run, at the value that keeps the earlier behaviour: not a difference."""
    ran = comparable(params)
    keys = sorted(k for k in ran.keys() | recipe.params.keys()
                  if ran.get(k) != recipe.params.get(k)
                  and not (k not in ran and unset(recipe.params.get(k))))
    keys.sort(key=lambda k: k != EPOCHS)
    return keys


def differences(params: dict[str, str], recipe: Recipe | None) -> str | None:
    """``None`` when ``params`` are the recipe's, else what differs, ``train.epochs`` first:
    ``train.epochs=3 (recipe 200); train.optimizer.lr=0.1 (recipe 0.01)``."""
    if recipe is None:
        return "no shipped spec reproduces this entry"
    ran = comparable(params)
    if not ran:
        return "no resolved spec logged"
    return "; ".join(f"{k}={ran.get(k, '(not logged)')} "
                     f"(recipe {recipe.params.get(k, 'has none')})"
                     for k in changed_keys(params, recipe)) or None
