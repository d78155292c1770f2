"""The agent pool: a run of the same shapes reuses an ended run's agent, and trains as a new one."""

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from agents.config.config import Config
from agents.scripts import configs
from agents.training import agent_pool
from agents.training.run import Run

BOX = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
ACTIONS = gym.spaces.Discrete(4)


@pytest.fixture(autouse=True)
def empty_pool():
    agent_pool.clear()
    yield
    agent_pool.clear()


def _build(key, make):
    """What a run does with the pool: a new build, or a kept one holding its values."""
    with agent_pool.recording() as created:
        fresh = make()
    return agent_pool.adopt(key, fresh, created)


def _key(space=BOX, **overrides):
    return agent_pool.agent_key(Config.build(configs.debug(), overrides), space, ACTIONS)


def test_runs_that_differ_in_run_only_keys_share_and_others_do_not():
    assert _key() == _key(eval_episodes=3, log_every=64, stop_at_score=1.0)
    assert _key() != _key(learning_rate=1e-3)
    assert _key() != _key(space=gym.spaces.Box(-1.0, 2.0, (3,), np.float32))  # Bounds.
    assert _key() != _key(space=gym.spaces.Box(-1.0, 1.0, (3,), np.float64))
    assert agent_pool.agent_key(configs.debug(), BOX, gym.spaces.Tuple([ACTIONS])) is None


class _Agent:
    def __init__(self, value, shape=(2,)):
        self.weights = tf.Variable(tf.fill(shape, value))
        self.step = tf.Variable(0, dtype=tf.int64)


def test_a_released_agent_is_reused_with_the_new_agents_values():
    before = agent_pool.counts()
    first, state = _build("k", lambda: _Agent(1.0))
    first.weights.assign([5.0, 5.0])
    first.step.assign(9)
    agent_pool.release("k", first, state)
    again, _ = _build("k", lambda: _Agent(2.0))
    assert again is first
    assert again.weights.numpy().tolist() == [2.0, 2.0] and int(again.step.numpy()) == 0
    after = agent_pool.counts()
    assert (after["built"] - before["built"], after["reused"] - before["reused"]) == (1, 1)


def test_an_agent_is_reused_once_and_only_after_release_and_only_when_it_matches():
    first, state = _build("k", lambda: _Agent(1.0))
    second, _ = _build("k", lambda: _Agent(1.0))
    assert second is not first  # The first run has not ended.
    agent_pool.release("k", first, state)
    other, _ = _build("k", lambda: _Agent(1.0, shape=(3,)))
    assert other is not first  # Variables that do not match: a new agent.
    agent_pool.release("k", first, state)
    assert _build("other", lambda: _Agent(1.0))[0] is not first
    assert _build(None, lambda: _Agent(1.0))[0] is not first
    assert _build("k", lambda: _Agent(1.0))[0] is first
    assert _build("k", lambda: _Agent(1.0))[0] is not first  # Taken.


def test_the_pool_keeps_the_latest_agents_and_none_too_large(monkeypatch):
    agents = {}
    for key in range(agent_pool.MAX_AGENTS + 1):
        agents[key] = _build(key, lambda: _Agent(1.0))
        agent_pool.release(key, *agents[key])
    assert _build(0, lambda: _Agent(1.0))[0] is not agents[0][0]  # Dropped first.
    assert _build(1, lambda: _Agent(1.0))[0] is agents[1][0]
    monkeypatch.setattr(agent_pool, "MAX_BYTES", 4)
    big = _build("big", lambda: _Agent(1.0))
    agent_pool.release("big", *big)
    assert _build("big", lambda: _Agent(1.0))[0] is not big[0]


def _train(tmp_path, seed, name, train_steps=256):
    """Two training calls of a debug run with a linear learning rate over `train_steps`; its
    losses, weights and whether its agent was reused."""
    reused = agent_pool.counts()["reused"]
    config = dict(configs.debug(), learning_rate_schedule="linear", train_steps=train_steps)
    run = Run(config, str(tmp_path / name), seed=seed)
    try:
        held = [run.train_env.batch_env, run.eval_env.batch_env]
        assert sorted(map(id, held)) == sorted(map(id, run.batch_envs))  # This run's own envs.
        run.train_call()
        run.train_call()
        metrics = {key: float(value.numpy()) for key, value in run.agent.metrics.items()}
        weights = [w.copy() for w in run.agent.network.get_weights()]
        return metrics, weights, run.agent, agent_pool.counts()["reused"] > reused
    finally:
        run.close()
        assert run.train_env.batch_env is None and run.eval_env.batch_env is None  # Let go.


@pytest.mark.slow
def test_a_run_on_a_reused_agent_trains_exactly_as_on_a_new_one(tmp_path):
    metrics, weights, agent, reused = _train(tmp_path, 3, "new")
    assert not reused
    # Another seed and budget: the budget is a variable of the agent, set for each run.
    other, _, agent_5, reused_5 = _train(tmp_path, 5, "other seed", train_steps=4096)
    assert reused_5 and agent_5 is agent and other != metrics
    assert agent.config["train_steps"] == 4096  # The kept agent serves the new run's config.
    assert other["learning_rate"] > metrics["learning_rate"]  # Decays over the larger budget.
    again, again_weights, agent_3, reused_3 = _train(tmp_path, 3, "same seed")
    assert reused_3 and agent_3 is agent
    assert again == metrics  # Losses, KL, learning rate, ... of the last update, bit for bit.
    assert all(np.array_equal(a, b) for a, b in zip(again_weights, weights))
    config = dict(configs.debug(), learning_rate_schedule="linear")  # Pendulum: a Python env.
    calls = []
    for seed in (0, 1):
        run = Run(config, str(tmp_path / f"calls {seed}"), seed=seed)
        try:
            calls.append(run._train_fn)
            run.train_call()
        finally:
            run.close()
    # The kept training call, traced once: it steps each run's own envs by reference.
    assert calls[0] is calls[1] and calls[1].experimental_get_tracing_count() == 1


def test_a_live_run_keeps_its_agent(tmp_path):
    first = Run(configs.debug(), str(tmp_path / "a"), seed=0)
    try:
        second = Run(configs.debug(), str(tmp_path / "b"), seed=0)
        second.close()
        assert second.agent is not first.agent
    finally:
        first.close()


def test_the_pool_drops_the_oldest_agents_past_its_bytes_in_all(monkeypatch):
    monkeypatch.setattr(agent_pool, "MAX_BYTES", 40)  # Two agents of 16 bytes fit, not three.
    first = _build("a", lambda: _Agent(1.0))
    second = _build("b", lambda: _Agent(1.0))
    third = _build("c", lambda: _Agent(1.0))
    for key, built in zip("abc", (first, second, third)):
        agent_pool.release(key, *built)  # Each is 2 float32 + 1 int64: 16 bytes.
    assert _build("a", lambda: _Agent(1.0))[0] is not first[0]  # Dropped.
    assert _build("b", lambda: _Agent(1.0))[0] is second[0]
    assert _build("c", lambda: _Agent(1.0))[0] is third[0]


def test_only_the_projects_own_native_envs_share_a_whole_call():
    from agents.envs import registry
    from tests.scripts import native_envs

    assert registry.is_builtin("CartPole-v1") and registry.is_builtin("MiniGrid-DoorKey-5x5-v0")
    assert not registry.is_builtin("tests.scripts.native_envs:Corridor-v0")
    registry.register("Acrobot-v1", native_envs.Corridor)  # A user's env under a built-in id.
    try:
        assert not registry.is_builtin("Acrobot-v1")
    finally:
        del registry._REGISTERED["Acrobot-v1"]
