"""One MLflow run: create or resume it, log params/metrics/artifacts, close it.

The default store is embedded (``sqlite:///mlruns.db`` in the working directory, artifacts in
``mlartifacts/`` beside it); a tracking server is used when given by URI (``--tracking-uri``,
``tracking.uri`` or ``MLFLOW_TRACKING_URI``). Several processes may open the same store at once,
even one that does not exist yet, and create the same experiment (see :mod:`.store_lock`).
A run records the process that writes it; ``--resume`` takes it over only as :mod:`.owner` allows.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import sys
import tempfile
from contextlib import closing
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..errors import InputError, ZooError
from . import owner
from .params import chunks
from .store_lock import store_lock

DEFAULT_DB = "mlruns.db"
for _name in ("mlflow", "alembic", "sqlalchemy"):
    logging.getLogger(_name).setLevel(logging.WARNING)
os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "1")
os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "30")
os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")


def resolve_uri(cli_uri: str | None, spec_uri: str | None) -> str:
    """CLI option, then spec, then ``MLFLOW_TRACKING_URI``, then the embedded SQLite store."""
    uri = cli_uri or spec_uri or os.environ.get("MLFLOW_TRACKING_URI")
    if uri:
        return uri
    return f"sqlite:///{Path.cwd().resolve() / DEFAULT_DB}"


def _sqlite_path(uri: str) -> Path | None:
    return Path(uri[len("sqlite:///"):]) if uri.startswith("sqlite:///") else None


#: what ``--tracking-uri`` accepts, as the error for another scheme lists it
SUPPORTED = ("sqlite:///FILE, http://HOST:PORT or https://HOST, or an SQLAlchemy database URI "
             "(postgresql://, mysql://, mssql://)")
_SCHEMES = ("", "file", "sqlite", "http", "https", "postgresql", "mysql", "mssql")
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: at most this many characters of a foreign server's answer are quoted
EXCERPT = 60


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= EXCERPT else flat[:EXCERPT] + "...")


def _check_scheme(uri: str) -> None:
    scheme = urlparse(uri).scheme.lower()
    base = scheme.split("+", 1)[0]  # postgresql+psycopg2, mysql+pymysql, ...
    if len(scheme) == 1 and os.name == "nt":  # a drive letter: a Windows folder path
        base = ""
    if base not in _SCHEMES:
        raise InputError(f"tracking store {uri}: the scheme '{scheme}://' is not supported; "
                         f"use {SUPPORTED}")
    if base == "sqlite" and (not uri.startswith("sqlite:///") or ":memory:" in uri):
        raise InputError(f"tracking store {uri}: an in-memory database keeps nothing once the "
                         f"process ends; name a file, sqlite:///PATH")
    if base in ("", "file") and os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").lower() not in (
            "true", "1"):
        raise InputError(f"tracking store {uri}: a folder store is in maintenance mode in "
                         f"MLflow 3 and refused by it; use an SQLite file, e.g. "
                         f"sqlite:///{Path(urlparse(uri).path or uri).resolve() / DEFAULT_DB}, or "
                         f"set MLFLOW_ALLOW_FILE_STORE=true to use the folder anyway")


def sqlite_tables(what: str, db: Path, option: str) -> set[str] | None:
    """The tables of the SQLite file ``db``, read without writing anything; None when it is
    absent, empty or locked by a writer. A folder, an unreadable file or one that is not an
    SQLite database is an :class:`InputError` naming ``what`` and the ``option`` to change."""
    if db.is_dir():
        raise InputError(f"{what}: {db} is a directory, not an SQLite file; name a file, e.g. "
                         f"sqlite:///{db / DEFAULT_DB}")
    if not db.exists():
        return None
    try:
        with open(db, "rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise InputError(f"{what}: cannot read {db} ({exc.strerror})") from None
    if head and head != _SQLITE_MAGIC:
        raise InputError(f"{what}: {db} is not an SQLite database; move it away or pass another "
                         f"{option}")
    if not head:
        return None  # empty: SQLite makes a new database of it
    import sqlite3

    try:  # read-only: nothing is written, not even a journal
        with closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True,
                                     timeout=5)) as con:
            return {r[0] for r in con.execute("SELECT name FROM sqlite_master "
                                              "WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc) or "malformed" in str(exc):
            raise InputError(f"{what}: {db} is not a readable SQLite database ({exc}); move it "
                             f"away or pass another {option}") from None
        return None  # locked or busy: another process is writing it; MLflow will tell


def _check_sqlite_file(uri: str, db: Path) -> None:
    """``db``, if it exists, must be an SQLite file holding an MLflow store (or nothing yet:
    no table, or only the ``alembic_version`` of a store being created)."""
    tables = sqlite_tables(f"tracking store {uri}", db, "--tracking-uri")
    if tables and "experiments" not in tables and tables != {"alembic_version"}:
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        kind = " (an Optuna study database)" if "studies" in tables else ""
        raise InputError(f"tracking store {uri}: {db} is an SQLite database but not an MLflow "
                         f"store{kind} (its tables: {shown}); pass another --tracking-uri")


def check_local(uri: str) -> None:
    """The checks of :func:`check_store` that need no network: the scheme, and that an SQLite
    store's path is a file (or absent) holding an MLflow store. Writes nothing."""
    _check_scheme(uri)
    db = _sqlite_path(uri)
    if db is not None:
        _check_sqlite_file(uri, db)


