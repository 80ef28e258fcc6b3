"""The training allocator setting: glibc keeps freed blocks, unless the user opts out."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHECK = "from zoo.training.allocator import keep_freed_blocks; print(keep_freed_blocks())"


def _setting(env: dict) -> str:
    """The setting made in a fresh process (mallopt is process-wide)."""
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True,
                         check=True, env=env)
    return out.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_glibc_keeps_freed_blocks_and_the_user_can_opt_out():
    env = {k: v for k, v in os.environ.items() if k != "ZOO_SYSTEM_MALLOC"}
    assert _setting(env) == "glibc, freed blocks kept"
    assert _setting({**env, "ZOO_SYSTEM_MALLOC": "1"}) == "system (ZOO_SYSTEM_MALLOC=1)"
