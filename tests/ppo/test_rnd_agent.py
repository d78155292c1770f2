"""Tests for RNDPPO through tools.simulate on a small pixel MockEnvironment."""

import gymnasium as gym
import keras
import numpy as np
import pytest
import tensorflow as tf

from agents import tools
from agents.envs.gridworld.env import MiniGridEnv
from agents.envs.native_batch_env import NativeBatchEnv
from agents.ppo.exploration.rnd_agent import RNDPPO
from agents.scripts import configs


def _setup(int_coef=1.0, count=2, **overrides):
    envs = [
        tools.MockEnvironment(
            (44, 44, 1),
            min_duration=3,
            max_duration=7,
            seed=i,
            action_space=gym.spaces.Discrete(3),
            observ_dtype=np.uint8,
        )
        for i in range(count)
    ]
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True))
    config = configs.debug()
    config.update(
        agent="rnd_ppo",
        normalize_observ=False,
        normalize_reward=False,
        rollout_length=8,
        chunk_length=4,
        update_epochs=2,
        num_minibatches=2,
        hidsize=16,
        memsize=8,
        rnd_feature_size=16,
        discount=0.999,
        int_coef=int_coef,
    )
    config.update(overrides)
    agent = RNDPPO(batch_env, tools.AttrDict(config), seed=0)
    run = tf.function(lambda: tools.simulate_steps(batch_env, agent, 8))
    return batch_env, agent, run


@pytest.fixture(scope="module")
def trained():
    return _setup()


@pytest.mark.slow
def test_rnd_ppo_trains_through_simulate(trained):
    batch_env, agent, run = trained
    target = [v.numpy().copy() for v in agent.rnd.target.variables]
    predictor = [v.numpy().copy() for v in agent.rnd.predictor.variables]
    run()
    run()
    assert int(agent.optimizer.iterations) == 2 * 2 * 2
    metrics = {key: float(value) for key, value in agent.metrics.items()}
    assert all(np.isfinite(list(metrics.values())))
    assert metrics["intrinsic_reward"] > 0 and metrics["predictor_loss"] > 0
    # The target is frozen; the predictor learns with the policy's optimizer.
    for before, after in zip(target, agent.rnd.target.variables):
        np.testing.assert_array_equal(before, after.numpy())
    assert any(
        not np.array_equal(b, a.numpy()) for b, a in zip(predictor, agent.rnd.predictor.variables)
    )
    assert float(agent.rnd.observation_stats.count) > 0
    assert run.experimental_get_tracing_count() == 1
    assert all(batch_env.action_space.contains(int(a)) for a in batch_env.action.numpy())


@pytest.mark.slow
def test_rnd_scores_the_frame_after_the_rollout_normalized_as_the_stored_ones():
    """The rollout stores observations as the network sees them (here normalized); the one
    after its last step comes from the env and is normalized the same way before RND reads it."""
    _, agent, run = _setup(normalize_observ=True)
    run()  # The normalizer's statistics move away from their start.
    steps, count = 8, 2
    rng = np.random.default_rng(0)
    observ = rng.integers(0, 256, (steps + 1, count, 44, 44, 1)).astype(np.float32)
    data = {
        "observ": agent.normalize(observ[:-1]),
        "reward": tf.zeros([steps, count]),
        "value": tf.zeros([steps, count]),
        "value_int": tf.zeros([steps, count]),
    }
    agent._stream_rewards(data, tf.constant(observ[-1]))
    expected = agent.normalize(observ[1:])
    np.testing.assert_allclose(data["next_observ"].numpy(), expected.numpy(), rtol=1e-6)
    assert np.abs(observ[-1] - expected[-1].numpy()).max() > 1.0  # Normalizing changes it.


@pytest.mark.slow
def test_checkpoint_restores_rnd_networks_and_intrinsic_statistics(trained, tmp_path):
    _, agent, _ = trained
    path = tf.train.Checkpoint(**agent.checkpointables()).save(str(tmp_path / "ckpt"))
    _, fresh, run_fresh = _setup(int_coef=0.0)  # Also the no-exploration control.
    modules = lambda a: [a.network, a.rnd.target, a.rnd.predictor]  # noqa: E731
    for module in modules(fresh):
        for variable in module.variables:
            variable.assign(tf.random.normal(variable.shape))
    tf.train.Checkpoint(**fresh.checkpointables()).restore(path).assert_consumed()
    for saved, restored in zip(modules(agent), modules(fresh)):
        for a, b in zip(saved.variables, restored.variables):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    for a, b in [
        (agent.rnd.observation_stats.mean, fresh.rnd.observation_stats.mean),
        (agent.intrinsic_scaler.returns, fresh.intrinsic_scaler.returns),
    ]:
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    run_fresh()
    assert np.isfinite(float(fresh.metrics["policy_loss"]))


