"""RunGuard in a small process of its own (it ends the process): signals and checkpoint writes."""

import subprocess
import sys
import textwrap
import time

_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, time
    from agents.training.run_guard import RunGuard

    with RunGuard(describe=lambda reason: reason + "; described.") as guard:
        with guard.saving():  # A checkpoint being written when both signals come.
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)
            with open(sys.argv[1], "w") as handle:
                handle.write("complete")
        time.sleep(30)
    """
)


def test_second_signal_waits_for_the_checkpoint_being_written(tmp_path):
    written = tmp_path / "checkpoint.txt"
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(written)], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 130
    assert time.monotonic() - start < 10
    assert written.read_text() == "complete"
    assert result.stderr == (
        "SIGINT: stopping after this step (again to stop at once).\n"
        "SIGINT again: waiting for the checkpoint being written, then stopping.\n"
        "SIGINT again: stopped at once; described.\n"
    )


_HUNG_SCRIPT = textwrap.dedent(
    """
    import time
    from agents.training.run_guard import RunGuard
    from agents.tools.batch_env import Waiting

    class HungBatch:
        def waiting(self):
            return Waiting("Eval environment 3 (Slow-v0)", "reset", time.monotonic() - start)

    start = time.monotonic()
    with RunGuard(describe=lambda reason: reason + " at env step 7.") as guard:
        guard.watch([HungBatch()], timeout=0.5)
        time.sleep(30)
    """
)


def test_a_call_longer_than_the_timeout_ends_the_process_naming_the_env():
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", _HUNG_SCRIPT], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 1
    assert time.monotonic() - start < 10
    assert result.stderr == (
        "error: Eval environment 3 (Slow-v0) did not return from reset within env_timeout=0.5 s; "
        "stopped at env step 7.\n"
    )
