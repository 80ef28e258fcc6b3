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


def test_a_collection_is_fetched_by_part(mirror, tmp_path, capsys):
    """`zoo data fetch uea BasicMotions` takes that dataset's files alone; the whole archive
    from a mirror holding one dataset is refused with a hint to name the parts."""
    folder = mirror / "uea"
    folder.mkdir()
    for split in ("TRAIN", "TEST"):
        (folder / f"BasicMotions_{split}.ts").write_text("@problemName BasicMotions\n")
    assert run("fetch", "uea", "BasicMotions", "--mirror", str(mirror), "--quiet") == 0
    assert capsys.readouterr().out.split() == [
        str(tmp_path / "home" / "uea" / f"BasicMotions_{s}.ts") for s in ("TRAIN", "TEST")]
    with pytest.raises(InputError, match="lacks 58 of the 60 file.*name the parts you need"):
        run("fetch", "uea", "--mirror", str(mirror))
    with pytest.raises(InputError, match="no part 'BasicMotion' \\(did you mean 'BasicMotions'"):
        run("fetch", "uea", "BasicMotion", "--mirror", str(mirror))
    with pytest.raises(InputError, match="'ozone' is not a collection of parts"):
        run("fetch", "ozone", "BasicMotions")
    assert run("list") == 0
    [line] = [x for x in capsys.readouterr().out.splitlines() if x.startswith("uea ")]
    assert " 1/30 parts " in line


def test_alternative_files_need_one(mirror, tmp_path, capsys):
    """Speech Commands lists the full archive, the test set and a subset as alternatives: a
    mirror with the subset alone is enough, and the listing names the file used."""
    from zoo.datasets.speech_commands import SUBSET

    (mirror / "speech_commands").mkdir()
    (mirror / "speech_commands" / SUBSET).write_bytes(b"not the real subset")
    with pytest.raises(Exception, match="sha256"):  # the subset's checksum is known
        run("fetch", "speech_commands", "--mirror", str(mirror), "--quiet")
    (mirror / "speech_commands" / SUBSET).unlink()
    with pytest.raises(InputError, match="lacks every one of its alternative files"):
        run("fetch", "speech_commands", "--mirror", str(mirror), "--quiet")
    capsys.readouterr()
    held = tmp_path / "home" / "speech_commands" / "speech_commands_test_set_v0.02.tar.gz"
    held.parent.mkdir(parents=True)
    held.write_bytes(b"an archive")
    assert run("fetch", "speech_commands", "--mirror", str(mirror), "--quiet") == 0
    assert capsys.readouterr().out.strip() == str(held)
    assert run("list") == 0
    [line] = [x for x in capsys.readouterr().out.splitlines() if x.startswith("speech_commands")]
    assert " cache " in line and line.endswith("(speech_commands_test_set_v0.02.tar.gz)")
