"""nde-zoo: a declarative zoo of continuous-time sequence models.

From Python: ``zoo.run_spec(spec)`` trains a spec as ``zoo run`` does and returns the run id and
the trained model; ``zoo.load_model(run_id_or_checkpoint)`` loads one, with ``.predict(data)``
and ``.evaluate(data)`` (docs/own-data.md). Both are imported on first use, so that
``import zoo`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .version import __version__

if TYPE_CHECKING:
    from .predict import load_model
    from .runner import run_spec

__all__ = ["__version__", "load_model", "run_spec"]


def __getattr__(name: str):
    if name == "load_model":
        from .predict import load_model

        return load_model
    if name == "run_spec":
        from .runner import run_spec

        return run_spec
    raise AttributeError(f"module 'zoo' has no attribute {name!r}")
