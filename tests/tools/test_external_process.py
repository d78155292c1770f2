"""Tests for ExternalProcess: gymnasium API, parity, errors and process lifetime."""

import functools
import os
import signal
import subprocess
import sys
import textwrap
import time

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from agents.tools.wrappers import ExternalProcess, ExternalProcessError

_CARTPOLE = functools.partial(gymnasium.make, "CartPole-v1")


class _FailingEnv(gymnasium.Env):
    """Raises in `step` after `fail_after` steps, or in `reset` if asked; pickled by reference."""

    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, fail_after):
        self._fail_after = fail_after
        self._steps = 0
        self.tensorflow_imported = "tensorflow" in sys.modules

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if options and options.get("fail"):
            raise ValueError("boom in reset")
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self._steps += 1
        if self._steps > self._fail_after:
            raise ValueError(f"boom in step {self._steps}")
        return np.zeros(1, np.float32), 1.0, False, False, {"steps": self._steps}


def _raise_in_constructor():
    raise ValueError("boom in ctor")


def _is_gone(pid):
    """Whether the process no longer exists, or is a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return any(line.split() == ["State:", "Z", "(zombie)"] for line in status)
    except FileNotFoundError:
        return True


def _wait_until_gone(pid, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not _is_gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def cartpole():
    env = ExternalProcess(lambda: gymnasium.make("CartPole-v1"))
    yield env
    env.close()


def test_check_env_passes(cartpole):
    check_env(cartpole, skip_render_check=True)


def test_matches_in_process_env(cartpole):
    local = _CARTPOLE()
    assert cartpole.observation_space == local.observation_space
    assert cartpole.action_space == local.action_space
    assert cartpole.spec.id == "CartPole-v1"
    observ, info = cartpole.reset(seed=7)
    expected_observ, expected_info = local.reset(seed=7)
    np.testing.assert_array_equal(observ, expected_observ)
    assert info == expected_info
    for action in [0, 1, 1, 0, 1]:
        result, expected = cartpole.step(action), local.step(action)
        np.testing.assert_array_equal(result[0], expected[0])
        assert result[1:] == expected[1:]


def test_non_blocking_matches_blocking(cartpole):
    other = ExternalProcess(_CARTPOLE)
    try:
        promises = [cartpole.reset(seed=3, blocking=False), other.reset(seed=3, blocking=False)]
        observs = [promise()[0] for promise in promises]
        np.testing.assert_array_equal(observs[0], observs[1])
        for action in [1, 0, 0]:
            promise = cartpole.step(action, blocking=False)
            assert callable(promise)
            blocking = other.step(action)
            result = promise()
            np.testing.assert_array_equal(result[0], blocking[0])
            assert result[1:] == blocking[1:]
            assert promise() is result  # A promise may be resolved again.
    finally:
        other.close()


def test_attribute_access(cartpole):
    assert cartpole.render_mode is None
    assert cartpole.metadata["render_fps"] == 50
    assert cartpole.gravity == 9.8  # Read through the wrappers of gymnasium.make.
    cartpole.reset(seed=5)
    assert cartpole.np_random_seed == 5
    assert not hasattr(cartpole, "no_such_attribute")


@pytest.mark.parametrize("num_steps", [0, 5])
def test_close_does_not_hang_and_is_idempotent(num_steps):
    env = ExternalProcess(_CARTPOLE)
    env.reset(seed=0)
    for _ in range(num_steps):
        env.step(env.action_space.sample())
    start = time.monotonic()
    env.close()
    env.close()
    assert time.monotonic() - start < 10.0
    assert _is_gone(env.pid)
    with pytest.raises(ExternalProcessError, match="closed"):
        env.step(0)


def test_constructor_exception_reraised_with_traceback():
    with pytest.raises(ExternalProcessError) as info:
        ExternalProcess(_raise_in_constructor)
    assert "boom in ctor" in str(info.value)
    assert "Traceback" in str(info.value)
    assert "_raise_in_constructor" in str(info.value)


def test_child_does_not_import_tensorflow():
    env = ExternalProcess(functools.partial(_FailingEnv, fail_after=0))
    try:
        assert env.tensorflow_imported is False
    finally:
        env.close()


def test_step_and_reset_exceptions_reraised_with_traceback():
    env = ExternalProcess(functools.partial(_FailingEnv, fail_after=2))
    try:
        env.reset()
        assert env.step(0)[4] == {"steps": 1}
        assert env.step(0)[4] == {"steps": 2}
        with pytest.raises(ExternalProcessError, match="boom in step 3") as info:
            env.step(0)
        assert "Traceback" in str(info.value)
        assert env.reset()[1] == {}  # The environment survives its exception.
        with pytest.raises(ExternalProcessError, match="boom in reset"):
            env.reset(options={"fail": True})
    finally:
        env.close()


def test_killed_child_raises_clear_error(cartpole):
    cartpole.reset(seed=0)
    os.kill(cartpole.pid, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(ExternalProcessError, match="killed by SIGKILL"):
        cartpole.step(0)
    assert time.monotonic() - start < 5.0


_ORPHANING_PARENT = textwrap.dedent(
    """
    import functools, os, sys, time
    import gymnasium
    from agents.tools.wrappers import ExternalProcess

    env = ExternalProcess(functools.partial(gymnasium.make, "CartPole-v1"))
    holder = 0
    if sys.argv[1] == "leak":  # A forked process holds the parent's end of the pipe.
        holder = os.fork()
        if holder == 0:
            time.sleep(30)
            os._exit(0)
    print(env.pid, holder, flush=True)
    time.sleep(60)
    """
)


@pytest.mark.parametrize("mode", ["plain", "leak"])
def test_child_exits_when_parent_is_killed(mode):
    parent = subprocess.Popen(
        [sys.executable, "-c", _ORPHANING_PARENT, mode], stdout=subprocess.PIPE, text=True
    )
    holder = 0
    try:
        child, holder = map(int, parent.stdout.readline().split())
        assert not _is_gone(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert _wait_until_gone(child), "the environment process outlived its parent"
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()
        if holder:
            os.kill(holder, signal.SIGKILL)
