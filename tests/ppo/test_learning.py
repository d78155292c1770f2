"""Learning tests: PPO must solve small tasks within the budgets the configs promise."""

import numpy as np
import pytest

from agents.scripts import configs
from agents.training.run import Run


def _train_within(session: Run, config: dict, budget: int) -> None:
    """Train until the last whole training call (rollout and update) within `budget` env steps.

    The loop runs whole phases of whole calls, so a phase would overshoot the budget; stopping
    before the call that would cross it keeps the run within the budget, as benchmarks/learning.py
    does.
    """
    call = config["rollout_length"] * config["num_agents"]
    for _ in session.loop(should_stop=lambda: session.env_steps + call > budget):
        pass
    assert budget - call < session.env_steps <= budget


@pytest.mark.slow
def test_cartpole_reaches_450_within_60k_env_steps_in_two_of_three_seeds(tmp_path):
    # What the config promises is the median over seeds (benchmarks/learning.py): one seed's
    # run follows the CPU's float rounding, and a seed that solves CartPole on one CPU can end
    # near 340 on another.
    scores = {}
    for seed in range(3):
        config = configs.cartpole()
        config.update(train_steps=60_000, train_every=60_000)
        session = Run(config, str(tmp_path / f"seed{seed}"), seed=seed)
        try:
            _train_within(session, config, 60_000)
            scores[seed] = float(np.mean(session.evaluate(episodes=16)))
        finally:
            session.close()
        if sum(score >= 450 for score in scores.values()) == 2:
            break
    assert sum(score >= 450 for score in scores.values()) >= 2, scores


@pytest.mark.slow
def test_pendulum_learns_within_100k_env_steps(tmp_path):
    config = configs.pendulum()
    config.update(train_every=100_000)
    session = Run(config, str(tmp_path), seed=0)
    try:
        _train_within(session, config, 100_000)
        scores = session.evaluate(episodes=16)
    finally:
        session.close()
    # The benchmark target is a median of -200 over seeds; one seed gets a margin for noise.
    assert np.mean(scores) >= -400, scores
