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


def open_study(search: SearchSpec, spec: Any, storage: str, name: str):
    """The study ``name`` in ``storage``: created with the spec's sampler, pruner and direction,
    or loaded (a resumed search)."""
    import optuna
    from sqlalchemy.exc import ArgumentError

    optuna.logging.set_verbosity(optuna.logging.ERROR)  # each ended trial: report()
    _, direction = search.objective(spec)
    if search.sampler == "grid":
        sampler = optuna.samplers.GridSampler(
            {key: p.grid() for key, p in search.space.items()}, seed=search.seed)
    elif search.sampler == "random":
        sampler = optuna.samplers.RandomSampler(seed=search.seed)
    else:
        sampler = optuna.samplers.TPESampler(seed=search.seed)
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
        study = optuna.create_study(storage=database, study_name=name, sampler=sampler,
                                    pruner=pruner, direction=direction, load_if_exists=True)
    except (ValueError, ImportError, RuntimeError, ArgumentError) as exc:
        raise InputError(f"study database {storage}: {exc}") from None
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


def take_trials(job: SearchJob, share: int | None = None, progress: bool = False) -> None:
    """Run trials of ``job``'s study until it counts ``job.total``, at most ``share`` of them
    (this worker's part of the missing ones); a failed trial is reported and the next one
    starts (at most as many attempts as trials were missing)."""
    import optuna

    from ..runner import Interrupted, RunOptions, Stopped, run
    from ..spec.validate import load_spec
    from ..tracking.deferred_interrupt import Terminated

    spec, _ = load_spec(job.spec_path, list(job.overrides))
    search = spec.search
    study = open_study(search, spec, job.storage, job.study)
    metric, _ = search.objective(spec)

    def objective(trial) -> float:
        values = suggest(trial, search)
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
