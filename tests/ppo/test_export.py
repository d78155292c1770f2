"""Tests for the SavedModel export of a trained policy."""

import json
import subprocess
import sys

import numpy as np
import tensorflow as tf

from agents.ppo.algorithm import Evaluator
from agents.ppo.export import export_policy
from tests.ppo.test_algorithm import PPO, _config, _env, _run

_LOADER = """
import json, sys
import numpy as np
import tensorflow as tf
policy = tf.saved_model.load(sys.argv[1])
observ = np.asarray(json.loads(sys.argv[2]), np.float32)
actions = policy(observ).numpy()
state = policy.initial_state(tf.constant(len(observ)))
stepped, _ = policy.step(observ, tf.ones([len(observ)], tf.bool), state)
print(json.dumps({"actions": actions.tolist(), "stepped": stepped.numpy().tolist(),
                  "agents": any(name.startswith("agents") for name in sys.modules)}))
"""


def test_exported_policy_matches_library_in_fresh_process(tmp_path):
    batch_env = _env(count=4)
    agent = PPO(batch_env, _config(), seed=0)
    _run(batch_env, agent, 16)  # Train a little so normalizer and weights are not the initial ones.
    observ = np.random.default_rng(0).uniform(-1, 1, (4, 3)).astype(np.float32)
    evaluator = Evaluator(agent, batch_env)
    evaluator.begin_episode(tf.range(4))
    expected = evaluator.perform(tf.range(4), tf.constant(observ)).numpy()

    path = export_policy(agent, str(tmp_path / "policy"))
    result = subprocess.run(
        [sys.executable, "-c", _LOADER, path, json.dumps(observ.tolist())],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert not loaded["agents"]
    np.testing.assert_allclose(loaded["actions"], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loaded["stepped"], expected, rtol=1e-5, atol=1e-6)
