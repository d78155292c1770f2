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


_OTHER_THREAD_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    from agents.training.run_guard import RunGuard, StartUpStopped

    with RunGuard() as guard:  # Its watchdog thread starts with every signal open.
        # The main thread blocks SIGTERM, so the kernel gives it to another thread, as it may
        # give a process-directed signal to TensorFlow's threads.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM)).start()
        start = time.monotonic()
        try:
            with guard.starting():
                time.sleep(30)  # An env's constructor waiting for long.
        except StartUpStopped:
            print(f"stopped after {time.monotonic() - start:.1f} s")
        print("wake-up handler put back:", signal.getsignal(signal.SIGURG) == signal.SIG_DFL)
    """
)


def test_a_signal_given_to_another_thread_stops_the_start_up_at_once():
    """The main thread's blocking call is woken: the start-up ends within seconds, not 30 s."""
    result = subprocess.run(
        [sys.executable, "-c", _OTHER_THREAD_SCRIPT], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == "SIGTERM: stopping the start-up (again to stop at once).\n"
    seconds = float(result.stdout.split()[2])
    assert seconds < 5, result.stdout
    assert "wake-up handler put back: True" in result.stdout
