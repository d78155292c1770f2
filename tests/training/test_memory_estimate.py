"""A run's memory estimated before it allocates: by hand, and a refusal through the CLI."""

import os

import gymnasium as gym
import numpy as np
import pytest

from agents.config import schema
from agents.config.errors import UsageError
from agents.scripts import train
from agents.training import memory_estimate
from tests.scripts.capture import run_main


def test_the_estimate_by_hand():
    config = dict(schema.defaults(), rollout_length=100, num_agents=10, normalize_observ=False)
    pixels = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
    per_step = 84 * 84 * 4 + 4 + 4 * 12  # uint8 frames, an int32 action, twelve scalars.
    assert memory_estimate.step_bytes(config, pixels, gym.spaces.Discrete(18)) == per_step
    expected = 3 * per_step * 100 * 10 + memory_estimate.BASE_BYTES
    assert memory_estimate.estimate(config, pixels, gym.spaces.Discrete(18)) == expected
    normalized = dict(config, normalize_observ=True)  # Normalized frames are float32.
    assert memory_estimate.step_bytes(normalized, pixels, gym.spaces.Discrete(18)) == (
        4 * 84 * 84 * 4 + 4 + 48
    )
    recurrent = dict(config, network="recurrent_gaussian", recurrent_units=64)
    box = gym.spaces.Box(-1, 1, (3,))
    assert memory_estimate.step_bytes(recurrent, box, gym.spaces.Box(-1, 1, (2,))) == (
        12 + 8 + 256 + 48
    )


def test_a_run_beyond_the_memory_available_is_refused_before_allocating(monkeypatch):
    config = dict(schema.defaults(), rollout_length=1000, num_agents=1000)
    box = gym.spaces.Box(-1, 1, (3,))
    monkeypatch.setattr(memory_estimate, "available", lambda: 2 << 30)
    memory_estimate.check(config, box, box)  # About 1.2 GiB needed: it fits.
    monkeypatch.setattr(memory_estimate, "available", lambda: 1 << 30)
    with pytest.raises(UsageError, match=r"needs about 1\.2 GiB \(a rollout of 1000 steps x 1000 "):
        memory_estimate.check(config, box, box)


def test_the_command_line_refuses_it_in_one_line_and_leaves_no_run(tmp_path):
    code, stdout, stderr = run_main(
        train.main,
        ["--config=debug", f"--logdir={tmp_path}", "--set", "rollout_length=100000000",
         "num_agents=8"],
    )  # fmt: skip
    assert code == 2, stderr
    (line,) = stderr.strip().splitlines()
    assert line.startswith("error: This run needs about ") and "GiB available" in line
    assert "lower rollout_length or num_agents" in line
    assert os.listdir(tmp_path) == []
