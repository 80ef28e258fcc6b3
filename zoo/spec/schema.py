"""The full spec model, assembled from the installed plugins of each group.

Each plugin section (``data``, ``model.control``, ``model.field``, ...) is a discriminated union
over the config classes registered in its entry-point group, so ``zoo schema`` shows every
installed plugin's options and validation needs no per-plugin code.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from .. import registry
from .sections import InitialSpec, TrackingSpec, TrainSpec

#: spec location of each plugin section -> registry group
PLUGIN_SECTIONS: dict[tuple[str, ...], str] = {
    ("data",): "datasets",
    ("model", "control"): "controls",
    ("model", "field"): "fields",
    ("model", "solver"): "solvers",
    ("model", "backprop"): "backprop",
    ("model", "readout"): "readouts",
}


def _union(group: str) -> Any:
    classes = tuple(registry.loadable(group).values())
    if not classes:
        return dict  # nothing installed: validated later with a clear message
    if len(classes) == 1:
        return classes[0]
    return Annotated[Union[classes], Field(discriminator="kind")]  # noqa: UP007


@cache
def spec_model() -> type[BaseModel]:
    """The Pydantic model of a whole spec with the currently installed plugins."""
    forbid = ConfigDict(extra="forbid", frozen=True)
    model_section = create_model(
        "ModelSpec",
        __config__=forbid,
        control=(_union("controls"), ...),
        field=(_union("fields"), ...),
        solver=(_union("solvers"), ...),
        backprop=(_union("backprop"), Field({"kind": "direct"}, validate_default=True)),
        initial=(InitialSpec, InitialSpec()),
        readout=(_union("readouts"), ...),
        implementation=(Literal["fast", "generic"], Field(
            "fast", description="fast path where one exists, or the plain torchdiffeq path")),
    )
    return create_model(
        "Spec",
        __config__=forbid,
        name=(str | None, Field(None, description="run name (default: the spec file's stem)")),
        description=(str | None, None),
        reproduces=(str | None, Field(None, description="registry entry this spec reproduces")),
        variant=(str | None, Field(
            None, pattern=r"^[a-z0-9][a-z0-9-]*$",
            description="with reproduces: another reading of the paper's protocol for the same "
                        "entry (e.g. paper-text), reported in a row of its own; none: the "
                        "authors' code")),
        seed=(int, 0),
        device=(Literal["auto", "cpu", "cuda"], "auto"),
        data=(_union("datasets"), ...),
        model=(model_section, ...),
        train=(TrainSpec, TrainSpec()),
        tracking=(TrackingSpec, TrackingSpec()),
    )


def json_schema() -> dict:
    schema = spec_model().model_json_schema()
    schema["title"] = "nde-zoo spec"
    return schema


def reset() -> None:
    """Rebuild the model on next use (after plugins were installed)."""
    spec_model.cache_clear()
    registry.refresh()
