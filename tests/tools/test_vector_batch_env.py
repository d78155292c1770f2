"""Tests for VectorBatchEnv: gymnasium vector envs of every autoreset mode seen as a BatchEnv."""

import functools

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from agents import tools
from agents.tools.vector_batch_env import VectorBatchEnv

LENGTHS = (3, 5, 2)  # Episode k of env i lasts LENGTHS[(k + i) % 3] steps.
MODES = ("NextStep", "SameStep", "Disabled")


class Scripted(gym.Env):
    """Episodes of known lengths, even ones terminated and odd ones truncated; the observation
    is [env index, episode, step, seed] and the reward 10 * episode + step."""

    def __init__(self, index: int):
        self.index = index
        self.observation_space = gym.spaces.Box(-1e3, 1e3, (4,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.episode, self.seed = -1, -1

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.episode += 1
        self.seed = self.seed if seed is None else seed
        self.t = 0
        return self._observ(), {}

    def step(self, action):
        self.t += 1
        ended = self.t >= LENGTHS[(self.episode + self.index) % 3]
        odd = self.episode % 2 == 1
        reward = 10.0 * self.episode + self.t
        return self._observ(), reward, ended and not odd, ended and odd, {}

    def _observ(self):
        return np.array([self.index, self.episode, self.t, self.seed], np.float32)


def _vector(mode: str, count: int = 3, kind=gym.vector.SyncVectorEnv):
    fns = [functools.partial(Scripted, i) for i in range(count)]
    return VectorBatchEnv(kind(fns, autoreset_mode=mode), name="train")


def _run(batch_env, steps: int) -> list[tuple]:
    """The transitions `tools.simulate` hands the algorithm: (observ, reward, terminated,
    truncated, next_observ) per step."""
    in_graph = tools.InGraphBatchEnv(batch_env)
    algo = tools.MockAlgorithm(in_graph)
    step = tf.function(lambda: tools.simulate(in_graph, algo))
    seen = []
    for _ in range(steps):
        step()
        seen.append(
            tuple(
                variable.numpy().copy()
                for variable in (in_graph.reward, in_graph.terminated, in_graph.truncated)
            )
            + (in_graph.observ.numpy().copy(),)
        )
    return seen


@pytest.mark.parametrize("mode", MODES)
def test_every_autoreset_mode_gives_the_transitions_of_a_batch_env(mode):
    expected = _run(tools.BatchEnv([Scripted(i) for i in range(3)], blocking=True), 12)
    seen = _run(_vector(mode), 12)
    for step, (want, got) in enumerate(zip(expected, seen)):
        for a, b in zip(want, got):
            np.testing.assert_array_equal(a, b, err_msg=f"step {step}")


class ScriptedDict(Scripted):
    """`Scripted` observing a dict: its vector, and the episode's parity as a Discrete."""

    def __init__(self, index: int):
        super().__init__(index)
        self.observation_space = gym.spaces.Dict(
            {"state": self.observation_space, "odd": gym.spaces.Discrete(2)}
        )

    def _observ(self):
        return {"state": super()._observ(), "odd": self.episode % 2}


@pytest.mark.parametrize("mode", MODES)
def test_dict_observations_arrive_packed_as_a_batch_env_of_packed_envs_gives_them(mode):
    from agents.tools.observation_wrappers import PackDictObservation

    envs = [PackDictObservation(ScriptedDict(i)) for i in range(3)]
    expected = _run(tools.BatchEnv(envs, blocking=True), 12)
    fns = [functools.partial(ScriptedDict, i) for i in range(3)]
    batch_env = VectorBatchEnv(gym.vector.SyncVectorEnv(fns, autoreset_mode=mode))
    assert batch_env.observation_space.shape == (6,)
    seen = _run(batch_env, 12)
    for step, (want, got) in enumerate(zip(expected, seen)):
        for a, b in zip(want, got):
            np.testing.assert_array_equal(a, b, err_msg=f"step {step}")
    assert seen[7][3][0].tolist() == [0, 1, 0, 1, 5, -1]  # Episode 1's final: odd, step 5.


def test_final_observation_and_flags_of_each_episode_by_hand():
    seen = _run(_vector("NextStep", count=1), 10)
    rewards, terminated, truncated, observ = (np.array(x) for x in zip(*seen))
    # Env 0: episode 0 lasts 3 steps (terminated), episode 1 5 steps (truncated), episode 2 two.
    assert terminated[:, 0].tolist() == [0, 0, 1, 0, 0, 0, 0, 0, 0, 1]
    assert truncated[:, 0].tolist() == [0, 0, 0, 0, 0, 0, 0, 1, 0, 0]
    assert observ[2, 0].tolist() == [0, 0, 3, -1]  # The true final observations.
    assert observ[7, 0].tolist() == [0, 1, 5, -1]
    assert rewards[:, 0].tolist() == [1, 2, 3, 11, 12, 13, 14, 15, 21, 22]


@pytest.mark.parametrize("mode", MODES)
def test_reset_seeds_env_i_with_seed_plus_i_and_partial_resets_leave_the_others(mode):
    batch_env = _vector(mode)
    assert batch_env.reset(seed=7)[:, 3].tolist() == [7, 8, 9]
    observ, _, terminated, truncated, _ = batch_env.step(np.zeros(3, np.int64))
    assert batch_env.reset([1], seed=20)[:, [0, 1, 3]].tolist() == [[1, 1, 21]]
    observ, *_ = batch_env.step(np.zeros(3, np.int64))
    assert observ[:, 1:3].tolist() == [[0, 2], [1, 1], [0, 2]]  # Env 1 restarted, others ran on.


def test_async_vector_env_in_processes_matches_the_batch_env():
    expected = _run(tools.BatchEnv([Scripted(i) for i in range(2)], blocking=True), 8)
    seen = _run(_vector("NextStep", count=2, kind=gym.vector.AsyncVectorEnv), 8)
    for want, got in zip(expected, seen):
        for a, b in zip(want, got):
            np.testing.assert_array_equal(a, b)


class _Broken(Scripted):
    def step(self, action):
        observ, *rest = super().step(action)
        if self.index == 1 and self.t == 2:
            observ[2] = np.nan
        return (observ, *rest)


def test_a_bad_result_names_the_env_and_the_value():
    batch_env = VectorBatchEnv(
        gym.vector.SyncVectorEnv([functools.partial(_Broken, i) for i in range(2)]),
        name="train",
    )
    batch_env.reset()
    batch_env.step(np.zeros(2, np.int64))
    with pytest.raises(tools.BatchEnvError, match=r"Train vector env, environment 1 .*non-finite"):
        batch_env.step(np.zeros(2, np.int64))


def test_an_env_that_raises_is_named_with_its_traceback():
    class Raising(Scripted):
        def step(self, action):
            raise OSError("sensor unplugged")

    batch_env = VectorBatchEnv(gym.vector.SyncVectorEnv([lambda: Raising(0)]), name="eval")
    batch_env.reset()
    with pytest.raises(
        tools.BatchEnvError,
        match="(?s)Eval vector env, environment 0 failed in step.*OSError: sensor unplugged",
    ):
        batch_env.step(np.zeros(1, np.int64))


def test_an_invalid_action_and_a_non_vector_env_are_refused():
    batch_env = _vector("NextStep")
    batch_env.reset()
    with pytest.raises(ValueError, match=r"environment 2: 5 is not in Discrete\(2\)"):
        batch_env.step(np.array([0, 1, 5]))
    with pytest.raises(ValueError, match="is not a vector env"):
        VectorBatchEnv(Scripted(0))


@pytest.mark.filterwarnings("ignore:.*precision lowered")
def test_envpool_partial_resets_lose_no_step():
    envpool = pytest.importorskip("envpool")
    pool = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=4, seed=3)
    batch_env = VectorBatchEnv(pool)
    assert batch_env.autoreset_mode == "NextStep"
    batch_env.reset()
    length = np.zeros(4, int)
    ended = 0
    for _ in range(200):
        actions = np.zeros(4, np.int64)  # Always left: episodes of about ten steps.
        observ, _, terminated, truncated, info = batch_env.step(actions)
        length += 1
        np.testing.assert_array_equal(info["elapsed_step"][np.argsort(info["env_id"])], length)
        done = np.flatnonzero(terminated | truncated)
        if done.size:
            first = batch_env.reset(done)
            assert first.shape == (done.size, 4) and np.abs(first).max() <= 0.05
            length[done] = 0
            ended += done.size
    assert ended >= 40