def check_store(uri: str) -> None:
    """Fail early, with one clear message, if the store cannot be written or reached."""
    check_local(uri)
    db = _sqlite_path(uri)
    if db is not None:
        folder = db.parent
        if not folder.is_dir():
            raise InputError(f"tracking store {uri}: folder {folder} does not exist")
        try:  # a real write, which also catches read-only file systems
            tempfile.TemporaryFile(dir=folder).close()
            writable = not db.exists() or os.access(db, os.W_OK)
        except OSError:
            writable = False
        if not writable:
            raise InputError(f"tracking store {uri}: {folder} is not writable; run from a "
                             f"writable directory or pass --tracking-uri")
        return
    if uri.startswith(("http://", "https://")):
        _check_server(uri)


def _check_server(uri: str) -> None:
    """The server answers ``GET /health`` with MLflow's ``OK``."""
    import requests

    url = uri.rstrip("/") + "/health"
    try:
        response = requests.get(url, timeout=5)
    except requests.RequestException as exc:
        raise InputError(f"tracking server {uri} is unreachable ({type(exc).__name__}); "
                         f"start it or pass another --tracking-uri") from None
    excerpt = f" {_excerpt(response.text)}" if response.text.strip() else ""
    if not response.ok:
        raise InputError(f"tracking server {uri} answered GET {url} with HTTP "
                         f"{response.status_code}{excerpt}; check the URI (an MLflow server "
                         f"answers 'OK') or pass another --tracking-uri")
    if response.text.strip() != "OK":
        raise InputError(f"tracking server {uri} is not an MLflow server: GET {url} answered"
                         f"{excerpt or ' with an empty body'}, not MLflow's 'OK'; start "
                         f"`mlflow server` there or pass another --tracking-uri")


#: where ``mlflow ui`` listens unless told otherwise (the printed command names it)
UI_HOST, UI_PORT = "127.0.0.1", 5000
#: experiment tag that makes MLflow 3's UI open an experiment on its runs list ("Machine
#: learning") instead of the GenAI traces page
EXPERIMENT_KIND = ("mlflow.experimentKind", "custom_model_development")
#: query of a UI address that switches the UI to its "Model training" workflow (runs, models,
#: model registry) from the "GenAI" one it starts in; the browser then keeps the choice
TRAINING_WORKFLOW = "workflowType=machine_learning"


def mlflow_executable() -> list[str]:
    """How to start this environment's ``mlflow``: its script beside the running Python (a venv's
    ``bin/mlflow``), else ``python -m mlflow`` with this Python, so it works without activating
    the environment."""
    script = Path(sys.executable).parent / ("mlflow.exe" if os.name == "nt" else "mlflow")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "mlflow"]


