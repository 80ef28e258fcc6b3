"""The failure corpus: broken specs that ``zoo validate`` must refuse with one located message.

Each ``specs/<case>.yaml`` has a sibling ``<case>.expected``::

    exit: 2
    stderr: <case>.yaml:9:11: train.epochs: expects an integer, got the boolean true (...)

``stderr:`` lines are substrings of what ``zoo validate`` prints (from the file name on, so
independent of how the path is given; several lines may be given); ``exit:`` is its exit code.
Files and folders starting with ``_`` are bases the cases ``extends:``, not cases. Validation
must write nothing: neither in the working directory nor next to the specs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from zoo.cli.main import main

CORPUS = Path(__file__).resolve().parent / "specs"
CASES = sorted(p for p in CORPUS.glob("*.yaml") if not p.name.startswith("_"))


def expected(case: Path) -> tuple[int, list[str]]:
    code, messages = None, []
    for line in case.with_suffix(".expected").read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition(":")
        if key == "exit":
            code = int(value)
        elif key == "stderr":
            messages.append(value.strip())
    assert code is not None and messages, f"{case.with_suffix('.expected')}: needs exit and stderr"
    return code, messages


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_every_case_has_its_expected_file():
    assert CASES, "no corpus"
    for case in CASES:
        assert case.with_suffix(".expected").is_file(), f"{case.name} has no .expected file"
    orphans = {p.stem for p in CORPUS.glob("*.expected")} - {p.stem for p in CASES}
    assert not orphans, f".expected files without a spec: {sorted(orphans)}"


@pytest.mark.parametrize("case", CASES, ids=[p.stem for p in CASES])
def test_corpus_spec_validates_with_expected_message(case, tmp_path, monkeypatch, capsys):
    """``zoo validate CASE`` (the CLI's entry point, in-process): the exit code and the message,
    one line per problem, no traceback, nothing written."""
    code, messages = expected(case)
    before = listing(CORPUS)
    monkeypatch.chdir(tmp_path)
    assert main(["validate", str(case)]) == code
    out = capsys.readouterr()
    for message in messages:
        assert message in out.err, f"expected:\n  {message}\ngot:\n  {out.err}"
    assert "Traceback" not in out.err and f"{case}: ok" not in out.out
    assert all(line.startswith(str(CORPUS)) or line.startswith("error: ")
               for line in out.err.strip().splitlines()), out.err  # FILE:LINE:COL: ... lines
    assert listing(tmp_path) == [], "validation wrote into the working directory"
    assert listing(CORPUS) == before, "validation wrote next to the specs"


def test_corpus_validates_through_the_zoo_command(tmp_path):
    """The real command on the whole corpus at once: exit 2, every message, no traceback."""
    before = listing(CORPUS)
    out = subprocess.run([sys.executable, "-m", "zoo", "validate", *map(str, CASES)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    for case in CASES:
        for message in expected(case)[1]:
            assert message in out.stderr, f"{case.name}: {message}"
        assert f"{case}: ok" not in out.stdout
    assert listing(tmp_path) == []
    assert listing(CORPUS) == before
