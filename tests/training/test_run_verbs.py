"""The run's public verbs: its compiled training and evaluation calls, and the returns of the
training episodes as they end."""

import numpy as np
import pytest

from agents.scripts import configs
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
    train = [report for report in run.loop() if report.phase == "train"]
    assert len(returns) == sum(report.episodes for report in train) > 0
    scores = [report.score for report in train if report.episodes]
    assert np.mean(returns) == pytest.approx(
        np.average(scores, weights=[r.episodes for r in train if r.episodes])
    )
