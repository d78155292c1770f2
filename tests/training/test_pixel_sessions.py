"""Pixel agents through the training Run: RND on MiniGrid pixels, and the Atari config.

Tiny sizes: the point is that `agent: rnd_ppo` configs build the CNN+GRU agent with RND, apply
the pixel wrappers, seed RND's statistics from random steps, log exploration metrics, resume, and
run on Montezuma's Revenge at all.
"""

import numpy as np
import pytest

from agents.ppo.exploration.rnd_agent import RNDPPO
from agents.scripts import configs
from agents.training import curves as plot
from agents.training.loop import phases
from agents.training.run import Run
from agents.training.tensorboard_log import TensorBoardLog


@pytest.fixture(scope="module")
def minigrid_run(tmp_path_factory):
    """A finished tiny `minigrid_rnd` run: (config, run_dir, observation count after warm-up)."""
    pytest.importorskip("minigrid")
    config = configs.debug_rnd()
    run_dir = str(tmp_path_factory.mktemp("minigrid"))
    run = Run(config, run_dir, seed=0)
    try:
        assert isinstance(run.agent, RNDPPO)
        assert run.train_env.observation_space.shape == (56, 56, 1)  # The pixel wrapper.
        warm_count = float(run.agent.rnd.observation_stats.count.numpy())
        tensorboard = TensorBoardLog(run_dir)  # As a Trainer's loop writes every report.
        reports = []
        for report in phases(run):
            tensorboard.write(report, run.env_steps)
            reports.append(report)
        tensorboard.close()
        run.save()
    finally:
        run.close()
    return config, run_dir, warm_count, reports


@pytest.mark.slow
def test_rnd_statistics_start_from_random_steps(minigrid_run):
    config, _, warm_count, _ = minigrid_run
    # One frame per env and step (RunningMeanStd starts from a tiny epsilon count).
    assert warm_count == pytest.approx(config["rnd_init_steps"] * config["num_agents"], abs=1e-3)


def test_exploration_metrics_reach_tensorboard(minigrid_run):
    _, run_dir, _, reports = minigrid_run
    metrics = [r.metrics for r in reports if r.phase == "train"][-1]
    assert metrics["intrinsic_reward"] > 0
    # The agent starts in one cell of the 14x14 room; a random-ish walk of 64 steps leaves it.
    assert 2 <= metrics["visited_cells"] <= 14 * 14
    for tag in ("intrinsic_reward", "visited_cells", "predictor_loss", "value_int"):
        steps, values = plot.read_scalars(run_dir, "train", f"rnd/{tag}")  # Grouped tags.
        assert len(steps) >= 1 and np.all(np.isfinite(values)), tag


def test_resume_restores_rnd_statistics_without_new_random_steps(minigrid_run):
    config, run_dir, warm_count, _ = minigrid_run
    run = Run(config, run_dir, seed=0)
    try:
        count = float(run.agent.rnd.observation_stats.count.numpy())
        assert run.env_steps == config["train_steps"]
        # Warm-up frames plus the frames of every rollout, and no second warm-up.
        assert count == pytest.approx(warm_count + config["train_steps"], abs=1e-3)
    finally:
        run.close()


@pytest.mark.slow  # The pixel agent's compile on 84x84 frames, and Atari's emulator.
@pytest.mark.parametrize("backend", ["python", "envpool"])
def test_montezuma_config_trains_and_evaluates(tmp_path, backend):
    pytest.importorskip("ale_py")
    pytest.importorskip("cv2")
    if backend == "envpool":
        pytest.importorskip("envpool")
    config = configs.montezuma_rnd()
    config.update(configs.TINY_RND, train_steps=256, train_every=128, rnd_init_steps=16)
    # Evaluation plays whole episodes, and Montezuma's last thousands of steps: cut them at 128.
    config.update(env_backend=backend, max_episode_steps=128)
    run = Run(config, str(tmp_path), seed=0)
    try:
        assert run.train_env.observation_space.shape == (84, 84, 4)
        reports = [r for r in phases(run) if r.phase == "train"]
    finally:
        run.close()
    assert run.env_steps == 256
    assert np.isfinite(reports[-1].metrics["intrinsic_reward"])


def test_montezuma_episodes_end_at_the_rnd_papers_4500_steps():
    pytest.importorskip("ale_py")
    pytest.importorskip("cv2")
    from agents.config.config import Config
    from agents.envs.python import environments

    config = Config.build(configs.montezuma_rnd())
    env = environments.make_env(config.env, config.max_episode_steps, config.env_wrapper)
    try:
        assert environments.episode_limit(env) == 4500  # ALE's own cap: 108,000 frames.
        env.reset(seed=0)
        for step in range(1, 4501):  # NOOP: the agent stands still, losing no life.
            _, _, terminated, truncated, _ = env.step(0)
            assert not terminated and truncated == (step == 4500)
    finally:
        env.close()
