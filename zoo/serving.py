"""Serve a trained model: the MLflow pyfunc model that a ``zoo run`` on ``table`` or ``arrays``
data logs at artifact path ``model`` (``mlflow models serve -m runs:/RUN_ID/model``).

The pyfunc model keeps the run's best checkpoint as its artifact (weights, spec, normalisation
statistics, grid) and predicts as :meth:`zoo.predict.TrainedModel.predict` does, from a pandas
DataFrame: the table layout of the training file, or for ``arrays`` the long layout of
:func:`arrays_from_long` (columns ``series``, optional ``time``, one per channel).
"""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import InputError
from .predict import TrainedModel
from .training.checkpoint import read_checkpoint

ARTIFACT = "model"
MODEL_VERSIONS = "mlflow.modelVersions"  # mlflow.utils.mlflow_tags.MLFLOW_MODEL_VERSIONS
SERIES, TIME = "series", "time"

try:  # mlflow is a dependency; the base class is only needed to log and serve
    from mlflow.pyfunc import PythonModel
except ImportError:  # pragma: no cover
    PythonModel = object


class ZooPyfunc(PythonModel):
    """An MLflow pyfunc model around a best checkpoint (artifact ``checkpoint``)."""

    def load_context(self, context) -> None:
        self.model = open_model(context.artifacts["checkpoint"])

    def predict(self, context, model_input: pd.DataFrame, params: dict | None = None):
        """:func:`predict_frame`; a request zoo refuses is MLflow's invalid-parameter error
        (HTTP 400 from the server) with zoo's message, not an unexpected error and traceback."""
        from mlflow.exceptions import MlflowException
        from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE

        try:
            return predict_frame(self.model, model_input)
        except InputError as exc:
            raise MlflowException(str(exc), INVALID_PARAMETER_VALUE) from None


def open_model(path: str | Path) -> TrainedModel:
    """The model of a checkpoint on its spec's device (CPU when the spec asks for CUDA and
    there is none)."""
    import torch

    ckpt = read_checkpoint(path)
    device = "cpu" if ckpt.spec.device == "cuda" and not torch.cuda.is_available() else None
    return TrainedModel(ckpt, device, "mlflow model")


def input_columns(model: TrainedModel) -> list[str]:
    """The DataFrame columns the model reads: id, time (if any), channels."""
    cfg, stored = model.spec.data, model.stored()
    channels = stored.data_channels(cfg) or []
    if cfg.kind == "table":
        return [cfg.id, *([cfg.time] if cfg.time else []), *channels]
    return [SERIES, TIME, *channels]


def predict_frame(model: TrainedModel, frame: pd.DataFrame) -> pd.DataFrame:
    """``model.predict`` of a DataFrame in the run's table layout (or the long arrays one)."""
    if model.spec.data.kind == "table":
        return model.predict(frame, progress=False)
    arrays, ids = arrays_from_long(frame, input_columns(model)[2:])
    out = model.predict(arrays, progress=False)
    out[SERIES] = np.asarray(ids, dtype=object)[out[SERIES].to_numpy(dtype=int)]
    return out


def arrays_from_long(frame: pd.DataFrame, channels: list[str]) -> tuple[dict, np.ndarray]:
    """``values`` (N, L, C), ``lengths`` and ``times`` (with a ``time`` column) of a long
    frame: one row per step, ``series`` ids in order of first appearance, steps in row order;
    and the ids."""
    from .errors import InputError

    missing = [c for c in [SERIES, *channels] if c not in frame.columns]
    if missing:
        raise InputError(f"<DataFrame>: no column {', '.join(map(repr, missing))}; the long "
                         f"layout has columns {SERIES}, {TIME} (optional), "
                         f"{', '.join(channels)}")
    ids = pd.unique(frame[SERIES])
    codes = pd.Categorical(frame[SERIES], categories=ids).codes
    pos = pd.Series(codes).groupby(codes).cumcount().to_numpy()
    lengths = np.bincount(codes, minlength=len(ids))
    shape = (len(ids), int(lengths.max(initial=0)))
    values = np.full((*shape, len(channels)), np.nan)
    values[codes, pos] = frame[channels].to_numpy(dtype=float)
    out = {"values": values, "lengths": lengths}
    if TIME in frame.columns:
        times = np.full(shape, np.nan)
        times[codes, pos] = frame[TIME].to_numpy(dtype=float)
        for i, n in enumerate(lengths):  # past a series' length: any increasing times
            times[i, n:] = times[i, n - 1] + np.arange(1, shape[1] - n + 1)
        out["times"] = times
    return out, ids


