"""An Optuna study over a spec's ``search:`` space: its database, sampler, pruner and trials.

The study lives in a database (``search.storage`` or ``--storage``; by default ``optuna.db``
beside a SQLite run store), so a search that stops resumes where it stopped and several
workers share it; a trial whose worker died is failed and tried again (Optuna's heartbeat).
A trial trains the spec with the drawn values as overrides, in an MLflow run nested under the
search's parent run (tag ``mlflow.parentRunId``); its value is the objective metric at the
epoch the run selects. The pruner reads the metric after every evaluated epoch;
a pruned trial's run is marked KILLED with the tag ``zoo.stopped``.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass
from typing import Any

import yaml

from ..errors import InputError
from ..spec.search import SearchSpec
from ..tracking.mlflow_run import _sqlite_path

TRIAL_TAG = "zoo.trial"  # a trial's run: its number in the study
PARENT_ATTR = "mlflow_parent_run"  # the study's user attribute: its parent run
#: the study's user attribute: the space and objective it was created for
SEARCHED_ATTR = "zoo.searched"


@dataclass(frozen=True)
class SearchJob:
    """What a worker needs to take trials of a study (picklable, for worker processes)."""

    spec_path: str
    overrides: tuple[str, ...]
    tracking_uri: str
    storage: str
    study: str
    parent_run_id: str
    total: int


def default_storage(search: SearchSpec, tracking_uri: str, given: str | None) -> str:
    """``--storage``, else ``search.storage``, else ``optuna.db`` beside a SQLite run store
    (a file of its own: Optuna and MLflow both keep an ``alembic_version`` table)."""
    if given or search.storage:
        return given or search.storage
    db = _sqlite_path(tracking_uri)
    if db is None:
        raise InputError(f"the run store {tracking_uri} is not a SQLite file: give the study's "
                         f"database with --storage (a SQLAlchemy URL) or search.storage")
    return f"sqlite:///{db.resolve().parent / 'optuna.db'}"


def sampler(search: SearchSpec, stream: tuple[int, ...] = ()):
    """The spec's sampler, seeded by ``search.seed`` and ``stream`` (a worker's index and the
    trials its study held when it started), so that workers and resumed searches draw values of
    their own instead of repeating the first worker's."""
    import numpy as np
    import optuna

    seed = int(np.random.SeedSequence([search.seed, *stream]).generate_state(1)[0])
    if search.sampler == "grid":
        return optuna.samplers.GridSampler({key: p.grid() for key, p in search.space.items()},
                                           seed=seed)
    if search.sampler == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed)


def check_storage(storage: str) -> None:
    """An SQLite ``storage`` must be a file (or absent) that is not an MLflow run store: the two
    schemas share table names (``alembic_version``), so one file cannot hold both."""
    from ..tracking.mlflow_run import sqlite_tables

    db = _sqlite_path(storage)
    if db is None:
        return
    if not db.parent.is_dir():
        raise InputError(f"study database {storage}: folder {db.parent} does not exist")
    tables = sqlite_tables(f"study database {storage}", db, "--storage")
    if tables and {"experiments", "runs"} & tables:
        raise InputError(f"study database {storage}: {db} is an MLflow run store; give the "
                         f"study a file of its own with --storage or search.storage")


def open_study(search: SearchSpec, spec: Any, storage: str, name: str):
    """The study ``name`` in ``storage``: created with the spec's sampler, pruner and direction,
    or loaded (a resumed search) if it was created for the same space and objective (a resumed
    search may train otherwise, ``-o train.epochs=N`` say)."""
    import optuna
    from sqlalchemy.exc import ArgumentError, SQLAlchemyError

    optuna.logging.set_verbosity(optuna.logging.ERROR)  # each ended trial: report()
    check_storage(storage)
    metric, direction = search.objective(spec)
    pruner = {"median": optuna.pruners.MedianPruner(n_warmup_steps=1),
              "halving": optuna.pruners.SuccessiveHalvingPruner(),
              "none": optuna.pruners.NopPruner()}[search.pruner]
    try:
        with warnings.catch_warnings():  # the heartbeat is "experimental" in Optuna
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            retry = optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=1)
            database = optuna.storages.RDBStorage(
                storage, heartbeat_interval=search.heartbeat,
                grace_period=3 * search.heartbeat, heartbeat_stale_trial_callback=retry)
        study = optuna.create_study(storage=database, study_name=name, sampler=sampler(search),
                                    pruner=pruner, direction=direction, load_if_exists=True)
        searched = {"metric": metric,
                    "space": {k: p.model_dump(mode="json") for k, p in search.space.items()}}
        before = study.user_attrs.get(SEARCHED_ATTR)
        if before is None:
            study.set_user_attr(SEARCHED_ATTR, searched)
    except (ValueError, ImportError, RuntimeError, ArgumentError) as exc:
        raise InputError(f"study database {storage}: {exc}") from None
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        raise InputError(f"study database {storage}: cannot be opened as an Optuna study "
                         f"database ({reason}); pass another --storage") from None
    if before is not None and before != searched:
        what = ("search space" if before["metric"] == metric else
                f"objective ({before['metric']}, not {metric})")
        raise InputError(f"study '{name}' in {storage} was created for another {what}; its "
                         f"trials are not this search's: give another search.study (or "
                         f"--storage)")
    if study.direction.name.lower() != direction:
        raise InputError(f"study '{name}' in {storage} was created to "
                         f"{study.direction.name.lower()}, this spec asks to {direction}: give "
                         f"another search.study")
    return study


