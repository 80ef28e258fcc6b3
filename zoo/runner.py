"""``zoo run``: validate -> load data -> build -> train -> evaluate, tracked in one MLflow run.

Every write to the store happens with interrupts deferred (:mod:`.tracking.deferred_interrupt`),
and once the run exists it is always ended: FINISHED, KILLED on an interrupt (Ctrl-C, or SIGTERM
under ``zoo run``) or FAILED on an error. Its temporary folders are removed however it ends.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import torch

from .build_context import DataShape
from .errors import ZooError
from .kernels import compiled
from .model import ZooModel, count_parameters
from .plots import learning_curves
from .predict import OWN_KINDS
from .series import DataBundle, PreparedSplit
from .spec.identity import spec_hash
from .tracking.deferred_interrupt import exit_code, interrupts_deferred
from .tracking.mlflow_run import MlflowRun, check_store, misplaced_artifacts, resolve_uri
from .tracking.params import flatten
from .training.allocator import keep_freed_blocks
from .training.checkpoint import atomic_save, best_payload, spec_from_yaml, spec_to_yaml
from .training.device import PEAK_MEMORY, RUN_PEAK_MEMORY, device_label, device_tags
from .training.device import resolve_device as _device
from .training.loop import Splits, Trainer
from .training.seed import seed_everything
from .version import __version__


class Interrupted(ZooError):
    """A run ended by Ctrl-C (exit 130) or SIGTERM (143); it is marked KILLED."""

    def __init__(self, message: str, code: int = 130, run_id: str | None = None,
                 hint: str | None = None):
        super().__init__(message)
        self.exit_code = code
        self.run_id = run_id  # the run marked KILLED
        self.hint = hint  # how to go on: resume it, or start it again


@dataclass
class RunOptions:
    seed: int | None = None
    device: str | None = None
    tracking_uri: str | None = None
    smoke: bool = False
    progress: bool = True
    force: bool = False  # resume a RUNNING run whose process zoo cannot check (see tracking.owner)
    #: switch glibc's allocator to keep freed blocks (process-wide: the CLI asks for it)
    keep_freed_blocks: bool = False
    #: how the data differ from the dataset the spec names (a modified or synthetic copy): joined
    #: to the loader's own partial-data label, so the run is never reported as the paper's
    data_note: str | None = None
    say: Callable[[str], None] = lambda text: print(text, file=sys.stderr)
    #: tags added to the run (a search's trial: its parent run and number)
    tags: dict[str, str] = field(default_factory=dict)
    #: called with each epoch's record once it is stored; may raise :class:`Stopped`
    watch: Callable[[dict], None] | None = None


class Stopped(Exception):
    """Raised by :attr:`RunOptions.watch` to end a run early (a pruned trial): the run is
    marked KILLED with the reason as tag ``zoo.stopped``."""


@dataclass
class RunResult:
    run_id: str
    uri: str
    test: dict[str, float]
    best_epoch: int | None
    experiment_id: str | None = None


NOTE_TAG = "mlflow.note.content"


def _section(section: Any) -> str:
    """``kind (key value, ...)`` of a spec section: its kind and its set scalar options."""
    data = section.model_dump(mode="json")
    kind = data.pop("kind", "?")
    shown = ", ".join(f"{k} {v}" for k, v in data.items()
                      if v is not None and not isinstance(v, (dict, list)))
    return f"`{kind}`" + (f" ({shown})" if shown else "")


def run_note(spec: Any, run_id: str, uri: str, test: dict[str, float] | None = None,
             best_epoch: int | None = None) -> str:
    """The run's description (MLflow's ``mlflow.note.content``, Markdown): what it trains, how
    to resume it and, once finished, its test metrics at the selected epoch."""
    m = spec.model
    lines = [f"**{spec.name or 'zoo run'}**, seed {spec.seed}", ""]
    if spec.reproduces:
        lines += [f"- reproduces: `{spec.reproduces}`"]
    lines += [f"- data: {_section(spec.data)}",
              f"- model: field {_section(m.field)}; control {_section(m.control)}; "
              f"readout {_section(m.readout)}",
              f"- solver: {_section(m.solver)}",
              f"- training: {spec.train.epochs} epochs, batch {spec.train.batch_size}, "
              f"{spec.train.optimizer.kind} lr {spec.train.optimizer.lr}"]
    if test is None:
        lines += ["", "If interrupted, resume with:", "",
                  f"    zoo run --resume {run_id} --tracking-uri {uri}"]
    else:
        shown = ", ".join(f"`{k}` {v:.4f}" for k, v in test.items())
        lines += ["", f"Finished. Test metrics of the best epoch ({best_epoch}): {shown}"]
    return "\n".join(lines)


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _prepare(spec: Any, bundle: DataBundle) -> Splits:
    control = spec.model.control
    return Splits(*(PreparedSplit(s, control.prepare(s.times, s.values))
                    for s in (bundle.train, bundle.val, bundle.test)))


class _Session:
    """Shared machinery of a new run and a resumed one."""

    def __init__(self, spec: Any, opts: RunOptions, tracker: MlflowRun | None):
        self.spec, self.opts, self.tracker = spec, opts, tracker
        self.device = _device(opts.device or spec.device)
        self.dtype = getattr(torch, spec.train.dtype)
        opts.say(f"loading data '{spec.data.kind}' ...")
        self.bundle = spec.data.load(smoke=opts.smoke)
        if opts.smoke:
            self.bundle = self.bundle.smoke()
        if opts.data_note:
            self.bundle.partial = "; ".join(filter(None, [self.bundle.partial, opts.data_note]))
        if self.bundle.partial:
            opts.say(f"WARNING: partial data: {self.bundle.partial}")
        seed_everything(spec.seed)
        shape = DataShape(self.bundle.input_channels, self.bundle.static_channels,
                          self.bundle.train.values.shape[1], self.bundle.task)
        self.model = ZooModel(spec, shape).to(self.device, self.dtype)
        self.trainer = Trainer(self.model, _prepare(spec, self.bundle), self.device, self.dtype,
                               progress=opts.progress)
        self.workdir: Path | None = None  # set while training
        self.resumable = False  # a checkpoint is stored

    def on_epoch(self, record: dict) -> None:
        """Persist the resumable state first, then log: a crash never loses logged history.

        Ctrl-C is delivered after the whole epoch is stored, never in the middle of a write.
        """
        with interrupts_deferred():
            state = self.trainer.state
            if state.best_epoch == record["epoch"]:
                path = self.workdir / "best.pt"
                atomic_save(best_payload(self.model, state.best_model, self.bundle.info), path)
                self.tracker.log_file(path, "checkpoints")
            last = self.workdir / "last.pt"
            atomic_save(self.trainer.snapshot(), last)
            self.tracker.log_file(last, "checkpoints")
            self.tracker.log_metrics(record, step=record["epoch"])
            self.resumable = True
        if self.opts.watch is not None:
            self.opts.watch(record)

    def log_model(self, step: int) -> None:
        """Log the MLflow pyfunc model of the best checkpoint, selected at epoch ``step``
        (own data only); a failure is a warning, the run still finishes."""
        tracking, kind = self.spec.tracking, self.spec.data.kind
        if not tracking.log_model:
            return
        if kind not in OWN_KINDS:
            self.opts.say(f"no MLflow model logged: dataset '{kind}' is not served (only "
                          f"`table` and `arrays` data, whose rows a request can carry)")
            return
        from .serving import log_model

        best = self.workdir / "best.pt"
        if not best.is_file():  # resumed after its best epoch
            best = self.tracker.download("checkpoints/best.pt", self.workdir / "best")
        if best is None:
            self.opts.say("no MLflow model logged: the run has no best checkpoint")
            return
        try:
            self.opts.say(log_model(self.tracker, best, step, tracking.register_model))
        except Exception as exc:  # noqa: BLE001 - the trained run stays usable
            self.opts.say(f"WARNING: MLflow model not logged: {type(exc).__name__}: {exc}")

    def train(self) -> RunResult:
        """Train and log the test metrics, in a working folder removed afterwards."""
        with work_folder() as workdir:
            self.workdir = workdir
            with compiled.recording() as kernels:
                test = self.trainer.fit(self.on_epoch)
            state = self.trainer.state
            # the test metrics belong to the selected epoch's model: logged at its step
            best = state.best_epoch if state.best_epoch is not None else state.epoch
            peaks = [r[PEAK_MEMORY] for r in state.history if PEAK_MEMORY in r]
            run_peak = {RUN_PEAK_MEMORY: max(peaks)} if peaks else {}
            with interrupts_deferred():  # the test results are stored whole, as each epoch is
                self.tracker.log_metrics({**test, "best_epoch": best, **run_peak}, step=best)
                self.tracker.set_tags({
                    "zoo.best_epoch": str(best), "zoo.kernels": compiled.summary(kernels),
                    NOTE_TAG: run_note(self.spec, self.tracker.run_id, self.tracker.uri, test,
                                       best)})
                if self.spec.tracking.plots and state.history:
                    png = learning_curves(state.history, self.workdir / "learning_curves.png",
                                          self.spec.name or "run")
                    self.tracker.log_file(png, "plots")
                self.log_model(best)
                self.tracker.finish("FINISHED")
        return RunResult(self.tracker.run_id, self.tracker.uri, test, state.best_epoch,
                         self.tracker.experiment_id)


@contextmanager
def work_folder() -> Iterator[Path]:
    """A temporary folder removed however the block ends. It is made with interrupts held
    back, so that a Ctrl-C or SIGTERM cannot fall between its creation and its removal."""
    path = None
    try:
        with interrupts_deferred():
            path = Path(tempfile.mkdtemp(prefix="zoo-run-"))
        yield path
    finally:
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)


@contextmanager
def _ended(tracker: MlflowRun, resumable: Callable[[], bool]) -> Iterator[None]:
    """End the started run if the block does not: KILLED on an interrupt, raised as
    :class:`Interrupted` with how to go on (resume, or start again without a checkpoint);
    FAILED on an error."""
    try:
        yield
    except KeyboardInterrupt as exc:
        if tracker.ended:  # it finished just before the interrupt: nothing to mark
            raise
        with interrupts_deferred():
            tracker.finish("KILLED")
        if resumable():
            hint = (f"resume with: zoo run --resume {tracker.run_id} "
                    f"--tracking-uri {tracker.uri}")
        else:
            hint = (f"run {tracker.run_id} is marked KILLED and cannot be resumed (no epoch "
                    f"was saved, so it has no checkpoint); start it again with zoo run")
        raise Interrupted(f"interrupted; {hint}", exit_code(exc), tracker.run_id, hint) from None
    except Stopped as exc:
        with interrupts_deferred():
            tracker.set_tags({"zoo.stopped": str(exc)})
            tracker.finish("KILLED")
        raise
    except BaseException:
        with interrupts_deferred():
            tracker.finish("FAILED")
        raise


def run(spec: Any, opts: RunOptions) -> RunResult:
    """Train ``spec`` in a new MLflow run."""
    allocator = keep_freed_blocks() if opts.keep_freed_blocks else "system (not changed)"
    if opts.seed is not None:
        spec = spec.model_copy(update={"seed": opts.seed})
    if opts.smoke:
        # One epoch on the 16-series smoke data, usually smaller than one batch: train on all
        # of it (drop_last would drop every batch; the recorded spec says so too).
        spec = spec.model_copy(update={"train": spec.train.model_copy(
            update={"epochs": 1, "drop_last": False})})
    uri = resolve_uri(opts.tracking_uri, spec.tracking.uri)
    check_store(uri)
    session = _Session(spec, opts, None)  # bad data fails here, before the store is written
    tracker = session.tracker = MlflowRun(uri)
    implementation = getattr(session.model.body, "implementation_used", "generic")
    with _ended(tracker, lambda: session.resumable):
        with interrupts_deferred():
            run_id = start_tracked(tracker, spec, session.model, session.bundle,
                                   session.device, {"zoo.smoke": str(opts.smoke).lower(),
                                                    "zoo.allocator": allocator,
                                                    "zoo.implementation": implementation,
                                                    **opts.tags})
        opts.say(f"MLflow run {run_id} ({count_parameters(session.model):,} parameters, "
                 f"{implementation} path, {device_label(session.device)})")
        if warning := misplaced_artifacts(uri, tracker.artifact_uri or ""):
            opts.say(warning)
        return session.train()


def start_tracked(tracker: MlflowRun, spec: Any, model: torch.nn.Module, bundle: DataBundle,
                  device: torch.device, tags: dict[str, str]) -> str:
    """Start the MLflow run of ``spec``: the tags ``zoo report`` reads (spec hash, seed,
    device, CPU threads, commit, reproduced entry, partial data), those of the GPU and torch's
    versions, and ``tags``; the resolved spec as one param per dotted key and as ``spec.yaml``.
    The run's id."""
    tags = {"zoo.spec_hash": spec_hash(spec), "zoo.version": __version__,
            "zoo.device": str(device), "zoo.threads": str(torch.get_num_threads()),
            "zoo.seed": str(spec.seed), **device_tags(device), **tags}
    if commit := _git_commit():
        tags["zoo.git_commit"] = commit
    if spec.reproduces:
        tags["zoo.reproduces"] = spec.reproduces
    if bundle.partial:
        tags["zoo.partial_data"] = bundle.partial
    run_id = tracker.start(spec.tracking.experiment or spec.name or "zoo",
                           spec.tracking.run_name or f"{spec.name}-seed{spec.seed}", tags)
    tracker.set_tags({NOTE_TAG: run_note(spec, run_id, tracker.uri)})
    params = flatten(spec.model_dump(mode="json"))
    params["model.n_parameters"] = str(count_parameters(model))
    tracker.log_params(params)
    with tempfile.TemporaryDirectory(prefix="zoo-spec-") as tmp:
        spec_file = Path(tmp) / "spec.yaml"
        spec_file.write_text(spec_to_yaml(spec))
        tracker.log_file(spec_file)
    return run_id