def ui_command(uri: str, port: int = UI_PORT) -> str:
    """The exact command that opens the MLflow UI on this store, runnable as printed from any
    folder (by absolute paths: ``mlflow`` is often only in zoo's virtual environment, and a
    relative SQLite path is the working directory's)."""
    if uri.startswith(("http://", "https://")):
        return f"open {uri} in a browser"
    db = _sqlite_path(uri)
    if db is not None and not db.is_absolute():
        uri = f"sqlite:///{db.resolve()}"
    args = [*mlflow_executable(), "ui", "--backend-store-uri", uri, "--host", UI_HOST,
            "--port", str(port)]
    return shlex.join(args)


def run_url(uri: str, experiment_id: str, run_id: str | None = None,
            port: int = UI_PORT) -> str:
    """The UI address of the run (or, without ``run_id``, the experiment's runs list) in the
    UI's model-training workflow: on the server ``uri``, else where :func:`ui_command` serves
    it."""
    base = uri.rstrip("/") if uri.startswith(("http://", "https://")) else \
        f"http://{UI_HOST}:{port}"
    tail = f"/runs/{run_id}" if run_id else "/runs"
    return f"{base}/#/experiments/{experiment_id}{tail}?{TRAINING_WORKFLOW}"


def misplaced_artifacts(uri: str, artifact_uri: str) -> str | None:
    """A warning when a local SQLite store's run keeps its artifacts anywhere but in the
    ``mlartifacts/`` folder beside the store: MLflow stores artifact locations as absolute
    paths, so a copied or moved store still reads and writes the original folder."""
    db = _sqlite_path(uri)
    where = _local_dir(artifact_uri)
    if db is None or where is None:
        return None
    beside = (db.parent / "mlartifacts").resolve()
    try:
        where.resolve().relative_to(beside)
        return None
    except ValueError:
        pass
    state = "which exists" if where.exists() else "which does not exist"
    return (f"WARNING: this run's artifacts go to {where} ({state}), not to {beside} beside "
            f"the store {db}: MLflow records artifact locations as absolute paths, so a copied "
            f"or moved store keeps using the original folder (see README, Tracking)")


def open_client(uri: str):
    """An :class:`mlflow.MlflowClient` on ``uri``; a new SQLite store is created under its lock."""
    from mlflow import MlflowClient

    check_local(uri)
    with store_lock(_sqlite_path(uri)):
        return MlflowClient(tracking_uri=uri)


def _local_dir(artifact_uri: str) -> Path | None:
    parsed = urlparse(artifact_uri)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if parsed.scheme == "" and artifact_uri.startswith("/"):
        return Path(artifact_uri)
    return None


