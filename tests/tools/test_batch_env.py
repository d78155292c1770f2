"""Tests for BatchEnv and InGraphBatchEnv."""

import functools
import re

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from agents import tools
from agents.tools.wrappers import ExternalProcess


def _envs(count, action_space=None, observ_shape=(3,), duration=5):
    return [
        tools.MockEnvironment(observ_shape, (2,), duration, duration, i, action_space)
        for i in range(count)
    ]


def test_batch_env_len_indexing_and_shapes():
    envs = _envs(3)
    batch = tools.BatchEnv(envs, blocking=True)
    assert len(batch) == 3 and batch[1] is envs[1]
    observ = batch.reset()
    assert observ.shape == (3, 3) and observ.dtype == np.float32
    observ, reward, terminated, truncated, info = batch.step(np.zeros((3, 2), np.float32))
    assert observ.shape == (3, 3) and reward.shape == (3,) and reward.dtype == np.float32
    assert terminated.dtype == bool and truncated.dtype == bool and len(info) == 3


def test_batch_env_partial_reset():
    batch = tools.BatchEnv(_envs(3), blocking=True)
    batch.reset()
    observ = batch.reset(indices=[2])
    assert observ.shape == (1, 3)
    assert [len(env.durations) for env in batch] == [1, 1, 2]


def test_batch_env_seeded_reset_is_deterministic():
    first = tools.BatchEnv(_envs(2), blocking=True).reset(seed=7)
    second = tools.BatchEnv(_envs(2), blocking=True).reset(seed=7)
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first[0], first[1])


def test_batch_env_rejects_mismatched_spaces():
    envs = _envs(1) + _envs(1, observ_shape=(4,))
    with pytest.raises(ValueError, match="Environment 1 has observation space"):
        tools.BatchEnv(envs, blocking=True)


def test_batch_env_rejects_mismatched_action_spaces():
    envs = _envs(1) + _envs(1, gym.spaces.Discrete(3))
    with pytest.raises(ValueError, match="Environment 1 has action space Discrete"):
        tools.BatchEnv(envs, blocking=True)


def _drive(batch, steps=6):
    """Seeded reset, then fixed actions with partial resets of finished envs; every result."""
    results = [batch.reset(seed=3)]
    actions = np.linspace(-1.0, 1.0, 2 * steps * len(batch), dtype=np.float32)
    for action in actions.reshape(steps, len(batch), 2):
        observ, reward, terminated, truncated, info = batch.step(action)
        results += [observ, reward, terminated, truncated, [sorted(i) for i in info]]
        results.append(batch.reset(indices=np.flatnonzero(terminated | truncated)))
    return results


def test_batch_env_of_external_processes_in_parallel_equals_in_process():
    constructors = [functools.partial(tools.MockEnvironment, (3,), (2,), 1, 3, i) for i in (0, 1)]
    local = _drive(tools.BatchEnv([make() for make in constructors], blocking=True))
    envs = [ExternalProcess(make) for make in constructors]
    try:
        remote = _drive(tools.BatchEnv(envs, blocking=False))
    finally:
        for env in envs:
            env.close()
    assert len(remote) == len(local)
    # Episodes of 1 to 3 steps: some steps end episodes and reset part of the batch.
    assert any(0 < len(result) < 2 for result in local[6::6])
    for expected, actual in zip(local, remote):
        if isinstance(expected, list):
            assert actual == expected
        else:
            assert actual.dtype == expected.dtype
            np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize(
    "space, action, bad",
    [
        (None, [[0.0, 0.0], [0.0, 7.0]], 1),
        (None, [[np.nan, 0.0], [0.0, 0.0]], 0),
        (gym.spaces.Discrete(3), [0, 3], 1),
        (gym.spaces.Discrete(3), [1.5, 0], 0),
    ],
)
def test_batch_env_rejects_bad_actions_naming_env(space, action, bad):
    batch = tools.BatchEnv(_envs(2, space), blocking=True)
    batch.reset()
    with pytest.raises(ValueError, match=f"environment {bad}.*is not in"):
        batch.step(np.asarray(action))


class _RecordingEnv(tools.MockEnvironment):
    """Remembers the actions it was stepped with."""

    def __init__(self, action_space=None):
        super().__init__((3,), (2,), 5, 5, 0, action_space)
        self.actions = []

    def step(self, action):
        self.actions.append(np.array(action))
        return super().step(action)


