"""Failures a tester met, each with one clear message, exit 2, no traceback and nothing written:
tracking stores (a folder, a corrupt file, an unknown scheme, a server that is not MLflow),
a mirror that lacks a dataset's files, the modes of cache files and kernels, and plugins that
are misregistered, fail in ``build()`` or claim a built-in name."""

from __future__ import annotations

import http.server
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from zoo.cli.main import main
from zoo.errors import InputError
from zoo.spec import schema
from zoo.tracking.mlflow_run import check_store

from conftest import TINY_SPEC
from test_registry import fake_distribution

ZOO = [sys.executable, "-m", "zoo"]


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def zoo_cli(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def zoo_proc(*args: str, cwd: Path, pythonpath: Path | None = None, **env_extra):
    env = {**os.environ, **env_extra}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    out = subprocess.run([*ZOO, *args], capture_output=True, text=True, cwd=cwd, env=env,
                         timeout=120)
    assert "Traceback" not in out.stderr
    return out


@pytest.fixture
def spec_file(tmp_path):
    folder = tmp_path / "specs"
    folder.mkdir()
    path = folder / "tiny.yaml"
    path.write_text(yaml.safe_dump(TINY_SPEC, sort_keys=False))
    return path


# -- 1-4: tracking stores ------------------------------------------------------------------


def test_store_that_is_a_directory_fails_at_once(tmp_path, spec_file, capsys, monkeypatch):
    folder = tmp_path / "somedir"
    folder.mkdir()
    monkeypatch.chdir(tmp_path)
    before = listing(tmp_path)
    code, err = zoo_cli(capsys, "run", str(spec_file), "--tracking-uri", f"sqlite:///{folder}")
    assert code == 2
    assert f"{folder} is a directory, not an SQLite file" in err
    assert listing(tmp_path) == before


def test_corrupt_store_file_is_not_an_mlflow_store(tmp_path, spec_file, capsys, monkeypatch):
    db = tmp_path / "mlruns.db"
    db.write_text("this is not a database\n")
    monkeypatch.chdir(tmp_path)
    before = listing(tmp_path)
    code, err = zoo_cli(capsys, "run", str(spec_file))  # the default store, mlruns.db here
    assert code == 2
    assert f"{db} is not an SQLite database" in err and "SQL" not in err.replace("SQLite", "")
    assert listing(tmp_path) == before and db.read_text() == "this is not a database\n"


def test_sqlite_database_of_another_program_is_refused(tmp_path):
    import sqlite3

    db = tmp_path / "other.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE songs (title TEXT)")
    con.close()
    with pytest.raises(InputError, match=r"is an SQLite database but not an MLflow store "
                                         r"\(its tables: songs\)"):
        check_store(f"sqlite:///{db}")


