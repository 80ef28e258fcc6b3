"""Every shipped spec validates, and runs one short training epoch on a tiny version of its data
(``zoo run --smoke`` semantics, in-process; the random trajectory-length networks at width 10).

Datasets whose real files are in the local mirror (``$ZOO_DATA_MIRROR``, else ``../shared/data``;
``DATA_MIRROR`` in tests/conftest.py) are smoke-loaded from
it; the others (HAR, power, person, the MNIST training images, and any dataset missing from the
mirror) are written as small files in the official format by the writers of the dataset tests,
into a temporary mirror. Shared base files (``_base/``) are not specs on their own.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import pytest

from zoo import registry
from zoo.spec.identity import spec_hash
from zoo.spec.validate import load_spec
from zoo.training.checkpoint import spec_from_yaml, spec_to_yaml

from conftest import DATA_MIRROR, REPO, in_mirror

SPECS = REPO / "specs"
SLOW_LOAD_S = 60.0  # a smoke load slower than this is reported (printed), not hidden


def shipped_specs() -> list[Path]:
    return sorted(p for p in SPECS.rglob("*.yaml")
                  if "_base" not in p.relative_to(SPECS).parts and not p.name.startswith("_"))


SPEC_FILES = shipped_specs()
IDS = [str(p.relative_to(SPECS)) for p in SPEC_FILES]
#: paper folders whose specs name no registry entry (no published number was checked for them)
UNREGISTERED = ("hasani2022_cfc/", "walker2024/")
#: the specs that reproduce a registered number: all but the quickstart and UNREGISTERED
PAPER_SPECS = [p for p in SPEC_FILES if p.parent != SPECS
               and not str(p.relative_to(SPECS)).startswith(UNREGISTERED)]
#: papers (a) and (c): every spec runs its fast path, as shipped
FAST_PAPERS = ("irie2022/", "jacobian_ncde/")


def _test_module(relative: str):
    """Import a test module of this suite by path (the writers live there; nothing is moved)."""
    path = REPO / "tests" / relative
    name = "shipped_specs_" + path.stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _ltc_formats():
    return _test_module("datasets/test_ltc_formats.py")


def _write_har(mirror: Path) -> None:
    m = _ltc_formats()
    m.put(mirror, "ltc/har", "UCI HAR Dataset.zip", m.har_zip())


def _write_power(mirror: Path) -> None:
    m = _ltc_formats()
    lines, _ = m.power_rows(n=330)
    m.put(mirror, "ltc/power", "household_power_consumption.zip", m.power_zip(lines))


def _write_person(mirror: Path) -> None:
    m = _ltc_formats()
    m.put(mirror, "ltc/person", "ConfLongDemo_JSI.txt",
          m.person_text({"A01": 400, "A02": 400, "A03": 400, "A04": 20}))


def _write_mnist(mirror: Path) -> None:
    _ltc_formats().write_mnist(mirror, n_train=200, n_test=40)


#: UEA datasets of the `uea` specs (specs/walker2024) that the mirror lacks: channels, classes
#: (EigenWorms: eigenworms_files, 40 series so that its 5 classes survive the stratified split)
UEA_SMALL = {"EthanolConcentration": (3, 4), "Heartbeat": (61, 2), "MotorImagery": (64, 2),
             "SelfRegulationSCP1": (6, 2), "SelfRegulationSCP2": (7, 2)}


def _write_uea(mirror: Path) -> None:
    import numpy as np

    uea = _test_module("datasets/test_uea.py")
    folder = mirror / "uea"
    folder.mkdir(parents=True, exist_ok=True)
    uea.eigenworms_files(folder, n_train=28, n_test=12, length=41)
    uea.character_files(folder)
    rng = np.random.default_rng(2)
    for name, (channels, classes) in UEA_SMALL.items():
        labels = [str(1 + i % classes) for i in range(40)]
        cases = [rng.normal(size=(channels, 41)) for _ in labels]
        names = [str(c) for c in range(1, classes + 1)]
        uea.write_ts(folder / f"{name}_TRAIN.ts", cases[:28], labels[:28], names)
        uea.write_ts(folder / f"{name}_TEST.ts", cases[28:], labels[28:], names)


# Datasets that the local mirror lacks (or holds only in part, e.g. MNIST's test split):
# the writer that puts small official-format files into a temporary mirror.
WRITERS = {"har": _write_har, "power": _write_power, "person": _write_person,
           "smnist": _write_mnist, "eigenworms": _write_uea,
           "character_trajectories": _write_uea, "uea": _write_uea}
# Mirror folders that are complete enough for a smoke load (see the mirror's README.md).
REAL = {"cheetah": "ltc/cheetah", "gesture": "ltc/gesture", "occupancy": "ltc/occupancy",
        "ozone": "ltc/ozone", "traffic": "ltc/traffic", "speech_commands": "speech_commands",
        "physionet_sepsis": "physionet2019"}
NO_FILES = {"circle", "irregular_sines"}
@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One MLflow store for all smoke runs (creating a SQLite store is slow)."""
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlruns.db'}"


