"""Tests for the ONNX export: onnxruntime acts as the SavedModel does, for every kind of policy."""

import os
import pathlib
import re
import shutil
import sys

import gymnasium as gym
import numpy as np
import onnx
import onnxruntime
import pytest
import tensorflow as tf

import agents
from agents import tools
from agents.ppo.export import export_policy
from agents.ppo.export_onnx import OBSERVATION_DICT
from agents.scripts import export as export_script
from agents.tools.observation_wrappers import PackDictObservation
from tests.ppo.test_algorithm import PPO, _config, _run
from tests.ppo.test_export import _DictEnv

_TOLERANCE = 1e-5  # Max abs difference of continuous actions and states, SavedModel vs ONNX.
_BOUND = 0.002  # The Box action space's bounds: the briefly trained mode falls outside them.


def _trained(tmp_path, envs, random_head=None, **config):
    """A PPO agent trained 16 steps on `envs`, exported and converted: the loaded SavedModel,
    an onnxruntime session of the ONNX file, and its path.

    `random_head` (observations [B, ...] to center on) draws the policy head's weights anew
    (standard normal), its bias centering the logits of those observations, so that a
    categorical policy's mode varies with the observation: after 16 steps of training it is
    mostly one action, and which one differs from run to run; with the features of noise frames
    alike, an uncentered head's mode was one action for them all in some runs.
    """
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True, clip_actions=True))
    agent = PPO(batch_env, _config(**config), seed=0)
    _run(batch_env, agent, 16)
    if random_head is not None:
        _draw_centered_head(agent.network, random_head)
    saved_dir = export_policy(agent, str(tmp_path / "policy"))
    path = agents.export(saved_dir, path=str(tmp_path / "policy.onnx"))
    return tf.saved_model.load(saved_dir), onnxruntime.InferenceSession(path), path


def _draw_centered_head(network, observ: np.ndarray) -> None:
    """Standard normal head weights; the bias subtracts the mean logits of `observ`'s first
    steps, scaled so that their spread is 1."""
    kernel, bias = network.policy_head.trainable_variables
    kernel.assign(np.random.default_rng(7).standard_normal(kernel.shape).astype(np.float32))
    bias.assign(tf.zeros_like(bias))
    size = observ.shape[0]
    logits = network(observ[:, None], tf.ones([size, 1], tf.bool), network.initial_state(size))
    logits = logits.policy.logits_parameter()[:, 0].numpy()
    centered = logits - logits.mean(axis=0)
    scale = 1.0 / centered.std()
    kernel.assign(kernel * scale)
    bias.assign(-logits.mean(axis=0) * scale)


def _mock_envs(observ_shape, action_space, observ_dtype=np.float32):
    return [
        tools.MockEnvironment(observ_shape, (2,), 3, 9, i, action_space, observ_dtype)
        for i in range(2)
    ]


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    space = gym.spaces.Box(-_BOUND, _BOUND, (2,), np.float32)
    return _trained(tmp_path_factory.mktemp("mlp"), _mock_envs((3,), space))


@pytest.fixture(scope="module")
def gru(tmp_path_factory):
    space = gym.spaces.Box(-_BOUND, _BOUND, (2,), np.float32)
    envs = _mock_envs((3,), space)
    config = dict(network="recurrent_gaussian", chunk_length=4, recurrent_units=8)
    return _trained(tmp_path_factory.mktemp("gru"), envs, **config)


@pytest.fixture(scope="module")
def cnn(tmp_path_factory):
    envs = _mock_envs((44, 44, 1), gym.spaces.Discrete(3), np.uint8)
    config = dict(network="cnn_gru", normalize_observ=False, chunk_length=4, hidsize=8, memsize=8)
    probe = _frames()[0]
    return _trained(tmp_path_factory.mktemp("cnn"), envs, random_head=probe, **config)


def _frames() -> np.ndarray:
    return np.random.default_rng(4).integers(0, 256, (20, 50, 44, 44, 1)).astype(np.float32)


