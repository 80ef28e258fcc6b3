"""What a run records of its device: torch's version always; on CUDA the GPU's name, memory and
CUDA version as tags, each epoch's peak GPU memory and the run's as metrics."""

from __future__ import annotations

import pytest
import torch

from conftest import store_runs
from zoo.cli.main import main
from zoo.training.device import PEAK_MEMORY, RUN_PEAK_MEMORY

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device"))]


@pytest.mark.parametrize("device", DEVICES)
def test_a_run_records_its_device(device, tiny_spec, write_spec, tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    tiny_spec["train"]["epochs"] = 2
    assert main(["run", str(write_spec(tiny_spec)), "--device", device, "--tracking-uri", uri,
                 "--no-progress"]) == 0
    client, [run] = store_runs(uri)
    tags = run.data.tags
    assert tags["zoo.device"].startswith(device) and tags["zoo.torch"] == torch.__version__
    peaks = client.get_metric_history(run.info.run_id, PEAK_MEMORY)
    if device == "cpu":
        assert "zoo.gpu" not in tags and peaks == [] and RUN_PEAK_MEMORY not in run.data.metrics
        return
    props = torch.cuda.get_device_properties(0)
    assert tags["zoo.gpu"] == props.name and tags["zoo.cuda"] == torch.version.cuda
    assert float(tags["zoo.gpu_memory_gb"]) == pytest.approx(props.total_memory / 2**30, abs=0.1)
    assert [p.step for p in peaks] == [1, 2] and all(p.value > 0 for p in peaks)
    assert run.data.metrics[RUN_PEAK_MEMORY] == max(p.value for p in peaks)
