"""Training on native envs: the compiled call, its random draws, settings, resume and scoring."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import agents
from agents.envs import NativeBatchEnv
from agents.ppo import compilation
from agents.scripts import configs, train, visualize
from agents.training import agent_pool
from agents.training.loop import phases
from agents.training.run import Run
from tests.scripts.capture import run_main


def small_native(**changes):
    """cartpole_native at test size: 8 envs, 2 rollouts of 16 steps per call."""
    config = configs.cartpole_native()
    config.update(
        num_agents=8,
        eval_agents=4,
        rollout_length=16,
        rollouts_per_call=2,
        train_steps=1024,
        train_every=512,
        eval_episodes=4,
        log_every=256,
        checkpoint_every=512,
    )
    config.update(changes)
    return config


@pytest.mark.parametrize(
    "setting, expected",
    [
        (
            "env=HalfCheetah-v5",
            "env 'HalfCheetah-v5' has no native implementation (native_env=True); native envs: "
            "CartPole-v0, CartPole-v1, Pendulum-v1, Acrobot-v1, MountainCar-v0, "
            "MountainCarContinuous-v0",
        ),
        (
            "env_processes=True",
            "env_processes=True applies to Python environments; a native env (native_env=True) "
            "runs inside the compiled call: leave it unset.",
        ),
        (
            "env_wrapper=atari",
            "env_wrapper='atari' applies to Python environments; native CartPole-v1 takes none: "
            "leave it unset.",
        ),
        (
            "env=MiniGrid-DoorKey-5x5-v0 env_wrapper=atari",
            "env_wrapper='atari' applies to Python environments; native "
            "MiniGrid-DoorKey-5x5-v0 renders minigrid_image or minigrid_pixels itself.",
        ),
    ],
)
def test_a_setting_a_native_env_cannot_have_is_one_line(setting, expected, tmp_path):
    argv = ["--config=cartpole_native", f"--logdir={tmp_path}", "--set", *setting.split()]
    code, stdout, stderr = run_main(train.main, argv)
    assert code == 2 and stdout == ""
    # Ids registered by other tests of this process may follow the built-in ones.
    assert stderr.startswith(f"error: {expected}") and stderr.count("\n") == 1
    assert os.listdir(tmp_path) == []


def test_a_whole_call_is_compiled_only_with_a_native_env_an_xla_update_and_one_process():
    native = small_native()
    assert compilation.whole_call(native)
    assert not compilation.whole_call(native, ranks=2)
    assert not compilation.whole_call({**native, "update_compiler": "graph"})
    assert not compilation.whole_call(configs.cartpole())


def _two_calls(seed, run_dir):
    """Weights and rollouts after two compiled training calls of a fresh session."""
    run = Run(small_native(), run_dir, seed=seed)
    try:
        assert isinstance(run.train_env, NativeBatchEnv)
        states, rollouts = [], []
        for _ in range(2):
            run.train_call()
            states.append(run.agent.rng.state.numpy().copy())
            rollouts.append(run.rollout(("observ", "action")))
        weights = [v.numpy() for v in run.agent.network.variables]
        return states, rollouts, weights, int(run.train_env.draws.numpy())
    finally:
        run.close()


@pytest.mark.slow
def test_draws_inside_the_compiled_call_advance_per_call_and_reproduce_by_seed(tmp_path):
    """Also a run on the pool's envs, agent and compiled calls (traced for seed 2) against a
    new build of seed 1: the pooled run is that run, bit for bit."""
    agent_pool.clear()
    _two_calls(2, str(tmp_path / "traced"))
    reused = agent_pool.counts()["reused"]
    states, rollouts, weights, draws = _two_calls(1, str(tmp_path / "a"))
    assert agent_pool.counts()["reused"] == reused + 1
    agent_pool.clear()
    again = _two_calls(1, str(tmp_path / "b"))
    # The generator (actions, minibatch order) and the reset counter move on in every call.
    assert not np.array_equal(states[0], states[1])
    assert draws > 1
    first, second = rollouts
    assert not np.array_equal(first["action"], second["action"])
    # The same seed reproduces the run bit for bit; another seed does not.
    for a, b in zip(weights, again[2]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(rollouts[1]["action"], again[1][1]["action"])
    # Another seed starts from other weights and another generator (built, not trained).
    fresh = [Run(small_native(), str(tmp_path / f"c{seed}"), seed=seed) for seed in (1, 2)]
    try:
        one, two = ([v.numpy() for v in run.agent.network.variables] for run in fresh)
        assert any(not np.array_equal(a, b) for a, b in zip(one, two))
        assert not np.array_equal(*(run.agent.rng.state.numpy() for run in fresh))
    finally:
        for run in fresh:
            run.close()


@pytest.mark.slow
def test_the_compiled_call_updates_after_each_rollout_as_a_step_by_step_loop_does(tmp_path):
    """The call runs each rollout's update after its step loop (`rollouts_then_updates`); the
    loop of `simulate_steps`, which updates inside the step that fills the rollout, agrees."""
    import tensorflow as tf

    from agents import tools

    def after_one_call(run_dir, step_by_step):
        run = Run(small_native(), run_dir, seed=3)
        try:
            call = run.train_call
            if step_by_step:
                steps = 2 * 16  # rollouts_per_call x rollout_length.
                call = tf.function(
                    lambda: tools.simulate_steps(run.train_env, run.agent, steps),
                    jit_compile=True,
                    autograph=False,
                )
            done, score, length = (x.numpy() for x in call())
            weights = [v.numpy() for v in run.agent.network.variables]
            return done, score, length, weights, run.agent.metrics["epochs"].numpy()
        finally:
            run.close()

    ours, reference = (
        after_one_call(str(tmp_path / "a"), False),
        after_one_call(str(tmp_path / "b"), True),
    )
    for a, b in zip(ours[:3], reference[:3]):
        np.testing.assert_array_equal(a, b)  # The same episodes, step for step.
    for a, b in zip(ours[3], reference[3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert ours[4] == reference[4] == 4  # Both updates ran their epochs.
    assert ours[0].shape == (32, 8) and ours[0].any()


def test_a_resumed_native_run_draws_fresh_initial_states(tmp_path):
    config = small_native()
    run = Run(config, str(tmp_path), seed=0)
    try:
        list(phases(run))
        run.save()
        draws = int(run.train_env.draws.numpy())
    finally:
        run.close()
    assert draws > 0
    resumed = Run({**config, "train_steps": 2048}, str(tmp_path), seed=0)
    try:
        assert int(resumed.train_env.draws.numpy()) == draws  # Restored, not drawn again.
    finally:
        resumed.close()


@pytest.mark.slow
def test_cartpole_native_solves_gymnasiums_cartpole(tmp_path, capsys):
    """The shipped config, on the real env: 20 deterministic episodes of gymnasium's CartPole."""
    code, _, stderr = run_main(train.main, ["--config=cartpole_native", f"--logdir={tmp_path}"])
    assert code == 0, stderr
    (run_dir,) = [str(path) for path in tmp_path.iterdir()]
    evaluation = agents.evaluate(run_dir, "CartPole-v1", episodes=20, seed=100)
    assert evaluation.mean >= 475, evaluation.returns
    # `visualize` plays gymnasium's env too.
    argv = ["--run_dir", run_dir, "--eval_only", "--num_episodes", "2"]
    assert visualize.main(argv) == 0
    assert "Mean return over 2 episodes: 500.00" in capsys.readouterr().out


