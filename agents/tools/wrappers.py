"""ExternalProcess: a gymnasium environment in a child process, so that batches step in parallel."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import multiprocessing
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import cloudpickle
import gymnasium

_ACCESS, _CALL, _CLOSE, _RESULT, _EXCEPTION = range(5)  # message kinds
_POLL_SECONDS = 0.1  # parent: how often to check that the child still lives while waiting
_ORPHAN_SECONDS = 1.0  # child: how often to check that the parent still lives while idle
_CLOSE_SECONDS = 2.0  # parent: how long to wait for each way of stopping the child
_PR_SET_PDEATHSIG = 1  # Linux prctl option: a signal for this process when its parent dies.


class ExternalProcessError(RuntimeError):
    """The environment in the child process raised, or the child process died."""


def _forward(name: str, cached: bool = False) -> property:
    """A read-only property that reads `name` of the environment in the child process."""
    return property(lambda self: self._access(name, cached), doc=f"`{name}` of the environment.")


class ExternalProcess(gymnasium.Env):
    """A gymnasium environment living in a child process.

    The constructor is serialized with cloudpickle, so anything cloudpickle can serialize is
    accepted: lambdas and closures, `functools.partial(gymnasium.make, "CartPole-v1")`, module-level
    functions and classes. It must return a `gymnasium.Env`. The child is started with the "spawn"
    method (forking after TensorFlow is imported is unsafe) and imports this module, which stays
    free of TensorFlow.

    `step` and `reset` take `blocking=False` to return a promise instead: a zero-argument callable
    that waits for and returns the result, so that a batch of environments steps in parallel.
    Resolve each promise before the next request to the same environment.

    Exceptions raised in the child, by the constructor too (at construction), are re-raised as
    `ExternalProcessError` with the child's traceback in the message; so is the child's death. The
    child exits when its parent dies, even in a hung call, and lives in a process group of its own,
    so that signals to the parent's group reach only the parent, which closes it.

    Other attributes are read from the child's environment on access, through its wrappers (as
    `get_wrapper_attr` does). The spaces, `metadata`, `render_mode` and `spec` are constant in
    gymnasium, so they are read once.
    """

    observation_space = _forward("observation_space", cached=True)
    action_space = _forward("action_space", cached=True)
    metadata = _forward("metadata", cached=True)
    render_mode = _forward("render_mode", cached=True)
    spec = _forward("spec", cached=True)
    np_random = _forward("np_random")
    np_random_seed = _forward("np_random_seed")
    _np_random = _forward("_np_random")  # Read by gymnasium's env_checker.

    def __init__(self, constructor: Callable[[], gymnasium.Env]):
        """Starts the child process and waits until it has constructed the environment.

        Args:
            constructor: Zero-argument callable returning the environment, called in the child.

        Raises:
            ExternalProcessError: The constructor raised, or the child process died.
        """
        context = multiprocessing.get_context("spawn")
        self._conn, child_conn = context.Pipe()
        self._cache: dict[str, Any] = {}
        self._process = context.Process(
            target=_worker,
            args=(cloudpickle.dumps(constructor), child_conn, os.getpid()),
            daemon=True,
        )
        self._process.start()
        child_conn.close()  # Only the child holds its end now, so its death reads as EOF here.
        try:
            self._receive()  # The ready message, or the constructor's exception.
        except BaseException:
            self.close()
            raise

    @property
    def pid(self) -> int:
        """Process id of the child process."""
        return self._process.pid

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # Never the child's; e.g. reads during a failed __init__.
            raise AttributeError(name)
        return self._access(name)

    def step(self, action: Any, blocking: bool = True) -> tuple | Callable[[], tuple]:
        """Steps the environment: (observ, reward, terminated, truncated, info), or its promise."""
        promise = self._call("step", action)
        return promise() if blocking else promise

    def reset(
        self, *, seed: int | None = None, options: dict | None = None, blocking: bool = True
    ) -> tuple | Callable[[], tuple]:
        """Resets the environment: (observ, info), or its promise."""
        promise = self._call("reset", seed=seed, options=options)
        return promise() if blocking else promise

    def render(self) -> Any:
        """Renders the environment in the child and returns the frame, if any."""
        return self._call("render")()

    def close(self) -> None:
        """Closes the environment and stops the child; never hangs, safe to call more than once."""
        conn = getattr(self, "_conn", None)
        if conn is None or conn.closed:
            return
        with contextlib.suppress(OSError):  # The child may be gone already.
            conn.send((_CLOSE, None))
        self._process.join(_CLOSE_SECONDS)
        for stop in (self._process.terminate, self._process.kill):
            if self._process.is_alive():
                stop()
                self._process.join(_CLOSE_SECONDS)
        conn.close()

    def __del__(self):
        with contextlib.suppress(Exception):  # Best effort; the interpreter may be shutting down.
            self.close()

    def _access(self, name: str, cached: bool = False) -> Any:
        if name not in self._cache:
            self._send(_ACCESS, name)
            value = self._receive()
            if not cached:
                return value
            self._cache[name] = value
        return self._cache[name]

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Callable[[], Any]:
        self._send(_CALL, (name, args, kwargs))
        return functools.cache(self._receive)

    def _send(self, kind: int, payload: Any) -> None:
        if self._conn.closed:
            raise ExternalProcessError(f"Environment process {self.pid} is closed.")
        try:
            self._conn.send((kind, payload))
        except OSError:
            raise ExternalProcessError(self._death_message()) from None

    def _receive(self) -> Any:
        while not self._conn.poll(_POLL_SECONDS):
            if not self._process.is_alive() and not self._conn.poll(0):
                raise ExternalProcessError(self._death_message())
        try:
            kind, payload = self._conn.recv()
        except (EOFError, OSError):
            raise ExternalProcessError(self._death_message()) from None
        if kind == _EXCEPTION:
            is_attribute_error, text = payload
            error = AttributeError if is_attribute_error else ExternalProcessError
            raise error(f"Environment in process {self.pid} raised:\n{text}")
        return payload

    def _death_message(self) -> str:
        self._process.join(_CLOSE_SECONDS)  # Reap it, so that the exit code is known.
        return death_message(self.pid, self._process.exitcode)


def death_message(pid: int, exitcode: int | None) -> str:
    """How an environment's process ended, in one line: its signal, or its exit code."""
    if exitcode is not None and exitcode < 0:
        return f"Environment process {pid} was killed by {signal.Signals(-exitcode).name}."
    return f"Environment process {pid} died with exit code {exitcode}."


