"""Predict and evaluate with a trained model: :func:`load_model` (``zoo.load_model``) and the
``zoo predict`` / ``zoo evaluate`` commands.

A model trained on ``kind: table`` or ``kind: arrays`` data reads new series with its run's own
data options (the same columns or arrays; labels only to evaluate), every series of the input
(no split), on the training grid and z-scored with the training statistics that its checkpoint
keeps (:mod:`.datasets.own.new_data`).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

from .errors import InputError
from .series import Batch
from .training.checkpoint import Checkpoint, read_checkpoint

#: the dataset kinds whose files a trained model can read
OWN_KINDS = ("table", "arrays")
BEST = "checkpoints/best.pt"


def load_model(source: str | Path, *, tracking_uri: str | None = None,
               device: str | None = None) -> TrainedModel:
    """The model of an MLflow run (its id; the store is ``tracking_uri``, else
    ``MLFLOW_TRACKING_URI``, else ``sqlite:///mlruns.db`` here) or of a ``.pt`` checkpoint file.
    ``device``: ``cpu``, ``cuda`` or ``auto`` (default: the spec's)."""
    if _is_file(source):
        return TrainedModel(read_checkpoint(source), device, str(source))
    return TrainedModel(run_checkpoint(str(source), tracking_uri), device, f"run {source}")


def _is_file(source: str | Path) -> bool:
    path = Path(source)
    return isinstance(source, Path) or path.suffix == ".pt" or path.exists() or "/" in str(source)


def run_checkpoint(run_id: str, tracking_uri: str | None = None) -> Checkpoint:
    """The best checkpoint of run ``run_id``; nothing is written to the store."""
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException

    from .tracking.mlflow_run import check_store, resolve_uri

    uri = resolve_uri(tracking_uri, None)
    if uri.startswith("sqlite:///"):
        if not Path(uri[len("sqlite:///"):]).is_file():
            raise InputError(f"no run '{run_id}': tracking store {uri} does not exist (pass "
                             f"--tracking-uri, or run this where the run was tracked)")
    else:
        check_store(uri)
    client = MlflowClient(tracking_uri=uri)
    try:
        run = client.get_run(run_id)
    except MlflowException:
        raise InputError(f"no run '{run_id}' in tracking store {uri}") from None
    if not any(a.path == BEST for a in client.list_artifacts(run_id, "checkpoints")):
        raise InputError(f"run {run_id} has no checkpoint yet (no {BEST}: one is stored when an "
                         f"epoch is evaluated; the run is {run.info.status})")
    with tempfile.TemporaryDirectory(prefix="zoo-predict-") as tmp:
        try:
            local = client.download_artifacts(run_id, BEST, tmp)
        except (MlflowException, OSError) as exc:
            raise InputError(f"run {run_id}: cannot download {BEST} ({exc})") from None
        return read_checkpoint(local)


class TrainedModel:
    """A trained model and what it needs to read new data; from :func:`load_model`.

    ``net`` is the torch module, ``spec`` the resolved spec, ``classes`` the class names.
    """

    def __init__(self, checkpoint: Checkpoint, device: str | None = None, source: str = ""):
        from .training.device import resolve_device as _device

        self.spec = checkpoint.spec
        self.shape = checkpoint.shape
        self.source = source
        self.device = _device(device or self.spec.device)
        self.dtype = getattr(torch, self.spec.train.dtype)
        self.net = checkpoint.build(self.device, self.dtype)
        self._data = checkpoint.data
        self._stored = None

    def __repr__(self) -> str:
        return (f"TrainedModel({self.source or '?'}: {self.spec.model.field.kind} on "
                f"'{self.spec.data.kind}', {self.shape.task.kind})")

    @property
    def classes(self) -> list[str]:
        return list(self.shape.task.class_names)

    def predict(self, data: Any, *, batch_size: int | None = None, progress: bool = True):
        """Predictions for every series of ``data`` as a pandas DataFrame keyed by series id:
        ``prob_<class>`` per class and ``predicted`` (classification), the target columns
        (regression), one row per (series, step) for per-step tasks, per horizon step (in the
        channels' units) for forecasts.

        ``data``: a file as the run's ``data.path`` (``table``: .csv/.tsv/.parquet; ``arrays``:
        .npz, .npy files or a folder of them), a DataFrame in the table layout, or arrays (a
        ``values`` array (N, L, C) or a dict with ``values``, ``times``, ``lengths``). Labels
        are not read. A progress bar shows on stderr when it takes more than a second."""
        from .predict_frame import frame

        new = self._read(data, labelled=False)
        outputs, _ = self._outputs(new, batch_size, progress)
        return frame(self, new, outputs.detach().double().cpu(), self.stored())

    def evaluate(self, data: Any, *, batch_size: int | None = None,
                 progress: bool = True) -> dict[str, float]:
        """The readout's metrics (loss, accuracy, ... as ``zoo run`` reports them for the test
        split) on labelled ``data`` (as for :meth:`predict`, with labels)."""
        new = self._read(data, labelled=True)
        outputs, targets = self._outputs(new, batch_size, progress)
        return self.spec.model.readout.metrics(outputs, targets)

    # -- internals -----------------------------------------------------------------------------
    def _read(self, data: Any, labelled: bool):
        from .datasets.own.new_data import read_new

        self.check_readable()
        new = read_new(self.spec.data, data, self.shape.task, self.stored(), labelled)
        width = new.split.values.shape[-1]
        if width != self.shape.input_channels:
            raise InputError(f"{new.rows.source}: {width} channels read but the model was "
                             f"trained on {self.shape.input_channels}")
        return new

    def check_readable(self) -> None:
        """An InputError unless the model was trained on a dataset kind whose files it reads."""
        kind = self.spec.data.kind
        if kind not in OWN_KINDS:
            raise InputError(f"{self.source}: predict and evaluate read `table` or `arrays` "
                             f"files; this model was trained on dataset '{kind}', whose files "
                             f"they do not read")

    def stored(self):
        """What the checkpoint keeps of the training data; for a checkpoint of an older zoo,
        recomputed from the training data when it is still there."""
        from .datasets.own.new_data import Stored

        if self._stored is None:
            info = self._data
            if not info:
                try:
                    info = self.spec.data.load().info
                except InputError:
                    info = {}
            self._stored = Stored.from_info(info)
        return self._stored

    @torch.no_grad()
    def _outputs(self, new, batch_size: int | None, progress: bool):
        """Model outputs and targets of every series, in batches."""
        from tqdm import tqdm

        train = self.spec.train
        size = train.eval_batch_size or train.batch_size if batch_size is None else batch_size
        if size < 1:
            raise InputError(f"batch size {size}: give a positive number")
        split, control = new.split, self.spec.model.control
        outputs, targets = [], []
        with tqdm(total=len(split), unit="series", file=sys.stderr, delay=1, leave=False,
                  disable=not progress or len(split) <= size) as bar:
            for start in range(0, len(split), size):
                part = split.subset(slice(start, start + size))
                batch = Batch(part.times, control.prepare(part.times, part.values), part.y,
                              part.final_index, part.static).to(self.device, self.dtype)
                outputs.append(self.net(batch))
                targets.append(batch.y)
                bar.update(len(part))
        return torch.cat(outputs), torch.cat(targets)


def write_table(frame, path: Path) -> None:
    """Write ``frame`` as CSV/TSV or Parquet by suffix, atomically (nothing on failure)."""
    from .outputs import atomic_write

    suffix = path.suffix.lower()

    def write(tmp: Path) -> None:
        if suffix in (".parquet", ".pq"):
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False, sep="\t" if suffix == ".tsv" else ",")

    try:
        atomic_write(path, write)
    except OSError as exc:
        raise InputError(f"{path}: cannot write it ({exc.strerror or exc})") from None