def _dict_envs():
    envs = []
    for seed in range(2):
        env = PackDictObservation(_DictEnv())
        env.observation_space.dict_space.seed(seed)
        env.reset(seed=seed)
        envs.append(env)
    return envs


@pytest.fixture(scope="module")
def dict_masked(tmp_path_factory):
    return _trained(tmp_path_factory.mktemp("dict"), _dict_envs(), normalize_observ=True)


def _serving(saved_model, observ):
    return saved_model.signatures["serving_default"](observation=tf.constant(observ))["action"]


def test_a_feed_forward_policy_acts_as_the_saved_model_with_normalizer_and_clipping(mlp):
    saved_model, session, _ = mlp
    assert [each.name for each in session.get_inputs()] == ["observation"]
    observ = np.random.default_rng(0).uniform(-50, 50, (1000, 3)).astype(np.float32)
    expected = _serving(saved_model, observ).numpy()
    action, finite = session.run(["action", "finite"], {"observation": observ})
    assert np.abs(action - expected).max() <= _TOLERANCE
    assert finite.all()
    unclipped = saved_model.unclipped(observ).numpy()
    assert (np.abs(unclipped) > _BOUND).mean() > 0.1  # Clipping is at work in these actions.
    assert np.abs(action).max() <= _BOUND


def test_non_finite_observations_are_flagged_and_acted_on_as_zeros(mlp):
    saved_model, session, _ = mlp
    observ = np.random.default_rng(1).uniform(-3, 3, (4, 3)).astype(np.float32)
    bad = observ.copy()
    bad[1, 0], bad[3, 2] = np.nan, -np.inf
    action, finite = session.run(["action", "finite"], {"observation": bad})
    assert finite.tolist() == [True, False, True, False]
    zeroed = np.where(np.isfinite(bad), bad, 0.0).astype(np.float32)
    assert np.abs(action - _serving(saved_model, zeroed).numpy()).max() <= _TOLERANCE


def _stepped(saved_model, session, observ, resets):
    """Both models stepped through `observ` [time, batch, ...] with the state carried; the
    largest differences of actions and of states, and the ONNX actions."""
    batch = observ.shape[1]
    state = saved_model.initial_state(tf.constant(batch))
    onnx_state = np.zeros(state.shape, np.float32)  # The documented start: zeros.
    action_gap, state_gap, actions = 0.0, 0.0, []
    for step, reset in zip(observ, resets, strict=True):
        action, state = saved_model.step(step, reset, state)
        onnx_action, onnx_state = session.run(
            ["action", "next_state"], {"observation": step, "reset": reset, "state": onnx_state}
        )
        action_gap = max(action_gap, np.abs(onnx_action - action.numpy()).max())
        state_gap = max(state_gap, np.abs(onnx_state - state.numpy()).max())
        actions.append(onnx_action)
    return action_gap, state_gap, np.stack(actions)


def _resets(time, batch):
    resets = np.random.default_rng(2).uniform(size=(time, batch)) < 0.1
    resets[0] = True
    return resets


def test_a_recurrent_policy_steps_as_the_saved_model_with_its_state_carried(gru):
    saved_model, session, _ = gru
    names = [each.name for each in session.get_inputs()]
    assert names == ["observation", "reset", "state"]
    observ = np.random.default_rng(3).uniform(-50, 50, (20, 50, 3)).astype(np.float32)
    action_gap, state_gap, actions = _stepped(saved_model, session, observ, _resets(20, 50))
    assert action_gap <= _TOLERANCE and state_gap <= _TOLERANCE
    assert np.abs(actions).max() <= _BOUND
    first = _serving(saved_model, observ[0]).numpy()  # serving_default: a first step.
    assert np.abs(actions[0] - first).max() <= _TOLERANCE