def _worker(constructor: bytes, conn: Any, parent_pid: int) -> None:
    """Child process: builds the environment, then serves requests until closed or orphaned."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent, which closes us.
    # So are signals to the parent's process group (`timeout`, systemd, Slurm send them): in a
    # group of its own, the child lives until the parent has saved and closes it.
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    _die_with_parent(parent_pid)
    try:
        env = cloudpickle.loads(constructor)()
    except Exception:
        conn.send((_EXCEPTION, (False, traceback.format_exc())))
        conn.close()
        return
    try:
        conn.send((_RESULT, None))
        _serve(env, conn, parent_pid)
    except (EOFError, OSError):  # The parent went away.
        pass
    finally:
        env.close()
        conn.close()


def _die_with_parent(parent_pid: int) -> None:
    """End this process when the parent dies, even while the environment hangs in a call.

    On Linux the kernel sends SIGKILL (PR_SET_PDEATHSIG); elsewhere a daemon thread checks the
    parent's pid every `_ORPHAN_SECONDS`, which works unless the environment holds the GIL.
    """
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:  # Died before the request took effect.
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(_ORPHAN_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="orphan-watch", daemon=True).start()


def _serve(env: gymnasium.Env, conn: Any, parent_pid: int) -> None:
    """Answers requests from the parent until it asks to close or dies."""
    while True:
        # A dead parent shows as EOF on the pipe; should another process hold the parent's end
        # (inherited through a fork), the parent process id changes instead.
        if not conn.poll(_ORPHAN_SECONDS):
            if os.getppid() != parent_pid:
                return
            continue
        kind, payload = conn.recv()
        if kind == _CLOSE:
            return
        try:
            if kind == _ACCESS:
                result = env.get_wrapper_attr(payload)
            else:
                name, args, kwargs = payload
                result = getattr(env, name)(*args, **kwargs)
            conn.send((_RESULT, result))
        except Exception as exc:
            conn.send((_EXCEPTION, (isinstance(exc, AttributeError), traceback.format_exc())))


class VisitedCells(gymnasium.Wrapper):
    """Counts the distinct states (e.g. grid cells) visited over all episodes.

    gymnasium has no such wrapper; exploration benchmarks need it. `visited_cells` is the count.

    Args:
        env: The environment.
        locate: Function of the environment returning a hashable description of the state, e.g.
            `lambda env: tuple(env.unwrapped.agent_pos)` for MiniGrid.
    """

    def __init__(self, env: gymnasium.Env, locate: Callable[[gymnasium.Env], Any]) -> None:
        super().__init__(env)
        self._locate = locate
        self._visited: set = set()

    @property
    def visited(self) -> frozenset:
        """The states visited so far."""
        return frozenset(self._visited)

    @property
    def visited_cells(self) -> int:
        """How many distinct states were visited."""
        return len(self._visited)

    def reset(self, **kwargs):
        result = self.env.reset(**kwargs)
        self._visited.add(self._locate(self.env))
        return result

    def step(self, action):
        result = self.env.step(action)
        self._visited.add(self._locate(self.env))
        return result