@pytest.fixture(scope="module")
def data_home(tmp_path_factory):
    """One processed-data cache for all smoke runs: specs sharing a dataset parse it once."""
    return tmp_path_factory.mktemp("zoo-home")


@pytest.fixture(scope="module")
def temp_mirror(tmp_path_factory):
    """The real mirror's complete folders linked in, plus small official-format files."""
    root = tmp_path_factory.mktemp("mirror")
    for folder in REAL.values():
        if (DATA_MIRROR / folder).is_dir():
            (root / folder).parent.mkdir(parents=True, exist_ok=True)
            (root / folder).symlink_to(DATA_MIRROR / folder)
    for write in dict.fromkeys(WRITERS.values()):
        write(root)
    return root


@pytest.mark.parametrize("path", SPEC_FILES, ids=IDS)
def test_spec_validates(path):
    """It validates, and its resolved form (every field written, as a run's ``spec.yaml`` and a
    checkpoint keep it, which resume and prediction read back) loads to the same spec."""
    spec, _ = load_spec(path)
    if path in PAPER_SPECS:
        assert spec.reproduces, f"{path}: no 'reproduces:' entry"
    again = spec_from_yaml(spec_to_yaml(spec))
    assert again == spec and spec_hash(again) == spec_hash(spec)


@pytest.mark.slow
def test_every_spec_names_a_registry_entry():
    from zoo.results.published import load_registry

    known = load_registry().entries
    missing = {str(p.relative_to(SPECS)): s.reproduces for p in PAPER_SPECS
               for s in [load_spec(p)[0]] if s.reproduces not in known}
    assert not missing, f"specs reproducing unknown registry ids: {missing}"


@pytest.mark.slow
def test_spec_ids_are_unique():
    """One spec per registry entry, and at most one per variant of it."""
    seen: dict[tuple[str, str | None], str] = {}
    for p in PAPER_SPECS:
        spec = load_spec(p)[0]
        key = (spec.reproduces, spec.variant)
        assert key not in seen, f"{p} and {seen[key]} both reproduce {key}"
        seen[key] = str(p)
    assert {rid for rid, variant in seen if variant} <= {rid for rid, variant in seen
                                                         if variant is None}


@pytest.mark.parametrize("path", SPEC_FILES, ids=IDS)
@pytest.mark.slow
def test_spec_smoke_run(path, store, temp_mirror, data_home, monkeypatch, capsys):
    from zoo import runner

    spec, _ = load_spec(path)
    if spec.model.field.kind == "random_ctnet":
        # The trajectory-length specs train nothing (reproductions/trajectory_length.py measures
        # them); a width-100 random LTC is stiff, so the smoke check builds a 10-unit one.
        spec, _ = load_spec(path, ["model.field.width=10"])
    kind = spec.data.kind
    if kind not in registry.entries("datasets"):
        pytest.skip(f"dataset kind '{kind}' is not installed")
    if kind not in NO_FILES | set(REAL) | set(WRITERS):
        pytest.fail(f"no data for dataset kind '{kind}': add its official-format writer to "
                    f"WRITERS (the mirror {DATA_MIRROR} does not hold it)")
    if kind in REAL:
        in_mirror(REAL[kind])  # skips the spec when the mirror lacks its folder
    monkeypatch.setenv("ZOO_DATA_MIRROR", str(temp_mirror))
    monkeypatch.setenv("ZOO_DATA_HOME", str(data_home))
    monkeypatch.setattr("zoo.data.fetch.TIMEOUT_S", 2, raising=False)
    spec = spec.model_copy(update={"tracking": spec.tracking.model_copy(update={"plots": False})})
    start = time.perf_counter()
    result = runner.run(spec, runner.RunOptions(smoke=True, progress=False, tracking_uri=store,
                                                say=lambda text: None))
    took = time.perf_counter() - start
    assert result.test, f"{path}: no test metrics"
    if path in PAPER_SPECS and spec.reproduces.startswith(FAST_PAPERS):
        import mlflow
        used = mlflow.MlflowClient(store).get_run(result.run_id).data.tags["zoo.implementation"]
        assert used == "fast", (path, used)
    if took > SLOW_LOAD_S:
        with capsys.disabled():
            print(f"\nSLOW smoke run: {path.relative_to(SPECS)} took {took:.0f} s")
