"""Tests for the env backends: what the agent sees is the same whichever steps the envs."""

import gymnasium as gym
import numpy as np
import pytest

from agents import tools
from agents.config import validate
from agents.envs.python import vector_envs
from agents.envs.python.environments import make_envs

GYMNASIUM = ("gymnasium-sync", "gymnasium-async")


def _policy(env_id: str):
    """A fixed deterministic policy of the observation (pole angle, pendulum torque)."""
    if env_id == "CartPole-v1":
        return lambda observ: (observ[:, 3] > 0).astype(np.int64)  # Episodes of 100-250 steps.
    return lambda observ: np.clip(-2.0 * observ[:, 2:3], -2.0, 2.0).astype(np.float32)


def _episodes(batch_env, env_id: str, episodes: int, seed: int) -> list[tuple[float, int]]:
    """(return, length) of the first `episodes / len(batch_env)` episodes of each env, played
    as `tools.simulate` plays (finished envs reset by the caller), by env, then in order."""
    policy = _policy(env_id)
    observ = batch_env.reset(seed=seed)
    count = len(batch_env)
    score, length = np.zeros(count), np.zeros(count, int)
    ended = [[] for _ in range(count)]
    while min(len(e) for e in ended) < episodes // count:
        observ, reward, terminated, truncated, _ = batch_env.step(policy(observ))
        score += reward
        length += 1
        done = np.flatnonzero(terminated | truncated)
        for index in done:
            ended[index].append((round(float(score[index]), 3), int(length[index])))
        if done.size:
            observ[done] = batch_env.reset(done)
            score[done], length[done] = 0, 0
    return [episode for per_env in ended for episode in per_env[: episodes // count]]


def _python(env_id: str, count: int):
    return tools.BatchEnv(make_envs(env_id, count), blocking=True)


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
@pytest.mark.parametrize("backend", GYMNASIUM)
def test_gymnasium_backends_play_the_episodes_of_the_python_backend(env_id, backend):
    expected = _episodes(_python(env_id, 4), env_id, 8, seed=3)
    batch_env = tools.VectorBatchEnv(vector_envs.make(env_id, 4, backend), env_id=env_id)
    try:
        assert _episodes(batch_env, env_id, 8, seed=3) == expected
    finally:
        batch_env.close()


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_envpool_plays_episodes_distributed_as_the_python_backend(env_id):
    pytest.importorskip("envpool")
    expected = np.array(_episodes(_python(env_id, 8), env_id, 64, seed=0))
    pool = tools.VectorBatchEnv(vector_envs.make(env_id, 8, "envpool", seed=0))
    seen = np.array(_episodes(pool, env_id, 64, seed=0))
    # EnvPool draws initial states with its own generator: equal distributions, not episodes.
    for column in (0, 1):
        want, got = expected[:, column], seen[:, column]
        spread = np.sqrt((want.var() + got.var()) / len(want)) + 1e-6
        assert abs(want.mean() - got.mean()) < 4 * spread, (column, want.mean(), got.mean())
    if env_id == "Pendulum-v1":
        assert set(seen[:, 1]) == {200}  # The time limit, as gymnasium registers it.


def test_episode_limits_of_every_backend():
    assert vector_envs.episode_limit(vector_envs.make("CartPole-v1", 2, "gymnasium-sync")) == 500
    env = vector_envs.make("Pendulum-v1", 2, "gymnasium-async", max_episode_steps=50)
    try:
        assert vector_envs.episode_limit(env) == 50
    finally:
        env.close()
    pytest.importorskip("ale_py")
    atari = vector_envs.make("ALE/MontezumaRevenge-v5", 2, "gymnasium-async", wrapper="atari")
    try:  # Its wrappers' spec holds a lambda, which cannot leave the env processes.
        assert vector_envs.episode_limit(atari) == 108_000  # ALE's frame cap.
    finally:
        atari.close()
    if vector_envs.envpool_id("Pendulum-v1"):
        pool = vector_envs.make("Pendulum-v1", 2, "envpool", max_episode_steps=70)
        assert vector_envs.episode_limit(pool) == 70


def test_an_id_envpool_lacks_names_the_backends_that_have_it():
    pytest.importorskip("envpool")
    with pytest.raises(ValueError, match=r"EnvPool has no 'agents_test/Nope-v0'; .*gymnasium-sync"):
        vector_envs.make("agents_test/Nope-v0", 2, "envpool")
    with pytest.raises(ValueError, match="does not apply env_wrapper='minigrid_pixels'"):
        vector_envs.make("MiniGrid-Empty-5x5-v0", 2, "envpool", wrapper="minigrid_pixels")


def test_unknown_ids_and_wrappers_are_one_line_before_any_process_starts():
    with pytest.raises(ValueError, match="Unknown environment 'Nope-v9'"):
        vector_envs.make("Nope-v9", 2, "gymnasium-async")
    with pytest.raises(ValueError, match="Unknown env_wrapper 'pixels'"):
        vector_envs.make("CartPole-v1", 2, "gymnasium-sync", wrapper="pixels")


def test_env_processes_belongs_to_the_python_backend():
    config = {"env_processes": True, "env_backend": "gymnasium-async"}
    with pytest.raises(ValueError, match="env_processes=True applies to env_backend='python'"):
        validate.check_rules({"rollout_length": 8, "chunk_length": 8, **config})
    with pytest.raises(ValueError, match="env_backend must be one of"):
        validate.check_value("env_backend", "ray")


def test_a_user_instance_serves_training_and_is_rebuilt_for_evaluation():
    vector_env = gym.make_vec("CartPole-v1", 3, vectorization_mode="sync")
    vector_envs.register("agents_test/Instance-v0", vector_env)
    first = vector_envs.make("agents_test/Instance-v0", 3, "python")
    second = vector_envs.make("agents_test/Instance-v0", 3, "python")
    assert first is vector_env and second is not vector_env and second.num_envs == 3
    pool_like = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")])
    del pool_like.env_fns
    vector_envs.register("agents_test/Bare-v0", pool_like)
    vector_envs.make("agents_test/Bare-v0", 1, "python")
    with pytest.raises(ValueError, match="serves training only.*pass a callable"):
        vector_envs.make("agents_test/Bare-v0", 1, "python")


def test_envpool_atari_frames_are_the_atari_wrappers_frame_by_frame():
    envpool = pytest.importorskip("envpool")
    pytest.importorskip("ale_py")
    from agents.envs.python import environments

    environments._register("ALE/MontezumaRevenge-v5")
    # Randomness off on both sides (sticky actions; one no-op at reset, as each counts them
    # differently), so that the same actions must give the same frames.
    python = gym.make("ALE/MontezumaRevenge-v5", frameskip=1, repeat_action_probability=0.0)
    python = environments._atari(python, noop_max=1)
    options = {**vector_envs._ENVPOOL_WRAPPERS["atari"], "noop_max": 1}
    options["repeat_action_probability"] = 0.0
    pool = envpool.make("MontezumaRevenge-v5", env_type="gymnasium", num_envs=1, **options)
    batch_env = tools.VectorBatchEnv(
        pool, transform=vector_envs.transform(pool, "envpool", "atari")
    )
    assert batch_env.observation_space == python.observation_space
    np.testing.assert_array_equal(batch_env.reset()[0], python.reset(seed=0)[0])
    actions = np.random.default_rng(0).integers(0, 18, 200)
    for step, action in enumerate(actions):
        want = python.step(int(action))
        got = batch_env.step(np.array([action]))
        np.testing.assert_array_equal(got[0][0], want[0], err_msg=f"step {step}")
        assert (got[1][0], got[2][0], got[3][0]) == tuple(want[1:4])


def _first_rollout(backend: str, seed: int, run_dir: str) -> dict:
    from agents.scripts import configs
    from agents.training.run import Run

    config = dict(configs.debug(), env_backend=backend, num_agents=4)
    run = Run(config, run_dir, seed=seed)
    try:
        run.train_call()
        return run.rollout(("action", "value", "log_prob"))
    finally:
        run.close()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["gymnasium-sync", "envpool"])
def test_a_seed_reproduces_a_run_on_each_backend(backend, tmp_path):
    if backend == "envpool":
        pytest.importorskip("envpool")
    first = _first_rollout(backend, 5, str(tmp_path / "a"))
    again = _first_rollout(backend, 5, str(tmp_path / "b"))
    for key, value in first.items():
        np.testing.assert_array_equal(value, again[key], err_msg=key)
    if backend == "gymnasium-sync":  # The same envs and seeds as python: the same rollout.
        python = _first_rollout("python", 5, str(tmp_path / "c"))
        for key, value in first.items():
            np.testing.assert_array_equal(value, python[key], err_msg=key)


@pytest.mark.parametrize("wrapper", ["minigrid_image", "minigrid_dict"])
def test_envpool_minigrid_observations_are_minigrids_step_by_step(wrapper):
    pytest.importorskip("envpool")
    pytest.importorskip("minigrid")
    from agents.envs.python import environments

    python = environments.make_env("MiniGrid-Empty-5x5-v0", wrapper=wrapper)
    pool = vector_envs.make("MiniGrid-Empty-5x5-v0", 1, "envpool", wrapper=wrapper)
    transform = vector_envs.transform(pool, "envpool", wrapper)
    batch_env = tools.VectorBatchEnv(pool, transform=transform)
    assert batch_env.observation_space == python.observation_space
    if wrapper == "minigrid_dict":  # Packed: the direction's one-hot, then the image.
        assert batch_env.observation_space.shape == (4 + 7 * 7 * 3,)
    np.testing.assert_array_equal(batch_env.reset()[0], python.reset(seed=0)[0])
    for action in [1, 2, 0, 2, 2, 1, 2]:  # Down, right, right, down: onto the goal.
        want = python.step(action)
        got = batch_env.step(np.array([action]))
        np.testing.assert_array_equal(got[0][0], want[0])
        assert got[1][0] == pytest.approx(want[1]) and got[2][0] == want[2]
    assert got[2][0] and got[1][0] > 0  # The goal, reached.
