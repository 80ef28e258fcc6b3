"""Plugin registry: every component is an entry point of one of the ``zoo.*`` groups.

Built-in components are registered through this project's own ``pyproject.toml`` exactly as
third-party packages register theirs. Discovery uses :mod:`importlib.metadata`; an entry point is
imported only when its group is needed. A plugin that fails to import is recorded (and shown by
``zoo list``) without breaking the others; two distributions claiming one name is an error that
names both.
"""

from __future__ import annotations

import importlib.metadata as md
from dataclasses import dataclass, field
from functools import cache

from .errors import PluginError
from .suggest import did_you_mean

#: Spec section -> entry-point group.
GROUPS: dict[str, str] = {
    "datasets": "zoo.datasets",
    "controls": "zoo.controls",
    "fields": "zoo.fields",
    "solvers": "zoo.solvers",
    "backprop": "zoo.backprop",
    "readouts": "zoo.readouts",
}


@dataclass
class Entry:
    """One discovered entry point: ``name`` is the component's ``kind``."""

    group: str
    name: str
    value: str
    distribution: str
    _config: type | None = field(default=None, repr=False)
    error: str | None = None

    def load(self) -> type:
        """Import the config class (once); raise :class:`PluginError` naming the plugin on failure."""
        if self._config is None and self.error is None:
            try:
                obj = md.EntryPoint(self.name, self.value, GROUPS[self.group]).load()
                kind = getattr(obj, "model_fields", {}).get("kind")
                declared = getattr(kind, "default", None) if kind is not None else None
                if declared != self.name:
                    raise TypeError(
                        f"{self.value} must be a config class whose `kind` field defaults to "
                        f"{self.name!r} (found {declared!r})"
                    )
                self._config = obj
            except Exception as exc:  # any failure of third-party code is reported, not raised
                self.error = f"{type(exc).__name__}: {exc}"
        if self.error is not None:
            raise PluginError(
                f"{self.group} plugin '{self.name}' from distribution '{self.distribution}' "
                f"failed to load: {self.error}"
            )
        return self._config

    @property
    def description(self) -> str:
        try:
            doc = (self.load().__doc__ or "").strip()
        except PluginError:
            return f"BROKEN: {self.error}"
        return doc.splitlines()[0] if doc else ""


def _distribution_of(ep: md.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return dist.metadata["Name"] if dist is not None else "<unknown>"


@cache
def entries(group: str) -> dict[str, Entry]:
    """All entry points of ``group`` by name; two distributions claiming a name is an error."""
    if group not in GROUPS:
        raise PluginError(f"unknown component group '{group}'{did_you_mean(group, GROUPS)}; "
                          f"groups: {', '.join(GROUPS)}")
    found: dict[str, Entry] = {}
    for ep in md.entry_points(group=GROUPS[group]):
        dist = _distribution_of(ep)
        prior = found.get(ep.name)
        if prior is not None:
            if (prior.distribution, prior.value) == (dist, ep.value):
                continue  # the same distribution seen twice on sys.path
            raise PluginError(
                f"{group} component '{ep.name}' is claimed by two distributions: "
                f"'{prior.distribution}' ({prior.value}) and '{dist}' ({ep.value}); "
                f"uninstall one of them"
            )
        found[ep.name] = Entry(group, ep.name, ep.value, dist)
    return found


def get(group: str, name: str) -> type:
    """The config class registered as ``name`` in ``group``."""
    known = entries(group)
    if name not in known:
        raise PluginError(f"no {group} component named '{name}'{did_you_mean(name, known)}; "
                          f"available: {', '.join(sorted(known))}")
    return known[name].load()


def loadable(group: str) -> dict[str, type]:
    """Config classes of every entry of ``group`` that imports; broken ones are skipped."""
    out = {}
    for name, entry in entries(group).items():
        try:
            out[name] = entry.load()
        except PluginError:
            pass
    return out


def broken(group: str) -> dict[str, Entry]:
    """Entries of ``group`` that failed to import (after :func:`loadable` tried them)."""
    return {n: e for n, e in entries(group).items() if e.error is not None}


def refresh() -> None:
    """Forget discovered entry points (after installing a plugin in the same process)."""
    entries.cache_clear()
