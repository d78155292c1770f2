"""Agents trained on native MiniGrid: PPO learns, RND runs compiled whole, minigrid scores them."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import agents
from agents.config.files import load_config
from agents.envs.python.environments import make_env
from agents.ppo import compilation
from agents.ppo.checkpoint_policy import make_run_env
from agents.scripts.configs import CONFIGS


@pytest.fixture(autouse=True)
def cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AGENTS_CACHE", str(tmp_path_factory.getbasetemp() / "agents_cache"))


def _minigrid_success(run_dir: str, env_id: str, episodes: int) -> float:
    """Share of minigrid's own episodes (not the native ops) the exported policy solves: the
    success rate by the run's own `success_score` (0: minigrid rewards only the goal)."""
    evaluation = agents.evaluate(
        run_dir, lambda: make_env(env_id, wrapper="minigrid_image"), episodes, seed=10**6
    )
    assert evaluation.success_score == 0.0
    assert evaluation.success_rate == np.mean(np.asarray(evaluation.returns) > 0)
    return evaluation.success_rate


@pytest.mark.slow
def test_ppo_learns_doorkey_natively_and_solves_minigrids_env(tmp_path):
    # 6 of the config's 12 calls: seed 0 solves 0.97-1.0 of minigrid's episodes after 4.
    result = agents.train(
        "doorkey_native", logdir=str(tmp_path), seed=0, verbose=0,
        train_steps=393_216, train_every=196_608,
    )  # fmt: skip
    assert result.eval_score > 0.9 and result.eval_success_rate >= 0.9, result
    assert _minigrid_success(result.run_dir, "MiniGrid-DoorKey-5x5-v0", 30) >= 0.9


TINY = dict(
    env="MiniGrid-DoorKey-5x5-v0",
    layout_bank=32,
    num_agents=8,
    eval_agents=2,
    rollout_length=16,
    rollouts_per_call=2,
    num_minibatches=2,
    update_epochs=1,
    train_steps=512,
    train_every=256,
    eval_episodes=2,
    policy_layers=[16],
    value_layers=[16],
    rnd_hidden=16,
    rnd_feature_size=8,
    rnd_init_steps=8,
)


@pytest.mark.slow
def test_rnd_agent_trains_native_minigrid_as_one_xla_program(tmp_path):
    config = CONFIGS["doorkey16_rnd"]()
    assert compilation.whole_call(config) and config["agent"] == "rnd_ppo"
    # Its GRU learns on sequences that fit the tiny rollouts.
    tiny = dict(TINY, chunk_length=TINY["rollout_length"])
    result = agents.train("doorkey16_rnd", logdir=str(tmp_path), seed=0, verbose=0, **tiny)
    assert result.env_steps == 512
    with open(os.path.join(result.run_dir, "metrics.jsonl"), encoding="utf-8") as file:
        train = [row for row in map(json.loads, file) if row["phase"] == "train"]
    assert train and all(row["intrinsic_reward"] > 0 for row in train)
    # minigrid's configs count an episode with any reward (the goal's) a success.
    assert all(0.0 <= row["success_rate"] <= 1.0 for row in train if row["episodes"])
    assert all(np.isfinite(row["predictor_loss"]) for row in train)
    # The exported policy plays minigrid's own env (observations of the same encoding), which
    # is also the env `visualize` and `evaluate` make for the run.
    success = _minigrid_success(result.run_dir, "MiniGrid-DoorKey-5x5-v0", 2)
    assert 0.0 <= success <= 1.0
    env = make_run_env(load_config(result.run_dir))
    assert env.unwrapped.spec.id == "MiniGrid-DoorKey-5x5-v0"
    assert env.observation_space.shape == (7, 7, 3)
    resumed = agents.train(resume=result.run_dir, train_steps=1024, verbose=0)
    assert resumed.env_steps == 1024
