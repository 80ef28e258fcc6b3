"""Who may resume a RUNNING run: a gone writer of this host is replaced, a live one never."""

import os
import subprocess
import sys

import pytest

from zoo.errors import InputError
from zoo.tracking import owner


def test_a_live_writer_on_this_host_is_never_taken_over_even_with_force():
    for force in (False, True):
        with pytest.raises(InputError, match=f"process {os.getpid()} on this host is still"):
            owner.check_resumable("r1", "RUNNING", owner.describe(), force)


def test_a_gone_writer_is_replaced_and_an_uncheckable_one_only_with_force():
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    gone = owner.describe(int(done.stdout))
    assert "has ended" in owner.check_resumable("r1", "RUNNING", gone, False)
    with pytest.raises(InputError, match="resume with --force"):
        owner.check_resumable("r1", "RUNNING", "elsewhere:4242", False)
    assert owner.check_resumable("r1", "RUNNING", "elsewhere:4242", True).startswith("--force")
    with pytest.raises(InputError, match="already finished"):
        owner.check_resumable("r1", "FINISHED", gone, True)