def resume(run_id: str, opts: RunOptions) -> RunResult:
    """Continue an interrupted run from its last checkpoint, in the same MLflow run.

    Refused, with the run left as it is, if it finished, lacks a checkpoint, or another
    process may still be training it (``opts.force`` overrides the last where zoo cannot tell).
    An error before training restarts (spec, data, checkpoint) leaves it KILLED, resumable.
    """
    uri = resolve_uri(opts.tracking_uri, None)
    check_store(uri)
    if opts.keep_freed_blocks:
        keep_freed_blocks()
    tracker = MlflowRun(uri)
    with interrupts_deferred():
        note = tracker.claim(run_id, ("spec.yaml", "checkpoints/last.pt"), opts.force)
    if note:
        opts.say(note)
    if warning := misplaced_artifacts(uri, tracker.artifact_uri or ""):
        opts.say(warning)
    with _ended(tracker, lambda: True):
        try:
            session = _restored(tracker, run_id, opts)
        except Exception:
            # nothing was trained: the run keeps its checkpoint and stays resumable (a FAILED
            # run would be started afresh by zoo sweep)
            with interrupts_deferred():
                tracker.finish("KILLED")
            opts.say(f"run {run_id} is left KILLED with its checkpoint: resume it once the "
                     f"error below is fixed")
            raise
        opts.say(f"resuming run {run_id} after epoch {session.trainer.state.epoch}")
        return session.train()