@pytest.mark.parametrize(
    "conv_stack, size, compiler, patches",
    [("tiles8", 56, "auto", True), ("tiles8", 56, "graph", False), ("dqn", 44, "auto", False)],
)
def test_convolutions_run_as_patch_products_exactly_where_xla_compiles_the_update(
    conv_stack, size, compiler, patches
):
    from agents.ppo.networks.patch_conv import PatchConv2D

    envs = [
        tools.MockEnvironment(
            (size, size, 1),
            3,
            7,
            seed=0,
            action_space=gym.spaces.Discrete(3),
            observ_dtype=np.uint8,
        )
    ]
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True))
    config = dict(configs.debug_rnd(), conv_stack=conv_stack, update_compiler=compiler)
    agent = RNDPPO(batch_env, tools.AttrDict(config), seed=0)
    layers = [*agent.network._convs, *agent.rnd.target.layers, *agent.rnd.predictor.layers]
    convs = [layer for layer in layers if isinstance(layer, keras.layers.Conv2D)]
    assert len(convs) == 9
    assert all(isinstance(layer, PatchConv2D) is patches for layer in convs)
    assert agent._update_rollout._jit_compile is patches


@pytest.mark.slow
def test_noveld_pays_the_growth_of_rnd_error_on_first_visits_only():
    batch_env, agent, run = _setup(bonus="noveld", noveld_alpha=0.5)
    run()
    run()
    first = float(agent.metrics["first_visits"])
    assert 0.0 < first <= 1.0 and np.isfinite(float(agent.metrics["intrinsic_reward"]))
    # A hand-made rollout of one env per column: env 0 sees frames a, b, a, b, then a; env 1
    # a, a, a, a, then c, with an episode ending after its second step. The flags are those of
    # the next frames s_1..s_4 (s_0 followed the previous rollout, which a fresh agent lacks).
    fresh = RNDPPO(batch_env, agent._config, seed=1)
    rng = np.random.default_rng(0)
    a, b, c = (rng.integers(0, 256, (44, 44, 1)).astype(np.uint8) for _ in range(3))
    frames = np.stack([np.stack(pair) for pair in [(a, a), (b, a), (a, a), (b, a)]])
    next_observ = np.stack([a, c])
    raw = np.concatenate([frames, next_observ[None]])  # s_0 .. s_4 of each env
    terminated = np.zeros([4, 2], bool)
    terminated[1, 1] = True  # s_2 of env 1 starts a new episode.
    data = {
        "observ": tf.constant(frames),
        "terminated": tf.constant(terminated),
        "truncated": tf.zeros([4, 2], tf.bool),
        "episodic_key": fresh.episodic.keys(tf.constant(frames)),
    }
    reward, flags = fresh._noveld_reward(data, tf.constant(next_observ), tf.constant(raw[1:]))
    np.testing.assert_array_equal(
        flags.numpy(), [[True, True], [True, True], [False, False], [False, True]]
    )
    error = fresh.rnd.intrinsic_reward(tf.constant(raw)).numpy()
    growth = np.maximum(error[1:] - 0.5 * error[:-1], 0.0)
    np.testing.assert_allclose(reward.numpy(), growth * flags.numpy(), rtol=1e-6)
    assert reward.numpy()[flags.numpy()].min() >= 0 and growth.max() > 0


@pytest.mark.parametrize("schedule", ["constant", "linear"])
def test_the_intrinsic_weight_of_update_k_of_n_falls_to_1_minus_k_over_n_when_linear(schedule):
    # 2 envs x 8 steps a rollout: 4 updates make the 64 env steps of the budget.
    _, agent, run = _setup(int_coef=0.5, int_coef_schedule=schedule, train_steps=64)
    weights = []
    for _ in range(4):
        run()
        coefs = agent._stream_coefs()
        weights.append(float(coefs["_int"]))
        assert float(coefs[""]) == 2.0  # The extrinsic weight stays.
    expected = [0.5, 0.375, 0.25, 0.125] if schedule == "linear" else [0.5] * 4
    np.testing.assert_allclose(weights, expected, rtol=1e-6)


