"""Tests for the SavedModel export of a trained policy."""

import json
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from agents import tools
from agents.ppo.algorithm import Evaluator
from agents.ppo.export import EXPORT_MODULE, export_policy
from tests.floats import assert_float32_close
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


@pytest.mark.slow
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


def test_a_later_export_holds_the_agents_new_weights_and_statistics_and_traces_nothing(
    tmp_path,
):
    """An agent exported again (its best policy at each new best; a kept agent's next run)
    reuses the functions traced at its first export, with the weights and the normalizer's
    statistics of the moment, in the functions and in the frozen signatures alike."""
    batch_env = _env(count=4)
    agent = PPO(batch_env, _config(normalize_observ=True), seed=0)
    run, _ = _run(batch_env, agent, 16)
    observ = np.random.default_rng(0).uniform(-3, 3, (4, 3)).astype(np.float32)
    first = tf.saved_model.load(export_policy(agent, str(tmp_path / "first")))
    module = getattr(agent, EXPORT_MODULE)
    traced = module.serve.experimental_get_tracing_count()
    mean = agent.observ_normalizer.mean.numpy().copy()
    run()  # 16 more steps: two updates, new statistics.
    assert not np.array_equal(mean, agent.observ_normalizer.mean.numpy())
    evaluator = Evaluator(agent, batch_env)
    evaluator.begin_episode(tf.range(4))
    expected = evaluator.perform(tf.range(4), tf.constant(observ)).numpy()
    second = tf.saved_model.load(export_policy(agent, str(tmp_path / "second")))
    assert getattr(agent, EXPORT_MODULE) is module
    assert module.serve.experimental_get_tracing_count() == traced
    assert not np.allclose(first(observ).numpy(), expected, rtol=1e-5, atol=1e-6)
    assert_float32_close(second(observ).numpy(), expected)
    for name in ("serving_default", "tflite"):  # Their weights and statistics are constants.
        action = second.signatures[name](observation=tf.constant(observ))["action"].numpy()
        assert_float32_close(action, expected)
    assert all(variable is not module._shift for variable in agent.variables)  # Not a part.


def _exported(tmp_path, observ_shape=(3,), action_space=None):
    """A briefly trained PPO agent on mock envs, its export loaded back, and a batch of observ.

    The batch env clips actions, as training's does, so the agent sees the env's own bounds.
    """
    envs = [tools.MockEnvironment(observ_shape, (2,), 3, 9, i, action_space) for i in range(4)]
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True, clip_actions=True))
    agent = PPO(batch_env, _config(), seed=0)
    _run(batch_env, agent, 16)
    path = export_policy(agent, str(tmp_path / "policy"))
    observ = np.random.default_rng(1).uniform(-1, 1, (4, *observ_shape)).astype(np.float32)
    return path, tf.saved_model.load(path), observ


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """`_exported` on the default spaces, shared by the tests that only read it."""
    return _exported(tmp_path_factory.mktemp("export"))


def test_serving_signature_is_named_float32_and_takes_single_or_batched_observations(exported):
    path, policy, observ = exported
    serve = policy.signatures["serving_default"]
    (spec,) = serve.structured_input_signature[1].values()
    assert (spec.name, spec.dtype, spec.shape.as_list()) == ("observation", tf.float32, [None, 3])
    assert list(serve.structured_outputs) == ["action"]
    batch = serve(observation=tf.constant(observ))["action"].numpy()
    assert_float32_close(policy(observ).numpy(), batch)
    single = policy(observ[1]).numpy()
    assert single.shape == batch.shape[1:]
    assert_float32_close(single, batch[1])
    graph_dtypes = {tensor.dtype for op in serve.graph.get_operations() for tensor in op.outputs}
    assert tf.float64 not in graph_dtypes  # The normalizer's statistics are float32 inside.