def _restored(tracker: MlflowRun, run_id: str, opts: RunOptions) -> _Session:
    """The claimed run's session, rebuilt from its ``spec.yaml`` and restored from its last
    checkpoint, with the epochs the checkpoint holds and the store lacks logged."""
    with tempfile.TemporaryDirectory(prefix="zoo-resume-") as tmp:
        spec_file = tracker.download("spec.yaml", Path(tmp))
        last = tracker.download("checkpoints/last.pt", Path(tmp))
        if spec_file is None or last is None:
            raise ZooError(f"run {run_id}: cannot download its spec and checkpoint")
        spec = spec_from_yaml(spec_file.read_text(), f"run {run_id} spec.yaml")
        opts.smoke = tracker.client.get_run(run_id).data.tags.get("zoo.smoke") == "true"
        session = _Session(spec, opts, tracker)
        # on the CPU: the random states must be CPU tensors, and the model's and optimizer's
        # load_state_dict copy theirs onto the run's device
        snapshot = torch.load(last, map_location="cpu", weights_only=False)
    session.trainer.restore(snapshot)
    logged = tracker.last_step("train/loss")
    with interrupts_deferred():
        for record in session.trainer.state.history:
            if record["epoch"] > logged:
                tracker.log_metrics(record, step=record["epoch"])
    return session


