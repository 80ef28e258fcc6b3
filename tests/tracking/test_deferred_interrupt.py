import os
import signal

import pytest

from zoo.tracking.deferred_interrupt import interrupts_deferred


def test_sigint_inside_the_block_is_raised_after_it_completes():
    done = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            done.append("write finished")
    assert done == ["write finished"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_block_without_sigint_leaves_the_handler_as_it_was():
    with interrupts_deferred():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
