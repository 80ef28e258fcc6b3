"""The layout of predictions (``zoo predict``, ``TrainedModel.predict``): a DataFrame keyed by
series id, one row per series, per (series, step) for per-step tasks, per (series, horizon
step) for forecasts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch


def frame(model, new, outputs: torch.Tensor, stored) -> pd.DataFrame:
    """Predictions of ``outputs`` (N, ...) for the series of ``new`` (:class:`NewSeries`)."""
    cfg, task = model.spec.data, model.shape.task
    rows = new.rows
    ids = np.asarray(new.ids, dtype=object)
    id_column = cfg.id if cfg.kind == "table" else "series"
    if cfg.task_kind == "forecast":
        from .datasets.own.new_data import forecast_units

        names, mean, std = forecast_units(rows, cfg, stored)
        h = cfg.forecast.horizon
        values = outputs.numpy().reshape(len(ids), h, len(names)) * std + mean
        index = {id_column: np.repeat(ids, h), "step": np.tile(np.arange(1, h + 1), len(ids))}
        return pd.DataFrame({**index, **{n: values[:, :, k].ravel()
                                         for k, n in enumerate(names)}})
    if task.per_step:
        index = {id_column: ids[rows.series], **_step_columns(cfg, rows)}
        outputs = outputs[torch.from_numpy(rows.series), torch.from_numpy(new.pos)]
    else:
        index = {id_column: ids}
    return pd.DataFrame({**index, **_values(model, cfg, task, outputs)})


def _step_columns(cfg, rows) -> dict[str, np.ndarray]:
    """Where each row is: the time column as in the file (table), or its step (and time)."""
    step = pd.Series(rows.series).groupby(rows.series).cumcount().to_numpy()
    if cfg.kind == "arrays":
        return {"step": step, "time": rows.time}
    if cfg.time is None:
        return {"step": step}
    if rows.origin is not None:
        dates = pd.Timestamp(rows.origin) + pd.to_timedelta(rows.time, unit="s")
        return {cfg.time: dates.map(pd.Timestamp.isoformat).to_numpy(dtype=object)}
    return {cfg.time: rows.time}


def _values(model, cfg, task, outputs: torch.Tensor) -> dict[str, np.ndarray]:
    """Class probabilities and the predicted class, or the regression targets."""
    if task.kind == "multiclass":
        classes = model.classes or [str(i) for i in range(outputs.shape[-1])]
        prob = torch.softmax(outputs, dim=-1).numpy()
        out = {f"prob_{c}": prob[:, k] for k, c in enumerate(classes)}
        out["predicted"] = np.asarray(classes, dtype=object)[prob.argmax(axis=1)]
        return out
    values = outputs.numpy().reshape(len(outputs), -1)
    names = list(cfg.labels) if cfg.kind == "table" else []
    if len(names) != values.shape[1]:
        names = ["target"] if values.shape[1] == 1 else \
            [f"target_{k}" for k in range(values.shape[1])]
    return {n: values[:, k] for k, n in enumerate(names)}
