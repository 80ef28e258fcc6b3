"""Plugin registry: every component is an entry point of one of the ``zoo.*`` groups.

Built-in components are registered through this project's own ``pyproject.toml`` exactly as
third-party packages register theirs. Discovery uses :mod:`importlib.metadata`; an entry point is
imported only when its group is needed. A plugin that fails to import, or whose class is not a
subclass of its group's base config class (:data:`BASES`, a plugin registered in the wrong
group), is recorded (and shown by ``zoo list`` as ``BROKEN``) without breaking the others. A
plugin that claims a built-in name is ignored with a warning naming both distributions (the
built-in wins); two plugins claiming one name are an error, naming both, only for a spec that
uses that name.
"""

from __future__ import annotations

import importlib.metadata as md
import warnings
from dataclasses import dataclass, field
from functools import cache

from .errors import PluginError, ZooError
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

#: Spec section -> name of its base config class in :mod:`zoo.components`.
BASES: dict[str, str] = {
    "datasets": "DatasetConfig",
    "controls": "ControlConfig",
    "fields": "FieldConfig",
    "solvers": "SolverConfig",
    "backprop": "BackpropConfig",
    "readouts": "ReadoutConfig",
}
#: the distribution whose entry points are the built-in components
BUILTIN = "nde-zoo"


def base_class(group: str) -> type:
    """The base config class every entry of ``group`` must subclass."""
    from . import components

    return getattr(components, BASES[group])


def group_of(config: type) -> str | None:
    """The group whose base class ``config`` subclasses (None: none)."""
    return next((g for g in GROUPS if isinstance(config, type)
                 and issubclass(config, base_class(g))), None)


@dataclass
class Entry:
    """One discovered entry point: ``name`` is the component's ``kind``."""

    group: str
    name: str
    value: str
    distribution: str
    _config: type | None = field(default=None, repr=False)
    error: str | None = None
    #: claimed by two plugins: ``error`` says which
    _claimed: bool = field(default=False, repr=False)

    def load(self) -> type:
        """Import the config class (once); raise :class:`PluginError` naming the plugin on
        failure."""
        if self._config is None and self.error is None:
            try:
                obj = md.EntryPoint(self.name, self.value, GROUPS[self.group]).load()
                base = base_class(self.group)
                if not (isinstance(obj, type) and issubclass(obj, base)):
                    other = group_of(obj)
                    what = (f"a {BASES[other]} (group {GROUPS[other]})" if other else
                            f"not a subclass of zoo.components.{base.__name__}")
                    raise TypeError(
                        f"misregistered: {self.value} is {what}, but group {GROUPS[self.group]} "
                        f"needs a {base.__name__}; register it in the right group")
                if missing := sorted(getattr(obj, "__abstractmethods__", ())):
                    raise TypeError(f"{self.value} does not implement {', '.join(missing)} of "
                                    f"zoo.components.{base.__name__}")
                kind = getattr(obj, "model_fields", {}).get("kind")
                declared = getattr(kind, "default", None) if kind is not None else None
                if declared != self.name:
                    raise TypeError(
                        f"{self.value} must be a config class whose `kind` field defaults to "
                        f"{self.name!r} (found {declared!r})"
                    )
                self._config = obj
            except (Exception, SystemExit) as exc:  # third-party code failing is reported, even
                # by sys.exit() at import, which would end every command silently
                self.error = f"{type(exc).__name__}: {exc}"
        if self._claimed:
            raise PluginError(f"{self.group} component {self.error}")
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
    """All entry points of ``group`` by name. A plugin claiming a built-in name is ignored with a
    warning; a name two plugins claim is kept as an entry whose :meth:`Entry.load` fails."""
    if group not in GROUPS:
        raise PluginError(f"unknown component group '{group}'{did_you_mean(group, GROUPS)}; "
                          f"groups: {', '.join(GROUPS)}")
    found: dict[str, Entry] = {}
    for ep in md.entry_points(group=GROUPS[group]):
        dist = _distribution_of(ep)
        prior = found.get(ep.name)
        if prior is None:
            found[ep.name] = Entry(group, ep.name, ep.value, dist)
            continue
        if (prior.distribution, prior.value) == (dist, ep.value):
            continue  # the same distribution seen twice on sys.path
        if BUILTIN in (prior.distribution, dist):  # the built-in wins; the plugin is ignored
            plugin, value = (dist, ep.value) if prior.distribution == BUILTIN else (
                prior.distribution, prior.value)
            found[ep.name] = Entry(group, ep.name, *(
                (prior.value, prior.distribution) if prior.distribution == BUILTIN
                else (ep.value, dist)))
            warnings.warn(f"{group} component '{ep.name}' is built into '{BUILTIN}' and also "
                          f"claimed by '{plugin}' ({value}); the built-in is used, the plugin's "
                          f"is ignored (rename it in '{plugin}')", stacklevel=2)
            continue
        # two plugins: an error for a spec that uses the name, nothing for the others
        prior.error = (f"'{ep.name}' is claimed by two distributions: '{prior.distribution}' "
                       f"({prior.value}) and '{dist}' ({ep.value}); uninstall one of them")
        prior._claimed = True
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


def component_failure(group: str, kind: str, problem: str, where: str = "") -> ZooError:
    """A failure of the code of component ``kind`` in ``group``, naming its distribution (after
    ``where``, a spec location, if given): exit 2 (:class:`PluginError`) for a plugin's, 1 for a
    built-in's (a bug in nde-zoo)."""
    entry = entries(group).get(kind)
    dist = entry.distribution if entry is not None else "<unknown>"
    message = f"{group} component '{kind}' from distribution '{dist}': {problem}"
    message = f"{where}: {message}" if where else message
    return ZooError(message) if dist == BUILTIN else PluginError(message)


def failure_text(exc: BaseException) -> str:
    """``Type: message`` of a component's exception, its message cut to 300 characters."""
    return f"{type(exc).__name__}: {str(exc).strip()[:300]}"
