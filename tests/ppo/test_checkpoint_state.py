"""Every variable an agent creates is in its checkpoint, or declared transient."""

import gc
import weakref

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from agents import tools
from agents.ppo.factory import make_agent
from agents.scripts import configs

# Variables a resumed run rebuilds instead of restoring: the partial rollout, the recurrent state
# and episode starts of running envs (every env restarts after a resume), the latest metrics and
# the non-finite flag (both rewritten by every update), and gSDE's exploration matrices (redrawn at
# the first step of every rollout), and NovelD's first visits within the envs' episodes (they
# begin anew with the envs), and the run's budget (from the config: a resumed run may raise it).
TRANSIENT = (
    "rollout_buffer/",
    "recurrent_state",
    "episode_start",
    "metrics/",
    "nonfinite",
    "sde_matrices",
    "episodic_visits/",
    "train_budget",
)


def _tf_variable(item):
    """The `tf.Variable` behind a Keras 3 variable (what a variable creator sees), or `item`."""
    value = getattr(item, "_value", None)
    return value if isinstance(value, tf.Variable) else item


def _created_and_saved(agent_name, observ_shape, **overrides):
    created = []

    def record(next_creator, **kwargs):
        variable = next_creator(**kwargs)
        created.append(weakref.ref(variable))
        return variable

    config = configs.debug()
    config.update(overrides)
    pixels = agent_name == "rnd_ppo"
    if pixels:
        config.update(agent="rnd_ppo", chunk_length=4, hidsize=16, memsize=8, rnd_feature_size=16)
    envs = [
        tools.MockEnvironment(
            observ_shape,
            (2,),
            3,
            5,
            index,
            action_space=gym.spaces.Discrete(3) if pixels else None,
            observ_dtype=np.uint8 if pixels else np.float32,
        )
        for index in range(2)
    ]
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True))
    with tf.variable_creator_scope(record):
        agent = make_agent(batch_env, tools.AttrDict(config), seed=0)
    gc.collect()  # Variables of objects built and dropped on the way (e.g. a config's optimizer).
    created = [variable for ref in created if (variable := ref()) is not None]
    checkpoint = tf.train.Checkpoint(**agent.checkpointables())
    saved = {id(_tf_variable(item)) for item in tf.train.TrackableView(checkpoint).descendants()}
    return agent, created, saved


@pytest.mark.parametrize(
    "agent_name, observ_shape, overrides",
    [
        ("ppo", (3,), {}),
        ("ppo", (3,), {"network": "recurrent_gaussian"}),
        ("ppo", (3,), {"sde_sample_freq": 4}),
        ("rnd_ppo", (44, 44, 1), {"normalize_observ": False}),
        ("rnd_ppo", (44, 44, 1), {"normalize_observ": False, "bonus": "noveld"}),
    ],
)
def test_every_variable_is_saved_or_declared_transient(agent_name, observ_shape, overrides):
    agent, created, saved = _created_and_saved(agent_name, observ_shape, **overrides)
    unsaved = [v.name for v in created if id(v) not in saved]
    unexpected = [name for name in unsaved if not any(key in name for key in TRANSIENT)]
    assert not unexpected, f"Variables neither checkpointed nor declared transient: {unexpected}"
    # The declared list is no blanket: the network, optimizer and normalizers are all saved.
    assert all(id(_tf_variable(v)) in saved for v in agent.network.variables)
    assert len(saved) > len(agent.network.variables)