@pytest.mark.slow
def test_a_native_observation_far_outside_its_bounds_stops_as_a_python_one_does(tmp_path):
    """1e30 from a native env stops training after the call that met it (here the first),
    before a checkpoint can hold what it did to the normalizer."""
    argv = ["--config=cartpole_native", f"--logdir={tmp_path}", "--set"]
    argv += ["env=tests.scripts.native_envs:FarCorridor-v0", "num_agents=8", "rollout_length=8"]
    argv += ["rollouts_per_call=1", "train_steps=4096", "checkpoint_every=64"]
    code, stdout, stderr = run_main(train.main, argv)
    assert code == 1 and stderr.count("\n") == 1, stderr
    assert stderr.startswith("error: Stopped at env step 64: Native env FarCorridor returned ")
    bounds = "far outside the declared bounds of Box(0.0, 1.0, (1,), float32) (beyond 1000x "
    assert bounds in stderr
    (run_dir,) = [os.path.join(tmp_path, name) for name in os.listdir(tmp_path)]
    assert not glob.glob(os.path.join(run_dir, "checkpoints", "ckpt-*"))  # Its first call.


@pytest.mark.parametrize(
    "env, expected",
    [
        (
            "PrintingCorridor-v0",
            "error: Stopped at env step 0: Native env tests.scripts.native_envs:PrintingCorridor-v0"
            " does not compile with XLA: ops (StringFormat) have no XLA kernel",
        ),
        (
            "NumpyCorridor-v0",
            "error: Native env NumpyCorridor: does not trace as a graph: 'SymbolicTensor' object "
            "has no attribute 'numpy'",
        ),
    ],
)
def test_a_native_env_that_does_not_trace_or_compile_is_one_line_naming_it(env, expected, tmp_path):
    argv = ["--config=cartpole_native", f"--logdir={tmp_path}", "--set", "num_agents=8"]
    argv += [f"env=tests.scripts.native_envs:{env}", "rollout_length=8", "rollouts_per_call=1"]
    code, stdout, stderr = run_main(train.main, argv)
    assert code in (1, 2) and stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert stderr.startswith(expected), stderr


def test_a_non_finite_value_from_a_native_eval_env_stops_the_evaluation(tmp_path):
    """The eval envs record a non-finite value as the training envs do; the evaluation raises
    after its episodes (the run then stops with one line, as for training)."""
    run = Run(small_native(), str(tmp_path), seed=0)
    try:
        run.eval_env.nonfinite_step.assign(3)  # As a NaN at the eval envs' batch step 3 would.
        with pytest.raises(FloatingPointError, match="returned a non-finite .* batch step 3"):
            for report in phases(run):
                assert report.phase == "train"  # The first evaluation raises.
    finally:
        run.close()
