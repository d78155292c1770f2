"""A run's memory estimated before it allocates: by hand, and a refusal through the CLI."""

import os
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import pytest

from agents.config import memory_estimate, schema
from agents.config.errors import UsageError
from agents.scripts import train
from tests.scripts.capture import run_main

_ENV = memory_estimate.PYTHON_ENV_BYTES


def test_the_estimate_by_hand():
    config = dict(
        schema.defaults(), rollout_length=100, num_agents=10, eval_agents=2, normalize_observ=False
    )
    pixels = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
    per_step = 84 * 84 * 4 + 4 + 4 * 12  # uint8 frames, an int32 action, twelve scalars.
    assert memory_estimate.step_bytes(config, pixels, gym.spaces.Discrete(18)) == per_step
    expected = 3 * per_step * 100 * 10 + 12 * _ENV + memory_estimate.BASE_BYTES
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
    native = dict(config, native_env=True)  # State and observation: twice the observation.
    assert memory_estimate.estimate(native, box, box) == (
        3 * (12 + 12 + 48) * 100 * 10 + 12 * 2 * 12 + memory_estimate.BASE_BYTES
    )
    e3b = dict(config, agent="rnd_ppo", bonus="e3b", e3b_embedding_size=256)
    inverses = 2 * 4 * 256 * 256 * 10  # float32 [256, 256] per env, the variable and a copy.
    assert memory_estimate.estimate(e3b, box, box) == (
        memory_estimate.estimate(config, box, box) + inverses
    )


def test_without_spaces_the_estimate_is_a_lower_bound():
    config = dict(schema.defaults(), rollout_length=64, num_agents=8)
    for observation in (gym.spaces.Box(-1, 1, (1,)), gym.spaces.Box(0, 255, (7, 7, 3), np.uint8)):
        for action in (gym.spaces.Discrete(3), gym.spaces.Box(-1, 1, (1,))):
            assert memory_estimate.estimate(config) <= memory_estimate.estimate(
                config, observation, action
            )


def test_a_run_beyond_the_memory_available_is_refused_and_one_at_ninety_percent_is_not(
    monkeypatch,
):
    config = dict(schema.defaults(), rollout_length=1000, num_agents=1000)
    box = gym.spaces.Box(-1, 1, (3,))
    need = memory_estimate.estimate(config, box, box)
    monkeypatch.setattr(memory_estimate, "available", lambda: int(need / 0.9))
    memory_estimate.check(config, box, box)  # It needs 90% of what the machine has: it runs.
    monkeypatch.setattr(memory_estimate, "available", lambda: need - 1)
    with pytest.raises(UsageError, match=r"needs about 1\.2 GiB \(num_agents=1000 envs x "):
        memory_estimate.check(config, box, box)


def test_the_command_line_refuses_it_in_one_line_and_leaves_no_run(tmp_path):
    code, stdout, stderr = run_main(
        train.main,
        ["--config=debug", f"--logdir={tmp_path}", "--set", "rollout_length=100000000",
         "num_agents=8"],
    )  # fmt: skip
    assert code == 2, stderr
    (line,) = stderr.strip().splitlines()
    assert line.startswith("error: This run needs at least about ") and "GiB available" in line
    assert "lower num_agents or rollout_length" in line
    assert os.listdir(tmp_path) == []


def test_a_billion_envs_are_refused_before_tensorflow_loads_and_anything_is_built(tmp_path):
    (tmp_path / "logdir" / "earlier-run").mkdir(parents=True)
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c",
         "import sys\nfrom agents.scripts import train\ncode = train.main(sys.argv[1:])\n"
         "peak = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
         "print(peak, 'tensorflow' in sys.modules)\nsys.exit(code)",
         "--config=pendulum", "--logdir=logdir", "--set", "num_agents=1000000000"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    seconds = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert (
        line.startswith("error: This run needs at least about ") and "num_agents=1000000000" in line
    )
    peak_kib, tensorflow = result.stdout.split()
    # This process's own peak (VmHWM: ru_maxrss would keep the forking parent's across exec).
    assert int(peak_kib) < 1 << 20 and tensorflow == "False"  # Below 1 GiB; nothing built.
    assert seconds < 10
    assert os.listdir(tmp_path / "logdir") == ["earlier-run"]
