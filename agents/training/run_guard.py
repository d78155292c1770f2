"""RunGuard: stop signals, hung environments and checkpoint writes of a training process.

The main thread may wait for a long time inside one TensorFlow call (a rollout that steps the
environments), where Python signal handlers cannot run. So the signals are also read by a
watchdog thread through `signal.set_wakeup_fd`: it announces the first signal, ends the process
on the second (after any checkpoint being written) or on a first one in the first training call,
and ends it when an environment call takes longer than `env_timeout`. Env processes are killed
and the exit clean-ups run (`runtime.exit_cleanup`) before the process ends.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from agents.runtime import exit_cleanup
from agents.training.callbacks import Callback
from agents.training.progress import TrainingProgress
from agents.training.reporting import ConsoleLog

if TYPE_CHECKING:  # The Trainer's callback: the Trainer imports this module.
    from agents.training.trainer import Trainer

_POLL_SECONDS = 0.2  # How often the watchdog looks at the environments.
_SAVE_WAIT_SECONDS = 120.0  # Longest wait for a checkpoint being written, on a second signal.
# The kernel may give a process-directed signal to any thread that does not block it (one of
# TensorFlow's, the watchdog): the main thread's blocking call (a sleep, a pipe read in an env's
# constructor) then goes on, and the Python handler waits for it. During the start-up the
# watchdog wakes the main thread with this signal, whose default action is to ignore it, so a
# wake-up that arrives after the block has ended does nothing.
_WAKE_SIGNAL = signal.SIGURG
# SIGHUP (the terminal closed) and SIGQUIT (Ctrl-\\) stop a run as SIGTERM does: a run that
# trained for hours is worth a checkpoint more than SIGQUIT's core dump. So do SIGUSR1 and
# SIGUSR2, which batch schedulers send before a job's time limit (SLURM's --signal) and which
# would otherwise end the process with nothing saved.
_SIGNALS = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)


class StartUpStopped(BaseException):
    """Raised in the main thread by a stop signal during the run's start-up (`RunGuard.starting`):
    a BaseException, as KeyboardInterrupt is, so that no `except Exception` of the code it
    interrupts takes it for that code's own failure."""