def suggest(trial, search: SearchSpec) -> dict[str, Any]:
    """The trial's value of every searched key."""
    values = {}
    for key, p in search.space.items():
        if p.choices is not None:
            values[key] = trial.suggest_categorical(key, p.choices)
        elif p.integer:
            values[key] = trial.suggest_int(key, p.low, p.high, step=int(p.step or 1), log=p.log)
        else:
            values[key] = trial.suggest_float(key, p.low, p.high, step=p.step, log=p.log)
    return values


def as_overrides(values: dict[str, Any]) -> list[str]:
    """``KEY=VALUE`` overrides of drawn values (YAML text, so a string stays a string)."""
    return [f"{key}={yaml.safe_dump(value, default_flow_style=True).splitlines()[0]}"
            for key, value in values.items()]


def counted(study) -> int:
    """Trials that count towards the study's total: complete or pruned (not failed)."""
    import optuna

    states = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
    return len(study.get_trials(deepcopy=False, states=states))


def take_trials(job: SearchJob, share: int | None = None, progress: bool = False,
                worker: int = 0) -> None:
    """Run trials of ``job``'s study until it counts ``job.total``, at most ``share`` of them
    (this worker's part of the missing ones); a failed trial is reported and the next one
    starts (at most as many attempts as trials were missing). ``worker`` numbers the workers
    of one search: each draws values of its own (:func:`sampler`)."""
    import optuna

    from ..runner import Interrupted, RunOptions, Stopped, run
    from ..spec.validate import load_spec
    from ..tracking.deferred_interrupt import Terminated

    spec, _ = load_spec(job.spec_path, list(job.overrides))
    search = spec.search
    study = open_study(search, spec, job.storage, job.study)
    study.sampler = sampler(search, (worker, len(study.get_trials(deepcopy=False))))
    metric, _ = search.objective(spec)

    def objective(trial) -> float:
        try:
            values = suggest(trial, search)
        except (ValueError, OverflowError) as exc:  # the trial fails with its reason
            trial.set_user_attr("fail_reason", f"{type(exc).__name__}: {exc}")
            raise
        name = f"{spec.name}-trial{trial.number}"
        trial_spec, _ = load_spec(job.spec_path, [*job.overrides, *as_overrides(values),
                                                  "search=null", f"tracking.run_name={name}"])

        def watch(record: dict) -> None:
            if metric in record:
                trial.report(record[metric], record["epoch"])
                if trial.should_prune():
                    raise Stopped(f"pruned at epoch {record['epoch']} ({metric} "
                                  f"{record[metric]:.4g})")

        opts = RunOptions(tracking_uri=job.tracking_uri, progress=progress, watch=watch,
                          say=lambda text: print(f"[trial {trial.number}] {text}",
                                                 file=sys.stderr),
                          tags={"mlflow.parentRunId": job.parent_run_id,
                                TRIAL_TAG: str(trial.number)})
        try:
            result = run(trial_spec, opts)
        except Stopped as exc:
            raise optuna.TrialPruned(str(exc)) from None
        except Interrupted as exc:  # Ctrl-C or SIGTERM: the trial fails, the search stops
            raise (Terminated if exc.exit_code == 143 else KeyboardInterrupt)(str(exc)) from None
        except Exception as exc:  # the trial fails, the next one starts
            trial.set_user_attr("fail_reason", f"{type(exc).__name__}: {exc}")
            raise
        trial.set_user_attr("run_id", result.run_id)
        return objective_value(job.tracking_uri, result.run_id, metric, result.best_epoch)

    missing = job.total - counted(study)
    if share is not None:
        missing = min(missing, share)
    if missing > 0:
        study.optimize(objective, n_trials=missing, catch=(Exception,), callbacks=[
            optuna.study.MaxTrialsCallback(job.total, states=(
                optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)),
            report])


def objective_value(uri: str, run_id: str, metric: str, epoch: int | None) -> float:
    """``metric`` of the run at its selected epoch (its last value when none was selected)."""
    from ..tracking.mlflow_run import open_client

    history = open_client(uri).get_metric_history(run_id, metric)
    if not history:
        raise InputError(f"run {run_id} recorded no '{metric}'")
    at = [m.value for m in history if m.step == epoch]
    return at[-1] if at else max(history, key=lambda m: m.step).value


def report(study, trial) -> None:
    """One line per ended trial."""
    value = "" if trial.value is None else f" {trial.value:.4g}"
    why = f" ({trial.user_attrs['fail_reason']})" if "fail_reason" in trial.user_attrs else ""
    print(f"trial {trial.number}: {trial.state.name.lower()}{value}{why}", file=sys.stderr)