def test_batch_env_clips_box_actions_into_the_space():
    envs = [_RecordingEnv(), _RecordingEnv()]
    batch = tools.BatchEnv(envs, blocking=True, clip_actions=True)
    batch.reset()
    actions = np.array([[-5.0, 0.5], [3.0, -0.25]], np.float32)
    batch.step(actions)
    np.testing.assert_array_equal(envs[0].actions[0], [-1.0, 0.5])
    np.testing.assert_array_equal(envs[1].actions[0], [1.0, -0.25])
    assert envs[0].actions[0].dtype == np.float32
    np.testing.assert_array_equal(actions, [[-5.0, 0.5], [3.0, -0.25]])  # The caller's, as given.
    with pytest.raises(ValueError, match="environment 0.*is not in"):  # Unclipped: refused.
        tools.BatchEnv([_RecordingEnv(), _RecordingEnv()], blocking=True).step(actions)


def test_batch_env_clipping_refuses_nan_and_leaves_discrete_actions_alone():
    batch = tools.BatchEnv([_RecordingEnv(), _RecordingEnv()], blocking=True, clip_actions=True)
    batch.reset()
    with pytest.raises(ValueError, match="environment 1.*nan"):
        batch.step(np.array([[0.0, 0.0], [np.nan, 0.0]], np.float32))
    envs = [_RecordingEnv(gym.spaces.Discrete(3)) for _ in range(2)]
    batch = tools.BatchEnv(envs, blocking=True, clip_actions=True)
    batch.reset()
    batch.step(np.array([2, 0]))
    assert [int(env.actions[0]) for env in envs] == [2, 0]
    with pytest.raises(ValueError, match="environment 0.*is not in"):
        batch.step(np.array([3, 0]))


class _RaisingEnv(tools.MockEnvironment):
    """Raises in `reset` or `step`, as chosen by `method`."""

    def __init__(self, method):
        super().__init__((3,), (2,), 5, 5)
        self._method = method

    def reset(self, **kwargs):
        if self._method == "reset":
            raise KeyError("boom in reset")
        return super().reset(**kwargs)

    def step(self, action):
        if self._method == "step":
            raise KeyError("boom in step")
        return super().step(action)


@pytest.mark.parametrize("method", ["reset", "step"])
def test_batch_env_error_names_env_and_keeps_traceback(method):
    batch = tools.BatchEnv(_envs(1) + [_RaisingEnv(method)], blocking=True)
    with pytest.raises(tools.BatchEnvError) as info:
        batch.reset()
        batch.step(np.zeros((2, 2), np.float32))
    message = str(info.value)
    assert message.startswith(f"Environment 1 failed in {method}: Traceback")
    assert f"in {method}\n" in message and f"KeyError: 'boom in {method}'" in message
    assert info.value.index == 1 and isinstance(info.value.__cause__, KeyError)


@pytest.mark.parametrize(
    "space, dtype, shape",
    [(None, tf.float32, (4, 2)), (gym.spaces.Discrete(3), tf.int32, (4,))],
)
def test_in_graph_batch_env_shapes_and_dtypes(space, dtype, shape):
    env = tools.InGraphBatchEnv(tools.BatchEnv(_envs(4, space, (2, 3)), blocking=True))
    assert env.observ.shape == (4, 2, 3) and env.observ.dtype == tf.float32
    assert env.action.shape == shape and env.action.dtype == dtype
    assert env.done.numpy().all()
    env.reset()
    assert not env.done.numpy().any()
    env.simulate(tf.zeros(shape, dtype))
    assert env.reward.dtype == tf.float32 and env.length.numpy().tolist() == [1] * 4


def test_in_graph_batch_env_partial_reset_in_tf_function():
    env = tools.InGraphBatchEnv(tools.BatchEnv(_envs(3, duration=1), blocking=True))

    @tf.function
    def run():
        env.reset()
        env.simulate(tf.zeros([3, 2]))
        return env.reset([1])

    observ = run()
    assert observ.shape == (1, 3)
    assert env.done.numpy().tolist() == [True, False, True]
    assert env.length.numpy().tolist() == [1, 0, 1]


