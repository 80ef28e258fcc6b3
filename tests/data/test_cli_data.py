"""``zoo data list | info | fetch`` handlers, driven through their argparse sub-parser."""

from __future__ import annotations

import argparse

import pytest

from zoo.cli import data
from zoo.errors import InputError

LTC = ["cheetah", "gesture", "har", "occupancy", "ozone", "person", "power", "smnist", "traffic"]


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="zoo")
    data.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["data", *argv])
    return args.func(args)


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOO_DATA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ZOO_DATA_MIRROR", raising=False)
    folder = tmp_path / "mirror" / "ltc" / "ozone"
    folder.mkdir(parents=True)
    (folder / "eighthr.data").write_text("1/1/1998," + ",".join(["1.0"] * 72) + ",0\n")
    return tmp_path / "mirror"


def test_list_shows_every_record_and_its_availability(mirror, monkeypatch, capsys):
    monkeypatch.setenv("ZOO_DATA_MIRROR", str(mirror))
    assert run("list") == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line}
    assert set(LTC) <= set(lines)
    assert " mirror " in lines["ozone"] and " missing " in lines["har"]


def test_info_reports_urls_and_unknown_checksums(mirror, capsys):
    assert run("info", "power") == 0
    out = capsys.readouterr().out
    assert "household_power_consumption.zip" in out and "archive.ics.uci.edu" in out
    assert "sha256: not known" in out and "CC BY 4.0" in out and "not available locally" in out
    assert run("info", "cheetah") == 0
    assert "sha256: c043e141c6dd99e9b41ac7a9d4bc741b0991cff6a769954517e9c204ce3c7ccc" in \
        capsys.readouterr().out


def test_fetch_copies_the_file_from_the_mirror_into_the_cache(mirror, tmp_path, capsys):
    assert run("fetch", "ozone", "--mirror", str(mirror), "--quiet") == 0
    cached = tmp_path / "home" / "ltc" / "ozone" / "eighthr.data"
    assert capsys.readouterr().out.strip() == str(cached)
    assert cached.read_bytes() == (mirror / "ltc" / "ozone" / "eighthr.data").read_bytes()


@pytest.mark.parametrize("verb", ["info", "fetch"])
def test_unknown_dataset_suggests_a_name(mirror, verb):
    with pytest.raises(InputError, match="named 'cheeta'.*did you mean 'cheetah'"):
        run(verb, "cheeta")
