"""How a process loads TensorFlow: quietly, with the compile cache and the process defaults set.

TensorFlow reads `TF_CPP_MIN_LOG_LEVEL`, `TF_ENABLE_ONEDNN_OPTS` and `TF_XLA_FLAGS` once, when
it loads, and some of its libraries print before absl's logging starts (oneDNN, CUDA stubs), so
`prepare` sets them before the import (a run, a loaded policy and the native envs call it before
they load TensorFlow) and the import's lines are caught. A value the user set is
kept (and a user's log level hides nothing).

TensorFlow loaded by someone else first (`import tensorflow` before `import agents`) keeps what it
read: `import_tensorflow` then quiets what still can be (its Python loggers; its C++ lines of
device and XLA start-up, caught while they are made; those of the policy export, see
`quiet_native_logs`) and says in one warning which settings could not be applied.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator

from absl import logging as absl_logging  # TensorFlow's logger (absl-py, light: no TensorFlow).

from agents.runtime import compile_cache

LOG_LEVEL = "TF_CPP_MIN_LOG_LEVEL"
ONEDNN = "TF_ENABLE_ONEDNN_OPTS"
_READ_AT_LOAD = (ONEDNN, compile_cache.FLAGS, "AGENTS_XLA_CACHE")  # What `unapplied` looks at.
ONEDNN_DEFAULT = "1"  # TensorFlow's own, on x86 Linux, where the variable is unset.

# The variables agents set, not the user, with their values (`KEY=value,...`), named in the
# environment so that child processes (a training command run from a script that imported
# agents) may set them for their own agent; a variable changed since is the user's.
OURS = "AGENTS_TF_SETTINGS"
_state = {"adopted": False, "native_logs_hidden": False, "warned": False, "loaded_with": None}


def prepare(onednn: bool = False, verbose: bool = False) -> None:
    """Set TensorFlow's process variables, unless TensorFlow is loaded already.

    The compile cache (`compile_cache`), oneDNN on or off as the agent family runs fastest
    (`onednn`, from `agents.ppo.compilation.onednn`; off suits `ppo`'s small ops) and, unless
    `verbose`, log level 3; a variable the user set is left as it is. Also one inter-op thread
    (`TF_NUM_INTEROP_THREADS=1`) speeds up the rollout step of tiny networks but slows the XLA
    update of larger ones, so it is left to the user.
    """
    if "tensorflow" in sys.modules:
        return
    compile_cache.enable()
    recorded = dict(
        pair.split("=", 1) for pair in os.environ.get(OURS, "").split(",") if "=" in pair
    )
    ours = {key: value for key, value in recorded.items() if os.environ.get(key) == value}
    wanted = {ONEDNN: "1" if onednn else "0"}
    if not verbose:
        wanted[LOG_LEVEL] = "3"  # Also read by env processes and MPI ranks spawned later.
    elif LOG_LEVEL in ours:
        del os.environ[LOG_LEVEL], ours[LOG_LEVEL]
    for key, value in wanted.items():
        if key not in os.environ or key in ours:
            os.environ[key] = ours[key] = value
    os.environ[OURS] = ",".join(f"{key}={value}" for key, value in sorted(ours.items()))


def import_tensorflow(verbose: bool = False, onednn: bool | None = None) -> str | None:
    """Import TensorFlow, Keras and TensorFlow Probability, silently unless `verbose`.

    Args:
        verbose: Show TensorFlow's log lines (its C++ logs, absl's and its Python logger's).
        onednn: Whether the agent family to be trained runs with oneDNN
            (`agents.ppo.compilation.onednn`); a TensorFlow loaded earlier otherwise is warned
            of. None (no training, e.g. loading a policy): off, and no warning.

    Returns:
        A warning line for the caller to show, once per process, where TensorFlow was loaded
        before these settings could be made and the agent runs without some of them; else None.
    """
    if "tensorflow" in sys.modules:
        return _adopt(verbose, onednn)
    prepare(bool(onednn), verbose)
    # A level that hides info lines (ours, the user's or a parent process's) hides the lines
    # printed before absl's logging starts too, which ignore it.
    quiet = not verbose and os.environ.get(LOG_LEVEL, "0") not in ("", "0")
    with captured_stderr(quiet):
        _load()
    # What TensorFlow read: a later run in this process (whose caller may restore the
    # environment in between, as `agents.train` does) is measured against it.
    _state["loaded_with"] = {key: os.environ[key] for key in _READ_AT_LOAD if key in os.environ}
    if not verbose:
        _quiet_python_loggers()
    return None


def fresh_environ(environ=os.environ) -> dict[str, str]:
    """A copy of `environ` less what agents set in it (TensorFlow's settings, `TF_XLA_FLAGS`
    with the cache flag naming this process's XLA scratch folder): a child process given it
    starts as a user's first process does, with a scratch folder of its own, whatever this
    process ran before (a test suite's worker, a benchmark's driver)."""
    fresh = dict(environ)
    for pair in fresh.pop(OURS, "").split(","):
        fresh.pop(pair.split("=", 1)[0], None)
    fresh.pop(compile_cache.FLAGS, None)
    return fresh


def unapplied(onednn: bool, environ=os.environ) -> list[str]:
    """The settings an agent that runs with oneDNN `onednn` lacks in a TensorFlow loaded under
    `environ`, as phrases (e.g. "oneDNN stays on (this agent runs with
    TF_ENABLE_ONEDNN_OPTS=0)")."""
    lacking = []
    loaded, wanted = environ.get(ONEDNN, ONEDNN_DEFAULT), "1" if onednn else "0"
    if loaded != wanted:
        state = "on" if loaded == "1" else "off"
        lacking.append(f"oneDNN stays {state} (this agent runs with {ONEDNN}={wanted})")
    cache_off = environ.get("AGENTS_XLA_CACHE") == "0"
    if not cache_off and compile_cache.CACHE_FLAG not in environ.get(compile_cache.FLAGS, ""):
        lacking.append("XLA's compile cache is off")
    return lacking


@contextlib.contextmanager
def quiet_native_logs() -> Iterator[None]:
    """Where TensorFlow was loaded before `agents` without a log level (so its C++ lines show),
    its log lines made within the block are dropped and the rest of what went to stderr is
    written after it; elsewhere this does nothing."""
    with captured_stderr(_state["native_logs_hidden"], keep=_not_native_log):
        yield


# A line of TensorFlow's C++ logging (absl's format), e.g. "I0000 00:00:1795.39 31084 port.cc:153]".
_NATIVE_LOG = re.compile(r"^[IWEF]\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] ")
_ABSL_NOTICE = "WARNING: All log messages before absl::InitializeLog() is called"


def _not_native_log(line: str) -> bool:
    return not (_NATIVE_LOG.match(line) or line.startswith(_ABSL_NOTICE))


def _adopt(verbose: bool, onednn: bool | None) -> str | None:
    """TensorFlow was loaded before this call (by an earlier one, or by someone else): quiet
    what can be; the warning of what is lost, once."""
    tf = _load()
    if not verbose:
        _quiet_python_loggers()
    loaded_with = _state["loaded_with"]
    if loaded_with is not None:  # Loaded here, quietly, with the settings then made.
        lacking = unapplied(onednn, loaded_with) if onednn is not None else []
        return _warning_once(lacking)
    if not _state["adopted"] and not verbose and LOG_LEVEL not in os.environ:
        _state["native_logs_hidden"] = True  # Its C++ lines show: catch those of start-up.
        with captured_stderr(True):
            tf.config.list_logical_devices()  # Device start-up (e.g. "failed call to cuInit").
            # XLA's service and its MLIR bridge start with a first compiled function.
            tf.function(lambda x: tf.reduce_sum(x * x), jit_compile=True)(tf.ones([2]))
    _state["adopted"] = True
    return _warning_once(unapplied(onednn) if onednn is not None else [])


def _warning_once(lacking: list[str]) -> str | None:
    if not lacking or _state["warned"]:
        return None
    _state["warned"] = True
    return (
        "warning: TensorFlow was loaded before agents could set its process settings: "
        f"{', '.join(lacking)}; call agents.runtime.prepare() before importing tensorflow, or "
        "set them in the environment before it loads."
    )


def _load():
    """Keras, TensorFlow and TensorFlow Probability, loaded (this module's reason to be: every
    other module that needs them imports them at its top, once this has run); returns `tf`."""
    import keras  # noqa: F401
    import tensorflow as tf
    import tensorflow_probability  # noqa: F401

    return tf


def _quiet_python_loggers() -> None:
    _load().get_logger().setLevel("ERROR")
    absl_logging.set_verbosity(absl_logging.ERROR)


@contextlib.contextmanager
def captured_stderr(enabled: bool, keep: Callable[[str], bool] | None = None) -> Iterator[None]:
    """Within the block, what is written to file descriptor 2 goes to a file, not the terminal.

    TensorFlow's libraries print a few lines while they load, before absl's logging starts
    (oneDNN, the CUDA stubs), and those ignore `TF_CPP_MIN_LOG_LEVEL`: where the level hides
    info lines they are caught here. After the block, the captured lines for which `keep` is
    true are written to stderr; on an error all of them are, so a failing import still
    explains itself.
    """
    if not enabled:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), 2)
        failed = False
        try:
            yield
        except BaseException:
            failed = True
            raise
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            lines = capture.read().decode(errors="replace").splitlines(keepends=True)
            shown = [line for line in lines if failed or (keep is not None and keep(line))]
            if shown:
                sys.stderr.write("".join(shown))
                sys.stderr.flush()
