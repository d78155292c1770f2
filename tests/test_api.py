"""Tests for the Python API: `from agents import train, load_policy`."""

import gc
import glob
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref

import gymnasium as gym
import numpy as np
import pytest
import yaml

import agents
from agents.scripts import configs
from tests.scripts.capture import TIMESTAMP, untimed


def test_import_agents_is_light_and_names_the_api():
    code = (
        "import sys, agents; light = 'tensorflow' not in sys.modules; "
        "from agents import train, load_policy; print(light, train.__module__)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.split() == ["True", "agents.api"]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        agents.nope  # noqa: B018


def short_pendulum():
    return gym.make("Pendulum-v1", max_episode_steps=50)


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """A debug run from a dict config, a callable env and overrides given as numpy scalars."""
    logdir = str(tmp_path_factory.mktemp("logdir"))
    config = configs.debug.differences()  # Partial: the other keys take their defaults.
    overrides = dict(learning_rate=np.float64(1e-3), train_steps=np.int64(256))
    return agents.train(config, logdir=logdir, seed=3, env=short_pendulum, **overrides)


@pytest.mark.slow
def test_train_returns_the_run_directory_and_final_eval_score(result):
    assert os.fspath(result) == result.run_dir and os.path.isdir(result.run_dir)
    assert result.env_steps == 256 and result.signum is None and not result.stopped
    assert math.isfinite(result.eval_score)  # Episodes of 50 steps end in every eval phase.
    with open(os.path.join(result.run_dir, "metrics.jsonl")) as handle:
        records = [json.loads(line) for line in handle]
    assert [(r["phase"], r["env_steps"]) for r in records] == [
        ("train", 128),
        ("eval", 128),
        ("train", 256),
        ("eval", 256),
    ]
    assert records[-1]["score"] == pytest.approx(result.eval_score)
    assert "policy_loss" in records[0] and "env_steps_per_second" in records[0]


def test_load_policy_acts_on_one_observation_or_a_batch(result):
    policy = agents.load_policy(result.run_dir)
    batch = np.random.default_rng(0).uniform(-1, 1, (5, 3))  # float64, as gymnasium gives them.
    actions = policy(batch)
    assert actions.shape == (5, 1) and actions.dtype == np.float32
    np.testing.assert_allclose(policy(batch[2]), actions[2], rtol=1e-6)
    np.testing.assert_array_equal(policy(batch), actions)  # Deterministic.


def test_bad_input_raises_value_error_naming_it(tmp_path):
    with pytest.raises(ValueError, match="learning_rate must be a float > 0, got -1.0"):
        agents.train("debug", logdir=str(tmp_path), learning_rate=-1.0)
    with pytest.raises(ValueError, match="Unknown config keys: lerning_rate"):
        agents.train({"lerning_rate": 1.0}, logdir=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="No exported policy"):
        agents.load_policy(str(tmp_path))


def test_load_policy_names_a_wrong_shape_and_a_non_finite_entry(result):
    policy = agents.load_policy(result.run_dir)
    assert policy.observation_shape == (3,)
    with pytest.raises(ValueError, match=r"shape \(4,\): the policy takes \(3,\) or a batch"):
        policy(np.zeros(4))
    with pytest.raises(ValueError, match=r"shape \(2, 2\)"):
        policy(np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"entry \(1, 2\) is nan: the policy acts on finite"):
        policy(np.array([[0.1, 0.2, 0.3], [0.1, 0.2, np.nan]]))
    with pytest.raises(ValueError, match=r"entry \(0,\) is inf"):
        policy(np.array([np.inf, 0.0, 0.0]))


def test_load_policy_acts_inside_the_action_space_over_whole_episodes(result):
    policy = agents.load_policy(result.run_dir)
    env = short_pendulum()
    actions = []
    for seed in range(3):
        observation, _ = env.reset(seed=seed)
        policy.reset()
        done = False
        while not done:
            action = policy(observation)
            actions.append(action)
            observation, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
    actions = np.array(actions)
    assert len(actions) == 150 and actions.min() >= -2.0 and actions.max() <= 2.0


@pytest.mark.slow
def test_a_recurrent_policy_carries_its_state_across_calls(tmp_path):
    import tensorflow as tf

    from agents.api import Policy
    from agents.ppo.export import export_policy
    from tests.ppo.test_algorithm import PPO, _config, _env, _run

    batch_env = _env(count=2)
    agent = PPO(batch_env, _config(network="recurrent_gaussian", chunk_length=4), seed=0)
    _run(batch_env, agent, 16)
    saved = tf.saved_model.load(export_policy(agent, str(tmp_path / "policy")))
    policy = Policy(saved)
    observations = np.random.default_rng(0).uniform(-1, 1, (60, 2, 3)).astype(np.float32)
    state, reset, chain, each_alone = saved.initial_state(tf.constant(2)), True, [], []
    for observation in observations:
        action, state = saved.step(observation, tf.fill([2], reset), state)
        reset = False
        chain.append(action.numpy())
        each_alone.append(saved(observation).numpy())
    carried = [policy(observation) for observation in observations]
    np.testing.assert_allclose(carried, chain, rtol=1e-5, atol=1e-6)
    assert np.abs(np.array(chain) - np.array(each_alone)).max() > 1e-3  # The state matters.
    policy.reset()
    np.testing.assert_allclose(policy(observations[0]), chain[0], rtol=1e-5, atol=1e-6)


def test_numpy_scalars_are_config_values_and_errors_name_the_keyword(result, tmp_path):
    with open(os.path.join(result.run_dir, "config.yaml")) as handle:
        saved = yaml.safe_load(handle)
    assert saved["config"]["learning_rate"] == 1e-3 and saved["config"]["train_steps"] == 256
    assert type(saved["config"]["train_steps"]) is int and saved["seed"] == 3
    with pytest.raises(ValueError, match=r"^train\(\.\.\., num_agents=0\): num_agents must be"):
        agents.train("debug", logdir=str(tmp_path), num_agents=np.int32(0))


def _interrupt_once_training(run_parent, signals):
    """From a thread: once a run's config.yaml exists (signals are handled then), send SIGINTs."""

    def send():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if glob.glob(os.path.join(run_parent, "*", "config.yaml")):
                break
            time.sleep(0.05)
        for _ in range(signals):
            time.sleep(0.3)
            os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
def test_ctrl_c_saves_exports_and_raises_and_a_second_one_spares_the_interpreter(tmp_path):
    environ = dict(os.environ)
    sender = _interrupt_once_training(str(tmp_path), signals=2)
    with pytest.raises(
        KeyboardInterrupt, match=r"Training stopped at env step \d+; checkpoint"
    ) as caught:
        agents.train("debug", logdir=str(tmp_path), train_steps=1_000_000)
    steps = int(re.search(r"env step (\d+)", str(caught.value)).group(1))
    sender.join()
    (run_dir,) = glob.glob(os.path.join(tmp_path, "*-debug*"))
    assert os.path.isfile(os.path.join(run_dir, "policy", "saved_model.pb"))
    assert glob.glob(os.path.join(run_dir, "checkpoints", "ckpt-*.index"))
    assert dict(os.environ) == environ  # TensorFlow's variables set for training are gone again.
    # The interpreter lives on: resume the run from Python, to a budget it has not reached.
    result = agents.train(resume=run_dir, train_steps=steps + 128)
    assert result.run_dir == run_dir and result.env_steps >= steps + 128


@pytest.mark.slow
def test_runs_in_one_process_leave_no_graph_and_no_env_alive_and_print_as_verbose_says(
    tmp_path, capfd
):
    import tensorflow as tf

    made = []

    def env():
        made.append(short_pendulum())
        print("an env is made")  # The user's own output: verbose=0 silences the run's only.
        return made[-1]

    class Says(agents.Callback):
        def on_report(self, handle, report):
            print(f"{report.phase} at {report.metrics['env_steps']:.0f}")

    def live_graphs():
        gc.collect()
        return sum(isinstance(item, tf.Graph) for item in gc.get_objects())

    agents.train(
        "debug", logdir=str(tmp_path), env=env, train_steps=128, verbose=0, callbacks=[Says()]
    )
    quiet = capfd.readouterr()
    graphs = live_graphs()
    agents.train("debug", logdir=str(tmp_path), env=env, train_steps=128)
    told = capfd.readouterr()
    told = told._replace(out=told.out.replace("an env is made\n", ""))
    envs = [weakref.ref(item.unwrapped) for item in made]
    made.clear()
    assert live_graphs() == graphs  # The second run's traced graphs went with it.
    assert envs and all(ref() is None for ref in envs)
    # stdout only: TensorFlow's C++ log lines on stderr depend on how the first import of it in
    # this process went, which depends on the test order.
    lines = quiet.out.splitlines()
    assert set(lines) == {"an env is made", "train at 128", "eval at 128"}, quiet.out
    assert lines.count("train at 128") == lines.count("eval at 128") == 1
    # A file descriptor that is no terminal (pytest's capture): lines start with the time.
    assert untimed(told.out).startswith("Starting run ") and "train  env step       128" in told.out
    assert TIMESTAMP.match(told.out)


@pytest.mark.slow
def test_a_user_defined_native_env_trains_through_the_api_and_is_played_and_rendered(tmp_path):
    """A corridor written as TensorFlow ops: walk right 6 cells to the goal (+1, -0.01 a step).
    Trained from a class, then played as a gymnasium env of one by `agents.evaluate` and
    `visualize` (frames from its `render(state)`), named as a class, an instance or an id."""
    from agents.scripts import visualize
    from tests.scripts import native_envs
    from tests.scripts.capture import run_main

    config = dict(
        configs.cartpole_native.differences(),
        num_agents=16,
        rollout_length=16,
        rollouts_per_call=2,
        train_steps=8192,
        train_every=4096,
        eval_episodes=20,
        num_minibatches=4,
    )
    result = agents.train(config, logdir=str(tmp_path), env=native_envs.Corridor, verbose=0)
    with open(os.path.join(result.run_dir, "config.yaml")) as handle:
        text = handle.read()
    assert yaml.safe_load(text)["config"]["env"] == "agents_api/Corridor-v0"
    assert yaml.safe_load(text)["config"]["native_env"] is True
    # Straight to the goal: 5 steps of -0.01 and the +1 (a random walk mostly times out).
    assert result.eval_score == pytest.approx(0.95, abs=1e-4)
    policy = agents.load_policy(result.run_dir)
    assert int(policy(np.array([0.5], np.float32))) == 1
    for env in (
        native_envs.Corridor,
        native_envs.Corridor(),
        "tests.scripts.native_envs:Corridor-v0",
    ):
        evaluation = agents.evaluate(result.run_dir, env, episodes=2)
        assert evaluation.returns == pytest.approx([0.95, 0.95], abs=1e-4)
        assert evaluation.lengths == [6, 6]

    def copy_naming(env_id):  # The run, its config naming the env by module path and id.
        copy = str(tmp_path / env_id)
        shutil.copytree(result.run_dir, copy)
        with open(os.path.join(copy, "config.yaml"), "w") as handle:
            handle.write(
                text.replace("agents_api/Corridor-v0", f"tests.scripts.native_envs:{env_id}")
            )
        return copy

    corridor, outdir = copy_naming("Corridor-v0"), str(tmp_path / "videos")
    code, stdout, stderr = run_main(
        visualize.main, [f"--run_dir={corridor}", f"--outdir={outdir}", "--num_episodes=1"]
    )
    assert code == 0, stderr
    assert "Episode 0: return 0.95 (6 steps" in stdout
    assert len(os.listdir(outdir)) == 1
    blind = copy_naming("BlindCorridor-v0")  # The same spaces, no `render`.
    code, stdout, stderr = run_main(visualize.main, [f"--run_dir={blind}", f"--outdir={outdir}"])
    assert code == 2 and stderr == (
        "error: tests.scripts.native_envs:BlindCorridor-v0 renders no frames (a native env "
        "renders through its render(state) method): pass --eval_only for the returns alone.\n"
    )
    code, stdout, stderr = run_main(
        visualize.main, [f"--run_dir={blind}", "--eval_only", "--num_episodes=2"]
    )
    assert code == 0 and "Mean return over 2 episodes: 0.95" in stdout, stdout


def test_a_run_without_its_policy_directory_loads_from_its_checkpoint(tmp_path):
    """The policy of the final checkpoint is the policy training exported; a checkpoint can be
    chosen; no policy and no checkpoint is FileNotFoundError."""
    import shutil

    result = agents.train("debug", logdir=str(tmp_path / "logdir"), verbose=0)
    exported = agents.load_policy(result.run_dir)
    copy = str(tmp_path / "copy")
    shutil.copytree(result.run_dir, copy)
    shutil.rmtree(os.path.join(copy, "policy"))
    observations = np.random.default_rng(1).uniform(-1, 1, (6, 3))
    restored = agents.load_policy(copy)
    np.testing.assert_allclose(restored(observations), exported(observations), rtol=1e-5)
    (first, *_) = sorted(glob.glob(os.path.join(copy, "checkpoints", "ckpt-*.index")))
    early = agents.load_policy(result.run_dir, checkpoint=first[: -len(".index")])
    assert early(observations).shape == (6, 1)
    assert agents.evaluate(early, "Pendulum-v1", episodes=1).lengths == [200]
    shutil.rmtree(os.path.join(copy, "checkpoints"))
    with pytest.raises(FileNotFoundError, match="No exported policy in .*No checkpoint in"):
        agents.load_policy(copy)


def test_a_second_train_call_while_one_runs_is_refused_and_stdout_stays(tmp_path):
    """Two threads: the second call is refused at once; the first, silent, trains on and
    gives stdout back."""
    started, tried, results, errors = threading.Event(), threading.Event(), [], []

    class Started(agents.Callback):
        def on_start(self, handle):
            started.set()
            tried.wait(timeout=60)  # The first run is surely running while the second tries.

    def work():
        try:
            results.append(
                agents.train(
                    "debug", logdir=str(tmp_path), verbose=0, callbacks=[Started()], train_steps=128
                )
            )
        except BaseException as error:  # noqa: BLE001 (reported below)
            errors.append(error)

    stdout = sys.stdout
    thread = threading.Thread(target=work)
    thread.start()
    assert started.wait(timeout=300)
    with pytest.raises(RuntimeError, match="agents.train is already running in this process"):
        agents.train("debug", logdir=str(tmp_path), verbose=0)
    tried.set()
    thread.join(timeout=300)
    assert not errors and results[0].env_steps == 128
    assert sys.stdout is stdout
    assert len(os.listdir(tmp_path)) == 1  # The refused call made no run.
