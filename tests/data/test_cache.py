"""cached(): keyed reuse, rebuild on a corrupt file, no stale reuse, atomic writes."""

from __future__ import annotations

import pytest
import torch

from zoo.data.cache import cache_path, cached


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOO_DATA_HOME", str(tmp_path))
    return tmp_path


KEY = {"dataset": "toy", "options": {"seq": 32}, "sources": {"a.txt": "ab" * 32}, "version": 1}


def builder(value: float, calls: list):
    def build():
        calls.append(value)
        return {"x": torch.full((2, 3), value), "y": torch.arange(2)}
    return build


def test_second_call_reuses_the_stored_tensors(home):
    calls = []
    first = cached(KEY, builder(1.0, calls))
    again = cached(dict(reversed(list(KEY.items()))), builder(2.0, calls))  # order is irrelevant
    assert calls == [1.0]
    assert torch.equal(again["x"], first["x"]) and torch.equal(again["y"], torch.arange(2))
    assert cache_path(KEY).parent == home / "processed"
    assert [p.suffix for p in (home / "processed").iterdir()] == [".pt"]  # no temporary left


@pytest.mark.parametrize("change", [
    {"options": {"seq": 16}}, {"sources": {"a.txt": "cd" * 32}}, {"version": 2},
    {"dataset": "other"}])
def test_any_change_of_the_key_rebuilds(change):
    calls = []
    cached(KEY, builder(1.0, calls))
    out = cached({**KEY, **change}, builder(2.0, calls))
    assert calls == [1.0, 2.0] and out["x"][0, 0] == 2.0
    assert cached(KEY, builder(3.0, calls))["x"][0, 0] == 1.0  # the old entry is intact


def test_corrupt_file_is_rebuilt():
    calls = []
    cached(KEY, builder(1.0, calls))
    path = cache_path(KEY)
    path.write_bytes(path.read_bytes()[:40])  # truncated
    assert cached(KEY, builder(2.0, calls))["x"][0, 0] == 2.0
    assert cached(KEY, builder(3.0, calls))["x"][0, 0] == 2.0 and calls == [1.0, 2.0]


def test_file_stored_under_another_key_is_not_served():
    calls = []
    cached(KEY, builder(1.0, calls))
    other = {**KEY, "version": 9}
    cache_path(other).parent.mkdir(exist_ok=True)
    cache_path(other).write_bytes(cache_path(KEY).read_bytes())  # e.g. a hash collision
    assert cached(other, builder(2.0, calls))["x"][0, 0] == 2.0


def test_a_failing_build_leaves_no_file():
    def fail():
        raise ValueError("bad source")
    with pytest.raises(ValueError):
        cached(KEY, fail)
    assert not cache_path(KEY).exists()