def test_in_graph_batch_env_refuses_stepping_finished_envs():
    env = tools.InGraphBatchEnv(tools.BatchEnv(_envs(2), blocking=True))
    message = r"Environment\(s\) \[0, 1\] finished"
    with pytest.raises(RuntimeError, match=message), env.python_errors():
        env.simulate(tf.zeros([2, 2]))


class _NanEnv(tools.MockEnvironment):
    def step(self, action):
        observ, reward, terminated, truncated, info = super().step(action)
        return observ, float("nan"), terminated, truncated, info


def test_in_graph_batch_env_catches_non_finite_reward():
    envs = _envs(1) + [_NanEnv((3,), (2,), 5, 5)]
    env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True))
    env.reset()
    message = r"^Environment 1 returned from step a non-finite reward nan; rewards must be finite"
    with pytest.raises(tools.BatchEnvError, match=message), env.python_errors():
        tf.function(lambda: env.simulate(tf.zeros([2, 2])))()


class _InfObservationEnv(tools.MockEnvironment):
    def step(self, action):
        observ, reward, terminated, truncated, info = super().step(action)
        return np.full_like(observ, np.inf), reward, terminated, truncated, info


def test_in_graph_batch_env_catches_non_finite_observation():
    envs = [_InfObservationEnv((3,), (2,), 5, 5)] + _envs(1)
    env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True))
    env.reset()
    message = r"^Environment 0 returned from step a non-finite observation array\(\[inf, inf"
    with pytest.raises(tools.BatchEnvError, match=message), env.python_errors():
        tf.function(lambda: env.simulate(tf.zeros([2, 2])))()


class _BoundedEnv(tools.MockEnvironment):
    """Declares observations in [-1, 1] and returns `value` at index 1."""

    def __init__(self, value):
        super().__init__((3,), (2,), 5, 5)
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
        self._value = value

    def step(self, action):
        observ, reward, terminated, truncated, info = super().step(action)
        observ = np.zeros(3, np.float32)
        observ[1] = self._value
        return observ, reward, terminated, truncated, info


@pytest.mark.parametrize("value", [1.5, -300.0, 2000.0])
def test_observations_somewhat_outside_their_bounds_pass(value):
    batch = tools.BatchEnv([_BoundedEnv(value), _BoundedEnv(0.0)], blocking=True)
    batch.reset()
    assert batch.step(np.zeros([2, 2], np.float32))[0][0, 1] == np.float32(value)


@pytest.mark.parametrize("value", [2003.0, -1e30])
def test_an_observation_far_outside_its_bounds_is_refused_naming_it(value):
    batch = tools.BatchEnv([_BoundedEnv(0.0), _BoundedEnv(value)], blocking=True)
    batch.reset()
    shown = re.escape(f"{value:g}")
    message = (
        rf"^Environment 1 returned from step an observation with {shown} at index \(1,\), far "
        r"outside the declared bounds \[-1.0, 1.0\] of Box"
    )
    with pytest.raises(tools.BatchEnvError, match=message):
        batch.step(np.zeros([2, 2], np.float32))


def test_in_graph_batch_env_rejects_unsupported_spaces():
    env = tools.MockEnvironment((3,), (2,), 5, 5)
    env.action_space = gym.spaces.Dict({"a": gym.spaces.Discrete(2)})
    with pytest.raises(ValueError, match="Unsupported action space"):
        tools.InGraphBatchEnv(tools.BatchEnv([env], blocking=True))


def test_close_closes_each_env_once_and_lets_them_go(capfd):
    """A closed batch holds no env: graphs that traced it may keep it alive in reference cycles
    until the process ends, where extensions report the objects still held (ale_py's ALE)."""
    import gc
    import weakref

    closes = []

    class Counted(tools.MockEnvironment):
        def close(self):
            closes.append(self)

    envs = [Counted((3,), (2,), 5, 5, i) for i in range(2)]
    alive = [weakref.ref(env) for env in envs]
    batch = tools.BatchEnv(envs, blocking=True)
    cycle = [batch]
    cycle.append(cycle)  # The batch in a reference cycle, as a traced graph holds it.
    del envs
    batch.close()
    assert len(closes) == 2 and len(batch) == 2
    closes.clear()
    gc.disable()
    try:
        assert [ref() for ref in alive] == [None, None]  # Freed without the cycle collector.
    finally:
        gc.enable()
    batch.close()  # A second close closes nothing and warns of nothing.
    assert closes == [] and capfd.readouterr().err == ""