def test_tflite_converts_to_builtin_ops_and_acts_like_the_saved_model(exported):
    path, policy, observ = exported
    converter = tf.lite.TFLiteConverter.from_saved_model(path)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    runner = _interpreter(converter.convert()).get_signature_runner("serving_default")
    actions = runner(observation=observ)["action"]
    np.testing.assert_allclose(actions, policy(observ).numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_actions_are_clipped_to_the_action_space_and_the_mode_stays_available(tmp_path):
    # Narrow: the mode falls outside. (The briefly trained mode's largest entry varies from run
    # to run of this file: 7.7e-3 in one run, above 1e-2 in others; 4e-5 to 7.7e-3 per entry.)
    space = gym.spaces.Box(-0.001, 0.001, (2,), np.float32)
    path, policy, observ = _exported(tmp_path, action_space=space)
    observ = observ * 50  # Far from the training data: large actions.
    unclipped = policy.unclipped(observ).numpy()
    assert np.abs(unclipped).max() > 0.001
    expected = np.clip(unclipped, -0.001, 0.001)
    assert_float32_close(policy(observ).numpy(), expected)
    serve = policy.signatures["serving_default"]
    assert_float32_close(serve(observation=observ)["action"].numpy(), expected)
    state = policy.initial_state(tf.constant(4))
    stepped, _ = policy.step(observ, tf.ones([4], tf.bool), state)
    assert_float32_close(stepped.numpy(), expected)
    tflite = _tflite_runner(path)
    assert_float32_close(tflite(observation=observ)["action"], expected)


def test_non_finite_observations_are_refused_by_every_function_and_flagged_in_tflite(exported):
    path, policy, observ = exported
    bad = observ.copy()
    bad[2, 1] = np.nan
    serve = policy.signatures["serving_default"]
    state = policy.initial_state(tf.constant(4))
    calls = [
        lambda: policy(bad),
        lambda: policy(bad[2]),
        lambda: policy.unclipped(bad),
        lambda: serve(observation=tf.constant(bad)),
        lambda: policy.step(bad, tf.ones([4], tf.bool), state),
    ]
    for call in calls:
        with pytest.raises(tf.errors.InvalidArgumentError, match="non-finite observation"):
            call()
    bad[0, 0] = np.inf
    result = _tflite_runner(path)(observation=bad)
    assert result["finite"].tolist() == [False, True, False, True]
    assert np.isfinite(result["action"]).all()
    assert_float32_close(result["action"][1], policy(observ[1]).numpy())


def _tflite_runner(path):
    converter = tf.lite.TFLiteConverter.from_saved_model(path, signature_keys=["tflite"])
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    return _interpreter(converter.convert()).get_signature_runner("tflite")


def _interpreter(model_content: bytes):
    """LiteRT's interpreter, which replaces the deprecated `tf.lite.Interpreter` (its stand-in
    where LiteRT is not installed)."""
    try:
        from ai_edge_litert import interpreter as litert
    except ImportError:
        return tf.lite.Interpreter(model_content=model_content)
    return litert.Interpreter(model_content=model_content)


class _DictEnv(gym.Env):
    """A dict of a vector (normalized by the agent), a phase (one-hot) and an action mask."""

    observation_space = gym.spaces.Dict(
        {
            "action_mask": gym.spaces.MultiBinary(3),
            "phase": gym.spaces.Discrete(3),
            "vector": gym.spaces.Box(-10.0, 10.0, (2,), np.float32),
        }
    )
    action_space = gym.spaces.Discrete(3)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self._sample(), {}

    def step(self, action):
        return self._sample(), float(action), False, False, {}

    def _sample(self):
        observ = self.observation_space.sample()
        observ["action_mask"][int(self.np_random.integers(3))] = 1
        observ["vector"] = observ["vector"] * 3.0 + 5.0  # Far from the normalizer's start.
        return observ


@pytest.mark.slow
def test_an_exported_dict_policy_normalizes_and_masks_as_the_agent_does(tmp_path):
    from agents.policy import Policy
    from agents.ppo.networks.contract import act
    from agents.tools.observation_wrappers import PackDictObservation

    envs = []
    for seed in range(4):
        env = PackDictObservation(_DictEnv())
        env.observation_space.dict_space.seed(seed)
        env.reset(seed=seed)
        envs.append(env)
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True))
    agent = PPO(batch_env, _config(normalize_observ=True, network="auto"), seed=0)
    _run(batch_env, agent, 16)
    assert float(agent.observ_normalizer.count) > 0
    space = envs[0].observation_space.dict_space
    samples = [space.sample() for _ in range(8)]
    for index, sample in enumerate(samples):
        sample["action_mask"] = np.eye(3, dtype=np.int8)[index % 3]  # One allowed action.
        sample["vector"] = sample["vector"] * 3.0 + 5.0
    batch = {key: np.stack([sample[key] for sample in samples]) for key in space.spaces}
    packed = tf.constant(tools.dict_observations.pack(space, batch, batched=True))
    state = agent.network.initial_state(8)
    expected = act(agent.network, agent.normalize(packed), tf.ones([8], tf.bool), state)
    policy = Policy(tf.saved_model.load(export_policy(agent, str(tmp_path / "policy"))))
    np.testing.assert_allclose(policy.value(batch), expected.value.numpy(), rtol=1e-5, atol=1e-5)
    policy.reset()
    np.testing.assert_array_equal(policy(batch), np.arange(8) % 3)  # The one allowed action.