class SpecRun(NamedTuple):
    """What :func:`run_spec` returns: ``run_id, model = zoo.run_spec(...)``."""

    run_id: str
    model: Any  # zoo.predict.TrainedModel


def run_spec(spec: dict | str | Path, *, overrides: list[str] | tuple[str, ...] = (),
             seed: int | None = None, device: str | None = None,
             tracking_uri: str | None = None, smoke: bool = False, progress: bool = True,
             keep_freed_blocks: bool = False) -> SpecRun:
    """Validate and train ``spec`` in a new MLflow run, as ``zoo run`` does: a spec file, or a
    dict as the YAML would read (relative data paths: to the working directory). ``overrides``
    are ``-o`` values (``"train.epochs=5"``); ``keep_freed_blocks`` switches the process's
    allocator as ``zoo run`` does (docs/performance.md). The run id and the trained model (its
    best checkpoint, as :func:`zoo.load_model` gives it)."""
    import copy

    from .predict import load_model
    from .located_yaml import Loc, Source
    from .spec.validate import apply_overrides, load_spec, validate_source

    if isinstance(spec, dict):
        src = Source(copy.deepcopy(spec), {}, {}, Loc("<spec dict>", 0, 0))
        apply_overrides(src, list(overrides))
        resolved = validate_source(src)
    else:
        resolved, _ = load_spec(spec, list(overrides))
    opts = RunOptions(seed=seed, device=device, tracking_uri=tracking_uri, smoke=smoke,
                      progress=progress, keep_freed_blocks=keep_freed_blocks)
    result = run(resolved, opts)
    return SpecRun(result.run_id, load_model(result.run_id, tracking_uri=result.uri,
                                             device=device))
