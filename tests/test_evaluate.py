"""`agents.evaluate` plays several episodes at once, each as it would alone."""

import gymnasium as gym
import numpy as np
import pytest

import agents
from agents.policy import Policy


class Countdown(gym.Env):
    """Observes [remaining steps]; action 1 ends the episode early when remaining is even.

    An episode starts with `3 + seed % 5` steps, so lengths and returns differ by seed.
    """

    observation_space = gym.spaces.Box(0.0, 10.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        self.remaining = 3 + (seed or 0) % 5
        return np.array([self.remaining], np.float32), {}

    def step(self, action):
        early = int(action) == 1 and self.remaining % 2 == 0
        self.remaining -= 1
        observation = np.array([self.remaining], np.float32)
        return observation, float(self.remaining), early or self.remaining == 0, False, {}


class ParityPolicy(Policy):
    """Action 1 on even observations; counts its calls and the batch sizes it saw."""

    def __init__(self):
        self.calls = []

    def reset(self):
        pass

    def __call__(self, observation, deterministic=True):
        batch = np.asarray(observation)
        self.calls.append(len(batch))
        return (batch[:, 0] % 2 == 0).astype(np.int64)


def _alone(seed: int) -> tuple[float, int]:
    """Hand-played: one episode of Countdown under ParityPolicy."""
    remaining, total, steps = 3 + seed % 5, 0.0, 0
    while True:
        early = remaining % 2 == 0
        remaining -= 1
        total, steps = total + remaining, steps + 1
        if early or remaining == 0:
            return total, steps


def test_parallel_episodes_score_as_each_alone_with_one_call_per_step():
    policy = ParityPolicy()
    evaluation = agents.evaluate(policy, Countdown, episodes=7, seed=2, parallel=3)
    expected = [_alone(seed) for seed in range(2, 9)]
    assert evaluation.returns == [total for total, _ in expected]
    assert evaluation.lengths == [steps for _, steps in expected]
    # Seeds 2-4, 5-7, 8: one call per step of each chunk's longest episode, batched.
    longest = [max(steps for _, steps in expected[i : i + 3]) for i in (0, 3, 6)]
    assert len(policy.calls) == sum(longest)
    assert set(policy.calls[: longest[0]]) == {3}
    assert policy.calls[-1] == 1
    one_by_one = agents.evaluate(ParityPolicy(), Countdown, episodes=7, seed=2, parallel=1)
    assert one_by_one == evaluation


def test_an_env_instance_or_a_callable_giving_one_plays_episodes_one_at_a_time():
    env = Countdown()
    for given in (env, lambda: env):
        policy = ParityPolicy()
        evaluation = agents.evaluate(policy, given, episodes=3, parallel=8)
        assert evaluation.lengths == [_alone(seed)[1] for seed in range(3)]
        assert set(policy.calls) == {1}


def test_parallel_below_one_is_one_line():
    with pytest.raises(ValueError, match="parallel must be at least 1, got 0"):
        agents.evaluate(ParityPolicy(), Countdown, episodes=2, parallel=0)


class DictCountdown(Countdown):
    """Countdown observing {"remaining": [n], "even": 0/1}."""

    observation_space = gym.spaces.Dict(
        remaining=gym.spaces.Box(0.0, 10.0, (1,), np.float32), even=gym.spaces.Discrete(2)
    )

    def _wrap(self, observation):
        return {"remaining": observation, "even": int(observation[0]) % 2 == 0}

    def reset(self, *, seed=None, options=None):
        observation, info = super().reset(seed=seed)
        return self._wrap(observation), info

    def step(self, action):
        observation, *rest = super().step(action)
        return self._wrap(observation), *rest


class DictParityPolicy(ParityPolicy):
    def __call__(self, observation, deterministic=True):
        assert set(observation) == {"remaining", "even"}
        self.calls.append(len(observation["even"]))
        assert observation["remaining"].shape == (len(observation["even"]), 1)
        return np.asarray(observation["even"], np.int64)


def test_dict_observations_reach_the_policy_as_a_dict_of_batches():
    policy = DictParityPolicy()
    evaluation = agents.evaluate(policy, DictCountdown, episodes=4, parallel=4)
    assert evaluation.returns == [_alone(seed)[0] for seed in range(4)]
    assert policy.calls[0] == 4


def test_success_rate_is_the_share_of_returns_above_the_success_score():
    evaluation = agents.evaluate(ParityPolicy(), Countdown, episodes=5, success_score=2.0)
    returns = [_alone(seed)[0] for seed in range(5)]  # Hand-played.
    assert evaluation.returns == returns == [3.0, 3.0, 7.0, 5.0, 11.0]
    assert evaluation.success_rate == 1.0
    # Above 5: 7 and 11 (a return equal to it is no success).
    assert agents.evaluate(ParityPolicy(), Countdown, 5, success_score=5.0).success_rate == 0.4
    assert np.isnan(agents.evaluate(ParityPolicy(), Countdown, episodes=5).success_rate)


def test_a_run_whose_config_cannot_be_read_for_its_success_score_is_one_line(tmp_path):
    (tmp_path / "config.yaml").write_text("name: [unclosed\n")
    with pytest.raises(ValueError, match=r"config\.yaml.*pass success_score= to evaluate"):
        agents.evaluate(str(tmp_path), Countdown, episodes=1)
    # Given a success score, the config is not read: the missing policy is what is named.
    with pytest.raises(FileNotFoundError, match="No exported policy"):
        agents.evaluate(str(tmp_path), Countdown, episodes=1, success_score=0.0)
