"""bench/run.py's report: the table's verdicts and bounds, and the figure it links."""

from __future__ import annotations

import json
import sys
from argparse import Namespace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import run  # noqa: E402


def _result(case: str, impl: str, step: float | None) -> dict:
    return {"case": case, "impl": impl, "used": impl, "length": 40, "batch": 128,
            "step_s": step, "samples_s": 128 / step if step else None, "peak_mb": 10.0,
            "nfe": 156}


def test_report_states_verdicts_and_bounds_and_links_its_figure(tmp_path):
    args = Namespace(threads=1, device="cpu", quick=True, repeats=3, rounds=1,
                     output=tmp_path / "docs" / "performance.md", section="quick")
    rows = [(_result("ncde-speech", "generic", 0.3), _result("ncde-speech", "fast", 0.25),
             _result("ncde-speech", "floor", 0.2)),
            (_result("ltc-32-b16", "generic", 0.05), _result("ltc-32-b16", "fast", 0.01),
             _result("ltc-32-b16", "floor", None))]
    image = run.figure(args, rows)
    assert image == tmp_path / "docs" / "img" / "performance_quick.png"
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = run.report(args, rows, [], image, "a test machine")
    assert text.startswith("Machine: a test machine. Median of 3 training steps")
    assert "| **1.2×** | ≥ 1.5×: not met | 1.5× |" in text
    assert "| **5.0×** | ≥ 2×: met | — |" in text
    assert "](img/performance_quick.png)" in text


def test_saved_measurements_give_the_section(tmp_path):
    """A --save file (machine, then each measurement as taken; cut short after a case's generic
    step) gives the cases both paths measured, merged over the rounds, and the adjoint rows."""
    lines = [{"machine": "a GPU", "repeats": 2, "rounds": 2},
             _result("ncde-speech", "generic", 0.4), _result("ncde-speech", "fast", 0.1),
             _result("ncde-speech", "generic", 0.2), _result("ncde-speech", "fast", 0.1),
             {**_result("ncde-speech", "fast", 0.5), "memory_growth": True},
             {**_result("ncde-speech", "fast", 2.0), "length": 161, "memory_growth": True},
             _result("ltc-32-b16", "generic", 0.05)]
    path = tmp_path / "saved.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    header, rows, adjoint = run.saved(path)
    assert header["machine"] == "a GPU"
    assert [(r["length"], r["step_s"]) for r in adjoint] == [(40, 0.5), (161, 2.0)]  # the pair
    [(generic, fast, floor)] = rows
    assert generic["step_s"] == pytest.approx(0.3) and fast["step_s"] == 0.1  # medians
    assert floor["step_s"] is None


def test_a_save_file_holds_several_runs_and_a_case_counts_as_its_last(tmp_path):
    """Runs appended to one --save file: their machines are named together, a case measured
    again counts as the later run's, and runs with different settings cannot share a section."""
    first = [{"machine": "GPU A", "repeats": 2, "rounds": 1},
             _result("ncde-speech", "generic", 0.4), _result("ncde-speech", "fast", 0.2)]
    second = [{"machine": "GPU B", "repeats": 2, "rounds": 1},
              _result("ncde-speech", "generic", 0.3), _result("ncde-speech", "fast", 0.1),
              _result("ltc-32-b16", "generic", 0.05), _result("ltc-32-b16", "fast", 0.01)]
    path = tmp_path / "saved.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in first + second))
    header, rows, _ = run.saved(path)
    assert header["machine"] == "GPU A; and GPU B"
    assert [(g["case"], g["step_s"], f["step_s"]) for g, f, _ in rows] == [
        ("ncde-speech", 0.3, 0.1), ("ltc-32-b16", 0.05, 0.01)]
    with path.open("a") as file:
        file.write(json.dumps({"machine": "GPU C", "repeats": 5, "rounds": 1}) + "\n")
    with pytest.raises(SystemExit, match="different --repeats/--rounds"):
        run.saved(path)


def test_peak_memory_counts_the_bytes_a_step_holds_at_once():
    import torch

    def step():
        a = torch.ones(1 << 20)  # 4 MiB
        b = a * 2  # 8 MiB held
        del a
        c = torch.ones(1 << 21)  # 4 + 8 = 12 MiB held
        del b, c

    kept = torch.ones(1 << 22)  # held before the step: not counted
    assert run.allocated_peak_mb(step) == pytest.approx(12.0, abs=0.01)
    assert kept.numel() == 1 << 22