def input_example(model: TrainedModel, series: int = 2) -> pd.DataFrame:
    """The rows of the first ``series`` series of the training file, typed as a client sends
    them: numbers (NaN when missing), ids and date times as text."""
    cfg = model.spec.data
    columns = input_columns(model)
    if cfg.kind == "table":
        from .datasets.own.options import existing
        from .datasets.own.table import _read

        raw = _read(existing(cfg.path), columns=columns)
        ids = pd.unique(raw[cfg.id])[:series]
        frame = raw[raw[cfg.id].isin(ids)].reset_index(drop=True)
        frame[cfg.id] = frame[cfg.id].astype(str).str.strip()
        for c in columns[1:]:
            cells = frame[c].replace(r"^\s*$", np.nan, regex=True) if frame[c].dtype == object \
                else frame[c]
            try:
                frame[c] = pd.to_numeric(cells).astype(float)
            except (ValueError, TypeError):
                frame[c] = cells.astype(str).str.strip()
        return frame
    from .datasets.own.arrays import open_store

    store = open_store(cfg.path)
    values = store.numbers("values")[:series]
    n, steps = values.shape[:2]
    if "lengths" in store.keys:
        lengths = store.numbers("lengths")[:series].astype(int)
    else:
        seen = ~np.isnan(values).all(axis=2)
        lengths = np.array([int(np.nonzero(s)[0].max(initial=-1)) + 1 for s in seen])
    times = store.numbers("times") if "times" in store.keys else np.arange(steps, dtype=float)
    times = np.broadcast_to(times if times.ndim == 1 else times[:series], (n, steps))
    rows = [{SERIES: str(i), TIME: float(times[i, t]),
             **{c: float(values[i, t, k]) for k, c in enumerate(columns[2:])}}
            for i in range(n) for t in range(lengths[i])]
    return pd.DataFrame(rows, columns=columns)


def log_model(tracker, checkpoint: Path, step: int, register: str | None = None) -> str:
    """Log the pyfunc model of ``checkpoint`` as the MLflow *logged model* ``model`` of
    ``tracker``'s run (signature and input example from the training file; the run's metrics
    at ``step``, the selected epoch, linked to it); register it as ``register`` when given.
    ``runs:/RUN_ID/model`` and ``models:/MODEL_ID`` both resolve to it. A line for the user."""
    import mlflow
    import torch
    from mlflow.entities import LoggedModelOutput
    from mlflow.models import Model, infer_signature

    from .version import __version__

    model = open_model(checkpoint)
    example = input_example(model)
    signature = infer_signature(example, predict_frame(model, example))
    requirements = [f"nde-zoo=={__version__}", f"mlflow=={mlflow.__version__}",
                    f"torch=={torch.__version__.split('+')[0]}", f"pandas=={pd.__version__}"]
    client, run_id = tracker.client, tracker.run_id
    logged = client.create_logged_model(
        tracker.experiment_id, name=ARTIFACT, source_run_id=run_id, model_type="zoo",
        params={k: str(v)[:6000] for k, v in client.get_run(run_id).data.params.items()})
    try:
        with tempfile.TemporaryDirectory(prefix="zoo-model-") as tmp:
            path = Path(tmp) / ARTIFACT
            meta = Model(artifact_path=logged.artifact_location, run_id=run_id,
                         model_uuid=logged.model_id, model_id=logged.model_id)
            quiet = logging.getLogger("mlflow.pyfunc")  # the class pickles by reference to zoo
            level, _ = quiet.level, quiet.setLevel(logging.ERROR)
            try:
                mlflow.pyfunc.save_model(path, python_model=ZooPyfunc(), mlflow_model=meta,
                                         artifacts={"checkpoint": str(checkpoint)},
                                         signature=signature, input_example=example,
                                         pip_requirements=requirements)
            finally:
                quiet.setLevel(level)
            client.log_model_artifacts(logged.model_id, str(path))
        client.log_outputs(run_id, [LoggedModelOutput(logged.model_id, step=step)])
        link_metrics(client, run_id, logged.model_id, step)
        client.finalize_logged_model(logged.model_id, "READY")
    except BaseException:
        client.finalize_logged_model(logged.model_id, "FAILED")
        raise
    source = f"runs:/{run_id}/{ARTIFACT}"
    line = (f"model logged ({logged.model_id}): serve it with mlflow models serve -m {source} "
            f"--env-manager local")
    if register:
        line += f"; {register_model(tracker, register, logged)}"
    return line


def link_metrics(client, run_id: str, model_id: str, step: int) -> None:
    """The run's metrics at ``step`` (the selected epoch's validation and test metrics) logged
    again with ``model_id``, as MLflow shows a logged model's metrics."""
    from mlflow.entities import Metric

    metrics = [Metric(m.key, m.value, m.timestamp, m.step, model_id=model_id, run_id=run_id)
               for key in client.get_run(run_id).data.metrics
               for m in client.get_metric_history(run_id, key) if m.step == step]
    for start in range(0, len(metrics), 1000):
        client.log_batch(run_id, metrics=metrics[start:start + 1000])


def register_model(tracker, name: str, logged) -> str:
    """Register the logged model ``logged`` as a new version of ``name`` in the store's
    model registry."""
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException

    from .tracking.mlflow_run import _sqlite_path
    from .tracking.store_lock import store_lock

    client = MlflowClient(tracking_uri=tracker.uri, registry_uri=tracker.uri)
    with store_lock(_sqlite_path(tracker.uri)):
        try:
            client.get_registered_model(name)
        except MlflowException:
            client.create_registered_model(name)
        version = client.create_model_version(name, logged.artifact_location,
                                              run_id=tracker.run_id, model_id=logged.model_id)
    # the link MLflow shows on the logged model's page
    client.set_logged_model_tags(logged.model_id, {MODEL_VERSIONS: json.dumps(
        [{"name": name, "version": version.version}])})
    return f"registered as models:/{name}/{version.version}"