@pytest.mark.slow
def test_a_pixel_policy_steps_as_the_saved_model(cnn):
    saved_model, session, _ = cnn
    frames = _frames()
    action_gap, state_gap, actions = _stepped(saved_model, session, frames, _resets(20, 50))
    assert action_gap == 0 and state_gap <= _TOLERANCE
    first = _serving(saved_model, frames[0]).numpy()
    np.testing.assert_array_equal(actions[0], first)
    assert len(np.unique(actions)) > 1  # The mode follows the frames: no constant action.


@pytest.mark.slow
def test_a_dict_policy_takes_the_packed_vector_and_keeps_its_action_mask(dict_masked):
    saved_model, session, path = dict_masked
    space = _DictEnv.observation_space
    space.seed(5)
    samples = [space.sample() for _ in range(1000)]
    for index, sample in enumerate(samples):
        sample["action_mask"] = np.eye(3, dtype=np.int8)[index % 3]  # One allowed action.
        sample["vector"] = sample["vector"] * 3.0 + 5.0
    batch = {key: np.stack([sample[key] for sample in samples]) for key in space.spaces}
    packed = tools.dict_observations.pack(space, batch, batched=True).astype(np.float32)
    (action,) = session.run(["action"], {"observation": packed})
    np.testing.assert_array_equal(action, _serving(saved_model, packed).numpy())
    np.testing.assert_array_equal(action, np.arange(1000) % 3)  # The one allowed action.
    metadata = {each.key: each.value for each in onnx.load(path).metadata_props}
    assert metadata[OBSERVATION_DICT] == tools.dict_observations.describe(space)


def test_an_unknown_format_is_one_line_naming_it_and_the_accepted_ones(tmp_path, capsys):
    with pytest.raises(
        ValueError, match=r"^export\(format='tflite'\): unknown format; accepted: onnx\.$"
    ):
        agents.export(str(tmp_path), format="tflite")
    assert export_script.main(["--run_dir", str(tmp_path), "--format", "pb"]) == 2
    assert capsys.readouterr().err == "error: --format 'pb': unknown format; accepted: onnx.\n"


def test_a_missing_converter_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tf2onnx", None)  # As if not installed.
    with pytest.raises(ValueError, match=r'tf2onnx is missing\): pip install -e "\.\[onnx\]"'):
        agents.export(str(tmp_path))


def test_the_command_line_writes_policy_onnx_in_the_run(mlp, tmp_path, capsys):
    saved_model, _, onnx_path = mlp
    run_dir = tmp_path / "run"
    shutil.copytree(os.path.join(os.path.dirname(onnx_path), "policy"), run_dir / "policy")
    assert export_script.main(["--run_dir", str(run_dir)]) == 0
    path = run_dir / "policy.onnx"
    assert capsys.readouterr().out == f"Exported onnx policy to {path}\n"
    observ = np.random.default_rng(6).uniform(-3, 3, (8, 3)).astype(np.float32)
    (action,) = onnxruntime.InferenceSession(str(path)).run(["action"], {"observation": observ})
    assert np.abs(action - _serving(saved_model, observ).numpy()).max() <= _TOLERANCE


def test_the_docs_example_runs_a_recurrent_policy_without_tensorflow(gru, tmp_path, monkeypatch):
    _, _, onnx_path = gru
    text = (pathlib.Path(__file__).parents[2] / "docs" / "python-api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    example = next(block for block in blocks if "import onnxruntime" in block)
    run_dir = tmp_path / "logdir" / "run"
    run_dir.mkdir(parents=True)
    shutil.copy(onnx_path, run_dir / "policy.onnx")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # An import of it would fail.
    printed = []
    exec(compile(example, "docs/python-api.md", "exec"), {"print": lambda *a: printed.append(a)})  # noqa: S102
    assert [line[0] for line in printed] == [0, 1, 2]
    actions = [line[1] for line in printed]
    assert actions[0] != actions[1]  # The state carried from step to step moves the actions.
    assert all(all(line[2]) for line in printed)
