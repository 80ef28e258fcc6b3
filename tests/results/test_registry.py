"""The published-results registry: every file loads, ids are unique, numbers are exact."""

from __future__ import annotations

import pytest
import yaml

from results.cli import zoo
from zoo.errors import InputError
from zoo.results.published import DEFAULT_ROOT, RegistryError, load_registry


@pytest.fixture(scope="module")
def registry():
    return load_registry()


def test_every_file_loads_with_every_entry(registry):
    files = sorted(DEFAULT_ROOT.rglob("*.yaml"))
    declared = sum(len(yaml.safe_load(f.read_text())["entries"]) for f in files)
    assert len(registry.entries) == declared == 111
    assert len(registry.tables()) == len(files) == 11
    assert {"irie2022/table1", "irie2022/table2", "irie2022/appendix_c", "hasani2021/table2",
            "hasani2021/table3", "hasani2021/table6", "jacobian_ncde/table1"} <= set(
        registry.tables())
    assert all(e.id.startswith(e.key + "/") for e in registry.entries.values())


@pytest.mark.parametrize("entry_id, mean, std, n, metric, scale", [
    ("irie2022/table1/speech/cde-delta", 90.2, 0.2, 5, "accuracy", 100),
    ("irie2022/table1/sepsis-no-oi/cde-oja", 85.1, 2.5, 5, "auc", 100),
    ("irie2022/table2/depth1/delta", 91.8, 3.4, 5, "accuracy", 100),
    ("irie2022/appendix_c/eigenworms/delta-2layer", 86.7, 4.1, None, "accuracy", 100),
    ("irie2022/appendix_c/speech/hebb-cde-v2", 83.9, 0.4, None, "accuracy", 100),
    ("hasani2021/table6/half-cheetah/ltc", 2.308, 0.015, 5, "mse", 1),
    ("hasani2021/table3/ozone/ltc", 0.302, 0.0155, 5, "f1", 1),
    ("hasani2021/table5/person/ltc", 0.882, 0.005, 5, "accuracy", 1),
    ("hasani2021/table2/hardtanh/ltc", 81.01, 10.05, 100, "depth", 1),
    ("jacobian_ncde/table1/character-trajectories/jacobian-ncde", 0.94, 0.01, 4, "accuracy", 1),
])
def test_published_numbers(registry, entry_id, mean, std, n, metric, scale):
    e = registry.entries[entry_id]
    assert (e.mean, e.std, e.n, e.metric.name, e.metric.scale) == (mean, std, n, metric, scale)


def test_baselines_parameters_and_bounds(registry):
    e = registry.entries
    assert e["irie2022/table1/speech/ncde"].quoted_from.startswith("Kidger")
    assert e["irie2022/table2/depth2/nrde"].params == 65000
    assert e["hasani2021/table5/person/ode-rnn"].quoted_from.startswith("Rubanova")
    assert e["hasani2021/table5/person/ltc"].quoted_from is None
    assert e["jacobian_ncde/table1/character-trajectories/matrix-ncde"].params == 66000
    dx_only = e["irie2022/appendix_c/speech/cde-dx-only"]
    assert (dx_only.bound, dx_only.mean, dx_only.std) == ("<", 65.0, None)
    assert e["hasani2021/table6/half-cheetah/ltc"].metric.direction == "min"


def test_select_by_table_or_paper(registry):
    assert len(registry.select("irie2022/table1")) == 24
    assert {x.key for x in registry.select("hasani2021")} >= {"hasani2021/table3"}
    with pytest.raises(InputError, match=r"did you mean 'irie2022/table1'"):
        registry.select("irie2022/tabel1")


BAD = """\
paper: demo
table: t1
caption: demo table
source: nowhere
defaults: {n: 5}
entries:
  - {id: demo/t1/a/b, row: A, column: B, mean: 1,
     metric: {name: accuracy, direction: max, unit: "%"}}
  - id: demo/t1/a/c
    row: A
    column: C
    metric: {name: accuracy, direction: maxx, unit: "%"}
    mean: 2
    stdd: 1
"""


def test_malformed_file_names_file_line_and_entry(tmp_path):
    (tmp_path / "bad.yaml").write_text(BAD)
    with pytest.raises(RegistryError) as info:
        load_registry(tmp_path)
    assert info.value.problems == [
        f"{tmp_path / 'bad.yaml'}:12:41: entry 'demo/t1/a/c': metric.direction: Input should "
        f"be 'max', 'min' or 'none'",
        f"{tmp_path / 'bad.yaml'}:14:5: entry 'demo/t1/a/c': stdd: unknown field "
        f"(did you mean 'std'?)",
    ]


def test_duplicate_ids_across_files(tmp_path):
    good = BAD.split("  - id: demo/t1/a/c")[0]
    (tmp_path / "one.yaml").write_text(good)
    (tmp_path / "two.yaml").write_text(good)
    with pytest.raises(RegistryError, match=r"two.yaml:7:5: entry 'demo/t1/a/b': duplicate id "
                                            r"\(first at .*one.yaml:7:5\)"):
        load_registry(tmp_path)


def test_cli_reports_malformed_registry_and_writes_nothing(tmp_path, monkeypatch, capsys):
    (tmp_path / "registry").mkdir()
    (tmp_path / "registry" / "bad.yaml").write_text(BAD)
    out = tmp_path / "out"
    code = zoo(["report", "--registry", tmp_path / "registry", "--output-dir", out,
                "--tracking-uri", f"sqlite:///{tmp_path / 'mlruns.db'}"], monkeypatch)
    err = capsys.readouterr().err
    assert code == 2
    assert f"{tmp_path / 'registry' / 'bad.yaml'}:12:41: entry 'demo/t1/a/c'" in err
    assert "Traceback" not in err
    assert not out.exists() and not (tmp_path / "mlruns.db").exists()
