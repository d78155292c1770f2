"""Tests for `agents.train(env=...)` with a gymnasium vector env, an EnvPool pool, or a callable
building one."""

import json
import os
import pathlib

import gymnasium as gym
import pytest
import yaml

import agents
from agents.scripts import configs


def _saved_config(run_dir: str) -> dict:
    with open(os.path.join(run_dir, "config.yaml")) as handle:
        return yaml.safe_load(handle)["config"]


def _pendulum(count: int, mode: str = "NextStep"):
    return gym.vector.SyncVectorEnv(
        [lambda: gym.make("Pendulum-v1", max_episode_steps=50)] * count, autoreset_mode=mode
    )


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
def test_a_vector_env_instance_trains_and_its_size_sets_the_env_counts(tmp_path, mode):
    debug = configs.debug.differences()
    result = agents.train(debug, logdir=str(tmp_path), env=_pendulum(3, mode), verbose=0)
    saved = _saved_config(result.run_dir)
    assert saved["num_agents"] == saved["eval_agents"] == 3
    assert saved["env"] == "agents_api/Pendulum-v1"  # The id its envs were made from.
    call = 3 * debug["rollout_length"]  # Env steps of a training call of 3 envs.
    assert result.env_steps == -(-debug["train_steps"] // call) * call  # Whole calls.
    with open(os.path.join(result.run_dir, "metrics.jsonl")) as handle:
        evals = [json.loads(line) for line in handle if '"eval"' in line]
    assert evals and all(record["episodes"] == debug["eval_episodes"] for record in evals)


def test_a_callable_is_called_for_training_and_for_evaluation(tmp_path):
    built = []

    def make():
        built.append(_pendulum(2))
        return built[-1]

    agents.train("debug", logdir=str(tmp_path), env=make, train_steps=64, verbose=0)
    assert len(built) == 2 and built[0] is not built[1]


def test_a_vector_env_is_recorded_under_the_id_it_was_made_with(tmp_path):
    def make():
        return gym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="vector_entry_point")

    result = agents.train("debug", logdir=str(tmp_path), env=make, train_steps=64, verbose=0)
    assert _saved_config(result.run_dir)["env"] == "agents_api/CartPole-v1"


def test_a_size_that_contradicts_num_agents_is_one_line(tmp_path):
    with pytest.raises(ValueError, match=r"^train\(\.\.\., num_agents=8\): the vector env has 3"):
        agents.train("debug", logdir=str(tmp_path), env=_pendulum(3), num_agents=8)
    assert not os.listdir(tmp_path)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*precision lowered")
def test_an_envpool_pool_trains_through_the_api(tmp_path):
    envpool = pytest.importorskip("envpool")
    pool = envpool.make("Pendulum-v1", env_type="gymnasium", num_envs=4, seed=1)
    with pytest.raises(ValueError, match="serves training only.*pass a callable"):
        agents.train("debug", logdir=str(tmp_path), env=pool, verbose=0)

    def make():
        return envpool.make("Pendulum-v1", env_type="gymnasium", num_envs=4, seed=1)

    result = agents.train("debug", logdir=str(tmp_path), env=make, train_steps=256, verbose=0)
    assert result.env_steps == 256 and result.eval_score < 0  # Pendulum's returns are negative.


@pytest.mark.slow
def test_an_async_vector_env_trains_exactly_as_the_sync_one_of_the_same_envs(tmp_path):
    """Learning is shown on the sync env above; the async one is a drop-in for it."""
    sync = lambda: gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")] * 4)  # noqa: E731
    as_async = lambda: gym.vector.AsyncVectorEnv([lambda: gym.make("CartPole-v1")] * 4)  # noqa: E731
    runs = [
        agents.train("cartpole", logdir=str(tmp_path), env=env, name=name, train_steps=1024,
                     train_every=512, eval_episodes=4, verbose=0)
        for name, env in (("sync", sync), ("async", as_async))
    ]  # fmt: skip
    assert [run.env_steps for run in runs] == [1024, 1024]
    records = [
        [
            json.loads(line)
            for line in pathlib.Path(run.run_dir, "metrics.jsonl").read_text().splitlines()
        ]
        for run in runs
    ]
    scores = [[(r["phase"], r["env_steps"], r["score"]) for r in rows] for rows in records]
    assert scores[0] == scores[1] and len(scores[0]) >= 4


@pytest.mark.slow
def test_a_run_on_a_vector_env_resumes_from_python_with_the_same_env(tmp_path):
    first = agents.train("debug", logdir=str(tmp_path), env=_pendulum(2), train_steps=64)
    result = agents.train(resume=first.run_dir, env=_pendulum(2), train_steps=128, verbose=0)
    assert result.run_dir == first.run_dir and result.env_steps == 128