def test_the_count_bonus_pays_one_over_the_root_of_the_visits_in_the_episode_without_rnd():
    batch_env, agent, run = _setup(bonus="count")
    assert "rnd" not in agent.components and agent.warm_up_steps == 0
    assert "predictor_loss" not in agent.METRICS and "predictor_loss" not in agent.LOSS_METRICS
    run()
    run()
    assert int(agent.optimizer.iterations) == 2 * 2 * 2
    assert 0.0 < float(agent.metrics["intrinsic_reward"]) <= 1.0
    assert float(agent.metrics["episodic_count"]) >= 1.0
    # The rollout of the NovelD test: env 0 sees a, b, a, b, then a; env 1 a, a, a, a, then c,
    # an episode ending after its second step. Rewards are those of the next frames s_1..s_4.
    fresh = RNDPPO(batch_env, agent._config, seed=1)
    rng = np.random.default_rng(0)
    a, b, c = (rng.integers(0, 256, (44, 44, 1)).astype(np.uint8) for _ in range(3))
    frames = np.stack([np.stack(pair) for pair in [(a, a), (b, a), (a, a), (b, a)]])
    terminated = np.zeros([4, 2], bool)
    terminated[1, 1] = True  # s_2 of env 1 starts a new episode.
    data = {
        "observ": tf.constant(frames),
        "reward": tf.zeros([4, 2]),
        "value": tf.zeros([4, 2]),
        "value_int": tf.zeros([4, 2]),
        "terminated": tf.constant(terminated),
        "truncated": tf.zeros([4, 2], tf.bool),
        "episodic_key": fresh.episodic.keys(tf.constant(frames)),
    }
    rewards, metrics = fresh._count_rewards(data, tf.constant(np.stack([a, c])))
    # Visits of s_1..s_4 (s_0 came before the agent's memory): env 0 b, a, b, a; env 1 a,
    # then in a new episode a, a, c.
    counts = np.array([[1, 1], [1, 1], [2, 2], [2, 1]])
    assert float(metrics["episodic_count"]) == counts.mean()
    np.testing.assert_allclose(float(metrics["intrinsic_reward"]), (counts**-0.5).mean(), 1e-6)
    # Scaled by one std (of the intrinsic return): the rewards keep their ratios.
    scaled = rewards["_int"].numpy()
    np.testing.assert_allclose(scaled / scaled[0, 0], counts**-0.5, rtol=1e-5)


def test_visit_key_agent_is_refused_for_an_env_without_an_agent_to_key():
    with pytest.raises(ValueError, match="visit_key: agent counts a native grid env's agent"):
        _setup(bonus="count", visit_key="agent")


@pytest.mark.parametrize("named", ["obstructedmaze_count", "obstructedmaze_noveld"])
def test_visit_key_agent_counts_cell_direction_and_carried_object_not_moved_objects(named):
    batch_env = NativeBatchEnv(MiniGridEnv("MiniGrid-DoorKey-5x5-v0", layout_bank=2), 2)
    config = dict(getattr(configs, named)(), visit_key="agent")
    config.update(num_agents=2, rollout_length=8, chunk_length=4, num_minibatches=2)
    agent = RNDPPO(batch_env, tools.AttrDict(config), seed=0)
    state = batch_env.state
    np.testing.assert_array_equal(
        batch_env.agent_keys().numpy(),
        np.concatenate(
            [state.pos.numpy(), state.direction.numpy()[:, None], state.carried.numpy()[:, :2]],
            axis=1,
        ),
    )
    keys = agent._observation_fields(batch_env.observ)["episodic_key"].numpy()
    # An object moved (the key's cell emptied) changes the view, not the agent's key.
    grid = state.grid.numpy()
    grid[:, 1:-1, 1:-1] = np.where(grid[:, 1:-1, 1:-1, :1] == 5, 1, grid[:, 1:-1, 1:-1])
    state.grid.assign(grid)
    np.testing.assert_array_equal(
        agent._observation_fields(batch_env.observ)["episodic_key"].numpy(), keys
    )
    # The agent turned in env 0, and picked up a key in env 1: both are new.
    state.direction.assign((state.direction.numpy() + [1, 0]) % 4)
    carried = state.carried.numpy()
    carried[1] = [5, 4, 0, 0]  # A yellow key.
    state.carried.assign(carried)
    turned = agent._observation_fields(batch_env.observ)["episodic_key"].numpy()
    assert (turned != keys).all()
