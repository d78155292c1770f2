"""The run's public verbs: its compiled training and evaluation calls, and the returns of the
training episodes as they end."""

import gymnasium as gym
import numpy as np
import pytest

from agents.scripts import configs
from agents.training.loop import phases
from agents.training.run import EVAL_CALL_STEPS, Run


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    config = dict(configs.debug(), max_episode_steps=50)
    session = Run(config, str(tmp_path_factory.mktemp("run")), seed=0)
    yield session
    session.close()


def test_the_training_call_makes_one_rollout_of_every_env(run):
    before = run.env_steps
    done, score, length = run.train_call()
    steps = run.config.rollout_length * run.config.rollouts_per_call
    assert np.asarray(done).shape == (steps, run.config.num_agents)
    assert run.env_steps == before + steps * run.config.num_agents


def test_the_eval_call_steps_the_eval_envs(run):
    done, score, length = run.eval_call(reset=True)
    assert np.asarray(done).shape == (EVAL_CALL_STEPS, run.config.eval_agents)
    assert np.asarray(done).sum() == 4  # Episodes of 50 steps: two per env in 100 steps.


def test_the_returns_of_finished_training_episodes_reach_the_hook(run):
    returns = []
    run.on_train_episodes = returns.extend
    train = [report for report in phases(run) if report.phase == "train"]
    assert len(returns) == sum(report.episodes for report in train) > 0
    scores = [report.score for report in train if report.episodes]
    assert np.mean(returns) == pytest.approx(
        np.average(scores, weights=[r.episodes for r in train if r.episodes])
    )


@pytest.mark.slow
def test_evaluation_plays_samples_when_asked_and_leaves_trainings_draws_as_they_were(tmp_path):
    def evaluate_then_train(policy, name):
        config = dict(configs.debug(), max_episode_steps=50, eval_policy=policy)
        session = Run(config, str(tmp_path / name), seed=4)
        try:
            returns = session.evaluate(4)
            session.train_call()
            trained = [v.numpy() for v in session.agent.network.trainable_variables]
        finally:
            session.close()
        return returns, trained

    mode, mode_trained = evaluate_then_train("mode", "a")
    sample, sample_trained = evaluate_then_train("sample", "b")
    again, _ = evaluate_then_train("sample", "c")
    assert sample == again and sample != mode  # Seeded samples: reproducible, not the mode's.
    for a, b in zip(mode_trained, sample_trained):
        np.testing.assert_array_equal(a, b)  # The evaluator drew from a generator of its own.


class _Ticker(gym.Env):
    """Reward 1 a step; episodes of 3 steps on even reset seeds, 40 on odd ones (kept on
    autoreset), so that its return is its length."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    length = 3

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.length = 3 if seed % 2 == 0 else 40
        self.steps = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.steps += 1
        return np.zeros(2, np.float32), 1.0, self.steps >= self.length, False, {}


gym.register("Ticker-v0", _Ticker, max_episode_steps=100)


@pytest.mark.slow
def test_an_evaluation_plays_whole_episodes_each_env_its_quota_short_ones_not_favoured(
    tmp_path,
):
    # Two eval envs, one of 3-step and one of 40-step episodes, 6 episodes: three of each,
    # where the first 6 to end would be mostly short ones.
    config = dict(configs.debug(), env="Ticker-v0", eval_agents=2, eval_episodes=6)
    run = Run(config, str(tmp_path), seed=0)
    try:
        scores, lengths = run.play_episodes(6)
        assert sorted(scores) == [3.0] * 3 + [40.0] * 3 and sorted(lengths) == [3] * 3 + [40] * 3
        assert run.evaluate(5) in ([3.0] * 3 + [40.0] * 2, [3.0] * 2 + [40.0] * 3)
        report = next(r for r in phases(run) if r.phase == "eval")
        assert report.episodes == 6 and report.score == pytest.approx(21.5)
        assert report.metrics["score_min"] == 3.0 and report.metrics["score_max"] == 40.0
        assert report.metrics["score_std"] == pytest.approx(18.5)
    finally:
        run.close()