class RunGuard(Callback):
    """Within the block, SIGINT (Ctrl-C) and SIGTERM ask the loop to stop before its next step.

    A consumer of the run on every rank: its `signum` answers "stop?", it watches the run's
    environments from `on_start`, and its `saving` lock is held while a checkpoint is written.

    Stopping between steps keeps counters and checkpoints consistent. Where nothing would be
    saved by waiting, the first signal stops at once: during the start-up (`starting`: envs, a
    layout bank, the agent) and, in one process, during the first training call, which compiles
    the agent (the process ends as on a second signal; a new run's directory goes). A second
    signal ends the process within seconds, with exit status 128 + signal, once a checkpoint being
    written (under `saving`) is complete; a hung environment call (see `watch`) ends it with
    status 1. Either way the env processes are killed and `describe(reason)` tells what was kept.
    The previous handlers return on exit of the block.

    In a host process (`host=True`: a notebook, a script calling `agents.train`), a second
    signal never ends the process: training stops after the current step as on the first one. In
    a thread other than the main one, no signal handler is installed (Python allows them in the
    main thread only); the watchdog still ends hung environment calls.

    Args:
        announce: Print the signal lines (under MPI every rank gets the signal; rank 0 says so).
        describe: Called with the reason when the process is ended at once; returns the line to
            print (e.g. the reason, the latest checkpoint and how to resume).
        host: Whether the process is someone else's, which a second signal must not end.
    """

    def __init__(
        self, announce: bool = True, describe: Callable[[str], str] = str, host: bool = False
    ) -> None:
        self.signum: int | None = None
        self._host = host
        self._saving = threading.Lock()  # Held while a checkpoint is written.
        self.describe = describe
        self._announce = announce
        self._previous: dict = {}
        self._batches: Sequence = ()
        self._timeout: float | None = None
        self._count = 0
        self._pipe: tuple[int, int] | None = None
        self._previous_fd = -1
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._starting = False  # Within `starting`: a first signal raises StartUpStopped.
        self._start_up_stopped = False  # It did.
        self._calls = 0  # Training loop calls begun (`on_step` comes before each).
        self._alone = False  # One process (no MPI ranks that must agree on a stop).

    every_rank = True  # Each rank gets the signals and watches its own environments.

    def on_start(self, run: Trainer) -> None:
        self.watch(run.batch_envs, run.config.env_timeout)
        self._alone = run.ranks == 1

    def on_step(self, run: Trainer) -> None:
        self._calls += 1

    def saving(self) -> threading.Lock:
        return self._saving

    @contextlib.contextmanager
    def starting(self) -> Iterator[None]:
        """Around the run's start-up (the envs, a layout bank, the agent): nothing is saved
        there, so the first stop signal stops it at once, raising `StartUpStopped` in the main
        thread (as Ctrl-C raises KeyboardInterrupt) as soon as Python runs there; a signal
        already received raises on entry."""
        if self.signum is not None:
            raise StartUpStopped(self.signum)
        main = threading.current_thread() is threading.main_thread()
        waking = bool(self._previous) and main  # Handlers installed: the wake-up works.
        previous = signal.signal(_WAKE_SIGNAL, _ignore) if waking else None
        self._starting = True
        try:
            yield
        finally:
            self._starting = False
            if waking:
                signal.signal(_WAKE_SIGNAL, previous if previous is not None else signal.SIG_DFL)

    def watch(self, batches: Sequence, timeout: float | None) -> None:
        """End the process when a call of one of `batches` (`BatchEnv`s) exceeds `timeout` s.

        Args:
            batches: Objects with a `waiting()` method, as `BatchEnv` has.
            timeout: Seconds; None watches nothing.
        """
        self._batches, self._timeout = tuple(batches), timeout

    def __enter__(self) -> RunGuard:
        self._pipe = os.pipe()
        for fd in self._pipe:
            os.set_blocking(fd, False)
        if threading.current_thread() is threading.main_thread():
            signals = _SIGNALS if not self._host else (signal.SIGINT, signal.SIGTERM)
            for signum in signals:
                self._previous[signum] = signal.signal(signum, self._handle)
            self._previous_fd = signal.set_wakeup_fd(self._pipe[1], warn_on_full_buffer=False)
        self._thread = threading.Thread(target=self._watch, name="run-guard", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        if self._previous:
            signal.set_wakeup_fd(self._previous_fd)
        for signum, handler in self._previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        self._stop.set()
        self._thread.join()
        for fd in self._pipe:
            os.close(fd)

    def _handle(self, signum, frame) -> None:
        """In the main thread, between two Python instructions: the stop request, at once."""
        del frame
        self.signum = self.signum or signum  # The watchdog may have set it first.
        if self._starting:
            self._starting = False  # Once: cleaning up after it must not be interrupted.
            self._start_up_stopped = True
            raise StartUpStopped(signum)

    def _watch(self) -> None:
        while not self._stop.is_set():
            readable, _, _ = select.select([self._pipe[0]], [], [], _POLL_SECONDS)
            if readable:
                with contextlib.suppress(BlockingIOError):
                    for signum in os.read(self._pipe[0], 64):
                        self._signaled(signum)
            self._check_envs()

    def _signaled(self, signum: int) -> None:
        if signum not in _SIGNALS:
            return
        self._count += 1
        name = signal.Signals(signum).name
        when = "the start-up" if self._starting or self._start_up_stopped else "after this step"
        if self._starting:
            _wake_main_thread()  # Whose `_handle` stops the start-up.
        if self._host:  # Never end a host process: stop after this step, as on the first.
            self.signum = self.signum or signum
            if self._announce:
                _say(f"{name}: stopping {when}.")
            return
        if self._count == 1 and self._calls == 1 and self._alone:
            # The first call compiles the agent (seconds to minutes) and nothing of it would be
            # saved before it ends: stop now rather than after it.
            self.signum = self.signum or signum
            self._end(f"{name}: stopped in the first training call, which compiles", 128 + signum)
        if self._count == 1:
            self.signum = self.signum or signum
            if self._announce:
                _say(f"{name}: stopping {when} (again to stop at once).")
            return
        if not self._saving.acquire(blocking=False):
            _say(f"{name} again: waiting for the checkpoint being written, then stopping.")
            self._saving.acquire(timeout=_SAVE_WAIT_SECONDS)
        self._end(f"{name} again: stopped at once", 128 + signum)

    def _check_envs(self) -> None:
        if self._timeout is None:
            return
        for batch in self._batches:
            waiting = batch.waiting()
            if waiting is not None and waiting.seconds > self._timeout:
                self._end(
                    f"error: {waiting.name} did not return from {waiting.method} within "
                    f"env_timeout={self._timeout:g} s; stopped",
                    1,
                )

    def _end(self, reason: str, status: int) -> None:
        """Kill the env processes, print `describe(reason)`, publish and remove the process's
        XLA scratch folder, and end the process."""
        for child in multiprocessing.active_children():
            with contextlib.suppress(Exception):
                child.kill()
        try:
            line = self.describe(reason)
        except Exception as error:  # Say what can be said.
            line = f"{reason} ({type(error).__name__} while describing the run: {error})"
        _say(line)
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        exit_cleanup.run_now()  # os._exit runs no atexit handler (XLA scratch, bank builders).
        os._exit(status)


def _ignore(signum, frame) -> None:
    """A Python handler that does nothing: unlike SIG_IGN it interrupts the main thread's
    blocking system call, after which Python runs every handler whose signal has arrived."""
    del signum, frame


def _wake_main_thread() -> None:
    with contextlib.suppress(OSError, ValueError):
        signal.pthread_kill(threading.main_thread().ident, _WAKE_SIGNAL)


def _say(line: str) -> None:
    # os.write, not print: the main thread may be inside a print.
    os.write(2, f"{line}\n".encode())


@contextlib.contextmanager
def process_shell(
    total: int,
    *,
    root: bool = True,
    host: bool = False,
    bar: bool = True,
    console: bool = True,
    describe: Callable[[str], str] = str,
) -> Iterator[list[Callback]]:
    """The consumers a process wraps a run in, shared by the command line, `agents.train` and
    the seeds and tuning runners: the run guard (signals, watchdog), the progress bar and the
    console; within the block the guard's handlers are installed and the bar drawn.

    Args:
        total: The run's budget in env steps (`Trainer.budget`), for the bar.
        root: This is MPI rank 0 (or the only process): it announces signals and draws.
        host: The process is someone else's (a notebook, a script): a second signal stops
            after the step rather than ending it.
        bar: Draw the progress bar (on a terminal or in a notebook).
        console: Print the run's lines (`ConsoleLog`); without them stdout is left to the
            caller's code (callbacks, envs), not captured.
        describe: Called with the reason when the guard ends the process at once; returns
            the line to print (the latest checkpoint and how to resume).
    """
    progress = TrainingProgress(total, enabled=root and bar)
    with RunGuard(root, describe, host=host) as guard, progress:
        yield [guard, progress] + ([ConsoleLog()] if console else [])