class MlflowRun:
    """A thin wrapper over :class:`mlflow.MlflowClient` for one run."""

    def __init__(self, uri: str):
        self.uri = uri
        self.client = open_client(uri)
        self.run_id: str | None = None
        self.experiment_id: str | None = None
        self.artifact_uri: str | None = None
        self.ended = False  # finish() was called: the run is no longer written

    def _experiment_id(self, name: str) -> str:
        """The experiment ``name``, created if missing; another process may create it meanwhile."""
        from mlflow.exceptions import MlflowException
        from mlflow.protos.databricks_pb2 import RESOURCE_ALREADY_EXISTS, ErrorCode

        db = _sqlite_path(self.uri)
        with store_lock(db):
            exp = self.client.get_experiment_by_name(name)
            if exp is not None:
                key, kind = EXPERIMENT_KIND
                if key not in exp.tags:  # an older zoo made it: open it on its runs too
                    self.client.set_experiment_tag(exp.experiment_id, key, kind)
                return exp.experiment_id
            location = (db.parent / "mlartifacts").resolve().as_uri() if db else None
            try:
                return self.client.create_experiment(name, artifact_location=location,
                                                     tags=dict([EXPERIMENT_KIND]))
            except MlflowException as exc:
                if exc.error_code != ErrorCode.Name(RESOURCE_ALREADY_EXISTS):
                    raise
                exp = self.client.get_experiment_by_name(name)
                if exp is None:
                    raise
                return exp.experiment_id

    def start(self, experiment: str, run_name: str, tags: dict[str, str]) -> str:
        from mlflow.exceptions import MlflowException

        tags = {**tags, owner.TAG: owner.describe()}
        try:
            run = self.client.create_run(self._experiment_id(experiment), run_name=run_name,
                                         tags=tags)
        except MlflowException as exc:
            raise ZooError(f"tracking store {self.uri}: cannot create a run: {exc}") from None
        self.run_id = run.info.run_id
        self.experiment_id, self.artifact_uri = run.info.experiment_id, run.info.artifact_uri
        return self.run_id

    def claim(self, run_id: str, needs: tuple[str, ...], force: bool = False) -> str | None:
        """Take over ``run_id`` to resume it: RUNNING, written by this process. Refused, with
        nothing written, if the run does not exist, finished, may still be written by another
        process (:func:`.owner.check_resumable`) or lacks an artifact of ``needs``; a run so
        left RUNNING by a process that is gone is marked KILLED. On a SQLite store the check
        and the take-over are one step under the store's lock. A note for the user, or None."""
        from mlflow.exceptions import MlflowException

        with store_lock(_sqlite_path(self.uri)):
            try:
                run = self.client.get_run(run_id)
            except MlflowException:
                raise InputError(f"no run '{run_id}' in tracking store {self.uri}") from None
            writer = run.data.tags.get(owner.TAG)
            note = owner.check_resumable(run_id, run.info.status, writer, force)
            if missing := [p for p in needs if not self._has(run_id, p)]:
                if run.info.status == "RUNNING" and owner.alive(writer) is False:
                    self.client.set_terminated(run_id, "KILLED")
                raise InputError(f"run {run_id} has no {missing[0]}: it stopped before its "
                                 f"first epoch ended and cannot be resumed; start it again "
                                 f"with zoo run")
            self.client.set_tag(run_id, owner.TAG, owner.describe())
            self.client.update_run(run_id, status="RUNNING")
        self.run_id = run_id
        self.experiment_id, self.artifact_uri = run.info.experiment_id, run.info.artifact_uri
        return note

    def _has(self, run_id: str, path: str) -> bool:
        return has_artifact(self.client, run_id, path)

    def set_tags(self, tags: dict[str, str]) -> None:
        from mlflow.entities import RunTag

        self.client.log_batch(self.run_id, tags=[RunTag(k, v) for k, v in tags.items()])

    def log_params(self, params: dict[str, str]) -> None:
        from mlflow.entities import Param

        for batch in chunks(params):
            self.client.log_batch(self.run_id, params=[Param(k, v) for k, v in batch.items()])

    def log_metrics(self, record: dict, step: int) -> None:
        import time

        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        metrics = [Metric(k, float(v), now, step) for k, v in record.items() if k != "epoch"]
        if metrics:
            self.client.log_batch(self.run_id, metrics=metrics)

    def last_step(self, key: str) -> int:
        history = self.client.get_metric_history(self.run_id, key)
        return max((m.step for m in history), default=0)

    def log_file(self, local: Path, artifact_path: str | None = None) -> None:
        """Store a file as an artifact; on a local store the file appears atomically."""
        root = _local_dir(self.client.get_run(self.run_id).info.artifact_uri)
        if root is None:
            self.client.log_artifact(self.run_id, str(local), artifact_path)
            return
        target_dir = root / artifact_path if artifact_path else root
        target_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target_dir, prefix=f".{local.name}.")
        os.close(fd)
        shutil.copyfile(local, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target_dir / local.name)

    def download(self, artifact_path: str, dst: Path) -> Path | None:
        from mlflow.exceptions import MlflowException

        try:
            return Path(self.client.download_artifacts(self.run_id, artifact_path, str(dst)))
        except (MlflowException, OSError):
            return None

    def params(self) -> dict[str, str]:
        return self.client.get_run(self.run_id).data.params

    def finish(self, status: str = "FINISHED") -> None:
        """End the run in ``status``, once; later calls do nothing."""
        if self.run_id is not None and not self.ended:
            self.client.set_terminated(self.run_id, status)
            self.ended = True


def has_artifact(client, run_id: str, path: str) -> bool:
    """Whether run ``run_id`` holds the artifact ``path`` (e.g. ``checkpoints/last.pt``);
    ``client``: an :class:`mlflow.MlflowClient`."""
    folder = os.path.dirname(path) or None
    return any(a.path == path for a in client.list_artifacts(run_id, folder))