def test_unsupported_scheme_lists_the_supported_ones(tmp_path, spec_file, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = listing(tmp_path)
    code, err = zoo_cli(capsys, "run", str(spec_file), "--tracking-uri", "foo://bar")
    assert code == 2
    assert "the scheme 'foo://' is not supported" in err
    assert "sqlite:///FILE" in err and "http://" in err
    assert listing(tmp_path) == before


@pytest.mark.parametrize("uri", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_store_is_refused(uri):
    with pytest.raises(InputError, match="an in-memory database keeps nothing once the process "
                                         "ends; name a file, sqlite:///PATH"):
        check_store(uri)


def test_a_folder_store_is_refused_unless_mlflow_is_told_to_allow_it(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    for uri in (str(tmp_path / "runs"), (tmp_path / "runs").as_uri()):
        with pytest.raises(InputError, match=r"a folder store is in maintenance mode in MLflow "
                                             r"3 and refused by it; use an SQLite file, e\.g\. "
                                             f"sqlite:///{tmp_path / 'runs' / 'mlruns.db'}"):
            check_store(uri)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    check_store(str(tmp_path / "runs"))


def test_an_optuna_study_database_is_not_a_run_store(tmp_path):
    import sqlite3

    db = tmp_path / "optuna.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE studies (study_id INTEGER)")
        con.execute("CREATE TABLE alembic_version (version_num TEXT)")
    con.close()
    with pytest.raises(InputError, match=r"is an SQLite database but not an MLflow store \(an "
                                         r"Optuna study database\) \(its tables: "
                                         r"alembic_version, studies\)"):
        check_store(f"sqlite:///{db}")


class _Html(http.server.BaseHTTPRequestHandler):
    body = b"<!DOCTYPE html><html><head><title>Welcome</title></head><body>" + b"x" * 5000

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture
def html_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Html)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_http_server_that_is_not_mlflow_is_named_with_a_short_excerpt(
        html_server, tmp_path, spec_file, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = zoo_cli(capsys, "run", str(spec_file), "--tracking-uri", html_server)
    assert code == 2
    assert f"tracking server {html_server} is not an MLflow server" in err
    assert "<!DOCTYPE html>" in err and "x" * 200 not in err and len(err) < 500
    assert listing(tmp_path) == ["specs", "specs/tiny.yaml"]


# -- 5-6: data -----------------------------------------------------------------------------


def test_fetch_from_a_mirror_that_lacks_the_files(tmp_path, capsys, monkeypatch):
    mirror, home = tmp_path / "mirror", tmp_path / "home"
    (mirror / "ltc").mkdir(parents=True)  # a mirror, but without ltc/ozone/eighthr.data
    monkeypatch.setenv("ZOO_DATA_HOME", str(home))
    code, err = zoo_cli(capsys, "data", "fetch", "ozone", "--mirror", str(mirror), "--quiet")
    assert code == 2
    assert f"looked for {mirror / 'ltc' / 'ozone' / 'eighthr.data'}" in err
    assert not home.exists()
    code, err = zoo_cli(capsys, "data", "fetch", "ozone", "--mirror", str(tmp_path / "none"))
    assert code == 2 and "no such folder" in err


def test_fetch_from_a_mirror_copies_into_the_cache_readable_by_all(tmp_path, capsys,
                                                                   monkeypatch):
    mirror, home = tmp_path / "mirror", tmp_path / "home"
    (mirror / "ltc" / "ozone").mkdir(parents=True)
    (mirror / "ltc" / "ozone" / "eighthr.data").write_text("1,2\n")
    monkeypatch.setenv("ZOO_DATA_HOME", str(home))
    monkeypatch.delenv("ZOO_DATA_MIRROR", raising=False)
    old = os.umask(0o022)
    try:
        assert main(["data", "fetch", "ozone", "--mirror", str(mirror)]) == 0
    finally:
        os.umask(old)
    cached = home / "ltc" / "ozone" / "eighthr.data"
    assert capsys.readouterr().out.strip() == str(cached)
    assert stat.S_IMODE(cached.stat().st_mode) == 0o644
    assert listing(home / "ltc" / "ozone") == ["eighthr.data"]  # no temporary left


def test_download_failure_suggests_the_command_that_fetches_what_is_missing(tmp_path,
                                                                              monkeypatch):
    from dataclasses import replace

    from zoo.data.fetch import fetch
    from zoo.data.records import record
    from zoo.errors import ZooError

    monkeypatch.setenv("ZOO_DATA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ZOO_DATA_MIRROR", raising=False)
    uea = record("uea")
    offline = replace(uea.file("BasicMotions_TRAIN.ts"), urls=("http://127.0.0.1:9/none.zip",))
    with pytest.raises(ZooError) as info:
        fetch(replace(uea, files=(offline,)), "BasicMotions_TRAIN.ts", progress=False)
    assert "set ZOO_DATA_MIRROR to a folder holding uea/BasicMotions_TRAIN.ts" in str(info.value)
    assert "`zoo data fetch uea BasicMotions --mirror DIR`" in str(info.value)


def test_tensor_cache_and_kernels_get_normal_modes(tmp_path, monkeypatch):
    import shutil

    import torch

    from zoo.data.cache import cache_path, cached
    from zoo.kernels import compiled

    old = os.umask(0o022)
    try:
        key = {"kind": "modes-test"}
        cached(key, lambda: {"x": torch.zeros(2)}, home=tmp_path)
        assert stat.S_IMODE(cache_path(key, tmp_path).stat().st_mode) == 0o644
        if shutil.which(os.environ.get("CXX") or "c++") is None:
            pytest.skip("no C++ compiler")
        monkeypatch.setenv("ZOO_KERNEL_CACHE", str(tmp_path / "kernels"))
        library = compiled.build("tanh")
    finally:
        os.umask(old)
    assert stat.S_IMODE(library.stat().st_mode) == 0o755
    assert stat.S_IMODE(library.parent.stat().st_mode) == 0o755
    lock = library.parent / "tanh.lock"  # readable by the team: any user can take the lock
    assert stat.S_IMODE(lock.stat().st_mode) == 0o644
    assert sorted(p.name for p in library.parent.iterdir()) == [library.name, lock.name]


# -- 7-9: plugins --------------------------------------------------------------------------

PLUGIN = '''
from typing import Literal

from torch import nn

from zoo.components import DatasetConfig, FieldConfig, SolverConfig
from zoo.fields.config import NCDEConfig


class BoomConfig(FieldConfig):
    """A field whose build() fails."""

    kind: Literal["boom"] = "boom"

    def build(self, ctx):
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (3x4 and 5x6)")


class NoWidthConfig(FieldConfig):
    """A field whose module has no integer `features`."""

    kind: Literal["no_width"] = "no_width"

    def build(self, ctx):
        module = nn.Linear(1, 1)
        module.features = "wide"
        return module


class MisplacedConfig(DatasetConfig):
    """A dataset registered as a field."""

    kind: Literal["misplaced"] = "misplaced"


class NoBuildConfig(FieldConfig):
    """A field that does not say how to build itself."""

    kind: Literal["no_build"] = "no_build"


class RivalNCDEConfig(NCDEConfig):
    """A plugin's own 'ncde'."""


class NoKwargsConfig(SolverConfig):
    """A solver that does not say how to call odeint."""

    kind: Literal["no_kwargs"] = "no_kwargs"
'''


@pytest.fixture
def plugin_site(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "failplug.py").write_text(PLUGIN)
    fake_distribution(site, "fail-plugin", "zoo.fields",
                      {"boom": "failplug:BoomConfig", "no_width": "failplug:NoWidthConfig",
                       "misplaced": "failplug:MisplacedConfig",
                       "no_build": "failplug:NoBuildConfig",
                       "ncde": "failplug:RivalNCDEConfig"})
    fake_distribution(site, "fail-solver", "zoo.solvers", {"no_kwargs": "failplug:NoKwargsConfig"})
    return site


@pytest.fixture
def installed(plugin_site, monkeypatch):
    """The plugin importable in this process (entry points re-read; forgotten after)."""
    monkeypatch.syspath_prepend(str(plugin_site))
    schema.reset()
    yield plugin_site
    monkeypatch.undo()
    schema.reset()


def _spec(tmp_path: Path, field: str) -> Path:
    spec = yaml.safe_load(yaml.safe_dump(TINY_SPEC))
    spec["model"]["field"] = {"kind": field}
    path = tmp_path / f"{field}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@pytest.mark.slow
def test_misregistered_plugin_is_reported_and_the_rest_works(plugin_site, tmp_path,
                                                             spec_file):
    out = zoo_proc("list", "fields", cwd=tmp_path, pythonpath=plugin_site)
    assert out.returncode == 0, out.stderr
    assert "misplaced" in out.stdout and "misregistered" in out.stdout
    assert "a DatasetConfig (group zoo.datasets)" in out.stdout
    out = zoo_proc("validate", str(spec_file), cwd=tmp_path, pythonpath=plugin_site)
    assert out.returncode == 0, out.stderr
    out = zoo_proc("validate", str(_spec(tmp_path, "misplaced")), cwd=tmp_path,
                   pythonpath=plugin_site)
    assert out.returncode == 2
    assert ("plugin 'misplaced' from distribution 'fail-plugin' failed to load: TypeError: "
            "misregistered: failplug:MisplacedConfig is a DatasetConfig (group zoo.datasets), "
            "but group zoo.fields needs a FieldConfig") in out.stderr


def test_a_plugin_missing_a_contract_method_is_reported(installed):
    from zoo import registry

    entry = registry.entries("fields")["no_build"]
    assert entry.description == ("BROKEN: TypeError: failplug:NoBuildConfig does not implement "
                                 "build of zoo.components.FieldConfig")
    assert "ncde" in registry.loadable("fields")  # the others still load
    entry = registry.entries("solvers")["no_kwargs"]  # a solver is called through odeint_kwargs
    assert entry.description == ("BROKEN: TypeError: failplug:NoKwargsConfig does not implement "
                                 "odeint_kwargs of zoo.components.SolverConfig")


@pytest.mark.parametrize("kind, problem", [
    ("boom", "build() failed: RuntimeError: mat1 and mat2 shapes cannot be multiplied"),
    ("no_width", "its build() returned a Linear whose `features` is 'wide'; it must be a "
                 "positive int"),
])
def test_plugin_build_errors_name_the_plugin(installed, tmp_path, kind, problem):
    from zoo.build_context import DataShape
    from zoo.errors import PluginError
    from zoo.model import ZooModel
    from zoo.series import TaskInfo
    from zoo.spec.validate import load_spec

    with pytest.warns(UserWarning, match="ncde"):
        spec, _ = load_spec(_spec(tmp_path, kind))
    with pytest.raises(PluginError) as info:
        ZooModel(spec, DataShape(2, 0, 12, TaskInfo("multiclass", 2)))
    assert str(info.value) == (f"fields component '{kind}' from distribution 'fail-plugin': "
                               f"{problem}") or problem in str(info.value)
    assert str(info.value).startswith(f"fields component '{kind}' from distribution "
                                      f"'fail-plugin': ")
    assert info.value.exit_code == 2


@pytest.mark.slow
def test_plugin_claiming_a_builtin_name_is_ignored_with_a_warning(plugin_site, tmp_path,
                                                                   spec_file):
    for args in (["list", "fields"], ["schema"], ["validate", str(spec_file)]):
        out = zoo_proc(*args, cwd=tmp_path, pythonpath=plugin_site)
        assert out.returncode == 0, (args, out.stderr)
        warning = [line for line in out.stderr.splitlines() if "'ncde'" in line]
        assert len(warning) == 1 and warning[0].startswith("warning: ")
        assert "'nde-zoo'" in warning[0] and "'fail-plugin'" in warning[0]
        assert "the built-in is used" in warning[0]
    assert listing(tmp_path) == sorted(["site", "specs", "specs/tiny.yaml",
                                        *(f"site/{p}" for p in listing(plugin_site))])


def test_two_plugins_claiming_one_name_fail_only_the_specs_that_use_it(tmp_path, spec_file):
    site = tmp_path / "site"
    fake_distribution(site, "plug-a", "zoo.fields", {"twin": "failplug:BoomConfig"})
    fake_distribution(site, "plug-b", "zoo.fields", {"twin": "failplug:NoWidthConfig"})
    out = zoo_proc("validate", str(spec_file), cwd=tmp_path, pythonpath=site)
    assert out.returncode == 0, out.stderr
    out = zoo_proc("validate", str(_spec(tmp_path, "twin")), cwd=tmp_path, pythonpath=site)
    assert out.returncode == 2
    assert "'twin' is claimed by two distributions: 'plug-" in out.stderr
