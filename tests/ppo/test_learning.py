"""Learning tests: PPO must solve small tasks within the budgets the configs promise."""

import numpy as np
import pytest

from agents.scripts import configs
from agents.scripts.session import Session


@pytest.mark.slow
def test_cartpole_reaches_450_within_60k_env_steps(tmp_path):
    config = configs.cartpole()
    config.update(train_steps=60_000, train_every=60_000, eval_steps=800)
    session = Session(config, str(tmp_path), seed=0)
    try:
        for _ in session.loop():
            pass
        assert session.env_steps <= 61_440  # 60k rounded up to whole rollouts.
        scores = session.evaluate(episodes=16)
    finally:
        session.close()
    assert np.mean(scores) >= 450, scores


@pytest.mark.slow
def test_pendulum_learns_within_100k_env_steps(tmp_path):
    config = configs.pendulum()
    config.update(train_every=100_000, eval_steps=1_600)
    session = Session(config, str(tmp_path), seed=0)
    try:
        for _ in session.loop():
            pass
        scores = session.evaluate(episodes=16)
    finally:
        session.close()
    # The benchmark target is a median of -200 over seeds; one seed gets a margin for noise.
    assert np.mean(scores) >= -400, scores
