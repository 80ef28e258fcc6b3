"""The epoch loop: train, evaluate, select the best checkpoint, schedule, stop early.

Per epoch it records ``train/loss`` (the mean loss of the training batches), ``val/<metric>``
and, with ``evaluate_train``, ``train_eval/<metric>`` (both at the evaluation epochs
``eval_first``, ``eval_first + eval_every``, ... and at the last; with a weight penalty the
metrics include ``objective`` = loss + penalty), ``time/epoch_seconds``, ``solver/nfe``
(vector-field evaluations per training batch, forward and backward), ``lr`` and, on CUDA,
``gpu/peak_memory_mb`` (the most GPU memory torch held during the epoch's training and
evaluation); the caller
persists the state and logs the record after every epoch. With ``drop_last`` an epoch trains on
the full batches only.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from tqdm.auto import tqdm

from ..errors import InputError
from ..model import ZooModel
from ..series import PreparedSplit
from ..spec.sections import OBJECTIVE, TRAIN_EVAL
from .device import peak_memory, start_peak
from .evaluate import evaluate
from .recipe import make_optimizer, make_scheduler, scale_output_gradients, weight_penalty
from .seed import rng_state, set_rng_state
from .stopping import EarlyStopping, improved


@dataclass
class TrainState:
    """Everything the loop needs to continue after an interruption."""

    epoch: int = 0
    history: list[dict] = field(default_factory=list)
    best_value: float | None = None
    best_epoch: int | None = None
    best_model: dict | None = None
    stopping: dict[str, dict] = field(default_factory=dict)  # EarlyStopping state per metric


@dataclass
class Splits:
    train: PreparedSplit
    val: PreparedSplit
    test: PreparedSplit


class Trainer:
    def __init__(self, model: ZooModel, splits: Splits, device: torch.device,
                 dtype: torch.dtype, progress: bool = True):
        self.model, self.splits, self.device, self.dtype = model, splits, device, dtype
        self.train_spec = model.spec.train
        readout = model.spec.model.readout
        self.select = self.train_spec.select or f"val/{readout.default_metric[0]}"
        self.select_mode = self.train_spec.select_mode or readout.mode_of(self.select)
        self.optimizer = make_optimizer(model, self.train_spec)
        self.scheduler = make_scheduler(self.optimizer, self.train_spec)
        scale_output_gradients(model, self.train_spec.output_grad_scale)
        self.generator = torch.Generator().manual_seed(model.spec.seed)
        n_train, batch = len(splits.train), self.train_spec.batch_size
        if self.train_spec.drop_last and n_train < batch:
            raise InputError(f"train.drop_last: the training split has {n_train} series, fewer "
                             f"than one batch (batch_size {batch}), so every batch would be "
                             f"dropped; lower batch_size or set drop_last: false")
        self.state = TrainState()
        self.progress = progress

    # -- persistence -------------------------------------------------------------------------
    def snapshot(self) -> dict:
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "scheduler": None if self.scheduler is None else self.scheduler.state_dict(),
                "state": vars(self.state), "rng": rng_state(),
                "generator": self.generator.get_state()}

    def restore(self, snap: dict) -> None:
        self.model.load_state_dict(snap["model"])
        self.optimizer.load_state_dict(snap["optimizer"])
        if self.scheduler is not None and snap["scheduler"] is not None:
            self.scheduler.load_state_dict(snap["scheduler"])
        self.state = TrainState(**snap["state"])
        set_rng_state(snap["rng"])
        self.generator.set_state(snap["generator"])

    # -- the loop ----------------------------------------------------------------------------
    def fit(self, on_epoch: Callable[[dict], None]) -> dict[str, float]:
        """Train until the last epoch or early stop; returns the test metrics of the best model."""
        ts = self.train_spec
        n_batches = self._n_batches()
        bar = tqdm(total=ts.epochs * n_batches, initial=self.state.epoch * n_batches,
                   disable=not self.progress, dynamic_ncols=True, unit="batch")
        try:
            for epoch in range(self.state.epoch + 1, ts.epochs + 1):
                bar.set_description(f"epoch {epoch}/{ts.epochs}")
                start_peak(self.device)
                record = self._train_epoch(epoch, bar)
                if ts.evaluates(epoch):
                    if ts.evaluate_train:
                        record.update(self._evaluate(TRAIN_EVAL, self.splits.train))
                    record.update(self._evaluate("val", self.splits.val))
                    self._check_watched(record)
                    self._select(record, epoch)
                record.update(peak_memory(self.device))
                stop = self._schedule_and_stop(record, epoch)
                self.state.history.append(record)
                self.state.epoch = epoch
                bar.set_postfix(self._postfix(record))
                on_epoch(record)
                if stop:
                    break
        finally:
            bar.close()
        if self.state.best_model is not None:
            self.model.load_state_dict(self.state.best_model)
        return self._evaluate("test", self.splits.test)

    def _train_epoch(self, epoch: int, bar: tqdm) -> dict:
        ts, model = self.train_spec, self.model
        model.train()
        start, total, count = time.perf_counter(), 0.0, 0
        model.integrator.nfe = 0
        for batch in self.splits.train.batches(ts.batch_size, shuffle=True,
                                               drop_last=ts.drop_last, generator=self.generator):
            batch = batch.to(self.device, self.dtype)
            self.optimizer.zero_grad(set_to_none=True)
            loss = model.spec.model.readout.loss(model(batch), batch.y)
            objective = loss + weight_penalty(model, ts)
            objective.backward()
            if ts.grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), ts.grad_clip)
            self.optimizer.step()
            model.constrain()
            value = loss.item()
            if not math.isfinite(value):
                raise FloatingPointError(f"training loss became {value} at epoch {epoch}")
            total, count = total + value * len(batch.y), count + len(batch.y)
            bar.update(1)
            bar.set_postfix(loss=f"{value:.4f}", refresh=False)
        n_batches = max(1, self._n_batches())
        return {"epoch": epoch, "train/loss": total / max(count, 1),
                "time/epoch_seconds": time.perf_counter() - start,
                "solver/nfe": model.integrator.nfe / n_batches,
                "lr": self.optimizer.param_groups[0]["lr"]}

    def _n_batches(self) -> int:
        """Training batches per epoch (the full ones only, with ``drop_last``)."""
        ts = self.train_spec
        return self.splits.train.n_batches(ts.batch_size, drop_last=ts.drop_last)

    def _evaluate(self, prefix: str, split: PreparedSplit) -> dict[str, float]:
        ts = self.train_spec
        metrics = evaluate(self.model, split, ts.eval_batch_size or ts.batch_size, self.device,
                           self.dtype, ts.eval_shuffle_drop_last, self.generator)
        if ts.weight_penalty:
            with torch.no_grad():
                metrics[OBJECTIVE] = metrics["loss"] + float(weight_penalty(self.model, ts))
        return {f"{prefix}/{k}": v for k, v in metrics.items()}

    def _check_watched(self, record: dict) -> None:
        """Every metric the recipe watches is recorded at an evaluation epoch."""
        ts = self.train_spec
        watched = [("select", self.select)]
        watched += [("stopping", m.metric) for m in ts.stopping.criteria()]
        if self.scheduler is not None:
            watched.append(("schedule.monitor", ts.schedule.monitor))
        for option, metric in watched:
            if metric not in record:
                raise InputError(f"train.{option}: metric '{metric}' is not recorded; recorded: "
                                 f"{', '.join(k for k in record if '/' in k)}")

    def _select(self, record: dict, epoch: int) -> None:
        value = record[self.select]
        if improved(value, self.state.best_value, self.select_mode):
            self.state.best_value, self.state.best_epoch = value, epoch
            self.state.best_model = copy.deepcopy(self.model.state_dict())

    def _schedule_and_stop(self, record: dict, epoch: int) -> bool:
        """Step the plateau schedule and the stop rule on the monitors recorded this epoch."""
        ts = self.train_spec
        if self.scheduler is not None and ts.schedule.monitor in record:
            self.scheduler.step(record[ts.schedule.monitor])
        return EarlyStopping(ts.stopping, self.state.stopping).update(record, epoch)

    def _postfix(self, record: dict) -> dict:
        shown = {"loss": f"{record['train/loss']:.4f}"}
        if self.select in record:
            shown[self.select.split("/")[-1]] = f"{record[self.select]:.4f}"
        return shown
